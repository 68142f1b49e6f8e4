"""``study --plan``: the job graph with GPU-hours per job, estimated from tokens x parameters.

FLOPs: training 6·N·T for full fine-tuning (forward 2·N·T, backward 4·N·T) and 4·N·T with frozen weights
(LoRA, prompt tuning: the backward pass still carries activation gradients through every layer but
computes no weight gradients); DP-SGD counted the same, its T taken at the Poisson cap
``physical_batch_size`` when the expected batch is ``auto``, so an upper bound; generation
2·N·T (T new tokens; prompts and QA scoring are left out), MAUVE embedding 2·N·T. Throughput: 45% MFU of
an H100 SXM's dense bf16 peak (989.4 TFLOP/s), i.e. 445 TFLOP/s per GPU, the floor a tuned run reaches.

A job without a GPU (``gpus: 0``) gets CPU-hours instead: 10 s to start plus FLOPs at 50 GFLOP/s (one
fp32 thread), fitted to the demo's job times in docs/demo.md (2-core AVX512 machine): 0.49 CPU-hours
estimated for the demo's 21 jobs, 0.30 measured; DP training at the Poisson cap is the largest
over-estimate. A model's size comes from ``parameters:``, the paper's models, or a local model folder's
safetensors.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from continuousbench.study.graph import CPU_KINDS, Job

PEAK_FLOPS = 989.4e12  # H100 SXM dense bf16
MFU = 0.45
THROUGHPUT = PEAK_FLOPS * MFU
# Published parameter counts of the paper's models; a study adds others under ``parameters:``.
PARAMETERS = {"google/gemma-3-1b-pt": 1.0e9, "google/gemma-3-1b-it": 1.0e9, "google/gemma-3-4b-pt": 4.3e9,
              "google/gemma-3-4b-it": 4.3e9}  # fmt: skip
CPU_FLOPS = 50e9  # one fp32 thread, fitted to the demo's job times (module docstring)
CPU_START_S = 10.0  # a job's process start and model load (the demo's untrained evaluate: 9.9 s)
FORMULA = (
    "GPU-hours = FLOPs / (45% MFU x 989.4 TFLOP/s H100 bf16 dense = 445 TFLOP/s) / 3600; "
    "FLOPs = 6·N·tokens for full fine-tuning, 4·N·tokens for LoRA and prompt tuning (DP at the Poisson cap), "
    "2·N·tokens for generation and embedding"
)


def _number(value, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def tokens(job: Job) -> tuple[str, float]:
    """("train" or "generate", the job's token count) from its recipe and options."""
    r = job.recipe
    if job.kind in ("train-generator", "evaluate"):
        steps = _number(r.get("steps", r.get("max_steps")), 10000)
        batch = r.get("expected_batch_size", r.get("samples_per_step", 32))
        if "epsilon" in r and r.get("epsilon") is not None and not isinstance(batch, (int, float)):
            batch = r.get("physical_batch_size", 512)
        return "train", steps * _number(batch, 32) * _number(r.get("max_length"), 256)
    if job.kind == "synthesize":
        return "generate", _number(r.get("num_samples"), 0) * _number(r.get("max_new_tokens"), 256)
    if job.kind == "pe":  # every iteration writes `variations` candidates of each sample
        per = _number(r.get("max_new_tokens"), 256) * _number(r.get("num_samples"), 0)
        return "generate", per * (1 + _number(r.get("iterations"), 1) * _number(r.get("variations"), 1))
    if job.kind == "private-prediction":  # every new token: a pass over each prompt row and the public row
        rows = _number(r.get("batch_size"), 32) + 1
        per = _number(r.get("max_record_tokens"), 256) + _number(r.get("max_new_tokens"), 256)
        return "generate", _number(r.get("num_samples"), 0) * rows * per
    if job.kind == "memorization":  # prefix and suffix of --docs documents of each split
        per = _number(r.get("prefix_tokens"), 32) + _number(r.get("suffix_tokens"), 32)
        return "generate", 2 * _number(r.get("docs"), 500) * per
    if job.kind == "mauve":
        seeds = len(r.get("seeds") or [0, 1, 2])
        return "generate", 2 * seeds * _number(r.get("n_samples"), 1000) * _number(r.get("max_length"), 256)
    if job.kind == "gate":  # closed-book answers of every model (`release --plan`)
        answers = _number(r.get("models"), 0) * _number(r.get("questions"))
        return "generate", answers * _number(r.get("max_new_tokens"))
    return "none", 0.0


def model_of(job: Job) -> str | None:
    r = job.recipe
    api = str(r.get("api", ""))
    return r.get("model") or (api.split(":", 1)[1] if api.startswith("transformers:") else None)


@cache
def folder_parameters(model: str) -> float | None:
    """Parameters of a local model folder, counted from its safetensors headers (no weights read)."""
    files = sorted(Path(model).glob("*.safetensors")) if Path(model).is_dir() else []
    if not files:
        return None
    from safetensors import safe_open

    total = 0
    for file in files:
        with safe_open(str(file), "np") as f:
            total += sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())  # noqa: SIM118
    return float(total)


