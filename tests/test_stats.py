"""Intervals, paired differences and McNemar against direct computations."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest, bootstrap

from continuousbench import stats


def wilson_closed_form(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 40), (3, 5), (17, 40), (40, 40), (123, 600)])
def test_wilson_matches_the_closed_form(k, n):
    low, high = stats.wilson_interval(k, n)
    assert (low, high) == pytest.approx(wilson_closed_form(k, n), abs=1e-12)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_of_nothing_and_of_impossible_counts():
    assert stats.wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="successes must lie in"):
        stats.wilson_interval(5, 4)


def exact_bootstrap_distribution(values) -> dict[float, float]:
    """Every one of the n^n equally likely resamples, enumerated: mean -> probability."""
    n = len(values)
    dist: dict[float, float] = {}
    for idx in itertools.product(range(n), repeat=n):
        mean = round(sum(values[i] for i in idx) / n, 12)
        dist[mean] = dist.get(mean, 0.0) + n**-n
    return dist


def test_bootstrap_means_follow_the_enumerated_bootstrap_distribution():
    values = [1.0, 0.0, 1.0, -1.0, 0.0, 1.0]  # 6^6 = 46,656 resamples
    exact = exact_bootstrap_distribution(values)
    draws = stats.bootstrap_means(values, resamples=200_000, seed=1)
    levels, counts = np.unique(np.round(draws, 12), return_counts=True)
    assert set(levels) <= set(exact)
    for level, count in zip(levels, counts, strict=True):  # 200k draws: within 5 standard errors
        p = exact[level]
        assert abs(count / draws.size - p) < 5 * math.sqrt(p * (1 - p) / draws.size) + 1e-4


def test_bootstrap_interval_is_the_enumerated_percentile_interval():
    values = [1.0, -1.0, 0.0, 1.0, 1.0, 0.0]  # 6^6 = 46,656 resamples, differences of paired outcomes
    exact = exact_bootstrap_distribution(values)
    levels = sorted(exact)
    cdf = np.cumsum([exact[v] for v in levels])
    # The exact 2.5% / 97.5% quantiles; neither sits on a jump of the CDF, so a large sample finds them.
    lo, hi = levels[int(np.searchsorted(cdf, 0.025))], levels[int(np.searchsorted(cdf, 0.975))]
    assert min(abs(cdf - 0.025).min(), abs(cdf - 0.975).min()) > 0.005
    assert stats.bootstrap_interval(values, resamples=100_000, seed=0) == pytest.approx((lo, hi))


def test_bootstrap_interval_agrees_with_scipy_resampling_indices():
    rng = np.random.default_rng(0)
    values = (rng.random(300) < 0.35).astype(float)
    ours = stats.bootstrap_interval(values, resamples=20_000, seed=5)
    theirs = bootstrap((values,), np.mean, n_resamples=20_000, method="percentile", rng=1)
    assert ours == pytest.approx(tuple(theirs.confidence_interval), abs=0.01)


def test_bootstrap_is_seeded():
    values = [1, 0, 0, 1, 1]
    a = stats.bootstrap_interval(values, seed=3)
    assert a == stats.bootstrap_interval(values, seed=3)
    assert not np.array_equal(
        stats.bootstrap_means(values, resamples=50, seed=3),
        stats.bootstrap_means(values, resamples=50, seed=4),
    )
    assert stats.bootstrap_interval([1, 1, 1]) == (1.0, 1.0)
    with pytest.raises(ValueError, match="non-empty"):
        stats.bootstrap_interval([])


def mcnemar_by_hand(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 1), (5, 5), (3, 12), (12, 3), (40, 61), (0, 20)])
def test_mcnemar_matches_binomtest_and_the_binomial_sum(b, c):
    p = stats.mcnemar_exact(b, c)
    assert p == pytest.approx(mcnemar_by_hand(b, c), rel=1e-9)
    if b + c:
        assert p == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)


def test_paired_difference():
    a = [True] * 30 + [False] * 10 + [True] * 8 + [False] * 2
    b = [True] * 30 + [False] * 10 + [False] * 8 + [True] * 2
    d = stats.paired_difference(a, b, resamples=5000, seed=0)
    assert d["n"] == 50 and d["a_only"] == 8 and d["b_only"] == 2
    assert d["accuracy_a"] == pytest.approx(38 / 50) and d["difference"] == pytest.approx(6 / 50)
    assert d["p_value"] == pytest.approx(binomtest(8, 10, 0.5).pvalue)
    low, high = d["ci95"]
    assert low < d["difference"] < high
    diffs = np.array(a, float) - np.array(b, float)
    assert d["bootstrap_ci95"] == list(stats.bootstrap_interval(diffs, resamples=5000, seed=0))
    assert d["ci95"] == list(stats.newcombe_paired_interval(30, 8, 2, 10))
    same = stats.paired_difference(a, a)
    assert same["difference"] == 0 and same["p_value"] == 1.0
    assert same["bootstrap_ci95"] == [0.0, 0.0]  # the bootstrap collapses; the score interval does not
    low, high = same["ci95"]
    assert low < -0.02 and high > 0.02 and low == pytest.approx(-high)
    assert stats.paired_difference([], [])["difference"] is None
    with pytest.raises(ValueError, match="equally long"):
        stats.paired_difference([True], [True, False])


def test_mean_sd_over_seeds():
    assert stats.mean_sd([0.2, 0.4, None, 0.6]) == (pytest.approx(0.4), pytest.approx(0.2))
    assert stats.mean_sd([0.3]) == (0.3, None)
    assert stats.mean_sd([None]) == (None, None)


def test_newcombe_paired_interval_matches_the_published_example():
    """Fagerland, Lydersen & Laake (2014; ``contingencytables`` R package, chapter 8): Cavo et al.'s
    table [[59, 6], [16, 80]] gives -0.0621 (95% CI -0.1186 to -0.0046) by Newcombe's square-and-add."""
    low, high = stats.newcombe_paired_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    # A and B swapped mirror the interval
    assert stats.newcombe_paired_interval(59, 16, 6, 80) == pytest.approx((-high, -low))
    assert stats.newcombe_paired_interval(0, 0, 0, 0) is None


@pytest.mark.parametrize("probs", [(0.45, 0.01, 0.01, 0.53), (0.6, 0.015, 0.005, 0.38), (0.3, 0.0, 0.0, 0.7)])
def test_newcombe_paired_interval_keeps_coverage_with_few_discordant_pairs(probs):
    """Simulated 95% coverage of the true difference with 0-4 expected discordant questions of 200:
    the score interval stays near nominal; the paired bootstrap falls far below it."""
    both, a_only, b_only, neither = probs
    truth = a_only - b_only
    tables = np.random.default_rng(7).multinomial(200, probs, size=400)
    covered = sum(
        lo <= truth + 1e-12 and truth - 1e-12 <= hi
        for lo, hi in (stats.newcombe_paired_interval(*map(int, t)) for t in tables)
    )
    boot = 0
    for t in tables[:100]:
        diffs = np.repeat([0.0, 1.0, -1.0, 0.0], t)
        lo, hi = stats.bootstrap_interval(diffs, resamples=500, seed=0)
        boot += lo <= truth + 1e-12 and truth - 1e-12 <= hi
    assert covered / len(tables) >= 0.93
    assert boot / 100 <= covered / len(tables)
