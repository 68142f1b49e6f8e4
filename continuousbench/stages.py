"""Long jobs as resumable stages: a work folder of finished outputs, and progress with stage timings.

A stage writes its output atomically into the work folder when it finishes, so a file that is present
is complete and a rerun skips that stage (datatrove-style pipelines keep the same contract).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from continuousbench import files


class WorkDir:
    """Finished stage outputs of one build; files appear atomically, so a present file is complete."""

    def __init__(self, path: Path, settings: dict[str, Any]):
        self.path = path
        settings_file = path / "settings.json"
        finished = (
            [p for p in path.iterdir() if p.name != "settings.json" and not p.name.startswith(".")]
            if path.is_dir()
            else []
        )
        if settings_file.exists() and finished:
            found = files.read_json(settings_file)
            if found != settings:
                raise ValueError(
                    f"work folder {path} holds a build with other settings ({found}); "
                    "rerun with those settings to resume, or remove the folder to start over"
                )
        else:  # nothing finished yet: (re)start with these settings
            self.write_json("settings.json", settings)

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


class StageProgress:
    """Rich progress (or nothing) plus wall time per stage."""

    def __init__(self, enabled: bool, timings: dict[str, float]):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.timings = timings
        self.progress = Progress(
            TextColumn("{task.description:<22}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            disable=not enabled,
        )

    @contextmanager
    def stage(self, name: str, total: float | None = None, note: str = "") -> Iterator[Any]:
        task = self.progress.add_task(f"{name}{note}", total=total)
        start = time.perf_counter()
        yield lambda n=1: self.progress.advance(task, n)
        self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start
        self.progress.update(task, total=total or 1, completed=total or 1)
