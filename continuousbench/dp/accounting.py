"""Privacy accounting by PLD (``dp_accounting``): DP-SGD with (truncated) Poisson batches, and PE.

One training run is ``steps`` applications of a subsampled Gaussian mechanism (noise multiplier
``sigma``, i.e. noise std ``sigma * C`` on a sum of per-example gradients clipped to ``C``):

* ``poisson``: every record joins a batch independently with probability ``q``; the event is
  ``SelfComposed(PoissonSampled(q, Gaussian(sigma)), steps)``.
* ``truncated_poisson``: the same, but a batch larger than the physical batch ``B`` is cut to a random
  subset of ``B`` records (so memory is bounded). Two analyses are offered:

  - ``"pld"`` (default): dp_accounting's ``TruncatedSubsampledGaussianDpEvent``, the exact PLD of the
    truncated mechanism (Ganesh 2025, arXiv:2508.15089). Truncation is part of the mechanism, so no
    extra delta is paid and the expected batch may sit close to ``B``.
  - ``"union_bound"``: Chua et al. (2024): if Poisson DP-SGD is (eps, delta)-DP and ``eta`` bounds the
    probability that any of the ``steps`` batches exceeds ``B``, the truncated run is
    (eps, delta + e^eps * eta)-DP. ``eta`` is the union bound ``steps * P[Binomial(n + 1, q) > B]``,
    computed exactly with ``scipy.stats.binom.sf``; ``n + 1`` because the larger of two add/remove
    neighbours has one more record. (Adding ``eta`` alone, without ``e^eps``, is not a valid bound: the
    coupling argument pays ``eta`` on both datasets, one of them inside ``e^eps * P[...]``.)

Private Evolution (:func:`account_evolution`) is simpler: a composition of Gaussian mechanisms of
sensitivity 1 on vote histograms, no subsampling.

Delta defaults to ``1 / n**1.1`` (paper §3). Events serialise to JSON through dp_accounting's
``to_named_tuple`` so that a model card carries exactly what was accounted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SAMPLINGS = ("poisson", "truncated_poisson")
TRUNCATION_ANALYSES = ("pld", "union_bound")


def default_delta(n: int) -> float:
    """``1 / n**1.1`` (paper §3: 1.66e-6 for a 200k-record corpus)."""
    if n < 1:
        raise ValueError(f"dataset size must be positive to set delta, got {n}")
    return 1.0 / n**1.1


def dp_event(
    noise_multiplier: float,
    sampling_probability: float,
    steps: int,
    *,
    dataset_size: int | None = None,
    physical_batch: int | None = None,
    sampling: str = "poisson",
    truncation_analysis: str = "pld",
):
    """The ``DpEvent`` of a whole run (see the module docstring for what each sampling means)."""
    import dp_accounting as dpa

    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}: use {' or '.join(SAMPLINGS)}")
    if sampling == "truncated_poisson" and truncation_analysis == "pld":
        if dataset_size is None or physical_batch is None:
            raise ValueError("truncated-Poisson accounting needs dataset_size and physical_batch")
        step = dpa.TruncatedSubsampledGaussianDpEvent(
            dataset_size=int(dataset_size),
            sampling_probability=float(sampling_probability),
            truncated_batch_size=int(physical_batch),
            noise_multiplier=float(noise_multiplier),
        )
    else:
        step = dpa.PoissonSampledDpEvent(
            float(sampling_probability), dpa.GaussianDpEvent(float(noise_multiplier))
        )
    return dpa.SelfComposedDpEvent(step, int(steps))


def event_epsilon(event, delta: float) -> float:
    """Epsilon of ``event`` at ``delta`` under dp_accounting's PLD accountant."""
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant()
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def epsilon(noise_multiplier: float, sampling_probability: float, steps: int, delta: float) -> float:
    """Epsilon of Poisson-subsampled Gaussian DP-SGD (PLD accounting)."""
    return event_epsilon(dp_event(noise_multiplier, sampling_probability, steps), delta)


def truncation_probability(n: int, sampling_probability: float, physical_batch: int, steps: int) -> float:
    """Union bound over ``steps`` of P[Binomial(n, q) > B]: the chance that any batch gets truncated."""
    from scipy.stats import binom

    return min(1.0, steps * float(binom.sf(physical_batch, n, sampling_probability)))


