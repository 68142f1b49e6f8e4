"""Uncertainty of accuracies over a test set: intervals, paired differences, McNemar, spread over seeds.

A test split of a few hundred questions gives an accuracy whose 95% interval is several points wide,
and the paper's claims compare runs, so every number we publish carries its uncertainty:

- :func:`wilson_interval` for one accuracy (k correct of n). Wilson rather than a bootstrap because it
  is closed-form (no seed to record, the same bytes everywhere), keeps close to its nominal coverage
  for small n (Brown, Cai & DasGupta 2001), and stays informative at 0% and 100%, which are common
  here (singleton questions under DP): a percentile bootstrap of 0/40 is the useless [0, 0].
- :func:`paired_difference` for two runs scored on the same questions: the difference in accuracy,
  Newcombe's hybrid score interval for paired proportions (:func:`newcombe_paired_interval`) and the
  exact McNemar p-value on the discordant questions. Pairing removes the variance of question
  difficulty that two independent intervals would double count. A percentile paired bootstrap is kept
  beside it (``bootstrap_ci95``) but not used for claims: with few discordant questions it is too
  narrow, and with none it collapses to [0, 0] although the data cannot rule out a difference.
- :func:`mean_sd` for runs that differ only by seed (sample standard deviation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: `compare --help` and `report --help` skip it
    import numpy as np

CONFIDENCE = 0.95  # the `ci95` keys of results.json say it; the functions take others for tests
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` (no continuity correction); None when ``n == 0``."""
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    from scipy.stats import binomtest

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def bootstrap_means(values: Sequence[float], *, resamples: int, seed: int) -> np.ndarray:
    """``resamples`` means of ``len(values)`` draws with replacement from ``values`` (the bootstrap).

    Drawing n indices per resample costs O(resamples x n); the mean depends only on how often each
    distinct value is drawn, a multinomial over the distinct values with their frequencies, which is
    the same distribution at O(resamples x distinct values). Accuracies and their differences take two
    or three distinct values, so 10,000 resamples cost about a millisecond. (Hand-written for that
    reason: ``scipy.stats.bootstrap`` resamples indices and is ~100x slower on 600 questions.)
    """
    import numpy as np

    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("bootstrap needs a non-empty 1-d sequence of numbers")
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples}")
    levels, counts = np.unique(data, return_counts=True)
    draws = np.random.default_rng(seed).multinomial(data.size, counts / data.size, size=resamples)
    return draws @ levels / data.size


def bootstrap_interval(
    values: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (numpy's linear quantiles)."""
    import numpy as np

    tail = (1.0 - confidence) / 2
    low, high = np.quantile(bootstrap_means(values, resamples=resamples, seed=seed), [tail, 1.0 - tail])
    return float(low), float(high)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of ``a_only`` of the discordant pairs at 1/2.

    ``a_only`` questions were right for A only, ``b_only`` for B only; with none discordant, p = 1.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be non-negative")
    if a_only + b_only == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(int(a_only), int(a_only + b_only), 0.5).pvalue)


def newcombe_paired_interval(
    both: int, a_only: int, b_only: int, neither: int, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Newcombe's (1998, method 10) score interval for p_A - p_B from a paired 2x2 table.

    Square-and-add of the two Wilson intervals, corrected by the phi correlation of the pairs: it keeps
    close to nominal coverage with few or no discordant pairs, where Wald and bootstrap intervals shrink
    to nothing (Newcombe 1998; Fagerland, Lydersen & Laake 2014 recommend it). None when n == 0.
    """
    n = both + a_only + b_only + neither
    if n == 0:
        return None
    p1, p2 = (both + a_only) / n, (both + b_only) / n
    l1, u1 = wilson_interval(both + a_only, n, confidence)
    l2, u2 = wilson_interval(both + b_only, n, confidence)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    cross = both * neither - a_only * b_only
    corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)  # Newcombe's continuity-type correction
    phi = corrected / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    low = d - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = d + math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    return max(-1.0, low), min(1.0, high)


def paired_difference(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> dict:
    """Accuracy of A minus accuracy of B on the same questions (``a[i]``, ``b[i]``: question i correct).

    Returns ``n``, both accuracies, ``difference``, its Newcombe score interval ``ci95``, the percentile
    paired-bootstrap ``bootstrap_ci95`` (questions resampled with their pair of outcomes; shown for
    continuity, not for claims), the discordant counts ``a_only`` / ``b_only`` and the exact McNemar
    ``p_value``. With no questions, every statistic is None.
    """
    import numpy as np

    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired outcomes need two equally long 1-d sequences, got {x.shape} and {y.shape}")
    n = int(x.size)
    a_only, b_only = int(np.sum(x & ~y)), int(np.sum(~x & y))
    if n == 0:
        return {
            "n": 0,
            "accuracy_a": None,
            "accuracy_b": None,
            "difference": None,
            "ci95": None,
            "bootstrap_ci95": None,
            "a_only": 0,
            "b_only": 0,
            "p_value": None,
        }
    diff = x.astype(float) - y.astype(float)
    low, high = bootstrap_interval(diff, resamples=resamples, seed=seed, confidence=confidence)
    return {
        "n": n,
        "accuracy_a": float(x.mean()),
        "accuracy_b": float(y.mean()),
        "difference": float(diff.mean()),
        "ci95": list(
            newcombe_paired_interval(int(np.sum(x & y)), a_only, b_only, int(np.sum(~x & ~y)), confidence)
        ),
        "bootstrap_ci95": [low, high],
        "a_only": a_only,
        "b_only": b_only,
        "p_value": mcnemar_exact(a_only, b_only),
    }


def mean_sd(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (ddof 1) of the values that are not None; sd None below two."""
    kept = [float(v) for v in values if v is not None]
    if not kept:
        return None, None
    mean = math.fsum(kept) / len(kept)
    if len(kept) < 2:
        return mean, None
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in kept) / (len(kept) - 1))


def mean_interval(values: Sequence[float]) -> dict:
    """``{"mean", "ci95", "count"}`` of continuous per-item figures (an answer's loss, a ROUGE-L score):
    the mean with its percentile bootstrap 95% interval (seeded: the same bytes everywhere); the mean and
    interval None for no items."""
    if len(values) == 0:
        return {"mean": None, "ci95": None, "count": 0}
    low, high = bootstrap_interval(values)
    return {"mean": math.fsum(values) / len(values), "ci95": [low, high], "count": len(values)}
