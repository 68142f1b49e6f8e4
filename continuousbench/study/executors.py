"""Where a study's jobs run: local processes, Ray tasks or Slurm jobs (through submitit).

Every executor runs :func:`execute` (one command in a child process, its output in the job's log), so a
job's result does not depend on where it ran. Local and Ray return futures; Slurm queues the whole
graph with ``afterok`` dependencies and returns, as ``news --executor slurm`` does.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from continuousbench.credentials import redact
from continuousbench.errors import UserError
from continuousbench.study.graph import Job


def execute(argv: Sequence[str], log: str, stdout: str | None = None, env: dict | None = None) -> int:
    """Run ``continuousbench <argv>`` in a child process, appending its output to ``log``; returns the
    exit status. ``stdout``: the command's standard output is kept there (written once it succeeded)."""
    from continuousbench.files import write_text

    Path(log).parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "continuousbench.cli", *argv]
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ continuousbench {redact(subprocess.list2cmdline(list(argv)))}\n")  # no key in a log
        out.flush()
        done = subprocess.run(command, stdout=subprocess.PIPE if stdout else out, stderr=out, text=True,
                              env={**os.environ, **(env or {})})  # fmt: skip
    if stdout and done.returncode == 0:
        Path(stdout).parent.mkdir(parents=True, exist_ok=True)
        write_text(stdout, done.stdout)
    return done.returncode


def run_on_slurm(argv: Sequence[str], log: str, stdout: str | None = None) -> None:
    """A Slurm job's body: the command, failing the job (and so its ``afterok`` dependants) on error."""
    code = execute(argv, log, stdout)
    if code:
        raise RuntimeError(f"continuousbench {argv[0]} exited with status {code}; see {log}")


def visible_gpus() -> list[str]:
    """The GPUs local jobs share: ``CUDA_VISIBLE_DEVICES`` if set, else every CUDA device."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [g for g in listed.split(",") if g.strip()]
    try:
        import torch

        return [str(i) for i in range(torch.cuda.device_count())]
    except ImportError:  # pragma: no cover
        return []


class LocalExecutor:
    """``parallel`` jobs at once in child processes: one GPU each (``CUDA_VISIBLE_DEVICES``) where GPUs
    exist, else one CPU thread each."""

    name = "local"

    def __init__(self, parallel: int | None = None):
        self.gpus: queue.Queue[str] = queue.Queue()
        for gpu in visible_gpus():
            self.gpus.put(gpu)
        self.total = self.gpus.qsize()
        self.parallel = parallel or self.total or os.cpu_count() or 1
        self.pool = ThreadPoolExecutor(self.parallel)

    def _run(self, job: Job, argv: Sequence[str]) -> int:
        wanted = min(job.gpus, self.total)
        held = [self.gpus.get() for _ in range(wanted)]  # blocks until a GPU is free
        env = {"CUDA_VISIBLE_DEVICES": ",".join(held)} if held else {"OMP_NUM_THREADS": "1",
                                                                      "CUDA_VISIBLE_DEVICES": ""}
        try:
            return execute(argv, str(job.log), str(job.stdout) if job.stdout else None, env)
        finally:
            for gpu in held:
                self.gpus.put(gpu)

    def start(self, job: Job, argv: Sequence[str]) -> tuple[Future, str]:
        return self.pool.submit(self._run, job, argv), f"pid-pool-{os.getpid()}"

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Ray tasks with ``num_gpus``/``num_cpus`` per job; joins ``RAY_ADDRESS`` or starts a local Ray."""

    name = "ray"

    def __init__(self, cpus_per_job: int = 1, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise ImportError("--executor ray needs Ray: pip install 'continuousbench[ray]'") from None
        self.ray, self.cpus = ray, cpus_per_job
        self.started = not ray.is_initialized()
        if self.started:
            kwargs = {"address": "auto"} if os.environ.get("RAY_ADDRESS") else {"num_cpus": num_cpus}
            ray.init(**kwargs, include_dashboard=False, log_to_driver=False)
        self.task = ray.remote(execute)
        self.total = int(ray.cluster_resources().get("GPU", 0))  # a GPU job on a CPU cluster: no GPU asked

    def start(self, job: Job, argv: Sequence[str]) -> tuple[Future, str]:
        gpus = min(job.gpus, self.total)
        ref = self.task.options(num_cpus=self.cpus, num_gpus=gpus, name=job.name).remote(
            list(argv), str(job.log), str(job.stdout) if job.stdout else None,
            None if gpus else {"OMP_NUM_THREADS": str(self.cpus), "CUDA_VISIBLE_DEVICES": ""},
        )  # fmt: skip
        return ref.future(), ref.hex()

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


class SlurmExecutor:
    """Each job an ``sbatch`` job through submitit, after its unfinished inputs (``afterok``)."""

    name = "slurm"

    def __init__(self, folder: Path, partition: str | None, time_min: int, cpus_per_job: int):
        if not partition:
            raise UserError("--executor slurm needs --partition <slurm partition>")
        try:
            import submitit
        except ImportError:
            raise ImportError("--executor slurm needs submitit: pip install 'continuousbench[slurm]'") from None  # noqa: E501
        self.executor = submitit.SlurmExecutor(folder=str(folder / "%j"))
        self.common = {"partition": partition, "time": time_min, "cpus_per_task": cpus_per_job}

    def submit(self, job: Job, argv: Sequence[str], after: Sequence[str]) -> str:
        """Queue ``job`` after the Slurm jobs ``after``; returns its Slurm job id."""
        extra = {"dependency": "afterok:" + ":".join(after)} if after else {}
        self.executor.update_parameters(job_name=job.name, gpus_per_node=job.gpus or None, **self.common,
                                        additional_parameters=extra)  # fmt: skip
        submitted = self.executor.submit(run_on_slurm, list(argv), str(job.log),
                                         str(job.stdout) if job.stdout else None)  # fmt: skip
        return str(submitted.job_id)
