"""The one-run lower bound on epsilon of Steinke, Nasr and Jagielski (NeurIPS 2023, arXiv:2305.08846).

The game (their Algorithm 1): m canaries, each included in the training data independently with
probability 1/2 (``S_i = +1`` in, ``-1`` out). After one training run the auditor scores every canary
and guesses ``T_i`` in {+1, -1, 0} (0: abstain); r = number of guesses, v = number of correct ones
(``T_i = S_i``). If training is (eps, delta)-DP with respect to adding or removing one canary:

* pure DP (their Theorem 3.1, via the connection between DP and generalisation, without group
  privacy): W, the number of correct guesses, is stochastically dominated by
  ``Binomial(r, e^eps / (1 + e^eps))`` - no guess beats eps-DP randomised response;
* approximate DP (their Theorem 5.2 and Corollary 5.4, computed in their App. D):
  ``P[W >= v] <= beta + 2 m delta alpha``, where ``beta = P[Binomial(r, q) >= v]``, ``q = e^eps / (1 +
  e^eps)`` and ``alpha = max_{i = 1..v} P[v - i <= Binomial(r, q) < v] / i``.

:func:`p_value` is that bound; :func:`epsilon_lower_bound` inverts it: the largest eps whose p-value at
the observed (r, v) stays below ``1 - confidence``, i.e. "training is not (eps, delta)-DP" is accepted
at that confidence for every smaller eps. The p-value grows with eps, so bisection finds it.

Guess counts chosen after looking at the scores would be a multiple test: :func:`audit` tries a fixed
grid of ``k`` (guess "in" for the k highest scores and "out" for the k lowest) and gives each test
``(1 - confidence) / len(grid)`` (Bonferroni), so the reported maximum holds at ``confidence`` overall.
Hand-written (about 40 lines of scipy): no maintained library implements this bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from continuousbench.errors import UserError


def p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """Upper bound on P[at least v of r guesses correct] under (epsilon, delta)-DP (Cor. 5.4)."""
    from scipy.stats import binom

    if not 0 <= v <= r <= m:
        raise UserError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if epsilon < 0 or not 0 <= delta <= 1:
        raise UserError(f"need epsilon >= 0 and 0 <= delta <= 1, got {epsilon}, {delta}")
    q = 1.0 / (1.0 + math.exp(-epsilon))  # accuracy of epsilon-DP randomised response
    beta = float(binom.sf(v - 1, r, q))  # P[Binomial(r, q) >= v]
    if delta == 0 or v == 0:
        return min(1.0, beta)
    i = np.arange(1, v + 1)
    window = np.cumsum(binom.pmf(v - i, r, q))  # P[v - i <= Binomial(r, q) < v], i = 1..v
    alpha = float(np.max(window / i))
    return min(1.0, beta + 2 * m * delta * alpha)


def epsilon_lower_bound(m: int, r: int, v: int, delta: float, confidence: float = 0.95) -> float:
    """Largest eps at which (r, v) still rejects (eps, delta)-DP at ``confidence`` (0 if none does)."""
    if not 0 < confidence < 1:
        raise UserError(f"confidence must lie in (0, 1), got {confidence}")
    level = 1 - confidence
    if p_value(m, r, v, 0.0, delta) >= level:
        return 0.0
    lo, hi = 0.0, 1.0
    while p_value(m, r, v, hi, delta) < level:
        lo, hi = hi, 2 * hi
        if hi > 1e4:  # out of any meaningful range (the p-value tends to 1 as eps grows, so rare)
            return lo
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p_value(m, r, v, mid, delta) < level else (lo, mid)
    return lo


@dataclass(frozen=True)
class AuditResult:
    epsilon_lower_bound: float  # the best over the grid, each test at (1 - confidence) / len(grid)
    confidence: float
    delta: float
    canaries: int  # m
    guesses: int  # r of the best test
    correct: int  # v of the best test
    grid: list[dict[str, float]]  # every test: k, r, v, bound
    largest_reachable_bound: float  # the bound had every guess been right: the audit's power

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def guess_grid(m: int) -> list[int]:
    """k guesses each way: m/16, m/8, m/4 and m/2 (all canaries), fixed before any score is seen."""
    return sorted({max(1, m // d) for d in (16, 8, 4, 2)})


def audit(
    scores: Sequence[float], included: Sequence[bool], delta: float, confidence: float = 0.95
) -> AuditResult:
    """Guess "in" for the k highest scores and "out" for the k lowest, for each k of the grid; bound."""
    scores, included = np.asarray(scores, dtype=float), np.asarray(included, dtype=bool)
    m = len(scores)
    if m < 2 or len(included) != m:
        raise UserError(f"need at least 2 canaries with one inclusion flag each, got {m} and {len(included)}")
    order = np.argsort(-scores, kind="stable")  # highest score first
    grid = guess_grid(m)
    per_test = 1 - (1 - confidence) / len(grid)
    tests = []
    for k in grid:
        guessed_in, guessed_out = order[:k], order[m - k :]
        v = int(included[guessed_in].sum() + (~included[guessed_out]).sum())
        bound = epsilon_lower_bound(m, 2 * k, v, delta, per_test)
        tests.append({"k": k, "guesses": 2 * k, "correct": v, "epsilon_lower_bound": bound})
    best = max(tests, key=lambda t: t["epsilon_lower_bound"])
    reachable = largest_reachable_bound(m, delta, confidence)
    return AuditResult(
        best["epsilon_lower_bound"], confidence, delta, m, best["guesses"], best["correct"], tests, reachable
    )


def largest_reachable_bound(m: int, delta: float, confidence: float = 0.95) -> float:
    """The largest bound ``m`` canaries can give at ``delta`` (every guess of some test right): a claim
    above it could not have been refuted, however much the run leaked."""
    grid = guess_grid(m)
    per_test = 1 - (1 - confidence) / len(grid)
    return max(epsilon_lower_bound(m, 2 * k, 2 * k, delta, per_test) for k in grid)
