"""Long jobs as resumable stages: a work folder of finished outputs, and progress with stage timings.

A stage writes its output atomically into the work folder when it finishes, so a file that is present
is complete and a rerun skips that stage (datatrove-style pipelines keep the same contract).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from continuousbench import files
from continuousbench.errors import UserError

log = logging.getLogger(__name__)


class WorkDir:
    """Finished stage outputs of one build; files appear atomically, so a present file is complete."""

    def __init__(self, path: Path, settings: dict[str, Any]):
        self.path = path
        settings_file = path / "settings.json"
        if settings_file.exists() and self.finished():
            found = files.read_json(settings_file)
            if found != settings:
                raise UserError(
                    f"work folder {path} holds a build with other settings ({found}); "
                    "rerun with those settings to resume, or remove the folder to start over"
                )
        else:  # nothing finished yet: (re)start with these settings
            self.write_json("settings.json", settings)

    @classmethod
    def for_settings(cls, parent: Path, name: str, settings: dict[str, Any], resume: bool = False) -> WorkDir:
        """The work folder ``<parent>/<name>-<hash of settings>`` of one build.

        The same settings resume the same folder; other settings get a folder of their own and start
        over, so a failed build with other settings never blocks (nor leaks into) this one. Folders of
        other settings that finished nothing are removed; those with finished stages are kept (say so).
        ``resume``: the folder must hold finished work (:meth:`check_resume`), else one-line refusal.
        """
        path = cls.path_for(parent, name, settings)
        if resume:
            cls.check_resume(path, name, settings)
        work = cls(path, settings)
        done = work.finished()
        log.info(
            "%s the build in %s%s",
            "resuming" if done else "starting",
            work.path,
            f" (finished: {', '.join(done)})" if done else "",
        )
        for other in sorted(parent.glob(f"{name}-*")):
            if other == work.path or not other.is_dir():
                continue
            if cls.finished_in(other):
                log.warning(
                    "kept %s: an unfinished build of %s with other settings (see its settings.json; "
                    "rerun with them to resume it, or delete the folder)",
                    other,
                    name,
                )
            else:
                shutil.rmtree(other, ignore_errors=True)
        return work

    @staticmethod
    def path_for(parent: Path, name: str, settings: dict[str, Any]) -> Path:
        key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()[:12]
        return parent / f"{name}-{key}"

    @classmethod
    def check_resume(cls, path: Path, name: str, settings: dict[str, Any]) -> None:
        """Refuse ``--resume`` in one line when ``path`` (these settings' folder) holds nothing finished:
        name the settings that differ in the latest unfinished build of ``name``, or say there is none."""
        if cls.finished_in(path):
            return
        others = [p for p in path.parent.glob(f"{name}-*") if p.is_dir() and cls.finished_in(p)]
        if not others:
            raise UserError(
                f"--resume: nothing to resume: no unfinished build of {name} in {path.parent}; "
                "drop --resume to start one"
            )
        latest = max(others, key=lambda p: p.stat().st_mtime)
        try:
            found = files.read_json(latest / "settings.json")
        except (OSError, ValueError):
            found = {}
        found = found if isinstance(found, dict) else {}
        changed = [f"{k} {found.get(k)!r} (now {v!r})" for k, v in settings.items() if found.get(k) != v]
        raise UserError(
            f"--resume: the unfinished build of {name} in {latest} was started with other settings: "
            f"{', '.join(changed)}; rerun with those to resume it, or drop --resume to start a new build"
        )

    @staticmethod
    def finished_in(path: Path) -> list[str]:
        """Names of the finished stage outputs in ``path`` (none when it does not exist)."""
        if not path.is_dir():
            return []
        names = (p.name for p in path.iterdir())
        return sorted(n for n in names if n != "settings.json" and not n.startswith("."))

    def finished(self) -> list[str]:
        return self.finished_in(self.path)

    def file(self, name: str) -> Path:
        return self.path / name

    def write_json(self, name: str, data: Any) -> None:
        files.write_json(self.file(name), data)

    def read_json(self, name: str) -> Any:
        return files.read_json(self.file(name))

    def write_table(self, name: str, columns: dict[str, list]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        files.atomic_write(self.file(name), lambda tmp: pq.write_table(pa.table(columns), tmp))

    def read_table(self, name: str) -> dict[str, list]:
        import pyarrow.parquet as pq

        return pq.read_table(self.file(name)).to_pydict()


PROGRESS_EVERY = 10.0  # seconds between two progress lines of a long count


class ProgressLog:
    """A log line at most every ``PROGRESS_EVERY`` seconds while a long count runs (texts generated,
    canaries scored): done of total, and about how long is left, so a large run is not silent."""

    def __init__(self, label: str, total: int, unit: str):
        self.label, self.total, self.unit = label, total, unit
        self.done, self.start = 0, time.perf_counter()
        self.shown = self.start

    def advance(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.shown < PROGRESS_EVERY or self.done >= self.total:
            return
        self.shown = now
        left = (now - self.start) / self.done * (self.total - self.done)
        log.info("%s: %d of %d %s, about %.0f s left", self.label, self.done, self.total, self.unit, left)


class StageProgress:
    """Rich progress (or nothing) plus wall time per stage. The bars go to stderr, beside the log, so that
    ``$(continuousbench build ...)`` captures only what the command prints as its result."""

    def __init__(self, enabled: bool, timings: dict[str, float]):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.timings = timings
        self.progress = Progress(
            TextColumn("{task.description:<22}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not enabled,
        )

    @contextmanager
    def stage(self, name: str, total: float | None = None, note: str = "") -> Iterator[Any]:
        task = self.progress.add_task(f"{name}{note}", total=total)
        start = time.perf_counter()
        yield lambda n=1: self.progress.advance(task, n)
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start
        self.progress.update(task, total=total or 1, completed=total or 1)
