"""Files and folders that never hold half-written data: atomic writes, and staged command outputs.

Every command that writes into a user-chosen folder goes through :class:`StagedOutput`, so the rule is
the same everywhere: the new output is built in a hidden work folder inside the output folder, and
only once it is complete does it replace what *this command* wrote there before. Files the user put
in the folder are never touched, and an interrupted or failed run leaves the previous output intact.

One command at a time: the folder is locked (``.continuousbench.lock``, an OS lock that dies with its
process) for as long as the command runs, and a second run into it fails at once naming the holder's
pid. A command writes only into a folder that holds no other command's output (its marker
``.continuousbench-<command>.json`` names the command and the run that wrote it) unless ``--overwrite``
asks it to replace that output.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError

OWNED_FILE = ".continuousbench-{command}.json"  # what a command published last time (names only)
CONFIG_FILE = "run-config.json"  # inside the work folder: the configuration a resume must match
DIGESTS = ("sha256", "fingerprint", "digest")  # settings that are digests of data: named, not shown
LOCK_FILE = ".continuousbench.lock"  # held while a command writes the folder; holds the holder's pid
_NEW_RUNS: list[StagedOutput] = []  # new runs of this process not yet published (see abandon_new_runs)
_LOCKS: dict[Path, tuple[Any, str, int, Path]] = {}  # lock file -> (lock, command, thread, what it guards)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sha256_file(path: str | Path) -> str:
    """sha256 hex digest of a file's bytes, read in chunks."""
    import hashlib

    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def atomic_write(path: Path | str, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


@contextlib.contextmanager
def secret_file(path: Path | str):
    """A new binary file open for writing, mode 0600 from its creation (never readable by others, even
    while being written): secret noise and sampling state."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its old mode through O_CREAT
    with os.fdopen(fd, "wb") as f:
        yield f


def temp_dir(parent: Path | str, prefix: str) -> Path:
    """A new hidden folder in ``parent`` with the usual permissions (``mkdtemp`` gives 0700).

    Outputs are built in such a folder and renamed into place, so its mode becomes the output's mode:
    a release others on the machine cannot read is no release.
    """
    path = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    os.chmod(path, 0o777 & ~_umask())
    return path


def write_text(path: Path | str, text: str) -> Path:
    """UTF-8, written as bytes: no platform newline translation, so equal text gives equal files."""
    return atomic_write(path, lambda tmp: tmp.write_bytes(text.encode("utf-8")))


def dumps(data: Any) -> str:
    """The one JSON layout of every file we write: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"


def write_json(path: Path | str, data: Any) -> Path:
    return write_text(path, dumps(data))


def read_json(path: Path | str) -> Any:
    """Parse a JSON file we wrote; a damaged one is reported by name, not as a decoder traceback."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{path} is not valid JSON ({err}); restore it or remove the folder") from None


def replace_dir(src: Path, dst: Path) -> Path:
    """Move a finished folder into place, replacing an older one (moved aside first, removed last).

    If the final rename fails, the older folder is put back: ``dst`` is always the old or the new one.
    """
    src, dst = Path(src), Path(dst)
    old = dst.with_name(f".{dst.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if dst.exists():
        os.replace(dst, old)
    try:
        os.replace(src, dst)
    except OSError:
        if old.exists():
            os.replace(old, dst)
        raise
    if old.exists():
        shutil.rmtree(old)
    return dst


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def check_writable_dir(path: Path, option: str = "--output_dir") -> Path:
    """``path`` can become (or is) a folder we may write into; else one line naming ``option``."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path} is a file, not a folder; pass a folder path")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(
            f"{option} {path} cannot be written ({probe} is not writable); choose another folder"
        )
    if str(path.resolve()).startswith(("/proc/", "/sys/", "/dev/")):
        raise UserError(f"{option} {path} is a system folder; choose a folder of your own")
    return path


def check_not_an_input(out: Path, inputs: Iterable[Path | str | None], option: str = "--output_dir") -> None:
    """Refuse an output folder that is one of the command's inputs or lies inside one (a run written
    into the release it reads, a stage's output over its input); one line naming ``option``."""
    target = Path(out).expanduser().resolve()
    for given in inputs:
        if not given:
            continue
        source = Path(given).expanduser()
        if not source.exists():  # an id or a Hub name: not a place on this disk
            continue
        source = source.resolve()
        if target == source or (source.is_dir() and target.is_relative_to(source)):
            where = "is" if target == source else "is inside"
            raise UserError(
                f"{option} {out} {where} {given}, an input of this command; choose a folder of its own"
            )


def folder_owner(folder: Path) -> str | None:
    """What ``folder`` is when a command's output lives there (a release, a command's run), else None:
    a stray file in it would block that command's next ``--overwrite`` or be taken for its output."""
    if (folder / "release.json").is_file():
        return "a release folder"
    others = other_commands(folder, ())
    return f"the output folder of `continuousbench {others[0]}`" if others else None


