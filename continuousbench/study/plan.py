"""``study --plan``: the job graph with each job's cost, the wall-clock on N GPUs and the disk it needs.

Each job is priced by its kind's model (:mod:`continuousbench.study.costs`: training and prefill by
FLOPs, decoding by bandwidth and batching, DP-SGD with its clipping's pass factor, an evaluation with its
validation and test QA passes) on the ``--gpu`` of the table (default: the A100 80GB the recipes were
made for); a job without a GPU on one CPU thread. The wall-clock places the jobs on ``--plan_gpus``
GPUs in the graph's order, each as soon as its inputs exist and a GPU is free.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from continuousbench.study import costs
from continuousbench.study.graph import CPU_KINDS, Job


@dataclass(frozen=True)
class Priced:
    job: Job
    model: str | None
    work: costs.Work
    hours: float | None  # on its device: a GPU, or one CPU thread (``on_cpu``)
    on_cpu: bool


def model_of(job: Job) -> str | None:
    r = job.recipe
    if job.kind == "build":  # a Geminon build screens its questions with a model (none: none)
        return r.get("model")
    api = str(r.get("api", ""))
    return r.get("model") or (api.split(":", 1)[1] if api.startswith("transformers:") else None)


def price(
    jobs: Sequence[Job], parameters: dict[str, float], device: costs.Device, rows: dict | None, track: str
) -> list[Priced]:
    """Each job's work and hours: on ``device``, or on one CPU thread for a job without a GPU."""
    priced = []
    for job in jobs:
        model = model_of(job)
        shape = costs.shape_of(model, parameters) if model else None
        work = costs.work(job, shape, rows, track)
        on_cpu = job.gpus == 0 or (job.kind in CPU_KINDS and job.kind != "build")  # a build screens on a GPU
        seconds = costs.seconds(work, shape, costs.CPU if on_cpu else device)
        if seconds is not None and on_cpu:
            seconds += costs.CPU_START_S if job.kind in costs.MODEL_KINDS else costs.BOOKKEEPING_START_S
        priced.append(Priced(job, model, work, None if seconds is None else seconds / 3600, on_cpu))
    return priced


def wall_clock(priced: Sequence[Priced], gpus: int) -> float:
    """Hours until the last job ends with ``gpus`` GPUs: each job in the graph's order, as soon as its
    inputs are made and (a GPU job) a GPU is free; CPU jobs need no GPU. Unknown jobs count 0."""
    free = [0.0] * gpus
    ends: dict[str, float] = {}
    for p in priced:
        ready = max((ends[a] for a in p.job.after if a in ends), default=0.0)
        hours = p.hours or 0.0
        if p.on_cpu:
            ends[p.job.name] = ready + hours
            continue
        first = min(range(gpus), key=free.__getitem__)
        start = max(ready, free[first])
        free[first] = ends[p.job.name] = start + hours
    return max(ends.values(), default=0.0)


def shown(path: str | None) -> str:
    """A model as the plan shows it: a local path whole and normalised (``a/../b`` -> ``b``), never cut;
    ids unchanged."""
    if not path:
        return "-"
    return str(Path(path).resolve()) if os.sep in path and Path(path).exists() else path


def _gb(size: float) -> str:
    return f"{size / 1e9:.3g} GB" if size >= 1e8 else f"{size / 1e6:.2g} MB"


def print_plan(jobs: Sequence[Job], parameters: dict[str, float], **kwargs) -> float:
    """:func:`show_plan`, returning the total GPU-hours (``release --plan``)."""
    return show_plan(jobs, parameters, **kwargs)["gpu_hours"]


