"""Local study jobs forked from a server that imported torch, transformers, trl and datasets once.

A job in a fresh interpreter spends seconds of CPU importing those libraries before its own work; a
study of twenty short jobs pays that twenty times. Here :mod:`multiprocessing`'s fork server imports
them once, then forks a process per job, which is still a process of its own: the study's working
folder and environment (the job's ``CUDA_VISIBLE_DEVICES``, ``OMP_NUM_THREADS``), its standard output
and error on the job's log at the file-descriptor level (so logging handlers, tqdm and native code
write there), its exit status, and SIGINT as Ctrl-C. The server ignores SIGINT itself and forks each
job with the default handlers back.

What the server imported once is shared, settings read at import included: so the server must not
initialise CUDA while importing (a job's ``CUDA_VISIBLE_DEVICES`` would be ignored, and CUDA cannot be
used again in a forked child): each job checks the server's :data:`CUDA_AT_PRELOAD` first and refuses to
run in one line. A job whose recipe sets ``env:`` is not forked at all (the executor starts a fresh
interpreter: a library imported here read its variables before the recipe set them). A job ends with
its server: on Linux it gets SIGINT (Ctrl-C: it keeps its finished work) when the server dies, and the
study waits for it before it goes on, so a killed server leaves no job running on unseen.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

# What a job would import itself; a name that is not installed is skipped by the server. Not
# continuousbench.cli: a study run as ``python -m continuousbench.cli`` has each job import its ``__main__``
# again (multiprocessing's rule), which warns when that module is in the server already.
PRELOAD = ["torch", "transformers", "trl", "datasets", "peft"]

START_ENV = "CONTINUOUSBENCH_JOB_START"
PR_SET_PDEATHSIG = 1  # Linux prctl(2): a signal for this process when its parent dies
# The fork server's sentinels are read by whichever thread polls first (``Process.start`` polls every
# child): starting and reaping under one lock keeps two threads from reading one exit status.
_reaping = threading.Lock()


def available() -> bool:
    """Whether this platform has a fork server (Linux, macOS; not Windows)."""
    return "forkserver" in multiprocessing.get_all_start_methods()


def wanted() -> bool:
    """``CONTINUOUSBENCH_JOB_START``: ``fork`` (the default) or ``subprocess`` (a fresh interpreter a job)."""
    from continuousbench.errors import UserError

    way = os.environ.get(START_ENV, "fork")
    if way not in ("fork", "subprocess"):
        raise UserError(
            f"{START_ENV}={way!r} is not a way to start a job; set it to fork or subprocess "
            "(or unset it: fork)"
        )
    return way == "fork"


def _cuda_initialised() -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_initialized()


# Imported by the fork server after PRELOAD (it is the last module preloaded): whether those imports
# initialised CUDA there; jobs forked from it inherit the value. Elsewhere: this process's state.
CUDA_AT_PRELOAD = _cuda_initialised()
NO_CUDA = (
    "the study's fork server initialised CUDA while importing {modules} (a library probed the GPU at "
    "import), so a job forked from it cannot choose or use its GPU; run the study with "
    f"{START_ENV}=subprocess"
)


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*PRELOAD, __name__])
    return context


def _die_with_server() -> None:
    """Get SIGINT (as Ctrl-C) once when the fork server, this job's parent, dies (Linux): a killed server
    leaves no job running on unseen, and the job keeps its finished work for ``--resume``. The kernel
    signals a child once for every thread of its parent that exits (the preloaded libraries start
    threads), so the parent-death signal is SIGUSR2, turned into a single SIGINT here: a second one would
    cut the job's own cleanup."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    server, fired = os.getppid(), []

    def lost(signum: int, frame: object) -> None:
        if not fired:
            fired.append(signum)
            os.kill(os.getpid(), signal.SIGINT)

    signal.signal(signal.SIGUSR2, lost)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGUSR2)
    if os.getppid() != server:  # it died before the request was made
        lost(signal.SIGUSR2, None)


def _status(stop: SystemExit) -> int:
    """The exit status an interpreter gives ``sys.exit(code)``: a message is printed, status 1."""
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    print(stop.code, file=sys.stderr)
    return 1


def _run(argv: Sequence[str], entry: str) -> int:
    import importlib
    import traceback

    module, _, name = entry.partition(":")
    try:
        main = getattr(importlib.import_module(module), name)
        sys.argv = [sys.modules[module].__file__ or module, *argv]  # as ``python -m module argv`` has it
        main(list(argv))
        return 0
    except SystemExit as stop:
        return _status(stop)
    except KeyboardInterrupt:  # ends by SIGINT as an interpreter does (status -2), traceback in the log
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        raise
    except BaseException:
        traceback.print_exc()
        return 1