def calibrate_noise(
    target_epsilon: float,
    sampling_probability: float,
    steps: int,
    delta: float,
    tol: float = 1e-4,
    *,
    dataset_size: int | None = None,
    physical_batch: int | None = None,
    sampling: str = "poisson",
    truncation_analysis: str = "pld",
) -> float:
    """Smallest noise multiplier whose run meets ``(target_epsilon, delta)``; ``tol`` is in sigma units.

    See :func:`calibrate`. With the union-bound truncation analysis, ``delta`` is the TOTAL delta: the
    Poisson part gets ``delta - e^eps * eta``, which must stay positive.
    """
    check_target_epsilon(target_epsilon)
    poisson_delta = delta
    if sampling == "truncated_poisson" and truncation_analysis == "union_bound":
        eta = truncation_probability(dataset_size + 1, sampling_probability, physical_batch, steps)
        poisson_delta = delta - math.exp(target_epsilon) * eta
        if poisson_delta <= 0:
            raise ValueError(
                f"truncation probability {eta:.3g} x e^{target_epsilon:g} exceeds delta {delta:.3g}: "
                "lower the "
                "expected batch size (or use --expected-batch-size auto, or truncation analysis 'pld')"
            )
    return calibrate(
        lambda s: dp_event(
            s,
            sampling_probability,
            steps,
            dataset_size=dataset_size,
            physical_batch=physical_batch,
            sampling=sampling,
            truncation_analysis=truncation_analysis,
        ),
        target_epsilon,
        poisson_delta,
        tol=tol,
    )


def check_target_epsilon(target_epsilon: float) -> None:
    if not target_epsilon > 0 or math.isinf(target_epsilon):
        raise ValueError(f"target epsilon must be positive and finite, got {target_epsilon}")


def calibrate(make_event: Callable[[float], Any], target_epsilon: float, delta: float, tol: float = 1e-4):
    """Smallest noise multiplier ``s`` with ``make_event(s)`` at most ``(target_epsilon, delta)``-DP.

    ``dp_accounting.calibrate_dp_mechanism`` (bracketing + Brent) with fresh PLD accountants on a grid of
    1e-3 (5x faster than the default 1e-4 and pessimistic, so the default-grid epsilon reported
    afterwards is never higher).
    """
    import dp_accounting as dpa
    from dp_accounting.pld import PLDAccountant

    check_target_epsilon(target_epsilon)
    return float(
        dpa.calibrate_dp_mechanism(
            lambda: PLDAccountant(value_discretization_interval=1e-3),
            make_event,
            target_epsilon,
            delta,
            bracket_interval=dpa.LowerEndpointAndGuess(0.0, 1.0),
            tol=tol,
        )
    )


