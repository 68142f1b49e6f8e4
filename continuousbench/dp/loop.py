"""The DP-SGD training run: calibrate, sample, step, evaluate, checkpoint, resume.

Checkpoints (``checkpoint-<step>/state.pt``) hold the LoRA tensors, optimizer and scheduler state, the
sampler's RNG and torch's RNG (the noise source), so a resumed run draws the same batches and noise it
would have drawn. The lowest-validation-loss adapter is kept in ``best/`` and published at the end.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path

from continuousbench.dp import accounting, dpsgd
from continuousbench.dp.sampling import PoissonBatchSampler, check_sampler

logger = logging.getLogger(__name__)


def plan(n: int, config) -> tuple[float, float, float]:
    """(expected batch, noise multiplier, delta) for the run; ``auto`` picks the batch (Table 31)."""
    delta = config.delta or accounting.default_delta(n)
    steps, cap = config.max_steps, config.physical_batch_size
    if config.expected_batch_size == "auto":
        if config.sampling != "truncated_poisson":
            raise ValueError("--expected_batch_size auto needs --sampling truncated_poisson (a batch cap)")
        batch, sigma = accounting.choose_expected_batch(
            n, cap, steps, config.epsilon, delta, truncation_analysis=config.truncation_analysis
        )
        return float(batch), sigma, delta
    try:
        batch = float(config.expected_batch_size)
    except ValueError:
        raise ValueError(
            f"--expected_batch_size must be a number or auto, got {config.expected_batch_size!r}"
        ) from None
    if not 0 < batch <= n:
        raise ValueError(f"expected batch size {batch:g} must be in (0, {n}] (the dataset size)")
    sigma = accounting.calibrate_noise(
        config.epsilon,
        batch / n,
        steps,
        delta,
        dataset_size=n,
        physical_batch=cap,
        sampling=config.sampling,
        truncation_analysis=config.truncation_analysis,
    )
    return batch, sigma, delta


def _every(value, steps: int) -> int:
    """Trainer-style interval: < 1 is a fraction of the run."""
    if not value:
        return steps
    return max(1, round(value * steps)) if value < 1 else int(value)


def _save_state(path: Path, step: int, params, opt, sched, sampler, best: float, history: list) -> None:
    import torch

    tmp = path.with_name(path.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "step": step,
            "params": [p.detach().cpu() for p in params],
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "sampler": sampler.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "best": best,
            "history": history,
        },
        tmp / "state.pt",
    )
    if path.exists():
        shutil.rmtree(path)
    tmp.rename(path)


def _latest_checkpoint(run_dir: Path) -> Path | None:
    found = sorted(run_dir.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    return found[-1] if found else None


def train_dp(run_dir: Path, model_args, config, train, val, args):
    """Train one DP run into ``run_dir``; return (best validation loss, PrivacyGuarantee)."""
    import torch
    from transformers import get_scheduler

    from continuousbench.harness.modeling import load_model_and_tokenizer

    model, tokenizer = load_model_and_tokenizer(
        model_args.model,
        tuning="lora",
        lora_rank=model_args.lora_r,
        lora_alpha=model_args.lora_alpha,
        dtype=model_args.dtype,
        attn_implementation=model_args.attn_implementation,
    )
    params = dpsgd.check_trainable(model)
    device = "cpu" if config.use_cpu or not torch.cuda.is_available() else "cuda"
    model.to(device)
    max_length = config.max_length or 256
    records = dpsgd.encode_records(tokenizer, train["text"], max_length)
    val_texts = val["text"] if args.eval_limit is None else val["text"][: args.eval_limit]
    val_records = dpsgd.encode_records(tokenizer, val_texts, max_length)
    n, steps = len(records), config.max_steps
    batch, sigma, delta = plan(n, config)
    guarantee = accounting.account(
        sigma,
        batch / n,
        steps,
        delta,
        dataset_size=n,
        clip_norm=config.clip_norm,
        sampling=config.sampling,
        physical_batch=config.physical_batch_size,
        truncation_analysis=config.truncation_analysis,
    )
    logger.info(
        "DP plan: expected batch %.1f, sigma %.4f, epsilon %.4g, delta %.3g",
        batch,
        sigma,
        guarantee.epsilon,
        delta,
    )
    sampler = PoissonBatchSampler(
        n,
        batch / n,
        steps,
        sampling=config.sampling,
        physical_batch=config.physical_batch_size,
        seed=config.seed,
    )
    check_sampler(
        sampler,
        sampling=config.sampling,
        sampling_probability=batch / n,
        physical_batch=config.physical_batch_size,
    )
    torch.manual_seed(config.seed)
    optimizer = torch.optim.AdamW(
        params,
        lr=config.learning_rate,
        betas=(config.adam_beta1, config.adam_beta2),
        weight_decay=config.weight_decay,
    )
    comps = dpsgd.make_private(
        model, optimizer, records, sampler, noise_multiplier=sigma, expected_batch_size=batch
    )
    sched = get_scheduler(
        config.lr_scheduler_type,
        optimizer,
        num_warmup_steps=config.get_warmup_steps(steps),
        num_training_steps=steps,
    )
    best, history = math.inf, []
    ckpt = _latest_checkpoint(run_dir) if args.resume else None
    if args.resume and ckpt is None:
        raise FileNotFoundError(f"nothing to resume in {run_dir}: it has no checkpoint-N folder")
    if ckpt is not None:
        state = torch.load(ckpt / "state.pt", weights_only=False)
        with torch.no_grad():
            for p, saved in zip(params, state["params"], strict=True):
                p.copy_(saved.to(p.device))
        optimizer.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        sampler.load_state_dict(state["sampler"])
        torch.set_rng_state(state["torch_rng"])
        if state["cuda_rng"] is not None:
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        best, history = state["best"], state["history"]
    eval_every, save_every = _every(config.eval_steps, steps), _every(config.save_steps, steps)
    peft_model = comps.module._module
    for batch_ids in comps.loader:
        step = sampler.step
        loss = dpsgd.dp_step(
            comps,
            batch_ids,
            clip_norm=config.clip_norm,
            micro_batch=config.micro_batch_size,
            pad_id=tokenizer.pad_token_id,
        )
        sched.step()
        if step % eval_every == 0 or step == steps:
            val_loss = dpsgd.validation_loss(comps.module, val_records, tokenizer.pad_token_id)
            history.append({"step": step, "train_loss": loss, "validation_loss": val_loss})
            logger.info("step %d: train %.4f, validation %.4f", step, loss, val_loss)
            if val_loss < best:
                best = val_loss
                tmp = run_dir / "best.tmp"
                peft_model.save_pretrained(str(tmp))
                if (run_dir / "best").exists():
                    shutil.rmtree(run_dir / "best")
                tmp.rename(run_dir / "best")
        if step % save_every == 0 and step < steps:
            for old in run_dir.glob("checkpoint-*"):
                shutil.rmtree(old)
            _save_state(
                run_dir / f"checkpoint-{step}", step, params, optimizer, sched, sampler, best, history
            )
    final = run_dir / ".final-tmp"
    shutil.copytree(run_dir / "best", final)
    tokenizer.save_pretrained(str(final))
    record = {
        "private": True,
        **guarantee.to_dict(),
        "validation_loss": best,
        "history": history,
        "truncated_batches": sampler.truncated,
    }
    (final / "privacy.json").write_text(json.dumps(record, indent=2))
    for item in final.iterdir():
        item.replace(run_dir / item.name)
    final.rmdir()
    shutil.rmtree(run_dir / "best")  # published above; checkpoints are only for resuming
    for old in run_dir.glob("checkpoint-*"):
        shutil.rmtree(old)
    return best, guarantee
