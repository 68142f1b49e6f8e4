"""The Steinke-Nasr-Jagielski one-run bound against the values printed in their paper."""

import math

import numpy as np
import pytest

from continuousbench.diagnostics.one_run import audit, epsilon_lower_bound, guess_grid, p_value


@pytest.mark.parametrize(
    ("m", "r", "v", "delta", "printed"),
    [
        (1000, 100, 75, 1e-4, 0.673),  # arXiv:2305.08846 App. D, the worked example
        (100_000, 1510, 1439, 1e-5, 2.675),  # §7 (Fig. 11), printed truncated
    ],
)
def test_reproduces_the_papers_printed_bounds(m, r, v, delta, printed):
    assert epsilon_lower_bound(m, r, v, delta, confidence=0.95) == pytest.approx(printed, abs=1e-3)


def test_pure_dp_p_value_is_the_binomial_tail():
    # 75 of 100 right under log(3)-DP: randomised response is right with probability 3/4.
    assert p_value(100, 100, 75, math.log(3), 0.0) == pytest.approx(0.5535, abs=1e-3)
    assert p_value(100, 100, 0, 2.0, 1e-3) == 1.0


def test_delta_only_weakens_and_epsilon_only_raises_the_p_value():
    assert p_value(1000, 100, 75, 0.5, 1e-4) > p_value(1000, 100, 75, 0.5, 0.0)
    values = [p_value(1000, 100, 75, eps, 1e-4) for eps in np.linspace(0, 3, 13)]
    assert values == sorted(values)


def test_chance_level_guessing_gives_no_bound():
    assert epsilon_lower_bound(1000, 100, 50, 1e-5) == 0.0


def test_audit_uses_a_fixed_grid_with_bonferroni():
    m = 64
    included = np.arange(m) % 2 == 0
    perfect = audit(included.astype(float), included, delta=1e-5)
    assert guess_grid(m) == [4, 8, 16, 32] and len(perfect.grid) == 4
    best = max(perfect.grid, key=lambda t: t["epsilon_lower_bound"])
    assert best["correct"] == best["guesses"] and perfect.epsilon_lower_bound > 2
    # each of the 4 tests runs at 1 - 0.05/4: below the bound of a single test at 95%
    assert perfect.epsilon_lower_bound < epsilon_lower_bound(m, best["guesses"], best["correct"], 1e-5)
    noise = audit(np.random.default_rng(0).normal(size=m), included, delta=1e-5)
    assert noise.epsilon_lower_bound < 1


def test_the_audit_records_its_power_and_a_broken_run_would_fail_the_dp_test():
    """What tests/dp/test_audit.py's DP case would see from a run whose noise was dropped (every canary
    scored by membership, as a perfectly memorising run does): at delta 1e-5 with 64 canaries the bound
    is about 2.6 > 1, so "a DP run at epsilon 1 stays within its claim" can fail; at that run's default
    delta 1/49^1.1 even a perfect attack bounds nothing (the test could not fail), and the record says so."""
    m = 64
    included = np.arange(m) % 2 == 0
    broken = audit(included.astype(float), included, delta=1e-5)
    assert broken.epsilon_lower_bound == broken.largest_reachable_bound == pytest.approx(2.643, abs=1e-3)
    assert broken.epsilon_lower_bound > 1  # a broken epsilon-1 run is caught
    powerless = audit(included.astype(float), included, delta=1 / 49**1.1)
    assert powerless.largest_reachable_bound == 0.0 == powerless.epsilon_lower_bound
