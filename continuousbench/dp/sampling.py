"""Batch samplers whose randomness is exactly what the accountant assumes.

:class:`PoissonBatchSampler` draws each logical batch by including every record independently with
probability ``q`` (and, for truncated Poisson, keeps a uniformly random subset of ``B`` records when the
draw exceeds ``B``). It is seeded and its state is a plain dict, so a resumed run continues the same
sequence of batches. :func:`check_sampler` refuses any other batching (fixed-size, shuffled, ...)
under Poisson accounting, since the guarantee would then not hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from continuousbench.dp.accounting import SAMPLINGS


class PoissonBatchSampler:
    """Yields ``steps`` index arrays; each index joins a batch with probability ``sampling_probability``."""

    def __init__(
        self,
        dataset_size: int,
        sampling_probability: float,
        steps: int,
        *,
        sampling: str = "poisson",
        physical_batch: int | None = None,
        seed: int = 0,
    ):
        if sampling not in SAMPLINGS:
            raise ValueError(f"unknown sampling {sampling!r}: use {' or '.join(SAMPLINGS)}")
        if sampling == "truncated_poisson" and not physical_batch:
            raise ValueError("truncated Poisson sampling needs a physical batch size (the cap)")
        if not 0 < sampling_probability <= 1:
            raise ValueError(f"sampling probability must be in (0, 1], got {sampling_probability}")
        self.dataset_size = dataset_size
        self.sampling_probability = sampling_probability
        self.steps = steps
        self.sampling = sampling
        self.physical_batch = physical_batch if sampling == "truncated_poisson" else None
        self.rng = np.random.default_rng(seed)
        self.step = 0
        self.truncated = 0  # batches that hit the cap (reported; accounted by the truncated analysis)

    def __len__(self) -> int:
        return self.steps

    def __iter__(self) -> Iterator[np.ndarray]:
        while self.step < self.steps:
            self.step += 1
            yield self.draw()

    def draw(self) -> np.ndarray:
        mask = self.rng.random(self.dataset_size) < self.sampling_probability
        idx = np.flatnonzero(mask)
        if self.physical_batch is not None and len(idx) > self.physical_batch:
            self.truncated += 1
            idx = np.sort(self.rng.choice(idx, size=self.physical_batch, replace=False))
        return idx

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state, "step": self.step, "truncated": self.truncated}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.step, self.truncated = state["step"], state["truncated"]


def check_sampler(sampler, *, sampling: str, sampling_probability: float, physical_batch: int | None) -> None:
    """Raise one clear ValueError unless ``sampler`` draws batches exactly as the accounting assumes."""
    expected = f"{sampling} sampling with q={sampling_probability:.6g}"
    if not isinstance(sampler, PoissonBatchSampler):
        raise ValueError(
            f"refusing to train: batches come from {type(sampler).__name__}, but the privacy accounting "
            f"assumes {expected}; use continuousbench.dp.sampling.PoissonBatchSampler"
        )
    cap = physical_batch if sampling == "truncated_poisson" else None
    if (
        sampler.sampling != sampling
        or not np.isclose(sampler.sampling_probability, sampling_probability, rtol=1e-9, atol=0)
        or sampler.physical_batch != cap
    ):
        raise ValueError(
            f"refusing to train: the sampler draws {sampler.sampling} batches with "
            f"q={sampler.sampling_probability:.6g} (cap {sampler.physical_batch}) but the accounting "
            f"assumes {expected} (cap {cap}); build both from the same settings"
        )
