"""DP-SGD on LoRA adapters, a soft prompt or every weight (full fine-tuning) with Opacus's optimizers,
our own Poisson batches and PLD accounting.

How the pieces fit:

* A per-record clipping module (ours, or Opacus's ghost clipping) and Opacus's DP optimizer wrap the
  model (:func:`make_private`); the
  logical batches come from our :class:`~continuousbench.dp.sampling.PoissonBatchSampler` (Poisson or
  truncated Poisson), which is exactly what :mod:`continuousbench.dp.accounting` accounts. Opacus's own
  RDP accountant is not used.
* Each record is one example (empty prompt, the record as target: ``<bos> record <eos>``); its loss is
  the mean over its tokens, so one record is one unit whatever its length (Opacus's ghost criterion does
  this when given ``shape=(batch, tokens)``).
* Normalised clipping (De et al. 2022) at ``C``: we pass ``loss / C`` to Opacus and clip at norm 1.
  Per-example gradients of ``loss / C`` are ``g / C``, so what is summed is ``clip_C(g) / C`` (norm <= 1)
  and the noise std is ``sigma`` - exactly "clip to C, then divide by C", and the learning rate does not
  depend on ``C``.
* A logical (Poisson) batch is split into micro-batches that fit in memory; Opacus accumulates their
  clipped sums (``signal_skip_step``) and adds noise once, dividing by the expected batch size.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from continuousbench.errors import UserError

logger = logging.getLogger(__name__)


# PEFT prompt tuning's trainable table (an nn.Embedding with one row per virtual token).
SOFT_PROMPT = "prompt_encoder."


def record_logits(model, ids, mask):
    """Logits at the record's own positions: a soft prompt's virtual tokens come first and are dropped."""
    return model(input_ids=ids, attention_mask=mask).logits[:, -ids.shape[1] :]


def check_trainable(model, clipping: str = "per_sample") -> list:
    """The trainable parameters, after refusing anything ``clipping`` cannot clip (one ValueError line):
    book-keeping clips linear, embedding and norm layers (any tuning); the other two LoRA adapters and
    soft prompts."""
    from opacus.grad_sample import GradSampleModuleFastGradientClipping as GSM

    if clipping == "bookkeeping":
        from continuousbench.dp.bookkeeping import trainable_layers

        trainable = trainable_layers(model)[0]
        if not trainable:
            raise ValueError(
                "the model has no trainable parameters: load it with tuning full, lora or prompt"
            )
        return trainable
    trainable = []
    for module_name, module in model.named_modules():
        for name, p in module.named_parameters(recurse=False):
            if not p.requires_grad:
                continue
            full = f"{module_name}.{name}" if module_name else name
            if "ScaledWordEmbedding" in type(module).__name__:
                raise ValueError(
                    f"parameter {full} (Gemma 3's scaled, tied embedding) is trainable: "
                    "Opacus cannot clip it "
                    "per example; freeze it and train LoRA adapters only"
                )
            if "lora_" not in full and not full.startswith(SOFT_PROMPT):
                raise ValueError(
                    f"parameter {full} is trainable but is not a LoRA adapter or a soft prompt: DP "
                    "training covers those only; freeze it (requires_grad=False)"
                )
            if type(module) not in GSM.NORM_SAMPLERS:
                raise ValueError(
                    f"parameter {full} lives in a {type(module).__name__}, for which Opacus ghost clipping "
                    "has no per-example norm; put LoRA on linear layers only"
                )
            trainable.append(p)
    if not trainable:
        raise ValueError(
            "the model has no trainable LoRA or soft-prompt parameters: load it with tuning lora or prompt"
        )
    return trainable


def encode_records(tokenizer, texts, max_length: int) -> list[list[int]]:
    """``<bos> record <eos>`` token ids per record (empty prompt, the record as target), cut to max_length."""
    if not texts:  # fast tokenizers fail on an empty batch (a DP evaluator has no validation records)
        return []
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    body = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [(bos + ids + eos)[:max_length] for ids in body]


def pad_batch(rows: list[list[int]], pad_id: int, device):
    """(input_ids, attention_mask, labels) right-padded; labels are -100 on padding."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return ids.to(device), mask.to(device), labels.to(device)


