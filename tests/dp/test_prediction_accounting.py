"""Private prediction's accounting against independent computations: Theorem 1's rho by hand, the zCDP
to (epsilon, delta) conversion by a continuous minimisation (scipy), and the budget's one line."""

import math

import dp_accounting as dpa
import pytest
from scipy.optimize import minimize_scalar

from continuousbench.dp.accounting import dp_event_from_json
from continuousbench.dp.prediction_accounting import (
    Settings,
    account_prediction,
    em_rho,
    event_epsilon,
    prediction_event,
    svt_rho,
    tokens_covered,
)
from continuousbench.errors import UserError


def zcdp_epsilon(rho: float, delta: float) -> float:
    """Independent conversion: min over real alpha > 1 of the RDP-to-DP bound of a rho-zCDP mechanism
    (RDP alpha rho; Balle et al. 2020, Canonne, Kamath and Steinke 2020)."""

    def bound(alpha: float) -> float:
        return alpha * rho + math.log1p(-1 / alpha) - math.log(delta * alpha) / (alpha - 1)

    return minimize_scalar(bound, bounds=(1.0101, 1e5), method="bounded", options={"xatol": 1e-10}).fun


def test_rho_is_theorem_1_worked_by_hand():
    # s = 4, c = 1, tau = 1, sigma = 0.5, r = 3: rho = 3 (c^2 / (2 s^2 tau^2) + 2 / (s sigma)^2)
    assert em_rho(1.0, 4, 1.0) == pytest.approx(1 / 32)
    assert svt_rho(4, 0.5) == pytest.approx(1 / 2)
    event = prediction_event(1 / 32, 1 / 2, 3)
    accountant = dpa.rdp.RdpAccountant(orders=[2.0, 10.0])
    accountant.compose(event)
    assert accountant._rdp.tolist() == pytest.approx([2 * 3 * 17 / 32, 10 * 3 * 17 / 32])  # RDP alpha rho


@pytest.mark.parametrize("rho", [0.01, 1.59375, 40.0])
def test_epsilon_equals_an_independent_conversion(rho):
    delta = 1e-6
    ours = event_epsilon(dpa.ZCDpEvent(rho), delta)
    assert ours == pytest.approx(zcdp_epsilon(rho, delta), rel=1e-4)
    assert ours <= rho + 2 * math.sqrt(rho * math.log(1 / delta))  # Bun and Steinke's simpler bound
    default = dpa.rdp.RdpAccountant()  # dp_accounting's own grid of orders: never tighter than ours
    default.compose(dpa.ZCDpEvent(rho))
    assert ours <= default.get_epsilon(delta) + 1e-12


def _settings(**overrides) -> Settings:
    base = dict(
        private_tokens=40,
        batch_size=16,
        clip=5.0,
        temperature=None,
        max_temperature=2.0,
        svt_threshold=None,
        svt_noise=None,
    )
    return Settings(**{**base, **overrides})


def test_the_temperature_spends_the_budget_and_no_more():
    g = account_prediction(10.0, 1e-4, _settings(), dataset_size=1000, batches=50)
    assert 10.0 - 1e-6 < g.epsilon <= 10.0
    assert g.epsilon == pytest.approx(zcdp_epsilon(g.rho, 1e-4), rel=1e-4)
    assert g.rho == pytest.approx(40 * em_rho(5.0, 16, g.temperature))
    assert dp_event_from_json(g.event_json) == prediction_event(g.rho_em, 0.0, 40)
    lower = account_prediction(5.0, 1e-4, _settings(), dataset_size=1000, batches=50)
    assert lower.temperature > g.temperature  # less budget, flatter draws
    with_svt = account_prediction(
        10.0, 1e-4, _settings(svt_threshold=0.5, svt_noise=0.5), dataset_size=1000, batches=50
    )
    assert with_svt.temperature > g.temperature and with_svt.rho_svt == pytest.approx(svt_rho(16, 0.5))


def test_a_budget_too_small_is_one_line_with_the_tokens_it_covers():
    settings = _settings(private_tokens=400)
    with pytest.raises(UserError) as err:
        account_prediction(1.0, 1e-4, settings, dataset_size=1000, batches=50)
    covered = tokens_covered(1.0, 1e-4, settings, 2.0)
    assert f"covers {covered} private tokens per record at --max_temperature 2" in str(err.value)
    assert f"--max_new_tokens {covered}" in str(err.value)
    fits = _settings(private_tokens=covered)
    assert account_prediction(1.0, 1e-4, fits, dataset_size=1000, batches=50).temperature <= 2.0
    rho = em_rho(5.0, 16, 2.0)
    assert event_epsilon(prediction_event(rho, 0.0, covered + 1), 1e-4) > 1.0  # one more does not fit
    given = _settings(private_tokens=covered + 1, temperature=2.0)
    with pytest.raises(UserError, match=f"covers {covered} private tokens per record at --temperature 2"):
        account_prediction(1.0, 1e-4, given, dataset_size=1000, batches=50)
