"""Where a study's jobs run: local processes, Ray tasks or Slurm jobs (through submitit).

Every executor runs :func:`execute` (one command in a child process, its output in the job's log), so a
job's result does not depend on where it ran. Local and Ray return futures; Slurm queues the whole
graph with ``afterok`` dependencies and returns, as ``news --executor slurm`` does.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from continuousbench.credentials import redact
from continuousbench.news.slurm_options import ClusterArguments, slurm_minutes
from continuousbench.study.graph import Job


def execute(
    argv: Sequence[str],
    log: str,
    stdout: str | None = None,
    env: dict | None = None,
    live: set | None = None,
    fork: bool = False,
    entry: str = "continuousbench.cli:main",
) -> int:
    """Run ``continuousbench <argv>`` in a child process, appending its output to ``log``; returns the
    exit status. ``stdout``: the command's standard output is kept there (written once it succeeded).
    ``live``: the child is in it while it runs, so a stopped study can interrupt it. ``fork``: the child
    is forked from a server that imported the heavy libraries once (:mod:`continuousbench.study.forked`)
    instead of being a fresh ``python -m continuousbench.cli``; it calls ``entry`` (``module:function``).
    A child killed by a signal (or orphaned by its fork server) gets a last line in its log saying so:
    what it printed last may be a progress bar."""
    from continuousbench.files import write_text

    with open_log(log) as out:
        out.write(f"$ continuousbench {redact(subprocess.list2cmdline(list(argv)))}\n")  # no key in a log
        out.flush()
        env = {**os.environ, **(env or {})}
        if fork:
            from continuousbench.study.forked import ForkedJob

            child = ForkedJob(argv, log, stdout, env, entry)  # writes ``stdout``
        else:  # faulthandler: a crash in native code leaves the Python stack in the log
            command = [sys.executable, "-m", "continuousbench.cli", *argv]
            child = subprocess.Popen(
                command,
                stdout=subprocess.PIPE if stdout else out,
                stderr=out,
                text=True,
                env={**env, "PYTHONFAULTHANDLER": "1"},
            )
        if live is not None:
            live.add(child)
        try:
            printed, _ = child.communicate()
        except KeyboardInterrupt:  # a cancelled Ray task: its command is stopped as Ctrl-C stops it
            interrupt({child}, grace=0)
            raise
        finally:
            if live is not None:
                live.discard(child)
        ending = exit_line(child.returncode, getattr(child, "lost", False))
        if ending:
            out.write(f"[continuousbench study] {ending}\n")
    if stdout and child.returncode == 0 and not fork:
        Path(stdout).parent.mkdir(parents=True, exist_ok=True)
        write_text(stdout, printed)
    return child.returncode


# What a job killed by a signal most likely met, for its log's last line and the study's progress line.
SIGNAL_CAUSES = {
    "SIGSEGV": "a crash in native code (torch, a tokenizer, a driver); the Python stack above shows where",
    "SIGBUS": "a crash in native code, or a memory-mapped file that shrank (a dataset rewritten meanwhile)",
    "SIGABRT": "a native library aborted (its message is above)",
    "SIGKILL": "often the out-of-memory killer (see `dmesg`) or a scheduler's limit; lower its batch sizes",
    "SIGTERM": "stopped from outside (a scheduler's time limit, `kill`)",
    "SIGINT": "interrupted as Ctrl-C: it keeps its finished work for --resume",
}


def exit_line(code: int | None, lost: bool = False) -> str | None:
    """How a child ended, when its own output may not say it: killed by a signal (by name, with its
    likely cause) or orphaned by its fork server; None for an exit status."""
    import signal

    if lost:
        return (
            "the study's fork server ended while this job ran (killed?); the job was stopped as Ctrl-C "
            "stops it (it keeps its finished work) and waited for; --resume runs it again"
        )
    if code is None or code >= 0:
        return None
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"killed by signal {-code}"
    return f"killed by {name}" + (f": {SIGNAL_CAUSES[name]}" if name in SIGNAL_CAUSES else "")


def open_log(log: str | Path):
    """A job's log, opened to append, created readable by its owner alone (0600, in a 0700 folder): a
    job's standard error may hold what its command printed about private records (docs/study.md)."""
    path = Path(log)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    if hasattr(os, "fchmod"):  # a log made before, by an older version or under another umask
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")