def token_loss(model, criterion, rows, pad_id: int, device):
    """Per-example mean token loss through ``criterion`` (Opacus's ghost criterion or a plain one)."""
    ids, mask, labels = pad_batch(rows, pad_id, device)
    logits = record_logits(model, ids, mask)[:, :-1]
    targets = labels[:, 1:]
    flat = logits.reshape(-1, logits.shape[-1]).float()
    return criterion(flat, targets.reshape(-1), shape=(logits.shape[0], logits.shape[1]))


CLIPPINGS = ("per_sample", "ghost", "bookkeeping")
# A DP step's time over the non-private step of the same tuning and batch, as measured by
# benchmarks/dp_step.py (docs/performance.md: LoRA r=16 per_sample 1.02-1.04x; ghost at rank 128 1.71x,
# its second backward pass; a soft prompt 1.01x and 1.18x; full fine-tuning with book-keeping 1.31-1.33x
# in float32 and 1.21-1.27x in bf16, its norms and the noise): what a cost model (study --plan) multiplies
# the non-private step's FLOPs (6·N·T full, 4·N·T LoRA or prompt) by. Measured on CPU, one thread, float32
# (the larger). Book-keeping on LoRA or a soft prompt is not measured: full fine-tuning's figure.
STEP_COST: dict[tuple[str, str], float] = {
    ("lora", "per_sample"): 1.03,
    ("lora", "ghost"): 1.71,
    ("lora", "bookkeeping"): 1.33,
    ("prompt", "per_sample"): 1.01,
    ("prompt", "ghost"): 1.18,
    ("prompt", "bookkeeping"): 1.33,
    ("full", "bookkeeping"): 1.33,
}


def resolve_clipping(tuning: str, clipping: str | None) -> str:
    """The clipping a run uses: ``clipping`` as given, else book-keeping for full fine-tuning and
    per-sample gradients for LoRA and soft prompts; full fine-tuning refuses the other two (per-sample
    gradients of every parameter do not fit a batch of a real model, and ghost clipping's second
    backward pass and per-layer norms would miss a tied weight's cross term)."""
    if clipping is not None and clipping not in CLIPPINGS:
        raise UserError(f"unknown clipping {clipping!r}: use {', '.join(CLIPPINGS)}")
    if tuning == "full":
        if clipping not in (None, "bookkeeping"):
            raise UserError(
                f"--tuning full clips with --clipping bookkeeping, not {clipping}: per-record gradients of "
                "every parameter (per_sample) do not fit, and ghost clipping misses tied weights"
            )
        return "bookkeeping"
    return clipping or "per_sample"


def step_cost(tuning: str, clipping: str | None = None) -> float:
    """The measured DP step time over the non-private step (:data:`STEP_COST`) of a run's clipping."""
    return STEP_COST[(tuning, resolve_clipping(tuning, clipping))]


@dataclass
class DPComponents:
    module: object  # Opacus GradSampleModule (per_sample) or GradSampleModuleFastGradientClipping (ghost)
    optimizer: object  # the matching DPOptimizer (its Distributed variant under several processes)
    criterion: object | None  # DPLossFastGradientClipping (ghost); None: our per-record loss (per_sample)
    rank: int = 0
    world_size: int = 1
    embedding_leaf: object | None = None  # ghost on LoRA: its first pass stops at the embeddings
    clipping: str = "per_sample"


