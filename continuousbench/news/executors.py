"""datatrove executors for the parallel stages (extract, dedup): local by default, Slurm or Ray unchanged.

A stage is one or more datatrove pipelines run in order (each a list of steps and a task count). The
executors' own completion markers (``logs/<pipeline>/completions/``) make every task resumable: a
rerun skips finished tasks. Slurm returns as soon as the jobs are queued; rerunning the command with
``--resume`` once they have finished publishes the output (a rerun while ``squeue`` still lists them
is refused; one after a failed job submits the unfinished tasks again). ``tests/news/test_executors.py``
runs the Slurm path end to end on a one-machine stand-in for ``sbatch``/``srun``/``squeue``,
and the Ray path on a local Ray cluster.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datatrove.utils.logging import logger

from continuousbench.commands import bounds, debugging, one_line
from continuousbench.errors import UserError
from continuousbench.news.slurm_options import ClusterArguments, slurm_minutes

LABELS = ("records", "articles", "candidate_pairs")  # our steps' other counters (not datatrove's own)
PREFIXES = ("dropped_", "skipped_", "truncated_", "dated_from_")  # ... and their families


@dataclass
class ExecutorArguments(ClusterArguments):
    """Where the datatrove pipelines run: the cluster options, tasks and workers."""

    tasks: int = field(default=1, metadata=bounds("[1, inf)", "Tasks: input shards are split among them."))
    workers: int = field(default=1, metadata=bounds("[1, inf)", "Tasks run at once (local/ray)."))
    venv_path: str | None = field(default=None, metadata={"help": "Virtualenv to activate (slurm only)."})


def _bad_input_without_traceback(record: dict) -> None:
    """datatrove logs a failed task's exception with its traceback; when the exception is bad input
    (our one error path turns it into one line), the line is enough: the traceback is dropped."""
    found = record["exception"]
    if found is not None and found.value is not None and one_line(found.value) and not debugging():
        record["exception"] = None


# Set at import: every process that runs our steps imports this module (datatrove's forkserver workers
# unpickle the steps, which import it), and datatrove replaces the log handlers, not the patcher.
logger.configure(patcher=_bad_input_without_traceback)


@dataclass
class Pipeline:
    """One datatrove pipeline of a stage: its steps and how many tasks split its input."""

    name: str
    steps: list
    tasks: int


def _executor(args: ExecutorArguments, pipeline: Pipeline, logs: Path, depends: Any) -> Any:
    common = {"pipeline": pipeline.steps, "tasks": pipeline.tasks, "logging_dir": str(logs / pipeline.name)}
    if args.executor == "local":
        from datatrove.executor import LocalPipelineExecutor

        from continuousbench.news.lifetime import TieToParent, tie_forks

        tie_forks()  # the executor's manager, and the sandboxes of a task run in this process
        workers = min(args.workers, pipeline.tasks)
        common["pipeline"] = [TieToParent(), *pipeline.steps]  # each pool worker, and its sandboxes
        return LocalPipelineExecutor(**common, workers=workers, depends=depends)
    if args.executor == "slurm":
        args.check_cluster()
        from datatrove.executor import SlurmPipelineExecutor

        return SlurmPipelineExecutor(
            **common,
            time=_hms(args.time),
            partition=args.partition,
            cpus_per_task=args.cpus_per_task,
            mem_per_cpu_gb=args.mem_per_cpu_gb,
            venv_path=args.venv_path,
            depends=depends,
            job_name=f"news-{pipeline.name}",
        )
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ImportError("--executor ray needs Ray: pip install 'continuousbench[ray]'") from None
    from datatrove.executor import RayPipelineExecutor

    return RayPipelineExecutor(
        **common,
        workers=args.workers,
        cpus_per_task=args.cpus_per_task,
        mem_per_cpu_gb=args.mem_per_cpu_gb,
        depends=depends,
    )


def _hms(value: str) -> str:
    """``--time`` as ``HH:MM:SS`` (what datatrove passes to sbatch), the same limit whatever form it had."""
    minutes = slurm_minutes(value)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


SLURM_JOBS = "slurm_jobs.json"  # in the logs folder: the job ids this stage last submitted


def check_none_queued(logs: Path, file: str = SLURM_JOBS, what: str = "this stage") -> None:
    """Refuse to submit a stage again while its last submission (job ids in ``logs/file``) is still
    queued or running on Slurm (``study --executor slurm`` applies the same rule to a study).

    datatrove resubmits every unfinished task, which is what a rerun after a failed job needs; a rerun
    before the jobs ran would queue a second copy of them, writing the same files.
    """
    import subprocess

    from continuousbench.files import read_json

    jobs = read_json(logs / file) if (logs / file).is_file() else {}
    ids = [str(i) for i in jobs.values() if i not in (None, -1)]  # -1: nothing was left to submit
    if not ids:
        return
    try:
        listed = subprocess.run(
            ["squeue", "--noheader", "--format=%i", f"--jobs={','.join(ids)}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return  # no squeue to ask: sbatch itself decides
    if listed.returncode == 0 and listed.stdout.strip():  # finished jobs are not listed, or unknown (rc 1)
        raise UserError(
            f"Slurm jobs {', '.join(ids)} of {what} are still queued or running (squeue --jobs="
            f"{','.join(ids)}); rerun with --resume once they have finished"
        )


def run_pipelines(pipelines: Sequence[Pipeline], args: ExecutorArguments, logs: Path) -> bool:
    """Run the pipelines in order (each depends on the one before); True once every task has finished."""
    executors, depends = [], None
    for pipeline in pipelines:
        depends = _executor(args, pipeline, logs, depends)
        executors.append(depends)
    if args.executor == "local":
        for executor in executors:  # in order, so a failure stops before the next pipeline starts
            executor.run()
    elif args.executor == "slurm":
        from continuousbench.files import write_json

        check_none_queued(logs)
        executors[-1].run()  # submits its dependencies first
        write_json(logs / SLURM_JOBS, {p.name: e.job_id for p, e in zip(pipelines, executors, strict=True)})
    else:
        executors[-1].run()  # runs its dependencies first
    return all(not e.get_incomplete_ranks() for e in executors)


def queued(output: str) -> str:
    """What a command prints when it has queued Slurm jobs instead of finishing."""
    return f"queued on Slurm; once the jobs finish, rerun the same command with --resume to publish {output}"


def pipeline_counts(logs: Path, names: Sequence[str]) -> dict[str, int]:
    """Counters of our steps (``dropped_*`` and friends) summed over every task of the named pipelines."""
    counts: dict[str, int] = {}
    for name in names:
        for path in sorted((logs / name / "stats").glob("*.json")):
            for step in json.loads(path.read_text()):
                for label, value in step.get("stats", {}).items():
                    if not label.startswith(PREFIXES) and label not in LABELS:
                        continue
                    total = value.get("total", 0) if isinstance(value, dict) else value
                    counts[label] = counts.get(label, 0) + int(total)
    return dict(sorted(counts.items()))
