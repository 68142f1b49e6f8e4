"""Staged command outputs: every command that writes into a user-chosen folder goes through
:class:`StagedOutput`, so the rule is the same everywhere: the new output is built in a hidden work folder
inside the output folder, and only once it is complete does it replace what *this command* wrote there
before. Files the user put in the folder are never touched, and an interrupted or failed run leaves the
previous output intact.

One command at a time: the folder is locked (:mod:`continuousbench.locks`) for as long as the command runs.
A command writes only into a folder that holds no other command's output (its marker
``.continuousbench-<command>.json`` names the command and the run that wrote it) unless ``--overwrite``
asks it to replace that output.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError
from continuousbench.files import (
    OWNED_FILE,
    check_not_an_input,
    check_writable_dir,
    dumps,
    other_commands,
    read_json,
    write_json,
)
from continuousbench.locks import lock_folder, release_folder

CONFIG_FILE = "run-config.json"  # inside the work folder: the configuration a resume must match
DIGESTS = ("sha256", "fingerprint", "digest")  # settings that are digests of data: named, not shown
_NEW_RUNS: list[StagedOutput] = []  # new runs of this process not yet published (see abandon_new_runs)


def work_folder(out: Path | str, command: str) -> Path:
    """Where a run of ``command`` in ``out`` keeps its state until it is published (``--resume`` reads it)."""
    return Path(out) / f".{command}-work"


def finished(out: Path | str, command: str) -> bool:
    """Whether ``out`` holds a published run of ``command`` (its marker file)."""
    return (Path(out) / OWNED_FILE.format(command=command)).is_file()


def unfinished(out: Path | str, command: str) -> bool:
    """Whether ``out`` holds an unfinished run of ``command``: one a new run refuses without --resume."""
    work = work_folder(out, command)
    return work.is_dir() and any(work.iterdir())


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


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
        self.work = work_folder(self.out, command)
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
            if unfinished(self.out, command) and not overwrite:
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
        return finished(self.out, self.command)

    def owned(self) -> list[str]:
        """Names this command published in ``out`` last time."""
        return list(read_json(self.owned_file)["names"]) if self.finished else []

    def pin_config(self, config: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> None:
        """Record the run's configuration; on resume, refuse any change to it (``ignore``: output-only keys).

        Values are compared after a JSON round trip, so a tuple and a list, or a path given as str and as
        Path, are the same setting.
        """
        ignore = tuple(ignore)  # read twice
        if not self.check_config(config, ignore=ignore):
            write_json(self.work / CONFIG_FILE, self._comparable(config, ignore))

    def check_config(self, config: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> bool:
        """:meth:`pin_config`'s refusal alone, writing nothing: whether a pinned configuration equals it
        (False when none is pinned). For a check that should come before expensive set-up."""
        path = self.work / CONFIG_FILE
        if not (self.resume and path.is_file()):
            return False
        current, pinned = self._comparable(config, ignore), self._comparable(read_json(path), ignore)
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
        return True

    @staticmethod
    def _comparable(config: Mapping[str, Any], ignore: Iterable[str]) -> dict:
        ignored = set(ignore)
        return json.loads(dumps({k: v for k, v in config.items() if k not in ignored}))

    def publish(self, names: Iterable[str] | None = None) -> Path:
        """Move ``names`` (default: everything in the work folder but its bookkeeping) into ``out``.

        The previous artefacts of this command are moved into a trash folder first and deleted only
        once every new one is in place, so a failure part-way leaves either the old or the new output.
        """
        names = (
            sorted(p.name for p in self.work.iterdir() if p.name != CONFIG_FILE)
            if names is None
            else list(names)
        )
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