def show_plan(
    jobs: Sequence[Job],
    parameters: dict[str, float],
    *,
    device: costs.Device | None = None,
    rows: dict | None = None,
    track: str = "geminon",
    gpus: int = 8,
) -> dict:
    """Print the graph (job, inputs, model, tokens, GPUs, GPU-hours on ``device``, CPU-hours, disk) and
    the totals; returns them (GPU-hours, CPU-hours, wall-clock on 1 and ``gpus`` GPUs, disk)."""
    from rich.console import Console
    from rich.table import Table

    device = device or costs.GPUS[costs.DEFAULT_GPU]
    priced = price(jobs, parameters, device, rows, track)
    on_cpu = any(p.on_cpu and p.work.flops for p in priced)
    table = Table(title=f"{len(jobs)} jobs, priced on one {device.name} per GPU job")
    columns = (
        "job",
        "after",
        "model",
        "tokens",
        "GPUs",
        "GPU-hours",
        *(("CPU-hours",) if on_cpu else ()),
        "disk",
    )
    whole = {"job": max(len(j.name) for j in jobs), "model": max(len(shown(p.model)) for p in priced)}
    for col in columns:  # job and model whole, on one line (a path cut is no path); `after` folds
        table.add_column(
            col,
            justify="left" if col in ("job", "after", "model") else "right",
            no_wrap=col in whole,
            min_width=whole.get(col),
            overflow="fold",
        )
    for p in priced:
        hours = "?" if p.hours is None else f"{p.hours:.2f}"
        table.add_row(
            p.job.name,
            ", ".join(p.job.after) or "-",
            shown(p.model),
            f"{p.work.tokens:.3g}" if p.work.tokens else "-",
            str(p.job.gpus),
            "0.00" if p.on_cpu else hours,
            *((hours if p.on_cpu else "0.00",) if on_cpu else ()),
            _gb(p.work.disk) if p.work.disk else "-",
        )
    console = Console(width=max(160, Console().width, sum(whole.values()) + 100))
    console.print(table)
    gpu_hours = sum(p.hours or 0.0 for p in priced if not p.on_cpu)
    cpu_hours = sum(p.hours or 0.0 for p in priced if p.on_cpu)
    unknown = sum(p.hours is None for p in priced)
    disk, scratch = sum(p.work.disk for p in priced), max((p.work.scratch for p in priced), default=0.0)
    totals = {
        "gpu_hours": gpu_hours,
        "cpu_hours": cpu_hours,
        "wall_hours": {1: wall_clock(priced, 1), gpus: wall_clock(priced, gpus)},
        "disk_bytes": disk + scratch,
    }
    note = (
        (
            f" (+ {unknown} jobs priced '?': a model of unknown size, to add under parameters:, or a NEWS "
            "build, whose LLM stages run on its endpoint)"
        )
        if unknown
        else ""
    )
    console.print(
        f"total: {gpu_hours:.1f} GPU-hours on {device.name}; {cpu_hours:.3g} CPU-hours for the "
        f"jobs without a GPU{note}"
    )
    console.print(
        f"wall-clock: {totals['wall_hours'][1]:.1f} h on 1 GPU, {totals['wall_hours'][gpus]:.1f} h "
        f"on {gpus} (--plan_gpus; a job waits for its inputs)"
    )
    console.print(f"disk: {_gb(disk)} kept, {_gb(disk + scratch)} at most while a job keeps its checkpoints")
    console.print(
        MODEL_NOTE.format(mfu=device.mfu, mbu=device.mbu, step=costs.STEP_S * 1e3, layer=device.layer_s * 1e3)
    )
    return totals


MODEL_NOTE = (
    "model (docs/study.md): training 6·N·tokens (full) or 4·N·tokens (LoRA, prompt tuning), x the clipping's "
    "pass factor under DP-SGD; prefill 2·N·tokens; FLOPs at {mfu:.0%} of the GPU's bf16 peak; a decode step "
    "reads the weights and the batch's KV cache at {mbu:.0%} of its bandwidth, at least {step:.1f} ms + "
    "{layer:.2f} ms a layer (eager generate); evaluation counts its validation and test QA passes"
)


def release_preset(release: str | None) -> tuple[str, str] | None:
    """(track, size) of a release id (a release not built yet is planned from its size preset)."""
    from continuousbench.release.ids import ReleaseId

    try:
        rid = ReleaseId.parse(str(release))
    except ValueError:
        return None
    return rid.track, rid.size


def release_rows(study, folder: str | None) -> tuple[str, dict | None]:
    """(track, row counts) of the study's release: its manifest's, else its size preset's."""
    from continuousbench.release.load import read_manifest
    from continuousbench.study.costs import preset_rows

    if folder is not None:
        manifest = read_manifest(Path(folder))
        return manifest["track"], manifest.get("rows")
    if study.build is not None:
        track, size = study.build.track, str(study.build.options.get("size", "small"))
    else:
        track, size = release_preset(study.release) or ("geminon", "small")
    return track, preset_rows(track, size)


def calibration(study_file: str | Path, measured: dict[str, float]) -> dict[str, tuple[float, float, int]]:
    """Per job kind: (measured seconds, the plan's CPU estimate, jobs) over the jobs of ``study_file``
    (a CPU study) that ``measured`` times: how far the CPU model is from what the jobs took."""
    from continuousbench.study.graph import expand
    from continuousbench.study.schema import load_study

    study = load_study(study_file)
    track, rows = release_rows(study, None)
    kinds: dict[str, tuple[float, float, int]] = {}
    for p in price(expand(study, Path(study_file).parent), study.parameters, costs.CPU, rows, track):
        if p.job.name in measured and p.hours is not None:
            took, guessed, count = kinds.get(p.job.kind, (0.0, 0.0, 0))
            kinds[p.job.kind] = (took + measured[p.job.name], guessed + p.hours * 3600, count + 1)
    return kinds
