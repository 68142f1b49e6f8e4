"""How DP-SGD batches are drawn: one :class:`SamplingPlan`, read by the accountant, sampler and statement.

:class:`PoissonBatchSampler` draws each logical batch by including every record independently with
probability ``q`` (and, for truncated Poisson, keeps a uniformly random subset of ``B`` records when the
draw exceeds ``B``), from a generator it is given (the secret stream of
:mod:`continuousbench.dp.randomness`). Its state is a plain dict, so a resumed run continues the same
sequence of batches. :func:`check_sampler` refuses any other batching (fixed-size, shuffled, ...)
under Poisson accounting, since the guarantee would then not hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from continuousbench.errors import UserError

SAMPLINGS = ("poisson", "truncated_poisson")
TRUNCATION_ANALYSES = ("pld", "union_bound")  # exact PLD of the truncated mechanism, or Chua et al.'s bound


@dataclass(frozen=True)
class SamplingPlan:
    """n, the expected batch q*n, the sampling scheme and (truncated Poisson) the cap and its analysis."""

    dataset_size: int
    expected_batch_size: float
    sampling: str = "poisson"
    physical_batch: int | None = None  # the cap B; truncated Poisson only
    truncation_analysis: str | None = None  # pld | union_bound; truncated Poisson only

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise UserError(f"unknown sampling {self.sampling!r}: use {' or '.join(SAMPLINGS)}")
        if not 0 < self.expected_batch_size <= self.dataset_size:
            raise UserError(
                f"expected batch size {self.expected_batch_size:g} must be in (0, {self.dataset_size}] "
                "(the dataset size)"
            )
        if self.truncated:
            if not self.physical_batch:
                raise UserError("truncated Poisson sampling needs a physical batch size (the cap)")
            if self.truncation_analysis not in TRUNCATION_ANALYSES:
                raise UserError(f"truncation analysis must be one of {', '.join(TRUNCATION_ANALYSES)}")
        elif self.physical_batch is not None or self.truncation_analysis is not None:
            # Poisson batches have no cap: store none, so that two equal plans compare equal.
            object.__setattr__(self, "physical_batch", None)
            object.__setattr__(self, "truncation_analysis", None)

    @property
    def truncated(self) -> bool:
        return self.sampling == "truncated_poisson"

    @property
    def sampling_probability(self) -> float:
        return self.expected_batch_size / self.dataset_size

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sampler(self, steps: int, rng: np.random.Generator) -> PoissonBatchSampler:
        return PoissonBatchSampler(
            self.dataset_size,
            self.sampling_probability,
            steps,
            rng=rng,
            sampling=self.sampling,
            physical_batch=self.physical_batch,
        )


class PoissonBatchSampler:
    """Yields ``steps`` index arrays; each index joins a batch with probability ``sampling_probability``."""

    def __init__(
        self,
        dataset_size: int,
        sampling_probability: float,
        steps: int,
        *,
        rng: np.random.Generator,
        sampling: str = "poisson",
        physical_batch: int | None = None,
    ):
        if sampling not in SAMPLINGS:
            raise UserError(f"unknown sampling {sampling!r}: use {' or '.join(SAMPLINGS)}")
        if sampling == "truncated_poisson" and not physical_batch:
            raise UserError("truncated Poisson sampling needs a physical batch size (the cap)")
        if not 0 < sampling_probability <= 1:
            raise UserError(f"sampling probability must be in (0, 1], got {sampling_probability}")
        self.dataset_size = dataset_size
        self.sampling_probability = sampling_probability
        self.steps = steps
        self.sampling = sampling
        self.physical_batch = physical_batch if sampling == "truncated_poisson" else None
        self.rng = rng
        self.step = 0

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
            idx = np.sort(self.rng.choice(idx, size=self.physical_batch, replace=False))
        return idx

    def state_dict(self) -> dict[str, Any]:
        """The position in the run; the generator's own state is saved with the other secret streams."""
        return {"step": self.step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.step = state["step"]


def check_sampler(sampler, plan: SamplingPlan) -> None:
    """One clear ValueError unless ``sampler`` draws batches exactly as ``plan`` (the accounting) says."""
    expected = f"{plan.sampling} sampling with q={plan.sampling_probability:.6g}"
    if not isinstance(sampler, PoissonBatchSampler):
        raise UserError(
            f"refusing to train: batches come from {type(sampler).__name__}, but the privacy accounting "
            f"assumes {expected}; use continuousbench.dp.sampling.PoissonBatchSampler"
        )
    if (
        sampler.sampling != plan.sampling
        or sampler.dataset_size != plan.dataset_size
        or not np.isclose(sampler.sampling_probability, plan.sampling_probability, rtol=1e-9, atol=0)
        or sampler.physical_batch != plan.physical_batch
    ):
        raise UserError(
            f"refusing to train: the sampler draws {sampler.sampling} batches with "
            f"q={sampler.sampling_probability:.6g} (cap {sampler.physical_batch}) but the accounting "
            f"assumes {expected} (cap {plan.physical_batch}); build both from the same SamplingPlan"
        )
