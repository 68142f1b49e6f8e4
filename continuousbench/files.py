"""Files that never hold half-written data (atomic writes, the one JSON layout) and the checks on a
command's output paths (writable, not an input, not another command's output).

A command's output folder is written through :class:`continuousbench.staged_output.StagedOutput` and
locked with :mod:`continuousbench.locks`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError

OWNED_FILE = ".continuousbench-{command}.json"  # what a command published last time (names only)


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


def check_writable_dir(path: Path, option: str = "--output_dir") -> Path:
    """``path`` can become (or is) a folder we may write into; else one line naming ``option``."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path} is a file, not a folder; pass a folder path")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path} cannot be written ({probe} is not writable); choose another folder")
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


def other_commands(out: Path, mine: Iterable[str]) -> list[str]:
    """The commands other than ``mine`` whose output (a marker) or unfinished run (a work folder) is in
    ``out``."""
    found = {p.name[len(".continuousbench-") : -len(".json")] for p in out.glob(".continuousbench-*.json")}
    found |= {p.name[1 : -len("-work")] for p in out.glob(".*-work") if p.is_dir()}
    return sorted(found - set(mine))