def gaussian_composition_event(noise_multiplier: float, count: int):
    """``count`` adaptively composed Gaussian mechanisms of sensitivity 1 and noise std ``noise_multiplier``.

    Private Evolution's vote histograms: one record casts one vote, so adding or removing it moves one
    bin by 1 (L2 sensitivity 1) in each of the ``count`` histograms.
    """
    import dp_accounting as dpa

    return dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(float(noise_multiplier)), int(count))


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
    ``e^eps * eta <= delta / 10`` are considered (truncation then changes almost nothing).
    ``candidates`` expected batches spread over [B/2, upper] are calibrated; the best is returned.
    """
    from scipy.stats import binom

    if physical_batch >= n:
        raise ValueError(f"physical batch {physical_batch} must be smaller than the dataset ({n} records)")
    if truncation_analysis == "union_bound":
        budget = delta / 10 / math.exp(min(target_epsilon, 700.0))

        def ok(b: int) -> bool:
            return steps * binom.sf(physical_batch, n + 1, b / n) <= budget

        lo, hi = 1, physical_batch
        if not ok(lo):
            raise ValueError("no expected batch keeps the truncation probability under delta/10")
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
        sigma = calibrate_noise(
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


@dataclass(frozen=True)
class PrivacyGuarantee:
    """What one DP run was accounted as: everything the privacy statement reports."""

    epsilon: float
    delta: float
    noise_multiplier: float
    sampling_probability: float
    expected_batch_size: float
    steps: int
    dataset_size: int
    sampling: str
    physical_batch: int | None
    truncation_analysis: str | None
    truncation_probability: float | None
    clip_norm: float
    event_json: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def account(
    noise_multiplier: float,
    sampling_probability: float,
    steps: int,
    delta: float,
    *,
    dataset_size: int,
    clip_norm: float,
    sampling: str = "poisson",
    physical_batch: int | None = None,
    truncation_analysis: str = "pld",
) -> PrivacyGuarantee:
    """Account a run and package the result (epsilon at the total ``delta``)."""
    truncated = sampling == "truncated_poisson"
    event = dp_event(
        noise_multiplier,
        sampling_probability,
        steps,
        dataset_size=dataset_size,
        physical_batch=physical_batch,
        sampling=sampling,
        truncation_analysis=truncation_analysis,
    )
    eta = (
        truncation_probability(dataset_size + 1, sampling_probability, physical_batch, steps)
        if truncated
        else None
    )
    if truncated and truncation_analysis == "union_bound":
        # Find eps with delta_poisson(eps) + e^eps * eta = delta, by bisection on eps.
        if eta >= delta:
            raise ValueError(
                f"truncation probability {eta:.3g} is not below delta {delta:.3g}: "
                "lower the expected batch size"
            )
        lo, hi = 0.0, math.log(delta / eta)  # beyond this e^eps * eta alone exceeds delta
        while hi - lo > 1e-4 * max(1.0, hi):
            mid = (lo + hi) / 2
            rest = delta - math.exp(mid) * eta
            if rest > 0 and event_epsilon(event, rest) <= mid:
                hi = mid
            else:
                lo = mid
        eps = hi
    else:
        eps = event_epsilon(event, delta)
    return PrivacyGuarantee(
        epsilon=eps,
        delta=delta,
        noise_multiplier=noise_multiplier,
        sampling_probability=sampling_probability,
        expected_batch_size=sampling_probability * dataset_size,
        steps=steps,
        dataset_size=dataset_size,
        sampling=sampling,
        physical_batch=physical_batch,
        truncation_analysis=truncation_analysis if truncated else None,
        truncation_probability=eta,
        clip_norm=clip_norm,
        event_json=dp_event_to_json(event),
    )


@dataclass(frozen=True)
class EvolutionGuarantee:
    """What a Private Evolution job was accounted as: ``private_runs`` runs of ``iterations`` histograms."""

    epsilon: float  # inf: no noise, not private
    delta: float
    noise_multiplier: float
    iterations: int
    private_runs: int
    dataset_size: int
    event_json: str | None

    @property
    def mechanisms(self) -> int:
        return self.iterations * self.private_runs

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, mechanisms=self.mechanisms)


def account_evolution(
    target_epsilon: float, delta: float, *, iterations: int, private_runs: int, dataset_size: int
) -> EvolutionGuarantee:
    """Calibrate the histogram noise of a PE job to ``(target_epsilon, delta)`` and account it (PLD).

    Every histogram any run computes on the private records is one Gaussian mechanism of sensitivity 1;
    the job composes ``iterations * private_runs`` of them (adaptively: each run's candidates depend on
    the previous noisy selections, which PLD composition covers). ``target_epsilon = inf``: sigma 0.
    """
    if math.isinf(target_epsilon):
        return EvolutionGuarantee(math.inf, delta, 0.0, iterations, private_runs, dataset_size, None)
    count = iterations * private_runs
    sigma = calibrate(lambda s: gaussian_composition_event(s, count), target_epsilon, delta)
    event = gaussian_composition_event(sigma, count)
    eps = event_epsilon(event, delta)
    return EvolutionGuarantee(
        eps, delta, sigma, iterations, private_runs, dataset_size, dp_event_to_json(event)
    )


def _to_plain(value):
    if hasattr(value, "_asdict"):  # a DpEvent named tuple: keep class and module for the way back
        return {k: _to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_to_plain(v) for v in value]
    return value


def dp_event_to_json(event) -> str:
    """A ``DpEvent`` as JSON (dp_accounting's named-tuple form: module, class and fields, nested)."""
    return json.dumps(_to_plain(event.to_named_tuple()), sort_keys=True)


def dp_event_from_json(text: str):
    """The ``DpEvent`` serialised by :func:`dp_event_to_json`; only dp_accounting classes are accepted."""
    import importlib

    def build(obj):
        if isinstance(obj, dict) and "class_name" in obj:
            module = obj["module_name"]
            if not module.startswith("dp_accounting."):
                raise ValueError(f"refusing to build a DP event from module {module!r}: not dp_accounting")
            cls = getattr(importlib.import_module(module), obj["class_name"])
            fields = {k: build(v) for k, v in obj.items() if k not in ("module_name", "class_name")}
            return cls(**fields)
        if isinstance(obj, list):
            return [build(v) for v in obj]
        return obj

    return build(json.loads(text))
