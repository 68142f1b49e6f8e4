"""Every raw statistic the DP steps compute, recorded for the tests that look for it in published files
(a module, not conftest: conftest names clash across test folders)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def recorded_dp_steps() -> Iterator[list[float]]:
    """Within the block, each DP step's summed and mean training loss (never to be published) is appended
    to the yielded list; the test fails if no step ran."""
    from continuousbench.dp import dpsgd

    seen: list[float] = []
    real_step = dpsgd.dp_step

    def recording_step(*args, **kwargs):
        total, count = real_step(*args, **kwargs)
        seen.extend([total, total / max(count, 1)])
        return total, count

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dpsgd, "dp_step", recording_step)
        yield seen
    assert seen, "the recording wrapper saw no step"