def make_private(
    model,
    optimizer,
    *,
    noise_multiplier: float,
    expected_batch_size: float,
    generator,
    secure_mode: bool = False,
    clipping: str = "per_sample",
    rank: int = 0,
    world_size: int = 1,
) -> DPComponents:
    """Wrap model and optimizer for DP-SGD with Opacus (clip at 1: see normalised clipping).

    ``clipping``: ``per_sample`` (one backward pass that keeps every record's LoRA gradient,
    ``micro_batch x LoRA parameters`` floats, computed by :mod:`~continuousbench.dp.record_grads`
    - cheap for LoRA on small models) or ``ghost``
    (Opacus ghost clipping: per-record norms without holding per-record gradients, then a second
    backward pass - the memory-light choice for large LoRA ranks and batches; for LoRA,
    :mod:`~continuousbench.dp.ghost_passes` restricts both passes and picks the cheaper norms) or
    ``bookkeeping`` (:mod:`~continuousbench.dp.bookkeeping`: one backward pass, exact per-record norms of
    every trainable linear, embedding and norm layer, tied weights included, and the clipped sum from
    the kept layer inputs and output gradients - full fine-tuning's engine).

    Built from Opacus's classes directly rather than ``PrivacyEngine.make_private``: that wants a
    DataLoader (whose iterator draws from torch's global generator) to infer the batch size, and a
    ``torchcsprng`` generator for secure mode. Here the noise comes from ``generator`` (the secret
    stream), ``secure_mode`` selects Opacus's floating-point-safe noise sampler, and the averaging
    denominator is the true expected batch ``q * n``. Under several processes each one clips its share
    of the records, process 0 alone adds the noise, and the optimizer sums the shares (all-reduce)
    before stepping: one noise draw per logical step, clipping before any reduction.
    """
    import torch
    from opacus import optimizers
    from opacus.grad_sample import GradSampleModuleFastGradientClipping
    from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping

    if clipping not in CLIPPINGS:
        raise UserError(f"unknown clipping {clipping!r}: use {' or '.join(CLIPPINGS)}")
    if next(model.parameters()).device.type == "cpu":
        from continuousbench.dp.host_memory import keep_freed_memory

        keep_freed_memory()  # each step's per-record gradients reuse the last step's memory
    distributed = world_size > 1
    fast_optimizers = (
        optimizers.DistributedDPOptimizerFastGradientClipping
        if distributed
        else optimizers.DPOptimizerFastGradientClipping
    )  # they add noise to p.grad, the clipped sum the module left there
    if clipping == "bookkeeping":
        from continuousbench.dp.bookkeeping import BookkeepingModule

        module, dp_class = BookkeepingModule(model), fast_optimizers
    elif clipping == "ghost":
        module = GradSampleModuleFastGradientClipping(
            model, batch_first=True, loss_reduction="mean", max_grad_norm=1.0, use_ghost_clipping=True
        )
        dp_class = fast_optimizers
    else:
        from continuousbench.dp.record_grads import RecordGradModule  # Opacus's, without its hooks

        module = RecordGradModule(model, batch_first=True, loss_reduction="mean")
        dp_class = optimizers.DistributedDPOptimizer if distributed else optimizers.DPOptimizer
    dp_optimizer = dp_class(
        optimizer,
        noise_multiplier=noise_multiplier,
        max_grad_norm=1.0,
        # the distributed optimizers divide by this on every process, then by the world size again
        expected_batch_size=expected_batch_size / world_size,
        loss_reduction="mean",
        generator=generator,
        secure_mode=secure_mode,
    )
    criterion = leaf = None
    if clipping == "ghost":
        from continuousbench.dp import ghost_passes

        criterion = DPLossFastGradientClipping(
            module, dp_optimizer, torch.nn.CrossEntropyLoss(ignore_index=-100, reduction="mean"), "mean"
        )
        leaf = ghost_passes.attach(model, dp_optimizer.params)
    return DPComponents(module, dp_optimizer, criterion, rank, world_size, leaf, clipping)


def record_loss(model, rows: list[list[int]], pad_id: int, device):
    """Each record's mean token loss, as a tensor (the per-example loss DP-SGD clips)."""
    import torch

    ids, mask, labels = pad_batch(rows, pad_id, device)
    logits = record_logits(model, ids, mask)[:, :-1].float()
    targets = labels[:, 1:]
    token = torch.nn.functional.cross_entropy(
        logits.transpose(1, 2), targets, ignore_index=-100, reduction="none"
    )
    return token.sum(dim=1) / (targets != -100).sum(dim=1).clamp(min=1)


