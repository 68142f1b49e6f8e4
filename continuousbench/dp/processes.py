"""Several processes (``torchrun`` / ``accelerate launch``) for the generator command: who writes.

``torchrun --standalone --nproc_per_node N recipes/train_generator.py ...`` starts N copies of the
command; Accelerate sets up their process group (gloo on CPU, NCCL on GPUs) from the environment
torchrun leaves. The training itself is shared (TRL's DDP for the non-private path, our split of each
DP batch for the private one), but only process 0 touches the output folder: :func:`on_main` runs a
step there and hands its result - or its error, so that every process stops on the same message - to
the others.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Processes:
    rank: int = 0
    world_size: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def current() -> Processes:
    """This process's place, setting up the process group when launched as several processes."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return Processes()
    import logging

    from accelerate import PartialState

    state = PartialState()
    if not state.is_main_process:  # progress is reported once, by process 0
        logging.getLogger("continuousbench").setLevel(logging.WARNING)
    return Processes(state.process_index, state.num_processes)


def barrier(procs: Processes) -> None:
    if procs.distributed:
        import torch.distributed as dist

        dist.barrier()


def broadcast(value: Any, procs: Processes) -> Any:
    """Process 0's ``value`` on every process (any picklable object)."""
    if not procs.distributed:
        return value
    import torch.distributed as dist

    box = [value if procs.main else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def all_sum(values: list[float], procs: Processes) -> list[float]:
    """Element-wise sum of ``values`` over the processes."""
    if not procs.distributed:
        return values
    import torch
    import torch.distributed as dist

    tensor = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(tensor)
    return tensor.tolist()


def on_main(work: Callable[[], T], procs: Processes) -> T:
    """Run ``work`` on process 0 only; every process returns its result or stops on its error.

    Process 0 raises the error itself (the one error path prints it); the others exit quietly with the
    same status, so the message is printed once.
    """
    if not procs.distributed:
        return work()
    result, error = None, None
    if procs.main:
        try:
            result = work()
        except Exception as err:  # noqa: BLE001 - handed to the other processes, then re-raised
            error = err
    result, failed = broadcast((result, error is not None), procs)
    if error is not None:
        raise error
    if failed:
        raise SystemExit(2)
    return result


def main_first(work: Callable[[], T], procs: Processes) -> T:
    """Run ``work`` on process 0, then - once it succeeded - on the others (e.g. loading data, so that
    ``datasets`` writes its cache files once instead of racing on them); an error stops every process."""
    if not procs.distributed:
        return work()
    result: list[T] = []
    on_main(lambda: result.append(work()), procs)
    return result[0] if procs.main else work()
