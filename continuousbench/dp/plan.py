"""The DP plan of a run, made once from the settings and the dataset size, then pinned with every checkpoint.

:class:`DPPlan` is everything the guarantee depends on - the :class:`SamplingPlan` (n, q, sampling, cap,
truncation analysis), the noise multiplier, the steps, delta and the clipping norm. The accountant, the
sampler and the statement all read it, and a resumed run refuses to continue under a different one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from continuousbench.dp import accounting
from continuousbench.dp.sampling import SamplingPlan


@dataclass(frozen=True)
class DPPlan:
    sampling: SamplingPlan
    noise_multiplier: float
    steps: int
    delta: float
    clip_norm: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DPPlan:
        return cls(**{**data, "sampling": SamplingPlan(**data["sampling"])})

    def account(self) -> accounting.PrivacyGuarantee:
        return accounting.account(
            self.sampling, self.noise_multiplier, self.steps, self.delta, clip_norm=self.clip_norm
        )


def make_plan(n: int, config) -> DPPlan:
    """Calibrate the noise for ``config`` (a GeneratorConfig) on ``n`` records; ``auto`` picks the batch."""
    delta = config.delta or accounting.default_delta(n)
    steps, cap = config.max_steps, config.physical_batch_size
    truncated = config.sampling == "truncated_poisson"
    analysis = config.truncation_analysis if truncated else None
    if config.expected_batch_size == "auto":
        if not truncated:
            raise ValueError("--expected_batch_size auto needs --sampling truncated_poisson (a batch cap)")
        batch, sigma = accounting.choose_expected_batch(
            n, cap, steps, config.epsilon, delta, truncation_analysis=analysis
        )
        sampling = SamplingPlan(n, float(batch), config.sampling, cap, analysis)
        return DPPlan(sampling, sigma, steps, delta, config.clip_norm)
    try:
        batch = float(config.expected_batch_size)
    except ValueError:
        raise ValueError(
            f"--expected_batch_size must be a number or auto, got {config.expected_batch_size!r}"
        ) from None
    sampling = SamplingPlan(n, batch, config.sampling, cap if truncated else None, analysis)
    sigma = accounting.calibrate_noise(
        config.epsilon,
        sampling.sampling_probability,
        steps,
        delta,
        dataset_size=n,
        physical_batch=sampling.physical_batch,
        sampling=sampling.sampling,
        truncation_analysis=analysis or "pld",
    )
    return DPPlan(sampling, sigma, steps, delta, config.clip_norm)
