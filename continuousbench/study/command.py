"""``continuousbench study``: run a study file's job graph on local processes, Slurm or Ray.

    continuousbench study --config recipes/paper/fig3-geminon-1b.yaml --plan
    continuousbench study --config STUDY.yaml [--executor local|slurm|ray] [--out DIR] [--resume]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from continuousbench.commands import bounds, command

EXECUTORS = ("local", "slurm", "ray")


@dataclass
class StudyArguments:
    study: str = field(
        metadata={"help": "The study file (YAML; recipes/paper/, docs/study.md).", "aliases": ["--config"]}
    )
    executor: str = field(
        default="local", metadata={"help": "local, slurm or ray.", "choices": list(EXECUTORS)}
    )
    out: str | None = field(default=None, metadata={"help": "Study folder (default studies/<name>)."})
    plan: bool = field(default=False, metadata={"help": "Print the job graph with GPU-hours; run nothing."})
    resume: bool = field(default=False, metadata={"help": "Rerun what failed or never ran."})
    jobs: int | None = field(
        default=None, metadata=bounds("[1, 4096]", "Jobs at once (local; default: one per GPU, or CPU).")
    )
    gpus_per_job: int | None = field(
        default=None, metadata=bounds("[0, 64]", "GPUs of each GPU job (default: the study's gpus, else 1).")
    )
    cpus_per_job: int = field(default=1, metadata=bounds("[1, 1024]", "CPUs per job (ray, slurm)."))
    ray_cpus: int | None = field(default=None, metadata=bounds("[1, 4096]", "CPUs of a local Ray (ray)."))
    partition: str | None = field(default=None, metadata={"help": "Slurm partition (slurm)."})
    time_min: int = field(default=24 * 60, metadata=bounds("[1, 1e6]", "Slurm time limit per job, minutes."))


def main(args: StudyArguments) -> dict:
    from continuousbench.files import check_writable_dir
    from continuousbench.study import executors
    from continuousbench.study.graph import expand
    from continuousbench.study.plan import print_plan
    from continuousbench.study.runner import Study, run_to_end, submit_slurm
    from continuousbench.study.schema import load_study

    study = load_study(args.study)
    out = Path(args.out or Path("studies") / study.name)
    jobs = expand(study, out.absolute())
    if args.gpus_per_job is not None:  # e.g. 0 on a CPU-only Slurm partition
        jobs = [replace(job, gpus=args.gpus_per_job if job.gpus else 0) for job in jobs]
    if args.plan:
        return {"gpu_hours": print_plan(jobs, study.parameters), "jobs": [j.name for j in jobs]}
    state = Study(jobs, check_writable_dir(out.absolute(), "--out"))
    state.check(args.resume)
    if args.executor == "slurm":
        folder = out.absolute() / "slurm"
        slurm = executors.SlurmExecutor(folder, args.partition, args.time_min, args.cpus_per_job)
        out.mkdir(parents=True, exist_ok=True)
        ids = submit_slurm(state, slurm)
        print("queued on Slurm; once the jobs finish, rerun with --resume (it reruns what failed)" if ids else
              f"study {study.name}: all {len(jobs)} jobs done; manifest in {state.file}", flush=True)
        return {"queued": ids}
    runner = (executors.LocalExecutor(args.jobs) if args.executor == "local"
              else executors.RayExecutor(args.cpus_per_job, args.ray_cpus))  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    statuses = run_to_end(state, runner, "rerun with --resume")
    print(f"study {study.name}: all {len(statuses)} jobs done; manifest in {state.file}", flush=True)
    return {"statuses": statuses}


make_parser, _cli = command(
    StudyArguments, "continuousbench study", __doc__.splitlines()[0], main,
    resume_hint="finished jobs are kept; rerun the same command with --resume to continue",
)  # fmt: skip


def cli(argv: Sequence[str] | None = None) -> dict:
    """``--config STUDY.yaml`` names the study file (not a recipe of this command's options)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return _cli([a.replace("--config", "--study", 1) if a.split("=")[0] == "--config" else a for a in args])
