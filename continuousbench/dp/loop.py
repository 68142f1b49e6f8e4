"""One DP-SGD training run in named steps: build, restore, step, evaluate (save the best), checkpoint, finish.

A run lives in its own folder inside the command's hidden work folder:

* ``checkpoint-<step>/state.pt`` holds the LoRA tensors, optimizer and scheduler state, the
  :class:`~continuousbench.dp.plan.DPPlan` (a resume under a different plan is refused) and the secret
  noise and batch streams, so a resumed run redraws exactly the batches and noise it lost;
  ``checkpoint-<step>/best/`` is the best adapter *as of that step*, so a ``best/`` written after the
  last checkpoint (by steps a kill then lost) never survives a resume.
* ``best/`` is the adapter with the best validation score so far (a :class:`Selection`: the lowest
  validation loss for a generator, the highest validation QA accuracy for a DP evaluator); ``finish``
  copies it, with the tokenizer, into ``final/`` and removes the checkpoints.

Under several processes every process holds the model and clips its share of each batch; process 0
draws the batch (and broadcasts it), adds the one noise draw and writes every file.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench import processes
from continuousbench.dp import dpsgd
from continuousbench.dp.plan import DPPlan
from continuousbench.dp.randomness import SecretStreams
from continuousbench.dp.sampling import check_sampler
from continuousbench.errors import UserError
from continuousbench.files import replace_dir, secret_file
from continuousbench.training.progress import Progress

logger = logging.getLogger(__name__)

STATE = "state.pt"
BEST = "best"
FINAL = "final"


@dataclass(frozen=True)
class Selection:
    """How the published adapter is chosen: ``measure(run)`` at every evaluation (called on every
    process), recorded in the history under ``name``; a later evaluation replaces the best one only when
    strictly better, so ties go to the earliest step."""

    name: str
    measure: Callable[[DPRun], float]
    greater_is_better: bool = False

    def better(self, value: float, best: float | None) -> bool:
        if best is None:
            return True
        return value > best if self.greater_is_better else value < best


def validation_loss(run: DPRun) -> float:
    """Token-weighted loss on the validation records (shared among the processes)."""
    shard = run.val_records[run.procs.rank :: run.procs.world_size]
    total, count = processes.all_sum(
        list(dpsgd.validation_sums(run.comps.module, shard, run.tokenizer.pad_token_id)), run.procs
    )
    return total / max(count, 1)


LOWEST_VALIDATION_LOSS = Selection("validation_loss", validation_loss)


@dataclass
class DPRun:
    """Everything one run holds in memory, and where it stands."""

    plan: DPPlan
    procs: processes.Processes
    model: Any  # the PEFT model (inside comps.module)
    tokenizer: Any
    params: list
    comps: dpsgd.DPComponents
    scheduler: Any
    streams: SecretStreams
    sampler: Any
    records: list[list[int]]
    val_records: list[list[int]]
    autocast_dtype: Any = None  # torch.bfloat16 with --bf16: forward passes under autocast
    selection: Selection = LOWEST_VALIDATION_LOSS
    step: int = 0
    best_score: float | None = None  # the selection's best value so far (None: not evaluated yet)
    best_step: int = 0
    history: list[dict[str, float]] = field(default_factory=list)  # {"step", selection.name} per evaluation


def build(
    model_args, config, train_texts, val_texts, plan: DPPlan, procs, insecure_seed=None, *,
    loaded: tuple[Any, Any] | None = None, selection: Selection = LOWEST_VALIDATION_LOSS,
) -> DPRun:  # fmt: skip
    """Load the model (LoRA or soft prompt initialised from ``config.seed``) unless ``loaded`` holds
    (model, tokenizer) already loaded that way, wrap it with Opacus, draw secret streams."""
    import torch
    from transformers import get_scheduler, set_seed

    from continuousbench.training.modeling import load_model_and_tokenizer

    clipping = dpsgd.resolve_clipping(model_args.tuning, config.clipping)
    if loaded is None:
        set_seed(config.seed)  # the LoRA initialisation is public randomness: the published seed
        loading = model_args.loading()
        if model_args.tuning == "full" and loading["dtype"] in (None, "auto"):
            loading["dtype"] = "float32"  # the optimizer's weights: bf16 compute is --bf16's autocast
        loaded = load_model_and_tokenizer(model_args.model, **loading)
    model, tokenizer = loaded
    if getattr(model, "prompt_encoder", None) is not None:  # a soft prompt: one lookup per record
        from continuousbench.training.adapters import look_up_per_record

        look_up_per_record(model)
    params = dpsgd.check_trainable(model, clipping)
    device = training_device(config)
    model.to(device)
    max_length = config.max_length or 256
    records = dpsgd.encode_records(tokenizer, train_texts, max_length)
    val_records = dpsgd.encode_records(tokenizer, val_texts, max_length)
    if len(records) != plan.sampling.dataset_size:
        raise UserError(
            f"the plan is for {plan.sampling.dataset_size} records, the corpus has {len(records)}"
        )
    streams = SecretStreams.create(insecure_seed=insecure_seed, device=device)
    sampler = plan.sampling.sampler(plan.steps, streams.batches)
    check_sampler(sampler, plan.sampling)
    optimizer = torch.optim.AdamW(
        params,
        lr=config.learning_rate,
        betas=(config.adam_beta1, config.adam_beta2),
        weight_decay=config.weight_decay,
    )
    comps = dpsgd.make_private(
        model,
        optimizer,
        noise_multiplier=plan.noise_multiplier,
        expected_batch_size=plan.sampling.expected_batch_size,
        generator=streams.noise,
        secure_mode=config.secure_noise,
        clipping=clipping,
        rank=procs.rank,
        world_size=procs.world_size,
    )
    scheduler = get_scheduler(
        config.lr_scheduler_type,
        optimizer,
        num_warmup_steps=config.get_warmup_steps(plan.steps),
        num_training_steps=plan.steps,
    )
    autocast = torch.bfloat16 if config.bf16 else None
    return DPRun(
        plan,
        procs,
        model,
        tokenizer,
        params,
        comps,
        scheduler,
        streams,
        sampler,
        records,
        val_records,
        autocast,
        selection,
    )


def training_device(config) -> str:
    """This process's device (the one rule, :func:`continuousbench.processes.device`), the CPU when the
    configuration asks for it."""
    return processes.device(cpu=config.use_cpu)


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = [p for p in run_dir.glob("checkpoint-*") if p.name.split("-")[1].isdigit()]
    return max(found, key=lambda p: int(p.name.split("-")[1])) if found else None


def restore(run: DPRun, run_dir: Path) -> bool:
    """Continue from the newest checkpoint, if any; refuse one made under another DP plan."""
    import torch

    ckpt = latest_checkpoint(run_dir)
    if ckpt is None:  # killed before the first checkpoint: start again, forgetting what those steps wrote
        if run.procs.main and (run_dir / BEST).exists():
            shutil.rmtree(run_dir / BEST)
        processes.barrier(run.procs)
        return False
    state = torch.load(ckpt / STATE, weights_only=False)
    if state["plan"] != run.plan.to_dict():
        changed = sorted(k for k, v in _flat(run.plan.to_dict()).items() if _flat(state["plan"]).get(k) != v)
        raise UserError(
            f"{ckpt} was made under another DP plan ({', '.join(changed)} changed); resume with the "
            "original settings, or start again with --overwrite"
        )
    with torch.no_grad():
        for p, saved in zip(run.params, state["params"], strict=True):
            p.copy_(saved.to(p.device))
    run.comps.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.streams.load_state_dict(state["streams"])
    run.sampler.load_state_dict(state["sampler"])
    best = state["best_score"] if "best_score" in state else state["best_loss"]  # older checkpoints
    run.step, run.best_score, run.best_step = state["step"], best, state["best_step"]
    run.history = state["history"]
    if run.procs.main:  # the best adapter as of the checkpoint (or none), not one the lost steps wrote
        if (ckpt / BEST).is_dir():
            shutil.copytree(ckpt / BEST, run_dir / ".best-restored", dirs_exist_ok=False)
            replace_dir(run_dir / ".best-restored", run_dir / BEST)
        elif (run_dir / BEST).exists():
            shutil.rmtree(run_dir / BEST)
    logger.info("resumed from %s (step %d of %d)", ckpt.name, run.step, run.plan.steps)
    processes.barrier(run.procs)
    return True


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def train_step(run: DPRun, micro_batch: int) -> tuple[float, int]:
    """Draw the next batch (process 0, secret stream) and take one noisy step; (summed loss, records)."""
    indices = None
    if run.procs.main:
        run.sampler.step += 1
        indices = run.sampler.draw().tolist()
    indices = processes.broadcast(indices, run.procs)
    batch = [run.records[i] for i in indices]
    out = dpsgd.dp_step(
        run.comps,
        batch,
        clip_norm=run.plan.clip_norm,
        micro_batch=micro_batch,
        pad_id=run.tokenizer.pad_token_id,
        autocast_dtype=run.autocast_dtype,
    )
    run.scheduler.step()
    run.step += 1
    return out


def evaluate(run: DPRun, run_dir: Path) -> float:
    """The selection's measure (every process takes part); the adapter goes to ``best/`` when it improves."""
    value = run.selection.measure(run)
    run.history.append({"step": run.step, run.selection.name: value})
    if run.selection.better(value, run.best_score):
        run.best_score, run.best_step = value, run.step
        if run.procs.main:
            tmp = run_dir / ".best-tmp"
            if tmp.exists():
                shutil.rmtree(tmp)
            run.model.save_pretrained(str(tmp))
            replace_dir(tmp, run_dir / BEST)
    processes.barrier(run.procs)
    return value


