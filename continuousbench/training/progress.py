"""Training progress as log lines with an ETA: ``step 30/100 (30%), 0:12 elapsed, ETA 0:28``.

Trainer's tqdm bar has an ETA, but recipes switch the bar off (``disable_tqdm``: a bar garbles logs and
job files), and then Trainer prints bare ``{'loss': ...}`` dicts. The evaluator (:mod:`.sft`) and the DP
loop log the same line instead. The ETA counts only the steps run by this process, so a resumed run's
estimate is not skewed by the steps done before it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


def clock(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss`` under an hour)."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass
class Progress:
    """Steps ``first``..``total`` of one process's training, timed from its creation."""

    total: int
    first: int = 0  # the step training starts (or resumes) from
    started: float = field(default_factory=time.monotonic)

    def line(self, step: int, now: float | None = None) -> str:
        elapsed = (time.monotonic() if now is None else now) - self.started
        done, left = step - self.first, max(self.total - step, 0)
        share = f" ({step / self.total:.0%})" if self.total else ""
        eta = f", ETA {clock(elapsed / done * left)}" if done > 0 else ""
        return f"step {step}/{self.total}{share}, {clock(elapsed)} elapsed{eta}"
