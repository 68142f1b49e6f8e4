"""The processes a local stage starts end with the command: a SIGKILL of ``news extract`` leaves none running.

datatrove's local executor runs tasks in a pool of forkserver processes beside a multiprocessing manager
(a fork of the command), and each extraction task forks a sandbox. None of them notices the command's
death on its own: each pool worker holds the forkserver's "clients alive" pipe open, so the forkserver
and the pool outlive the command and the workers finish their tasks unseen. So:

* a pool worker watches its parent's sentinel (a pipe the command holds; it reads EOF once the command
  is gone) in a thread, and kills itself then;
* every fork of the command or of a worker (the manager, the sandboxes) asks the kernel for a SIGKILL
  when its parent ends (Linux ``prctl(PR_SET_PDEATHSIG)``; elsewhere they end at their pipes' EOF);
* the forkserver then exits by itself, once no worker holds its pipe.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_forks_tied = False  # inherited by forks, with the hooks it stands for
_forking_pid = 0
_watching_in = 0  # the process whose parent a thread watches (a pool worker runs many tasks)


def die_with_parent(parent: int | None = None) -> None:
    """This process gets SIGKILL when its parent (``parent``: the pid it must be) ends."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid() if parent is None else parent
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != parent or parent == 1:  # it ended before the request: no signal will come
        os._exit(1)


def _remember_forking_pid() -> None:
    global _forking_pid
    _forking_pid = os.getpid()


def _tie_child() -> None:
    die_with_parent(_forking_pid)


def tie_forks() -> None:
    """Every process forked from this one from now on dies with it (the manager, the extractor sandbox)."""
    global _forks_tied
    if _forks_tied or not hasattr(os, "register_at_fork"):
        return
    os.register_at_fork(before=_remember_forking_pid, after_in_child=_tie_child)
    _forks_tied = True


def end_with(sentinel) -> None:
    """Kill this process as soon as ``sentinel`` (a multiprocessing parent sentinel) is ready: the
    process holding its other end has ended (once per process)."""
    import threading

    global _watching_in
    if _watching_in == os.getpid():
        return
    _watching_in = os.getpid()

    def watch() -> None:
        from multiprocess.connection import wait

        wait([sentinel])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


class TieToParent:
    """First step of every local pipeline (datatrove calls any callable step with the data so far; this
    one acts when called, not when iterated, as a reader ignores its input): a pool worker ends with the
    command, and its forks with it. In the command's own process (one worker) only the forks are tied:
    the command itself must be able to outlive its shell (``nohup``)."""

    def __call__(self, data=None, rank: int = 0, world_size: int = 1):
        import multiprocess

        parent = multiprocess.parent_process()
        if parent is not None and getattr(parent, "sentinel", None) is not None:
            end_with(parent.sentinel)
        tie_forks()
        return data

    def __repr__(self) -> str:  # the line datatrove logs for this step
        return "🔗 - LIFETIME: this task's processes end with the command"