def save_checkpoint(run: DPRun, run_dir: Path) -> None:
    """Write ``checkpoint-<step>`` (state, secret streams and the current best adapter); drop older ones."""
    import torch

    if run.procs.main:
        path = run_dir / f"checkpoint-{run.step}"
        tmp = run_dir / f".checkpoint-{run.step}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True, mode=0o700)  # the secret streams: readable by their owner only
        with secret_file(tmp / STATE) as f:
            torch.save(
                {
                    "plan": run.plan.to_dict(),
                    "step": run.step,
                    "params": [p.detach().cpu() for p in run.params],
                    "optimizer": run.comps.optimizer.state_dict(),
                    "scheduler": run.scheduler.state_dict(),
                    "streams": run.streams.state_dict(),  # secret: never leaves the work folder
                    "sampler": run.sampler.state_dict(),
                    "best_score": run.best_score,
                    "best_step": run.best_step,
                    "history": run.history,
                },
                f,
            )
        if (run_dir / BEST).is_dir():
            shutil.copytree(run_dir / BEST, tmp / BEST)
        replace_dir(tmp, path)
        for old in run_dir.glob("checkpoint-*"):
            if old != path:
                shutil.rmtree(old)
    processes.barrier(run.procs)


def finish(run: DPRun, run_dir: Path) -> Path:
    """``final/`` = the best adapter and the tokenizer; checkpoints (and their secret state) are removed."""
    final = run_dir / FINAL
    if run.procs.main:
        tmp = run_dir / ".final-tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        shutil.copytree(run_dir / BEST, tmp)
        run.tokenizer.save_pretrained(str(tmp))
        replace_dir(tmp, final)
        for old in run_dir.glob("checkpoint-*"):
            shutil.rmtree(old)
    processes.barrier(run.procs)
    return final


