"""The DP plan of a run, made once from the settings and the dataset size, then pinned with every checkpoint.

:class:`DPPlan` is everything the guarantee depends on - the :class:`SamplingPlan` (n, q, sampling, cap,
truncation analysis), the noise multiplier, the steps of one run, how many runs read the data (a sweep),
delta and the clipping norm. The accountant, the sampler and the statement all read it, and a resumed run
refuses to continue under a different one.

``--epsilon`` is the budget of the whole job: the noise of a sweep of ``runs`` runs is calibrated so that
all of them composed meet it (as Private Evolution's ``--epsilon`` covers all its runs), never each run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from continuousbench.dp import accounting
from continuousbench.dp.sampling import SamplingPlan
from continuousbench.errors import UserError


@dataclass(frozen=True)
class DPPlan:
    sampling: SamplingPlan
    noise_multiplier: float
    steps: int
    delta: float
    clip_norm: float
    runs: int = 1  # runs of ``steps`` steps each on the same data (a sweep), all inside the one budget

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DPPlan:
        return cls(**{**data, "sampling": SamplingPlan(**data["sampling"])})

    def account(self, runs: int | None = None) -> accounting.PrivacyGuarantee:
        """The guarantee of ``runs`` runs of this plan on the same data composed (default: all the plan's
        runs, the published guarantee of a sweep; 1: one run alone). Identical runs compose as one run
        of their steps summed, so ``steps`` and ``event_json`` of the result are the whole job's."""
        total = self.steps * (self.runs if runs is None else runs)
        return accounting.account(
            self.sampling, self.noise_multiplier, total, self.delta, clip_norm=self.clip_norm
        )


def _expected_effective_batch(n: int, q: float, physical_batch: int | None) -> float:
    """E[min(Binomial(n, q), B)]: the records a (truncated) batch really holds on average."""
    if physical_batch is None:
        return n * q
    import numpy as np
    from scipy.stats import binom

    k = np.arange(physical_batch + 1)
    return float((k * binom.pmf(k, n, q)).sum() + physical_batch * binom.sf(physical_batch, n, q))


def choose_expected_batch(
    n: int,
    physical_batch: int,
    steps: int,
    target_epsilon: float,
    delta: float,
    *,
    truncation_analysis: str = "pld",
    candidates: int = 7,
) -> tuple[int, float]:
    """(expected batch, noise multiplier) minimising noise std per record of a batch (Table 31).

    The ratio minimised is ``sigma / E[min(Binomial(n, q), B)]``: with the exact truncated analysis a
    larger ``q`` costs privacy (sigma rises) once batches start to hit ``B`` and brings no more records,
    so the optimum sits just below ``B``. With the union bound, only expected batches whose
    ``(1 + e^eps) * eta <= delta / 10`` are considered (truncation then changes almost nothing).
    ``candidates`` expected batches spread over [B/2, upper] are calibrated; the best is returned.
    """
    from scipy.stats import binom

    if physical_batch >= n:
        raise UserError(
            f"--physical_batch_size {physical_batch} must be smaller than the dataset ({n} records); "
            "lower it, or pass --sampling poisson with a numeric --expected_batch_size"
        )
    if truncation_analysis == "union_bound":
        budget = delta / 10 / (1 + math.exp(min(target_epsilon, 700.0)))

        def ok(b: int) -> bool:
            return steps * binom.sf(physical_batch, n + 1, b / n) <= budget

        lo, hi = 1, physical_batch
        if not ok(lo):
            raise UserError("no expected batch keeps the truncation probability under delta/10")
        while lo < hi:  # largest feasible expected batch (feasibility is monotone in b)
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
        upper = lo
    else:
        upper = min(n - 1, int(physical_batch * 1.05))
    lower = max(1, min(upper, physical_batch // 2))
    grid = sorted({round(lower + (upper - lower) * i / max(1, candidates - 1)) for i in range(candidates)})
    best: tuple[float, int, float] | None = None
    for b in grid:
        q = b / n
        sigma = accounting.calibrate_noise(
            target_epsilon,
            q,
            steps,
            delta,
            dataset_size=n,
            physical_batch=physical_batch,
            sampling="truncated_poisson",
            truncation_analysis=truncation_analysis,
        )
        ratio = sigma / _expected_effective_batch(n, q, physical_batch)
        if best is None or ratio < best[0]:
            best = (ratio, b, sigma)
    assert best is not None
    return best[1], best[2]


def make_plan(n: int, config, runs: int = 1) -> DPPlan:
    """Calibrate the noise for ``config`` (a GeneratorConfig) on ``n`` records so that ``runs`` runs of
    ``config.max_steps`` steps each (a sweep) meet ``config.epsilon`` together; ``auto`` picks the batch."""
    delta = accounting.check_delta(config.delta, n) if config.delta else accounting.default_delta(n)
    steps, cap = config.max_steps * runs, config.physical_batch_size  # what the budget must cover
    truncated = config.sampling == "truncated_poisson"
    analysis = config.truncation_analysis if truncated else None
    if config.expected_batch_size == "auto":
        if not truncated:
            raise UserError("--expected_batch_size auto needs --sampling truncated_poisson (a batch cap)")
        batch, sigma = choose_expected_batch(
            n, cap, steps, config.epsilon, delta, truncation_analysis=analysis
        )
        sampling = SamplingPlan(n, float(batch), config.sampling, cap, analysis)
        return DPPlan(sampling, sigma, config.max_steps, delta, config.clip_norm, runs)
    try:
        batch = float(config.expected_batch_size)
    except ValueError:
        raise UserError(
            f"--expected_batch_size must be a number or auto, got {config.expected_batch_size!r}"
        ) from None
    if not 0 < batch <= n:
        raise UserError(
            f"--expected_batch_size {config.expected_batch_size} is larger than the dataset ({n} records) "
            f"or not positive; pass one in (0, {n}]"
        )
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
    return DPPlan(sampling, sigma, config.max_steps, delta, config.clip_norm, runs)
