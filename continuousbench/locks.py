"""One command at a time per output: an OS lock (``.continuousbench.lock``, dying with its process) held
while a command writes a folder or a release; a second writer fails at once naming the holder's pid.
Re-entrant within one thread, so a command run inside another (audit's generator) goes on."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError

LOCK_FILE = ".continuousbench.lock"  # held while a command writes the folder; holds the holder's pid
_LOCKS: dict[Path, tuple[Any, str, int, Path]] = {}  # lock file -> (lock, command, thread, what it guards)


def _take_lock(path: Path, command: str, busy: str, guards: Path) -> str | None:
    """Take the OS lock at ``path`` for ``command`` (writing ``guards``: an output folder, a release) at
    once and write our pid into it; returns the command of this thread that already holds it (a command
    run inside another), else None.

    Another holder is one line, at once: ``busy`` with ``{holder}`` filled in (its pid, or this process's
    command).
    """
    from filelock import FileLock, Timeout

    path = Path(path).resolve()
    if path in _LOCKS:
        _, holder, thread, _ = _LOCKS[path]
        if thread == threading.get_ident():  # a command run inside another (same thread)
            return holder
        raise UserError(busy.format(holder=f"`continuousbench {holder}` in this process (another stage)"))
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        try:
            holder = "pid " + (path.read_text().strip() or "unknown")
        except OSError:
            holder = "a process"
        holder = f"another continuousbench command ({holder})"
        raise UserError(busy.format(holder=holder)) from None
    path.write_text(f"{os.getpid()}\n")
    _LOCKS[path] = (lock, command, threading.get_ident(), Path(guards))
    return None


def _drop_lock(path: Path) -> None:
    """Release a lock :func:`_take_lock` took. The file is removed while still held: a process waiting on
    it then sees a deleted file and starts over on a new one (filelock checks), so no two processes ever
    hold it at once."""
    path = Path(path).resolve()
    if (held := _LOCKS.pop(path, None)) is None:
        return
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
    held[0].release(force=True)


def lock_folder(out: Path, command: str) -> str | None:
    """Lock ``out`` for ``command`` until :func:`release_folders`; returns the command of this process that
    already holds it (a command run inside another, e.g. audit's generator), else None.

    Another process holding it is one line naming its pid, at once: two runs into one folder would
    publish a mix of both.
    """
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    busy = f"{out} is in use by {{holder}}; wait for it to finish, or choose another folder"
    return _take_lock(out / LOCK_FILE, command, busy, out)


@contextlib.contextmanager
def holding(path: Path, command: str, busy: str, guards: Path) -> Iterator[None]:
    """Hold the lock file ``path`` for the block (outputs that are not a command's folder: a release under
    its root). Re-entrant in one thread, so a writer called by a builder that holds it goes on."""
    taken = _take_lock(path, command, busy, guards) is None
    try:
        yield
    except Exception as err:
        if taken and getattr(err, "writing", None) is None:  # the lock goes before the error is shown
            with contextlib.suppress(AttributeError, TypeError):
                err.writing = guards  # type: ignore[attr-defined]  # what a full disk's line names
        raise
    finally:
        if taken:
            _drop_lock(path)


def release_folders() -> None:
    """Release every lock this thread took (the end of a command, successful or not)."""
    for path, (_, _, thread, _) in list(_LOCKS.items()):
        if thread == threading.get_ident():  # stages running in other threads keep theirs (the demo)
            _drop_lock(path)


def writing() -> list[Path]:
    """What this thread is writing: the output folders and releases it holds the lock of (named by a
    full disk's one line when the library that failed did not say which file; a lock released before
    the line is made leaves its output on the error, as ``err.writing``)."""
    return [held[3] for held in _LOCKS.values() if held[2] == threading.get_ident()]


def release_folder(out: Path) -> None:
    _drop_lock(Path(out) / LOCK_FILE)


@contextlib.contextmanager
def waiting_for(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` itself, waited for (work of milliseconds, such as a root's
    umbrella card). Written by hand on ``flock`` of the folder's descriptor, not filelock: that needs a
    lock file, which would sit among the releases; the kernel drops this lock if the process dies."""
    import fcntl

    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
