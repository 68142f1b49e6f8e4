"""The demo's stages, run a few at a time in worker processes of one CPU thread each.

A tiny model keeps a second core only partly busy: one stage on two threads ran 1.55x faster than on
one (docs/demo.md), while the demo's stages two at a time on one thread each ran 1.9x faster. Each stage
runs alone in its process on one thread, so its result does not depend on the order the scheduler
picks; a stage whose output exists is skipped, so an interrupted demo resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from continuousbench.files import read_json, write_json


@dataclass(frozen=True)
class Stage:
    """One step of the demo: ``work(*args)`` in a worker process once the stages in ``after`` are done;
    skipped when ``done`` (its output, written atomically by the command) exists."""

    name: str
    done: Path
    work: Callable[..., object]
    args: tuple = ()
    after: tuple[str, ...] = ()


def _start_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    quiet()


def _timed(work: Callable[..., object], args: tuple) -> float:
    start = time.perf_counter()
    work(*args)
    return time.perf_counter() - start


class Stages:
    """Runs the stages, ``lanes`` at a time in worker processes of one CPU thread each, in list order as
    their inputs become ready; prints each with its wall time and keeps the times in ``timings.json``.

    Each stage's result does not depend on the order, since every stage runs alone in its process on one
    thread."""

    def __init__(self, out: Path, lanes: int):
        from rich.console import Console

        self.console, self.lanes = Console(), lanes
        self.file = out / "timings.json"
        self.timings: dict[str, float] = read_json(self.file) if self.file.exists() else {}

    def _start_ready(self, pending: list[Stage], finished: set[str], running: dict, pool) -> None:
        """Skip every ready stage whose output exists and start ready ones while a lane is free, until
        neither changes anything (a skipped stage can make others ready)."""
        progressed = True
        while progressed:
            progressed = False
            for stage in [s for s in pending if set(s.after) <= finished]:
                if stage.done.exists():
                    self.console.print(f"[dim]- {stage.name}: done already, skipped[/dim]")
                    finished.add(stage.name)
                elif len(running) < self.lanes:
                    self.console.print(f"[bold]- {stage.name}[/bold] ...")
                    running[pool.submit(_timed, stage.work, stage.args)] = stage
                else:
                    continue
                pending.remove(stage)
                progressed = True

    def run(self, stages: Sequence[Stage]) -> None:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        finished = set()
        pending = list(stages)
        context = multiprocessing.get_context("spawn")  # no forked torch state in the workers
        with ProcessPoolExecutor(self.lanes, mp_context=context, initializer=_start_worker,
                                 initargs=(1,)) as pool:  # fmt: skip
            running: dict = {}
            while pending or running:
                self._start_ready(pending, finished, running, pool)
                if not running:
                    if pending:
                        raise RuntimeError(f"demo stages wait on each other: {[s.name for s in pending]}")
                    break
                ready, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in ready:
                    stage = running.pop(future)
                    self.timings[stage.name] = round(future.result(), 1)  # a stage's error ends the demo
                    write_json(self.file, self.timings)
                    finished.add(stage.name)
                    self.console.print(f"[green]- {stage.name}: {self.timings[stage.name]:.0f} s")


def quiet() -> None:
    """Library progress bars and info logs would bury the demo's own output."""
    import logging

    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    logging.getLogger("continuousbench").setLevel(logging.WARNING)
