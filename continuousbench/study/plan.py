"""``study --plan``: the job graph with GPU-hours per job, estimated from tokens x parameters.

FLOPs: training 6·N·T (forward and backward over T tokens; DP-SGD counted the same, its T taken at the
Poisson cap ``physical_batch_size`` when the expected batch is ``auto``, so an upper bound), generation
2·N·T (T new tokens; prompts and QA scoring are left out), MAUVE embedding 2·N·T. Throughput: 45% MFU of
an H100 SXM's dense bf16 peak (989.4 TFLOP/s), i.e. 445 TFLOP/s per GPU, the floor a tuned run reaches.
"""

from __future__ import annotations

from collections.abc import Sequence

from continuousbench.study.graph import CPU_KINDS, Job

PEAK_FLOPS = 989.4e12  # H100 SXM dense bf16
MFU = 0.45
THROUGHPUT = PEAK_FLOPS * MFU
# Published parameter counts of the paper's models; a study adds others under ``parameters:``.
PARAMETERS = {"google/gemma-3-1b-pt": 1.0e9, "google/gemma-3-1b-it": 1.0e9, "google/gemma-3-4b-pt": 4.3e9,
              "google/gemma-3-4b-it": 4.3e9}  # fmt: skip
FORMULA = (
    "GPU-hours = FLOPs / (45% MFU x 989.4 TFLOP/s H100 bf16 dense = 445 TFLOP/s) / 3600; "
    "FLOPs = 6·N·tokens for training (DP at the Poisson cap), 2·N·tokens for generation and embedding"
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
    if job.kind == "memorization":  # prefix and suffix of --docs documents of each split
        per = _number(r.get("prefix_tokens"), 32) + _number(r.get("suffix_tokens"), 32)
        return "generate", 2 * _number(r.get("docs"), 500) * per
    if job.kind == "mauve":
        seeds = len(r.get("seeds") or [0, 1, 2])
        return "generate", 2 * seeds * _number(r.get("n_samples"), 1000) * _number(r.get("max_length"), 256)
    return "none", 0.0


def model_of(job: Job) -> str | None:
    r = job.recipe
    api = str(r.get("api", ""))
    return r.get("model") or (api.split(":", 1)[1] if api.startswith("transformers:") else None)


def gpu_hours(job: Job, parameters: dict[str, float]) -> float | None:
    """The job's estimate, 0 for CPU jobs, None where its model's size is unknown."""
    if job.kind in CPU_KINDS or job.gpus == 0:
        return 0.0
    kind, count = tokens(job)
    n = {**PARAMETERS, **parameters}.get(model_of(job) or "")
    if n is None:
        return None
    return (6 if kind == "train" else 2) * n * count / THROUGHPUT / 3600


def print_plan(jobs: Sequence[Job], parameters: dict[str, float]) -> float:
    """Print the graph (job, after, tokens, GPU-hours) and the total; returns the total GPU-hours."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(jobs)} jobs", caption=FORMULA)
    for col in ("job", "after", "model", "tokens", "GPUs", "GPU-hours"):
        table.add_column(col, justify="right" if col in ("tokens", "GPUs", "GPU-hours") else "left")
    total, unknown = 0.0, 0
    for job in jobs:
        hours = gpu_hours(job, parameters)
        _, count = tokens(job)
        total += hours or 0.0
        unknown += hours is None
        table.add_row(job.name, ", ".join(job.after) or "-", model_of(job) or "-",
                      f"{count:.3g}" if count else "-", str(job.gpus),
                      "?" if hours is None else f"{hours:.2f}")  # fmt: skip
    console = Console(width=max(160, Console().width))
    console.print(table)
    note = f" (+ {unknown} jobs of unknown model size: add them under parameters:)" if unknown else ""
    console.print(f"total: {total:.1f} GPU-hours{note}")
    return total