def _job(argv: Sequence[str], log: str, stdout: str | None, env: dict, cwd: str, entry: str) -> None:
    """The forked job's body: the study's folder and environment, fds 1 and 2 on the log (stdout on a
    temporary file when it is kept, written once the command succeeded), then ``entry(argv)``."""
    import atexit
    import faulthandler
    import tempfile

    _die_with_server()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    threads = env.get("OMP_NUM_THREADS")
    if threads and "torch" in sys.modules:  # the server's OpenMP read the variable before the job set it
        sys.modules["torch"].set_num_threads(int(threads))
    if "numpy" in sys.modules:  # numpy's global generator, seeded once in the server: fresh per job, as
        sys.modules["numpy"].random.seed()  # a new interpreter has it (Python's `random` reseeds at fork)
    with open(log, "a", encoding="utf-8") as out, tempfile.TemporaryFile("w+", encoding="utf-8") as kept:
        os.dup2(out.fileno(), 2)
        os.dup2((kept if stdout else out).fileno(), 1)
        faulthandler.enable()  # a crash in native code (SIGSEGV) leaves the Python stack in the log
        if CUDA_AT_PRELOAD:
            print(f"error: {NO_CUDA.format(modules=', '.join(PRELOAD))}", file=sys.stderr, flush=True)
            raise SystemExit(1)
        code = _run(argv, entry)
        atexit._run_exitfuncs()  # what the interpreter runs at exit (a job's own handlers included)
        sys.stdout.flush()
        sys.stderr.flush()
        if stdout and code == 0:
            from pathlib import Path

            from continuousbench.files import write_text

            Path(stdout).parent.mkdir(parents=True, exist_ok=True)
            kept.seek(0)
            write_text(stdout, kept.read())
    raise SystemExit(code)


class ForkedJob:
    """A forked job with the part of :class:`subprocess.Popen` the executor uses (``poll``, ``wait``,
    ``send_signal``, ``kill``, ``returncode``); :meth:`communicate` is called by one thread only."""

    def __init__(
        self,
        argv: Sequence[str],
        log: str,
        stdout: str | None,
        env: dict,
        entry: str = "continuousbench.cli:main",
    ):
        """``entry``: ``module:function`` called with ``argv`` in the job (the CLI; a test's probe)."""
        job = (list(argv), log, stdout, env, os.getcwd(), entry)
        self.process = _context().Process(target=_job, args=job, name=f"continuousbench {' '.join(argv[:1])}")
        self.returncode: int | None = None
        self.lost = False  # its server died while it ran (it was then stopped and waited for)
        self.ended = threading.Event()
        with _reaping:
            self.process.start()
        self.pid = self.process.pid

    def communicate(self) -> tuple[None, None]:
        from multiprocessing.connection import wait

        wait([self.process.sentinel])  # readable once the job ended, or its server died; read under the lock
        with _reaping:
            self.process.join()
        self.returncode = self.process.exitcode
        self.lost = _running(self.pid)  # the server died first: the job runs on, no longer its child
        if self.lost:
            _outlive(self.pid)
        self.ended.set()
        return None, None

    def poll(self) -> int | None:
        return self.returncode if self.ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int | None:
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.process.name, timeout or 0)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if not self.ended.is_set():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, ended but not yet reaped by its new parent, does not)."""
    try:
        os.kill(pid, 0)
    except OSError:  # ended (or, long after, the pid went to another user's process)
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:  # ended meanwhile; or no /proc (macOS), where kill() answered
        return not os.path.isdir("/proc")


def _outlive(pid: int, patience: float = 120.0) -> None:
    """Wait for an orphaned job to end: it got SIGINT when its server died (Linux; elsewhere it gets it
    now); one that outlives ``patience`` is killed. The study starts no job in its place meanwhile."""
    import time

    if not sys.platform.startswith("linux"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + patience
    while _running(pid) and time.monotonic() < deadline + 5:
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def stop_server() -> None:
    """End the fork server and the resource tracker it started (a study's executor closed), each waited
    for: no process of the study outlives it, not even as a zombie."""
    from multiprocessing import forkserver, resource_tracker

    with _reaping:  # private, but in every CPython from 3.8 on (their own tests call them); skipped if gone
        for server in (forkserver._forkserver, resource_tracker._resource_tracker):
            getattr(server, "_stop", lambda: None)()
