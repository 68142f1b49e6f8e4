"""The executor options every command that queues work shares (``study`` and the NEWS stages), so that
``--time`` and friends mean the same in both. Light on purpose: a command's ``--help`` imports it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from continuousbench.commands import bounds
from continuousbench.errors import UserError

EXECUTORS = ("local", "slurm", "ray")
TIME = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")  # Slurm: [D-]H[:M[:S]], or minutes


def slurm_minutes(value: str) -> int:
    """``--time`` in minutes, read as ``sbatch --time`` reads it: ``MM``, ``MM:SS``, ``HH:MM:SS``,
    ``D-HH``, ``D-HH:MM`` or ``D-HH:MM:SS``; else one line. Rounded up, at least one minute."""
    found = TIME.fullmatch(str(value).strip())
    if not found:
        raise UserError(
            f"--time {value} is not a Slurm time limit; give minutes (90), HH:MM:SS (24:00:00) "
            "or D-HH:MM:SS (2-00:00:00)"
        )
    days, first, second, third = found.groups()
    if days is not None:  # D-HH[:MM[:SS]]
        seconds = int(days) * 86400 + int(first) * 3600 + int(second or 0) * 60 + int(third or 0)
    elif third is not None:  # HH:MM:SS
        seconds = int(first) * 3600 + int(second) * 60 + int(third)
    else:  # MM[:SS]
        seconds = int(first) * 60 + int(second or 0)
    if seconds <= 0:
        raise UserError(f"--time {value} is no time at all; give a positive time limit")
    return -(-seconds // 60)


@dataclass
class ClusterArguments:
    """Where work runs, one vocabulary for ``study`` and the NEWS stages: ``--executor``, and on Slurm
    ``--partition``, ``--time`` (per Slurm job: a NEWS task, a study job), ``--cpus_per_task`` and
    ``--mem_per_cpu_gb`` (also Ray's per task)."""

    executor: str = field(
        default="local", metadata={"help": "local, slurm or ray.", "choices": list(EXECUTORS)}
    )
    partition: str | None = field(default=None, metadata={"help": "Slurm partition (slurm only)."})
    time: str = field(
        default="24:00:00",
        metadata={"help": "Slurm time limit of each job: minutes, HH:MM:SS or D-HH:MM:SS (slurm only)."},
    )
    cpus_per_task: int = field(default=1, metadata=bounds("[1, inf)", "CPUs per task or job (slurm/ray)."))
    mem_per_cpu_gb: float = field(default=2.0, metadata=bounds("(0, inf)", "Memory per CPU (slurm/ray)."))

    def __post_init__(self) -> None:
        slurm_minutes(self.time)  # a bad limit is refused before anything is queued

    def check_cluster(self) -> None:
        """Before any work: Slurm needs ``--partition`` and ``sbatch`` on this machine (else one line,
        not a submission library's traceback)."""
        import shutil

        if self.executor != "slurm":
            return
        if not self.partition:
            raise UserError("--executor slurm needs --partition <slurm partition>")
        if shutil.which("sbatch") is None:
            raise UserError(
                "--executor slurm needs Slurm's sbatch, which this machine does not have; run on "
                "a Slurm login node, or use --executor local or ray"
            )