def dp_step(
    components: DPComponents,
    batch: list[list[int]],
    *,
    clip_norm: float,
    micro_batch: int,
    pad_id: int,
    autocast_dtype=None,
) -> tuple[float, int]:
    """One noisy optimizer step on a logical batch; returns this process's (summed loss, records).

    The loss is a raw statistic of private records: callers may log it, never publish it. Each process
    takes every ``world_size``-th record of the batch; micro-batches accumulate clipped sums
    (``signal_skip_step``) before the one noisy step. ``autocast_dtype`` (e.g. bfloat16) runs the
    forward passes under autocast; clipping, noise and the update stay in the parameters' float32.
    """
    import contextlib

    import torch

    module, optimizer, criterion = components.module, components.optimizer, components.criterion
    device = next(module.parameters()).device
    mine = batch[components.rank :: components.world_size]
    if not mine:  # an empty (share of a) Poisson batch still takes part in the noisy step
        for p in optimizer.params:
            p.grad = torch.zeros_like(p)
            p.grad_sample = torch.zeros((0, *p.shape), dtype=p.dtype, device=p.device)
        optimizer.step()
        optimizer.zero_grad()
        return 0.0, 0
    chunks = [mine[i : i + micro_batch] for i in range(0, len(mine), micro_batch)]
    total = 0.0
    for i, chunk in enumerate(chunks):
        autocast = (
            torch.autocast(device_type=device.type, dtype=autocast_dtype)
            if autocast_dtype is not None
            else contextlib.nullcontext()
        )
        if components.clipping == "bookkeeping":  # one backward pass; the clipped sum lands in p.grad
            with autocast:
                per_record = record_loss(module, chunk, pad_id, device)
            total += float(per_record.detach().sum())
            module.backward(per_record / clip_norm)
        elif criterion is not None:  # ghost: Opacus's criterion runs both backward passes
            with autocast:
                loss = token_loss(module, criterion, chunk, pad_id, device)
            total += float(loss.loss_per_sample.detach().sum())
            if components.embedding_leaf is not None:
                from continuousbench.dp import ghost_passes

                tokens = max(len(row) for row in chunk)
                ghost_passes.backward(module, optimizer, loss / clip_norm, components.embedding_leaf, tokens)
            else:
                (loss / clip_norm).backward()
        else:
            with autocast:
                per_record = record_loss(module, chunk, pad_id, device)
            total += float(per_record.detach().sum())
            (per_record.mean() / clip_norm).backward()
        if i < len(chunks) - 1:
            optimizer.signal_skip_step(do_skip=True)
        optimizer.step()
        # after a skipped step this keeps the clipped sum, drops the rest; book-keeping frees p.grad
        # (a whole model's worth) before the next forward pass instead of zeroing it
        optimizer.zero_grad(set_to_none=components.clipping == "bookkeeping")
    return total, len(mine)


def validation_sums(model, records: list[list[int]], pad_id: int, batch_size: int = 16) -> tuple[float, int]:
    """(summed token loss, tokens) over ``records``; the mean is token-weighted, as perplexity usually is."""
    import torch

    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(records), batch_size):
            ids, mask, labels = pad_batch(records[i : i + batch_size], pad_id, device)
            logits = record_logits(model, ids, mask)[:, :-1].float()
            targets = labels[:, 1:]
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100, reduction="sum"
            )
            total += float(loss)
            count += int((targets != -100).sum())
    model.train(was_training)
    return total, count


def record_losses(model, records: list[list[int]], pad_id: int, batch_size: int = 16) -> list[float]:
    """Each record's mean token loss, e.g. to score audit canaries."""
    import torch

    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    with torch.no_grad():
        losses = [
            x
            for i in range(0, len(records), batch_size)
            for x in record_loss(model, records[i : i + batch_size], pad_id, device).tolist()
        ]
    model.train(was_training)
    return losses
