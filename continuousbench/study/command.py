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
from continuousbench.errors import UserError
from continuousbench.news.slurm_options import ClusterArguments


@dataclass
class StudyArguments:
    study: str = field(
        metadata={"help": "The study file (YAML; recipes/paper/, docs/study.md).", "aliases": ["--config"]}
    )
    out: str | None = field(default=None, metadata={"help": "Study folder (default studies/<name>)."})
    plan: bool = field(default=False, metadata={"help": "Check every job and print the graph; run nothing."})
    resume: bool = field(default=False, metadata={"help": "Rerun what failed or never ran."})
    jobs: int | None = field(
        default=None, metadata=bounds("[1, 4096]", "Jobs at once (local; default: one per GPU, or CPU).")
    )
    gpus_per_job: int | None = field(
        default=None, metadata=bounds("[0, 64]", "GPUs of each GPU job (default: the study's gpus, else 1).")
    )
    ray_cpus: int | None = field(default=None, metadata=bounds("[1, 4096]", "CPUs of a local Ray (ray)."))
    gpu: str = field(
        default="a100-80gb",
        metadata={
            "help": "--plan: the GPU jobs are priced on (a100-40gb, a100-80gb, h100, h100-pcie, h200, "
            "l40s; default: the recipes' A100 80GB)."
        },
    )
    plan_gpus: int = field(default=8, metadata=bounds("[1, 4096]", "--plan: GPUs of the wall-clock shown."))


def main(args: StudyArguments, cluster: ClusterArguments) -> dict:
    from continuousbench.files import check_writable_dir
    from continuousbench.locks import lock_folder
    from continuousbench.study import executors
    from continuousbench.study.check import check_jobs, check_release
    from continuousbench.study.graph import expand
    from continuousbench.study.plan import release_preset, release_rows, show_plan
    from continuousbench.study.runner import Study, run_to_end, submit_slurm
    from continuousbench.study.schema import load_study

    study = load_study(args.study)
    for name, corpus in study.corpora.items():
        if corpus.privacy is None:  # ranked apart, not as DP data: said before anything runs
            print(
                f'corpus {name} has no privacy statement: its runs are listed as "no statement" (give '
                f"corpora: {{{name}: {{path: ..., privacy: <statement.json>}}}}; docs/results-format.md)",
                flush=True,
            )
    out = Path(args.out or Path("studies") / study.name)
    jobs = expand(study, out.absolute())
    if args.gpus_per_job is not None:  # e.g. 0 on a CPU-only Slurm partition
        jobs = [replace(job, gpus=args.gpus_per_job if job.gpus else 0) for job in jobs]
    if not args.plan:
        cluster.check_cluster()  # before the jobs' own checks: a study that cannot be queued stops here
    device = gpu_of(args.gpu)
    if study.build is None:
        try:
            folder = check_release(study.path(study.release), f"--config {args.study}")
        except UserError:
            if not args.plan or release_preset(study.release) is None:
                raise
            build, jobs = planned_build(study.release, jobs)  # priced before it exists
            jobs, folder = [build, *jobs], None
    check_jobs(jobs, f"--config {args.study}")  # each job parsed by its command, before anything runs
    if args.plan:
        track, rows = release_rows(study, folder if study.build is None else None)
        totals = show_plan(jobs, study.parameters, device=device, rows=rows, track=track, gpus=args.plan_gpus)
        show_corpora(study)
        return {**totals, "jobs": [j.name for j in jobs]}
    folder = check_writable_dir(out.absolute(), "--out")
    lock_folder(folder, "study")  # a second study into this folder is refused at once, naming this pid
    state = Study(jobs, folder)
    state.check(args.resume)
    if cluster.executor == "slurm":
        slurm = executors.SlurmExecutor(folder / "slurm", cluster)
        ids = submit_slurm(state, slurm)
        print(
            "queued on Slurm; once the jobs finish, rerun with --resume (it reruns what failed)"
            if ids
            else f"study {study.name}: all {len(jobs)} jobs done; manifest in {state.file}",
            flush=True,
        )
        return {"queued": ids}
    runner = (
        executors.LocalExecutor(args.jobs)
        if cluster.executor == "local"
        else executors.RayExecutor(cluster.cpus_per_task, args.ray_cpus)
    )
    statuses = run_to_end(state, runner, "rerun with --resume")
    print(f"study {study.name}: all {len(statuses)} jobs done; manifest in {state.file}", flush=True)
    report = next((j for j in jobs if j.kind == "report"), None)
    if report is not None and report.done.is_file():  # the finished study's table, as the demo prints it
        print(report.done.read_text(encoding="utf-8"), end="", flush=True)
    return {"statuses": statuses}


def gpu_of(name: str):
    """``--gpu``'s row of the table, or one line listing the names."""
    from continuousbench.study.costs import GPUS

    if name not in GPUS:
        raise UserError(f"--gpu {name} is not in the table; use one of {', '.join(GPUS)}")
    return GPUS[name]


def planned_build(release: str, jobs: list):
    """The build job of a release the study names but that is not built yet: ``--plan`` prices it, and
    every job that reads the release waits for it (a run still needs it built first)."""
    from dataclasses import replace

    from continuousbench.study.graph import Job, screening_gpus, screening_recipe
    from continuousbench.study.plan import release_preset

    track, size = release_preset(release)
    rid = str(release)
    print(
        f"release {rid} is not built yet: planned as its build job (continuousbench build {track} --size "
        f"{size}); a run needs it built first, or give the study build: instead of release:"
    )
    screening = screening_recipe(track, size, None)
    recipe = {"track": track, "size": size, **screening}
    build = Job(
        f"build/{rid}",
        "build",
        ("build", track),
        Path(rid),
        Path(rid) / "release.json",
        gpus=screening_gpus(screening),
        recipe=recipe,
    )
    return build, [replace(j, after=(build.name, *j.after)) if not j.after else j for j in jobs]


def show_corpora(study) -> None:
    """The participant's corpora as their jobs read them: each path whole, and its statement or none."""
    for name in study.corpora:
        source, statement = study.corpus(name)
        print(f"corpus {name}: {source}; privacy statement: {statement or 'none (listed as no statement)'}")


make_parser, _cli = command(
    (StudyArguments, ClusterArguments),
    "continuousbench study",
    __doc__.splitlines()[0],
    main,
    resume_hint="finished jobs are kept; rerun the same command with --resume to continue",
)


def cli(argv: Sequence[str] | None = None) -> dict:
    """``--config STUDY.yaml`` names the study file (not a recipe of this command's options)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return _cli([a.replace("--config", "--study", 1) if a.split("=")[0] == "--config" else a for a in args])