def interrupt(children: set, grace: float = 5.0, patience: float = 120.0) -> None:
    """Stop running jobs as Ctrl-C stops a command: SIGINT (each keeps its finished work for ``--resume``),
    then wait. A Ctrl-C at a terminal reached them already, so they get ``grace`` seconds to end on their
    own first (a second SIGINT could cut their cleanup); what outlives ``patience`` is killed."""
    import signal
    import time

    deadline = time.monotonic() + grace
    for child in list(children):
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(max(0.0, deadline - time.monotonic()))
    for child in list(children):
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    for child in list(children):
        try:
            child.wait(patience)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


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
    exist, else one CPU thread each. ``fork`` (the default where the platform has a fork server): each job
    forked from a server that imported torch and co. once; else each a fresh interpreter, as on Ray and
    Slurm (``CONTINUOUSBENCH_JOB_START=subprocess`` asks for that). A job whose recipe sets ``env:`` is
    always a fresh interpreter: the server's libraries read their variables (``HF_HUB_OFFLINE``,
    ``OMP_NUM_THREADS``, ...) when it imported them, before the recipe could set them."""

    name = "local"

    def __init__(self, parallel: int | None = None, fork: bool | None = None):
        from continuousbench.study import forked

        self.fork = (forked.wanted() if fork is None else fork) and forked.available()
        self.gpus: queue.Queue[str] = queue.Queue()
        for gpu in visible_gpus():
            self.gpus.put(gpu)
        self.total = self.gpus.qsize()
        self.parallel = parallel or self.total or os.cpu_count() or 1
        self.pool = ThreadPoolExecutor(self.parallel)
        self.live: set = set()  # the running jobs' processes (Popen or ForkedJob)
        self.stopping = False

    def _run(self, job: Job, argv: Sequence[str]) -> int:
        wanted = min(job.gpus, self.total)
        held = [self.gpus.get() for _ in range(wanted)]  # blocks until a GPU is free
        env = (
            {"CUDA_VISIBLE_DEVICES": ",".join(held)}
            if held
            else {"OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
        )
        try:
            if self.stopping:  # the study was stopped while this job waited for a GPU
                return 130
            return execute(
                argv,
                str(job.log),
                str(job.stdout) if job.stdout else None,
                env,
                self.live,
                self.fork and not job.recipe.get("env"),
            )
        finally:
            for gpu in held:
                self.gpus.put(gpu)

    def start(self, job: Job, argv: Sequence[str]) -> tuple[Future, str]:
        return self.pool.submit(self._run, job, argv), f"pid-pool-{os.getpid()}"

    def stop(self, grace: float = 5.0) -> None:
        """Interrupt the running jobs and wait for them (the study was stopped; see :func:`interrupt`)."""
        self.stopping = True
        interrupt(self.live, grace)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.fork:
            from continuousbench.study.forked import stop_server

            stop_server()


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
        self.refs: list = []
        self.total = int(ray.cluster_resources().get("GPU", 0))  # a GPU job on a CPU cluster: no GPU asked

    def start(self, job: Job, argv: Sequence[str]) -> tuple[Future, str]:
        gpus = min(job.gpus, self.total)
        ref = self.task.options(num_cpus=self.cpus, num_gpus=gpus, name=job.name).remote(
            list(argv),
            str(job.log),
            str(job.stdout) if job.stdout else None,
            None if gpus else {"OMP_NUM_THREADS": str(self.cpus), "CUDA_VISIBLE_DEVICES": ""},
        )
        self.refs.append(ref)
        return ref.future(), ref.hex()

    def stop(self, grace: float = 5.0) -> None:
        """Cancel the running tasks (Ray interrupts a task as Ctrl-C would; ``force`` would kill it)."""
        for ref in self.refs:
            with contextlib.suppress(Exception):  # a finished task cannot be cancelled
                self.ray.cancel(ref)

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


class SlurmExecutor:
    """Each job an ``sbatch`` job through submitit, after its unfinished inputs (``afterok``)."""

    name = "slurm"

    def __init__(self, folder: Path, cluster: ClusterArguments):
        cluster.check_cluster()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # submitit's logs: a job's stderr too
        try:
            import submitit
        except ImportError:
            raise ImportError(
                "--executor slurm needs submitit: pip install 'continuousbench[slurm]'"
            ) from None  # noqa: E501
        self.executor = submitit.SlurmExecutor(folder=str(folder / "%j"))
        self.common = {
            "partition": cluster.partition,
            "time": slurm_minutes(cluster.time),
            "cpus_per_task": cluster.cpus_per_task,
            "mem_per_cpu": f"{round(cluster.mem_per_cpu_gb * 1024)}M",
        }

    def submit(self, job: Job, argv: Sequence[str], after: Sequence[str]) -> str:
        """Queue ``job`` after the Slurm jobs ``after``; returns its Slurm job id."""
        extra = {"dependency": "afterok:" + ":".join(after)} if after else {}
        self.executor.update_parameters(
            job_name=job.name, gpus_per_node=job.gpus or None, **self.common, additional_parameters=extra
        )
        submitted = self.executor.submit(
            run_on_slurm, list(argv), str(job.log), str(job.stdout) if job.stdout else None
        )
        return str(submitted.job_id)