def _every(value, steps: int) -> int:
    """Trainer-style interval: < 1 is a fraction of the run."""
    if not value:
        return steps
    return max(1, round(value * steps)) if value < 1 else int(value)


def train_dp(
    run_dir: Path,
    model_args,
    config,
    train_texts,
    val_texts,
    plan: DPPlan,
    *,
    procs,
    resume: bool,
    insecure_seed: int | None = None,
    loaded: tuple[Any, Any] | None = None,
    selection: Selection = LOWEST_VALIDATION_LOSS,
) -> DPRun:
    """Train one DP run in ``run_dir`` (resuming its newest checkpoint when asked); return the run.
    ``loaded`` and ``selection``: see :func:`build`, :class:`Selection`."""
    run = build(
        model_args,
        config,
        train_texts,
        val_texts,
        plan,
        procs,
        insecure_seed,
        loaded=loaded,
        selection=selection,
    )
    if resume:
        restore(run, run_dir)
    eval_every, save_every = _every(config.eval_steps, plan.steps), _every(config.save_steps, plan.steps)
    log_every, progress = _every(config.logging_steps, plan.steps), Progress(plan.steps, first=run.step)
    while run.step < plan.steps:
        loss, count = train_step(run, config.micro_batch_size)
        if run.step % log_every == 0 and procs.main:
            logger.info("%s", progress.line(run.step))
            # un-noised statistics of the private records (the loss, this process's Poisson batch size):
            # DEBUG only, since INFO reaches job logs and consoles that others read (docs/generators.md)
            logger.debug(
                "%s: private training loss %.4f on this process's %d records (not published)",
                progress.line(run.step),
                loss / max(count, 1),
                count,
            )
        if run.step % eval_every == 0 or run.step == plan.steps:
            val = evaluate(run, run_dir)
            if procs.main:
                name = run.selection.name.replace("_", " ")
                logger.info("step %d/%d: %s %.4f", run.step, plan.steps, name, val)
        if run.step % save_every == 0 and run.step < plan.steps:
            save_checkpoint(run, run_dir)
    finish(run, run_dir)
    return run