def check_output_files(
    files: Mapping[str, Path | str | None], *, overwrite: bool = False, keep_out: Iterable[Path | str] = ()
) -> dict[str, Path]:
    """Check a command's output files (option -> path, None = not asked for) before any work is done.

    Each must be a writable file path, distinct from the others, outside every folder of ``keep_out``
    (the command's inputs, e.g. the run folders a report reads), and new unless ``overwrite``; else one
    line naming the option. Returns option -> expanded path for the files asked for.
    """
    checked: dict[str, Path] = {}
    inputs = [Path(p).expanduser().resolve() for p in keep_out]
    for option, given in files.items():
        if given is None or str(given) == "":
            continue
        path = Path(given).expanduser()
        if path.is_dir():
            raise UserError(f"{option} {path} is a folder; pass the path of a file to write")
        same = [o for o, p in checked.items() if p.resolve() == path.resolve()]
        if same:
            raise UserError(f"{option} and {same[0]} are the same file {path}; give each its own path")
        inside = next((p for p in inputs if path.resolve().is_relative_to(p)), None)
        if inside is not None:
            raise UserError(
                f"{option} {path} is inside {inside}, an input of this command; write it elsewhere"
            )
        owner = folder_owner(path.parent)
        if owner:
            raise UserError(
                f"{option} {path} would be written into {path.parent}, {owner}; write it elsewhere"
            )
        if (path.exists() or path.is_symlink()) and not overwrite:
            raise FileExistsError(
                f"{option} {path} already exists; pass --overwrite to replace it, or choose another path"
            )
        try:
            check_writable_dir(path.parent, option)
        except ValueError:
            raise UserError(
                f"{option} {path} cannot be written ({path.parent} is not a folder we can write into); "
                "choose another path"
            ) from None
        checked[option] = path
    return checked


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


def other_commands(out: Path, mine: Iterable[str]) -> list[str]:
    """The commands other than ``mine`` whose output (a marker) or unfinished run (a work folder) is in
    ``out``."""
    found = {p.name[len(".continuousbench-"):-len(".json")] for p in out.glob(".continuousbench-*.json")}
    found |= {p.name[1:-len("-work")] for p in out.glob(".*-work") if p.is_dir()}
    return sorted(found - set(mine))


