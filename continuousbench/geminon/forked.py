"""Independent pieces of a Geminon build (candidate units, render chunks) in forked processes.

A forked worker inherits the world, the pools and the realizer without pickling them; only each piece's
result comes back, in order, so the build's output is the same bytes as in one process. Only realizers
whose every draft and text depends on its own seed alone (``parallel_render``) are split; an LLM
realizer (its cache, its checkpoint, its endpoint) stays in the building process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

_STATE: Any = None  # what the workers read: set before the fork, cleared after


def _call(job: tuple[Callable, Any]) -> Any:
    fn, item = job
    return fn(_STATE, item)


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


@contextmanager
def ordered_map(state: Any, pieces: int, realizer) -> Iterator[Callable[[Callable, Iterable], Iterator]]:
    """A ``map(fn, items)`` that calls ``fn(state, item)``: in forked processes (one per usable core)
    when the realizer allows it and there are several ``pieces``, else here; results in input order."""
    global _STATE
    import multiprocessing

    workers = min(usable_cores(), pieces)
    _STATE = state
    try:
        if workers < 2 or not getattr(realizer, "parallel_render", False):
            yield lambda fn, items: (fn(state, item) for item in items)
            return
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            yield lambda fn, items: pool.imap(_call, ((fn, item) for item in items))
    finally:
        _STATE = None