def flops(job: Job, parameters: dict[str, float]) -> float | None:
    """The job's FLOPs (0 for bookkeeping jobs), None where its model's size is unknown."""
    kind, count = tokens(job)
    if job.kind in CPU_KINDS or not count:
        return 0.0
    model = model_of(job) or ""
    n = {**PARAMETERS, **parameters}.get(model) or folder_parameters(model)
    if n is None:
        return None
    # forward 2N a token; training adds the backward: 4N for the input gradients, 2N more for a full
    # model's weight gradients (LoRA and prompt tuning compute almost no weight gradient)
    per_token = 2 if kind != "train" else 6 if job.recipe.get("tuning", "lora") == "full" else 4
    return per_token * n * count


def gpu_hours(job: Job, parameters: dict[str, float]) -> float | None:
    """The job's estimate, 0 for CPU jobs, None where its model's size is unknown."""
    if job.kind in CPU_KINDS or job.gpus == 0:
        return 0.0
    found = flops(job, parameters)
    return None if found is None else found / THROUGHPUT / 3600


def cpu_hours(job: Job, parameters: dict[str, float]) -> float | None:
    """A job without a GPU: start-up plus FLOPs on one CPU thread (0 for GPU jobs; None: size unknown)."""
    if job.gpus and job.kind not in CPU_KINDS:
        return 0.0
    found = flops(job, parameters)
    return None if found is None else (CPU_START_S + found / CPU_FLOPS) / 3600


def shown(path: str | None) -> str:
    """A model as the plan shows it: a path normalised (``a/../b`` -> ``b``), never cut; ids unchanged."""
    if not path:
        return "-"
    return os.path.normpath(path) if os.sep in path and Path(path).exists() else path


def print_plan(jobs: Sequence[Job], parameters: dict[str, float]) -> float:
    """Print the graph (job, after, tokens, GPU-hours, and CPU-hours for jobs without a GPU) and the
    totals; returns the total GPU-hours."""
    from rich.console import Console
    from rich.table import Table

    cpu = [cpu_hours(job, parameters) for job in jobs]
    on_cpu = any(job.gpus == 0 and job.kind not in CPU_KINDS for job in jobs)
    table = Table(title=f"{len(jobs)} jobs", caption=FORMULA)
    columns = ("job", "after", "model", "tokens", "GPUs", "GPU-hours", *(("CPU-hours",) if on_cpu else ()))
    whole = {"job": max(len(j.name) for j in jobs), "model": max(len(shown(model_of(j))) for j in jobs)}
    for col in columns:  # job and model whole, on one line (a path cut is no path); `after` folds
        table.add_column(col, justify="left" if col in ("job", "after", "model") else "right",
                         no_wrap=col in whole, min_width=whole.get(col), overflow="fold")  # fmt: skip
    total, unknown = 0.0, 0
    for job, cpu_h in zip(jobs, cpu, strict=True):
        hours = gpu_hours(job, parameters)
        _, count = tokens(job)
        total += hours or 0.0
        unknown += hours is None or cpu_h is None
        extra = ("?" if cpu_h is None else f"{cpu_h:.2f}",) if on_cpu else ()
        table.add_row(job.name, ", ".join(job.after) or "-", shown(model_of(job)),
                      f"{count:.3g}" if count else "-", str(job.gpus),
                      "?" if hours is None else f"{hours:.2f}", *extra)  # fmt: skip
    console = Console(width=max(160, Console().width, sum(whole.values()) + 90))
    console.print(table)
    note = f" (+ {unknown} jobs of unknown model size: add them under parameters:)" if unknown else ""
    cpu_total = sum(h or 0.0 for h in cpu)
    on_cpus = (f"; {cpu_total:.2f} CPU-hours for the jobs without a GPU (one thread each: 10 s start + "
               f"FLOPs at {CPU_FLOPS / 1e9:.0f} GFLOP/s)") if on_cpu else ""  # fmt: skip
    console.print(f"total: {total:.1f} GPU-hours{on_cpus}{note}")
    return total