class StagedOutput:
    """A command's output folder, written in a hidden work folder and published when complete.

    ``out/.<command>-work/`` holds the run in progress (checkpoints, partial results and the pinned
    configuration, so ``--resume`` continues it). :meth:`publish` moves the finished artefacts into
    ``out``; what this command published before (recorded in ``out/.continuousbench-<command>.json``) is
    moved aside first and removed only after every new artefact is in place. Anything else in ``out``
    belongs to the user and is left alone.

    The folder is locked for the command (``lock=False``: a helper process joining the run process 0
    opened). A folder holding another command's output is refused unless ``overwrite`` (then that output
    is replaced at publish like this command's own); ``also`` names commands whose output this one
    legitimately shares the folder with (audit's generator).
    """

    def __init__(
        self,
        out: Path | str,
        command: str,
        *,
        overwrite: bool = False,
        resume: bool = False,
        option: str = "--output_dir",
        inputs: Iterable[Path | str | None] = (),
        lock: bool = True,
        also: Iterable[str] = (),
    ):
        self.out = check_writable_dir(Path(out), option)
        check_not_an_input(self.out, inputs, option)
        # the folders this run creates, deepest first: an abandoned new run removes them again
        self.created = [p for p in (self.out, *self.out.parents) if not p.exists()]
        self.command = command
        self.work = self.out / f".{command}-work"
        self.owned_file = self.out / OWNED_FILE.format(command=command)
        self.resume = resume
        self.run_id = uuid.uuid4().hex
        self.replaces: list[str] = []
        self.locked = False  # whether this run took the folder's lock (and releases it once published)
        if lock:
            parent = lock_folder(self.out, command)
            self.locked = parent is None
            others = other_commands(self.out, {command, *also, *([parent] if parent else [])})
            if others and not overwrite:
                raise FileExistsError(
                    f"{option} {self.out} holds the output of `continuousbench {others[0]}`; choose another "
                    f"folder, or pass --overwrite to replace that output with this {command} run"
                )
            self.replaces = others
        if resume:
            if not self.work.is_dir():
                raise FileNotFoundError(
                    f"nothing to resume in {self.out}: no unfinished {command} run is there; "
                    "drop --resume to start a new run"
                )
        else:
            if self.finished and not overwrite:
                raise FileExistsError(
                    f"{self.out} already holds a finished {command} run; pass --overwrite to replace it "
                    "(the old output is kept until the new one is complete), or choose another folder"
                )
            if self.work.is_dir() and any(self.work.iterdir()) and not overwrite:
                raise FileExistsError(
                    f"{self.out} holds an unfinished {command} run; pass --resume to continue it, "
                    "or --overwrite to start again"
                )
            if self.work.exists():
                shutil.rmtree(self.work)
            _NEW_RUNS.append(self)
        self.work.mkdir(parents=True, exist_ok=True)

    @property
    def finished(self) -> bool:
        """Whether ``out`` holds a published run of this command."""
        return self.owned_file.is_file()

    def owned(self) -> list[str]:
        """Names this command published in ``out`` last time."""
        return list(read_json(self.owned_file)["names"]) if self.finished else []

    def pin_config(self, config: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> None:
        """Record the run's configuration; on resume, refuse any change to it (``ignore``: output-only keys).

        Values are compared after a JSON round trip, so a tuple and a list, or a path given as str and as
        Path, are the same setting.
        """
        ignored = set(ignore)
        current = json.loads(dumps({k: v for k, v in config.items() if k not in ignored}))
        path = self.work / CONFIG_FILE
        if self.resume and path.is_file():
            pinned = {k: v for k, v in read_json(path).items() if k not in ignored}
            changed = sorted(k for k in set(pinned) | set(current) if pinned.get(k) != current.get(k))
            if changed:
                details = ", ".join(
                    f"{k} changed" if k.endswith(DIGESTS) else f"{k}: {pinned.get(k)!r} -> {current.get(k)!r}"
                    for k in changed[:4]
                )  # a digest of private data is named, never shown
                more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
                raise UserError(
                    f"--resume with a changed configuration ({details}{more}); resume with the original "
                    "settings, or start a new run with --overwrite"
                )
            return
        write_json(path, current)

    def publish(self, names: Iterable[str] | None = None) -> Path:
        """Move ``names`` (default: everything in the work folder but its bookkeeping) into ``out``.

        The previous artefacts of this command are moved into a trash folder first and deleted only
        once every new one is in place, so a failure part-way leaves either the old or the new output.
        """
        names = sorted(
            p.name for p in self.work.iterdir() if p.name != CONFIG_FILE
        ) if names is None else list(names)  # fmt: skip
        missing = [n for n in names if not (self.work / n).exists()]
        if missing:
            raise FileNotFoundError(f"cannot publish {', '.join(missing)}: not in {self.work}")
        owned = set(self.owned())
        replaced = self._replaced_names()
        foreign = [n for n in names if n not in owned | replaced and (self.out / n).exists()]
        if foreign:
            raise FileExistsError(
                f"{self.out / foreign[0]} was not written by {self.command}; move it away, then rerun with "
                "--resume (the finished work is kept in the work folder)"
            )
        trash = self.out / f".{self.command}-trash"
        if trash.exists():
            shutil.rmtree(trash)
        trash.mkdir()
        for name in owned | set(names) | replaced:
            if (self.out / name).exists() or (self.out / name).is_symlink():
                os.replace(self.out / name, trash / name)
        for name in names:
            os.replace(self.work / name, self.out / name)
        write_json(self.owned_file, {"command": self.command, "run": self.run_id, "names": names})
        shutil.rmtree(trash)
        shutil.rmtree(self.work)
        if self in _NEW_RUNS:
            _NEW_RUNS.remove(self)
        if self.locked:
            release_folder(self.out)
        return self.out

    def _replaced_names(self) -> set[str]:
        """What the other commands this ``--overwrite`` run replaces left in ``out``: their published names,
        markers and work folders (moved aside with this command's own old output)."""
        names: set[str] = set()
        for other in self.replaces:
            marker = self.out / OWNED_FILE.format(command=other)
            if marker.is_file():
                names |= set(read_json(marker).get("names", []))
            names |= {marker.name, f".{other}-work"}
        return names

    def discard(self) -> None:
        """Remove the work folder (e.g. after a failed first run that cannot be resumed)."""
        if self.work.exists():
            _remove(self.work)

    def has_progress(self) -> bool:
        """Whether the work folder holds anything worth resuming: a file other than the pinned settings."""
        return any(p.is_file() and p != self.work / CONFIG_FILE for p in self.work.rglob("*"))


def abandon_new_runs() -> None:
    """Remove the work folders of this process's new runs that failed before keeping anything.

    Called on the one error path (:func:`continuousbench.commands.run`): a run that fails on bad input
    (a dead endpoint, an empty corpus, a plan that cannot be met) leaves nothing to resume, and a work
    folder left behind would make the next attempt, with the input fixed, ask for ``--resume``. The
    output folders the run created go too (an empty ``runs/eval-1`` after a typo looks like a run).
    """
    while _NEW_RUNS:
        staged = _NEW_RUNS.pop()
        if staged.work.is_dir() and staged.has_progress():
            continue
        staged.discard()
        if staged.locked:
            release_folder(staged.out)
        for folder in staged.created:  # and the folders it made, unless something else is in them
            with contextlib.suppress(OSError):
                folder.rmdir()


def forget_new_runs() -> None:
    _NEW_RUNS.clear()
