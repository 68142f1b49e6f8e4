import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from scipy.stats import binom

from continuousbench.dp import accounting as acc
from continuousbench.dp import plan as planning
from continuousbench.dp.sampling import SamplingPlan


def test_epsilon_matches_dp_accounting():
    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 200)
    ref = PLDAccountant()
    ref.compose(event)
    assert acc.epsilon(1.1, 0.01, 200, 1e-5) == pytest.approx(ref.get_epsilon(1e-5), rel=1e-12)
    assert acc.epsilon(2.0, 0.01, 200, 1e-5) < acc.epsilon(1.1, 0.01, 200, 1e-5)


@pytest.mark.slow  # 15 s of PLD numerics: CI only, not the fast lane
@pytest.mark.parametrize("target", [1.0, 10.0, 100.0])
def test_calibration_hits_target(target):
    sigma = acc.calibrate_noise(target, 0.01, 50, 1e-5)
    eps = acc.epsilon(sigma, 0.01, 50, 1e-5)
    assert eps == pytest.approx(target, rel=0.01)
    assert eps <= target * 1.0001  # never above the budget (beyond tol)


@pytest.mark.slow  # 12-34 s of PLD numerics: CI only, not the fast lane
def test_calibration_truncated_pld_hits_target():
    kw = dict(dataset_size=300, physical_batch=8, sampling="truncated_poisson")
    sigma = acc.calibrate_noise(10.0, 0.025, 5, 1e-3, **kw)
    eps = acc.event_epsilon(acc.dp_event(sigma, 0.025, 5, **kw), 1e-3)
    assert eps == pytest.approx(10.0, rel=0.01)


def test_truncation_probability_is_exact_union_bound():
    n, q, cap, steps = 5000, 0.004, 30, 50
    direct = sum(binom.pmf(k, n, q) for k in range(cap + 1, n + 1))
    assert acc.truncation_probability(n, q, cap, steps) == pytest.approx(steps * direct, rel=1e-9)
    # Monte Carlo sanity: a batch exceeds the cap about as often as the formula says.
    rng = np.random.default_rng(0)
    freq = (rng.binomial(n, q, size=200_000) > cap).mean()
    assert freq == pytest.approx(direct, rel=0.1)


@pytest.mark.slow  # 17 s of PLD numerics: CI only, not the fast lane
def test_union_bound_pays_one_plus_e_eps_times_eta():
    n, q, cap, steps, delta = 2000, 0.005, 30, 30, 1e-3
    plan = SamplingPlan(n, q * n, "truncated_poisson", cap, "union_bound")
    g = acc.account(plan, 1.0, steps, delta, clip_norm=1e-3)
    eta = acc.truncation_probability(n + 1, q, cap, steps)
    rest = delta - (1 + math.exp(g.epsilon)) * eta
    assert rest > 0
    assert acc.epsilon(1.0, q, steps, rest) == pytest.approx(g.epsilon, rel=1e-3)


@pytest.mark.slow  # 7-27 s of PLD numerics per case: CI only, not the fast lane
@pytest.mark.parametrize("analysis", ["pld", "union_bound"])
def test_event_json_round_trip(analysis):
    event = acc.dp_event(
        0.7,
        0.02,
        10,
        dataset_size=300,
        physical_batch=12,
        sampling="truncated_poisson",
        truncation_analysis=analysis,
    )
    text = acc.dp_event_to_json(event)
    back = acc.dp_event_from_json(text)
    assert back == event
    first = acc.event_epsilon(event, 1e-5)
    acc._composed.cache_clear()  # the round-tripped event's epsilon computed afresh, not the cached one
    assert acc.event_epsilon(back, 1e-5) == first


def test_event_json_refuses_foreign_modules():
    with pytest.raises(ValueError, match="not dp_accounting"):
        acc.dp_event_from_json('{"module_name": "os", "class_name": "system", "command": "true"}')


@pytest.mark.slow  # 12-34 s of PLD numerics: CI only, not the fast lane
def test_choose_expected_batch_minimises_noise_per_record():
    n, cap, steps, eps, delta = 300, 8, 5, 10.0, 1e-3
    batch, sigma = planning.choose_expected_batch(n, cap, steps, eps, delta, candidates=3)
    ratio = sigma / planning._expected_effective_batch(n, batch / n, cap)
    for other in (cap // 2, cap):
        s = acc.calibrate_noise(
            eps, other / n, steps, delta, dataset_size=n, physical_batch=cap, sampling="truncated_poisson"
        )
        assert ratio <= s / planning._expected_effective_batch(n, other / n, cap) * 1.001


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_choose_expected_batch_union_bound_keeps_truncation_negligible():
    n, cap, steps, eps, delta = 2000, 32, 10, 2.0, 1e-4
    batch, _ = planning.choose_expected_batch(
        n, cap, steps, eps, delta, truncation_analysis="union_bound", candidates=3
    )
    assert (1 + math.exp(eps)) * acc.truncation_probability(n + 1, batch / n, cap, steps) <= delta / 10
    assert batch < cap


@pytest.mark.slow  # 12-34 s of PLD numerics: CI only, not the fast lane
def test_truncated_pld_covers_both_neighbour_pairs():
    """The dataset holding the differing record has n + 1 or n records; epsilon is not monotone in it."""
    n, q, cap, steps, delta = 300, 0.2, 10, 5, 1e-3
    plan = SamplingPlan(n, q * n, "truncated_poisson", cap, "pld")
    g = acc.account(plan, 0.8, steps, delta, clip_norm=1.0)
    both = [
        acc.event_epsilon(
            acc.dp_event(0.8, q, steps, dataset_size=m, physical_batch=cap, sampling="truncated_poisson"),
            delta,
        )
        for m in (n + 1, n)
    ]
    assert both[0] != both[1] and g.epsilon == pytest.approx(max(both))
    sigma = acc.calibrate_noise(
        5.0, q, steps, delta, tol=1e-2, dataset_size=n, physical_batch=cap, sampling="truncated_poisson"
    )
    for m in (n + 1, n):
        event = acc.dp_event(
            sigma, q, steps, dataset_size=m, physical_batch=cap, sampling="truncated_poisson"
        )
        assert acc.event_epsilon(event, delta, 1e-3) <= 5.0 + 1e-6


def test_default_delta():
    assert acc.default_delta(200_000) == pytest.approx(200_000**-1.1)
    assert acc.default_delta(180_000) == pytest.approx(1.66e-6, rel=0.01)  # Table 31, GEMINON
    with pytest.raises(ValueError):
        acc.default_delta(0)


def test_delta_of_one_over_n_or_more_is_refused_and_calibration_fails_fast():
    """Deltas in [1/n, 1) were accepted and their calibration ran for minutes; now one line, at once."""
    import time

    from continuousbench.dp.accounting import calibrate, check_delta, gaussian_composition_event
    from continuousbench.errors import UserError

    assert check_delta(1e-3, 999) == 1e-3
    for delta in (1 / 1000, 0.5, 0.9999999):
        refused = f"--delta {delta:.10g} is not below 1/n = 0.001 .*may publish a whole"
        with pytest.raises(UserError, match=refused):
            check_delta(delta, 1000)
    start = time.perf_counter()
    with pytest.raises(UserError, match="needs a noise multiplier above 16384"):
        calibrate(lambda s: gaussian_composition_event(s, 10), 1e-9, 1e-5)
    assert time.perf_counter() - start < 10
