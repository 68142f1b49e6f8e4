"""Accounting of private prediction (Amin et al. 2024, Theorem 1): zCDP per token, composed over tokens,
parallel over batches, converted to (epsilon, delta) by ``dp_accounting``'s RDP accountant.

Each synthetic record is decoded from one batch of private prompts (expected size ``s``); each record
of the corpus is in at most one batch. A token costs privacy only when it is *private*:

* **exponential mechanism.** The next token is drawn from ``softmax(z / tau)`` where ``z`` is the sum
  of the batch's clipped logit vectors divided by ``s`` (a public constant). Clipping maps every
  vector into ``[-c, c]``, so adding or removing one record moves each coordinate of ``z`` by at most
  ``c / s``: the score changes lie in an interval of width ``2c / s`` (the sensitivity of the
  aggregate), so the draw is ``eps_em = 2c / (s tau)``-bounded-range, hence ``eps_em^2 / 8``-zCDP
  (Cesar and Rogers 2021): ``rho_em = c^2 / (2 s^2 tau^2)``.
* **sparse vector** (optional). A token is made public, at no cost, when the L1 distance between the
  batch's mean next-token distribution (sum over the batch / s: sensitivity ``1 / s``) and the public
  prediction (no private record in the prompt) stays below a threshold; noise: ``Laplace(sigma)`` on the
  threshold, ``Laplace(2 sigma)`` on each distance. One AboveThreshold run, ended by its first private
  token, is ``2 / (s sigma)``-DP, so ``rho_svt = 2 / (s sigma)^2``; public tokens are the run's "below"
  answers, paid for by its one "above".

A batch stops after ``r`` private tokens (the budget), so it spends at most ``r`` of each: ``rho =
r (rho_em + rho_svt)``, Theorem 1 of the paper. The batches hold disjoint records, so the corpus is
``rho``-zCDP (parallel composition; a record's batch is drawn independently of the other records', so
adding one record changes one batch: see docs/private-prediction.md). The conversion to (epsilon, delta)
is dp_accounting's (RDP of order alpha is ``alpha rho``; Balle et al. 2020's conversion), on a dense
grid of orders. What is hand-written here is what dp_accounting lacks: the two per-token zCDP bounds
above (it has no event for the exponential mechanism or for AboveThreshold), and the search for the
temperature and for the tokens a budget covers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

from continuousbench.dp.accounting import check_target_epsilon, dp_event_to_json
from continuousbench.errors import UserError

# Orders of the RDP accountant: dp_accounting's own, and alpha - 1 geometric from 0.0101 (where the
# conversion is valid) to 1e5, so epsilon is within 1e-5 (relative) of the minimum over all real orders.
ORDERS = tuple(sorted({*DEFAULT_RDP_ORDERS, *(1 + float(a) for a in np.geomspace(0.0101, 1e5, 10_000))}))


def em_rho(clip: float, batch_size: int, temperature: float) -> float:
    """zCDP of one exponential-mechanism token: ``(2c / (s tau))^2 / 8``."""
    return (2 * clip / (batch_size * temperature)) ** 2 / 8


def svt_rho(batch_size: int, svt_noise: float | None) -> float:
    """zCDP of one AboveThreshold run (threshold noise ``Laplace(sigma)``): ``(2 / (s sigma))^2 / 2``."""
    return 0.0 if svt_noise is None else (2 / (batch_size * svt_noise)) ** 2 / 2


def prediction_event(rho_em: float, rho_svt: float, private_tokens: int):
    """The ``DpEvent`` of one batch (hence of the corpus): ``private_tokens`` x (EM token [+ SVT run])."""
    import dp_accounting as dpa

    token = dpa.ZCDpEvent(rho_em)
    if rho_svt:
        token = dpa.ComposedDpEvent([token, dpa.ZCDpEvent(rho_svt)])
    return dpa.SelfComposedDpEvent(token, int(private_tokens))


def event_epsilon(event, delta: float) -> float:
    """Epsilon of ``event`` at ``delta`` (dp_accounting's RDP accountant on :data:`ORDERS`)."""
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(orders=list(ORDERS))
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def budget_rho(target_epsilon: float, delta: float) -> float:
    """The largest zCDP ``rho`` whose epsilon at ``delta`` is at most ``target_epsilon``.

    dp_accounting converts RDP to epsilon as ``min over orders a of a rho + log(1 - 1/a) - log(delta a) /
    (a - 1)`` (on :data:`ORDERS`), so epsilon <= target exactly when ``rho <= max over a of (target -
    log(1 - 1/a) + log(delta a) / (a - 1)) / a``: its inverse in closed form, where a bisection through
    the accountant (``dp_accounting.calibrate_dp_mechanism``) took seconds. Callers check the result
    with the accountant itself.
    """
    check_target_epsilon(target_epsilon)
    a = np.array(ORDERS)
    return float(max(0.0, np.max((target_epsilon - np.log1p(-1 / a) + np.log(delta * a) / (a - 1)) / a)))


@dataclass(frozen=True)
class PredictionGuarantee:
    """What a private-prediction corpus was accounted as (everything its statement reports)."""

    epsilon: float
    delta: float
    rho: float  # zCDP of the whole corpus (= of one batch)
    rho_em: float  # per private token
    rho_svt: float  # per AboveThreshold run (0: no sparse vector test)
    private_tokens: int  # r: the private-token budget of every batch
    expected_batch_size: int  # s
    logit_clip: float  # c
    temperature: float  # tau
    svt_threshold: float | None
    svt_noise: float | None
    dataset_size: int
    batches: int
    event_json: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Settings:
    """The mechanism's settings that the budget is spent on (temperature None: the lowest the budget
    allows, at most ``max_temperature``)."""

    private_tokens: int
    batch_size: int
    clip: float
    temperature: float | None
    max_temperature: float
    svt_threshold: float | None
    svt_noise: float | None


def tokens_covered(target_epsilon: float, delta: float, s: Settings, temperature: float) -> int:
    """How many private tokens per batch ``(target_epsilon, delta)`` pays for at ``temperature``."""
    rho_em, rho_svt = em_rho(s.clip, s.batch_size, temperature), svt_rho(s.batch_size, s.svt_noise)
    count = int(budget_rho(target_epsilon, delta) / (rho_em + rho_svt))
    while count > 0 and event_epsilon(prediction_event(rho_em, rho_svt, count), delta) > target_epsilon:
        count -= 1  # the bisection's rounding, at most a step or two
    return count


def account_prediction(
    target_epsilon: float, delta: float, s: Settings, *, dataset_size: int, batches: int
) -> PredictionGuarantee:
    """Pick the temperature (when not given) and account the corpus; one line if the budget cannot pay
    for ``s.private_tokens`` tokens per record, with the number it can."""
    rho_svt = svt_rho(s.batch_size, s.svt_noise)
    temperature, cap = s.temperature, s.temperature
    if temperature is None:  # the lowest temperature whose exponential mechanism fits the budget
        left = budget_rho(target_epsilon, delta) / s.private_tokens - rho_svt
        temperature = s.clip / (s.batch_size * math.sqrt(2 * left)) if left > 0 else math.inf
        temperature *= 1 + 1e-9  # the bisection's float rounding: never above the target epsilon
        cap = s.max_temperature
    event = prediction_event(em_rho(s.clip, s.batch_size, temperature), rho_svt, s.private_tokens)
    eps = event_epsilon(event, delta) if math.isfinite(temperature) else math.inf
    if temperature > cap or eps > target_epsilon:
        covered = tokens_covered(target_epsilon, delta, s, cap)
        what = "--temperature" if s.temperature is not None else "--max_temperature"
        svt_part = f", sparse-vector noise {s.svt_noise:g}" if s.svt_noise is not None else ""
        raise UserError(
            f"--epsilon {target_epsilon:g} (delta {delta:.3g}) covers {covered} private tokens per record at "
            f"{what} {cap:g} (batch size {s.batch_size}, clip {s.clip:g}{svt_part}), not the "
            f"{s.private_tokens} asked for: pass --max_new_tokens {covered} (or --max_private_tokens "
            f"{covered}), or raise --epsilon, --batch_size or the temperature"
        )
    rho_em = em_rho(s.clip, s.batch_size, temperature)
    return PredictionGuarantee(
        epsilon=eps, delta=delta, rho=s.private_tokens * (rho_em + rho_svt), rho_em=rho_em,
        rho_svt=rho_svt, private_tokens=s.private_tokens, expected_batch_size=s.batch_size,
        logit_clip=s.clip, temperature=temperature, svt_threshold=s.svt_threshold, svt_noise=s.svt_noise,
        dataset_size=dataset_size, batches=batches, event_json=dp_event_to_json(event),
    )  # fmt: skip
