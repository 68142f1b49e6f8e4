"""Coverage-aware weighted subsampling (paper G.2) and the candidate pools it draws from."""

from __future__ import annotations

import numpy as np
import pytest

from continuousbench.geminon import corpus as C
from continuousbench.geminon.sampling import _draw, coverage_sample, incidence_matrix


def _one_pair_each(pairs: list[int], n_pairs: int):
    """One candidate per entry of ``pairs``, covering just that pair."""
    return incidence_matrix(np.arange(len(pairs) + 1), np.asarray(pairs), n_pairs)


def test_incidence_matrix_counts_a_repeated_pair_once():
    matrix = incidence_matrix(np.array([0, 3, 4]), np.array([2, 2, 0, 1]), 3)
    assert matrix.toarray().tolist() == [[1, 0, 1], [0, 1, 0]]


def test_draw_is_weighted_without_replacement_and_skips_zero_scores():
    rng = np.random.default_rng(0)
    scores = np.array([0.0, 1.0, 1.0, 100.0, 0.0])
    picks = [tuple(sorted(_draw(scores, 2, rng))) for _ in range(200)]
    assert all(len(set(p)) == 2 and 0 not in p and 4 not in p for p in picks)
    assert all(3 in p for p in picks[:50]) or sum(3 in p for p in picks) > 190
    assert sorted(_draw(scores, 10, rng)) == [1, 2, 3]  # fewer positive candidates than asked: all of them


def test_lower_counts_attract_the_draw():
    """A pair covered 20 times is avoided until the other pair catches up (counts update each round)."""
    matrix = _one_pair_each([0] * 100 + [1] * 100, 2)
    seeded = np.array([20, 0])
    once = coverage_sample({"x": matrix}, {"x": 40}, np.random.default_rng(0), rounds=1, counts=seeded)
    stepwise = coverage_sample({"x": matrix}, {"x": 40}, np.random.default_rng(0), rounds=40, counts=seeded)
    assert once.counts[0] - 20 <= 5  # one batch with static weights: 1/21 against 1
    assert stepwise.counts[0] - 20 >= 5  # after pair 1 catches up, pair 0 is drawn again
    assert abs(stepwise.counts[0] - stepwise.counts[1]) <= 12
    assert seeded.tolist() == [20, 0]  # the caller's counts are not modified


def test_targets_met_without_repeats_across_interleaved_styles():
    rng = np.random.default_rng(1)
    n_pairs, n = 50, 3000
    lengths = rng.integers(1, 6, size=n)
    indptr = np.r_[0, np.cumsum(lengths)]
    pairs = rng.integers(0, n_pairs, size=indptr[-1])
    pools = {
        "a": incidence_matrix(indptr, pairs, n_pairs),
        "b": _one_pair_each(list(range(n_pairs)) * 4, n_pairs),
    }
    sel = coverage_sample(pools, {"a": 500, "b": 120}, np.random.default_rng(2), rounds=25)
    assert [len(sel.indices[s]) for s in "ab"] == [500, 120]
    assert all(len(set(sel.indices[s].tolist())) == len(sel.indices[s]) for s in "ab")
    expected = sum(np.bincount(pools[s][sel.indices[s]].indices, minlength=n_pairs) for s in "ab")
    assert sel.counts.tolist() == expected.tolist()
    again = coverage_sample(pools, {"a": 500, "b": 120}, np.random.default_rng(2), rounds=25)
    assert all(np.array_equal(sel.indices[s], again.indices[s]) for s in "ab")


def test_shortfall_and_empty_candidates_are_reported():
    matrix = incidence_matrix(np.array([0, 1, 1, 2]), np.array([0, 1]), 2)  # candidate 1 covers nothing
    sel = coverage_sample({"x": matrix}, {"x": 3}, np.random.default_rng(0), rounds=3)
    assert sorted(sel.indices["x"].tolist()) == [0, 2]
    assert sel.stats["x"] == {
        "candidates": 3,
        "target": 3,
        "selected": 2,
        "dropped_not_selected": 1,
        "dropped_no_pairs": 1,
        "shortfall": 1,
    }


@pytest.mark.parametrize(
    ("style", "units", "target", "oversample", "per_unit"),
    [
        ("wiki", 480, 20_000, None, 1000),  # paper: ~1000 candidates per entity
        ("comparison", 114_960, 100_000, None, 3),  # paper: 3 per pair
        ("comparison", 276, 1200, None, 7),  # tiny: 3 per pair is below the target, raised to 1.5x
        ("comparison", 114_960, 300_000, None, 4),  # medium: 1.15x would leave no choice
        ("wiki", 480, 20_000, 4.0, 167),  # capped at 4x the target
    ],
)
def test_pool_plan(style, units, target, oversample, per_unit):
    plan = C.plan_pool(style, units, target, oversample)
    assert plan.per_unit == per_unit
    assert plan.candidates >= min(oversample or C.MIN_OVERSAMPLE, C.MIN_OVERSAMPLE) * target
