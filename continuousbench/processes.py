"""Several processes (``torchrun`` / ``accelerate launch``): who does what, so that work is done once.

``torchrun --standalone --nproc_per_node N recipes/<command>.py ...`` starts N copies of a command;
Accelerate sets up their process group (gloo on CPU, NCCL on GPUs) from the environment torchrun
leaves. Training is shared (TRL's DDP, or our split of each DP batch); around it every command uses
the same few moves:

* :func:`on_main` - a step that touches the output folder runs on process 0 only; its result, or its
  error, reaches every process, so that all stop on the one message process 0 prints;
* :func:`main_first` - work with side effects (loading data into the ``datasets`` cache, checking and
  pinning a run folder) runs on process 0 first and on the others once it succeeded;
* :func:`share_out` - a list of items (QA prompts) is answered in one share per process and gathered,
  so every process holds every answer for the cost of one.

With one process each of these is a plain call.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

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


def device(cpu: bool = False) -> str:
    """This process's device, the one rule every command follows: its ``LOCAL_RANK`` GPU (torchrun and
    ``accelerate launch`` set it; 0 alone) when there is one and ``cpu`` is not asked for, else the CPU."""
    import torch

    if cpu or not torch.cuda.is_available():
        return "cpu"
    return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"


def current() -> Processes:
    """This process's place, setting up the process group when launched as several processes."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return Processes()
    import torch
    from accelerate import PartialState

    # Without GPUs, Accelerate starts the (gloo) process group only when asked for CPU; a state the
    # Trainer's arguments set up already is returned as it is.
    state = PartialState(cpu=not torch.cuda.is_available())
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
        except BaseException as err:  # noqa: BLE001 - handed to the other processes, then re-raised
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


def share_out(items: Sequence, work: Callable[[list], list]) -> list:
    """``work(items)``, computed in one contiguous share per process; every process gets the whole
    result, in order. ``work`` maps a list to a list of the same length; every process must call this."""
    procs = current()
    if not procs.distributed:
        return work(list(items))
    import torch.distributed as dist

    bounds = [len(items) * r // procs.world_size for r in range(procs.world_size + 1)]
    shares: list[Any] = [None] * procs.world_size
    dist.all_gather_object(shares, work(list(items[bounds[procs.rank] : bounds[procs.rank + 1]])))
    sizes = " + ".join(str(len(share)) for share in shares)
    logger.info("%d items answered in %d shares: %s", len(items), procs.world_size, sizes)
    return [item for share in shares for item in share]
