"""Several processes (``torchrun``, ``accelerate launch``): who does what, so that work is done once.

Training is data-parallel (every process trains on its share of each batch, Trainer's DDP). Around it:

* :func:`main_first` - work with side effects on the run folder (checks, clearing, pinning the
  configuration) runs on the main process first; the others follow only if it succeeded there, and
  otherwise leave quietly (the main process prints the one error line);
* :func:`across_processes` - QA generation is split into one share per process and gathered, so every
  process holds all answers (checkpoint selection needs the same metric everywhere) for the cost of one;
* writing the outputs and calling the judge happen on the main process only (``run.py``).

With one process each of these is a plain call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _distributed():
    """``torch.distributed`` when a process group of more than one process is up, else None."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    return None


def is_main_process() -> bool:
    dist = _distributed()
    return dist is None or dist.get_rank() == 0


def main_first(work: Callable[[], T]) -> T:
    """``work()`` on the main process, then on the others once it succeeded there.

    If it fails on the main process (bad input), the others exit with status 2 without a message of
    their own: the main process's error line is the one to read.
    """
    dist = _distributed()
    if dist is None:
        return work()
    if dist.get_rank() == 0:
        try:
            result = work()
        except BaseException:
            dist.broadcast_object_list([False], src=0)
            raise
        dist.broadcast_object_list([True], src=0)
        return result
    succeeded: list[Any] = [None]
    dist.broadcast_object_list(succeeded, src=0)
    if not succeeded[0]:
        raise SystemExit(2)
    return work()


def across_processes(items: Sequence, work: Callable[[list], list]) -> list:
    """``work(items)``, computed in one contiguous share per process; every process gets the whole
    result, in order. ``work`` must map a list to a list of the same length."""
    dist = _distributed()
    if dist is None:
        return work(list(items))
    rank, world = dist.get_rank(), dist.get_world_size()
    bounds = [len(items) * r // world for r in range(world + 1)]
    mine = work(list(items[bounds[rank] : bounds[rank + 1]]))
    logger.info("process %d of %d: %d of %d items", rank, world, len(mine), len(items))
    shares: list[Any] = [None] * world
    dist.all_gather_object(shares, mine)
    return [item for share in shares for item in share]
