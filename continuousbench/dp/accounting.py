"""Privacy accounting by PLD (``dp_accounting``): DP-SGD with (truncated) Poisson batches, and PE.

One training run is ``steps`` applications of a subsampled Gaussian mechanism (noise multiplier
``sigma``, i.e. noise std ``sigma * C`` on a sum of per-example gradients clipped to ``C``), under
add-or-remove adjacency: the corpus D (n records, n public) against D with one record more (n + 1) or
one record less (n - 1).

* ``poisson``: every record joins a batch independently with probability ``q``; the event is
  ``SelfComposed(PoissonSampled(q, Gaussian(sigma)), steps)``, whatever n.
* ``truncated_poisson``: the same, but a batch larger than the physical batch ``B`` is cut to a random
  subset of ``B`` records (so memory is bounded). Two analyses are offered:

  - ``"pld"`` (default): dp_accounting's ``TruncatedSubsampledGaussianDpEvent``, the exact PLD of the
    truncated mechanism (Ganesh 2025, arXiv:2508.15089), whose ``dataset_size`` is the size of the
    dataset that holds the differing record: n + 1 for the pair (D plus a record, D) and n for the pair
    (D, D minus a record). Epsilon is not monotone in that size, so both are accounted and the worse
    is reported (:func:`account`) or calibrated against (:func:`calibrate_noise`). Truncation is part of
    the mechanism, so no extra delta is paid and the expected batch may sit close to ``B``.
  - ``"union_bound"``: Chua et al. (2024). Let ``eta`` bound the probability that any of the ``steps``
    batches exceeds ``B``: ``eta = steps * P[Binomial(n + 1, q) > B]`` (exact, ``scipy.stats.binom.sf``;
    n + 1, the larger neighbour, bounds both datasets of either pair since the tail grows with n).
    Couple the truncated run M' with the Poisson run M on the same randomness: they differ only when a
    batch is truncated. For any outcome set S and neighbours D, D', if M is (eps, delta)-DP,
    ``P[M'(D) in S] <= P[M(D) in S] + eta <= e^eps P[M(D') in S] + delta + eta
    <= e^eps (P[M'(D') in S] + eta) + delta + eta``, so the truncated run is
    ``(eps, delta + (1 + e^eps) * eta)``-DP. (Paying only ``eta`` or only ``e^eps * eta`` is not proved by
    this argument.)

Private Evolution (:func:`account_evolution`) is simpler: a composition of Gaussian mechanisms of
sensitivity 1 on vote histograms, no subsampling.

Delta defaults to ``1 / n**1.1`` (Table 31; it depends on n, which is treated as public). Events
serialise to JSON through dp_accounting's ``to_named_tuple`` so that a model card carries exactly what
was accounted.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from continuousbench.dp.sampling import SAMPLINGS, SamplingPlan
from continuousbench.errors import UserError


def default_delta(n: int) -> float:
    """``1 / n**1.1`` (Table 31: 1.66e-6 for GEMINON, i.e. n of about 180,000; 1.47e-6 for n = 200,000)."""
    if n < 1:
        raise ValueError(f"dataset size must be positive to set delta, got {n}")
    return 1.0 / n**1.1


def check_delta(delta: float, n: int, option: str = "--delta") -> float:
    """Refuse a delta of 1/n or more: such a mechanism may publish one whole record outright (release a
    random record with probability delta and stay "DP"), so the guarantee would say nothing; the noise
    calibration at such deltas also runs for minutes. One line, with the reason and the usual value."""
    if not 0 < delta < 1 / n:
        raise UserError(
            f"{option} {delta:.10g} is not below 1/n = {1 / n:.3g} (n = {n} records): at that delta a "
            f"mechanism may publish a whole record, so the guarantee says nothing; pass a smaller {option} "
            f"(the default is 1/n^1.1 = {default_delta(n):.3g})"
        )
    return delta


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
        raise UserError(f"unknown sampling {sampling!r}: use {' or '.join(SAMPLINGS)}")
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


def event_epsilon(event, delta: float, grid: float = 1e-4) -> float:
    """Epsilon of ``event`` at ``delta`` under dp_accounting's PLD accountant (``grid``: its step).

    Composing a truncated-Poisson PLD takes seconds and reading epsilon off it at a delta takes
    milliseconds, so a hashable event's composed accountant is kept for the process: the union bound's
    search over deltas composes once, and accounting a plan again costs nothing. A composition of a list
    of events is not hashable and is composed each time."""
    try:
        hash(event)
    except TypeError:
        return float(_composed.__wrapped__(event, grid).get_epsilon(delta))
    return float(_composed(event, grid).get_epsilon(delta))


@functools.lru_cache(maxsize=32)
def _composed(event, grid: float):
    """A PLD accountant with ``event`` composed (read only: ``get_epsilon`` does not change it)."""
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant(value_discretization_interval=grid)
    accountant.compose(event)
    return accountant


def epsilon(noise_multiplier: float, sampling_probability: float, steps: int, delta: float) -> float:
    """Epsilon of Poisson-subsampled Gaussian DP-SGD (PLD accounting)."""
    return event_epsilon(dp_event(noise_multiplier, sampling_probability, steps), delta)


def truncation_probability(n: int, sampling_probability: float, physical_batch: int, steps: int) -> float:
    """Union bound over ``steps`` of P[Binomial(n, q) > B]: the chance that any batch gets truncated."""
    from scipy.stats import binom

    return min(1.0, steps * float(binom.sf(physical_batch, n, sampling_probability)))


def holder_sizes(n: int, sampling: str, truncation_analysis: str | None) -> tuple[int, ...]:
    """Sizes of the dataset holding the differing record to account: (n + 1, n) for truncated PLD."""
    return (n + 1, n) if sampling == "truncated_poisson" and truncation_analysis == "pld" else (n,)


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
    Poisson part gets ``delta - (1 + e^eps) * eta``, which must stay positive. With the exact truncated
    analysis the noise must cover both neighbour pairs: calibrated for the n + 1 holder, then for n if
    that one still exceeds the target (epsilon decreases in sigma, so the larger sigma covers both).
    Cached for the process (pure, and tens of seconds with truncation): choosing an expected batch
    calibrates the candidates a plan or a check may ask for again.
    """
    run = (sampling_probability, steps, delta, tol, dataset_size, physical_batch)
    return _calibrated_noise(target_epsilon, *run, sampling, truncation_analysis)


@functools.lru_cache(maxsize=256)
def _calibrated_noise(
    target_epsilon: float,
    sampling_probability: float,
    steps: int,
    delta: float,
    tol: float,
    dataset_size: int | None,
    physical_batch: int | None,
    sampling: str,
    truncation_analysis: str,
) -> float:
    """:func:`calibrate_noise`, keyed on every argument by position (so that a call naming a default
    finds the result of one leaving it out)."""
    check_target_epsilon(target_epsilon)
    poisson_delta = delta
    if sampling == "truncated_poisson" and truncation_analysis == "union_bound":
        eta = truncation_probability(dataset_size + 1, sampling_probability, physical_batch, steps)
        poisson_delta = delta - (1 + math.exp(target_epsilon)) * eta
        if poisson_delta <= 0:
            raise UserError(
                f"truncation probability {eta:.3g} x (1 + e^{target_epsilon:g}) exceeds delta {delta:.3g}: "
                "lower the expected batch size (or use --expected_batch_size auto, or "
                "--truncation_analysis pld)"
            )

    def event(sigma: float, size: int | None):
        return dp_event(
            sigma,
            sampling_probability,
            steps,
            dataset_size=size,
            physical_batch=physical_batch,
            sampling=sampling,
            truncation_analysis=truncation_analysis,
        )

    sigma, grid = 0.0, calibration_grid(target_epsilon)
    for size in holder_sizes(dataset_size or 0, sampling, truncation_analysis):
        if sigma and event_epsilon(event(sigma, size), poisson_delta, grid) <= target_epsilon:
            continue
        found = calibrate(lambda s, size=size: event(s, size), target_epsilon, poisson_delta, tol, grid=grid)
        sigma = max(sigma, found)
    return sigma


def check_target_epsilon(target_epsilon: float) -> None:
    if not target_epsilon > 0 or math.isinf(target_epsilon):
        raise UserError(f"target epsilon must be positive and finite, got {target_epsilon}")


SIGMA_CEILING = 2.0**14  # no calibration searches beyond this noise (see calibrate)


def calibration_grid(target_epsilon: float) -> float:
    """The PLD grid a calibration searches on: 1e-3 (10x the default 1e-4, ~5x faster), and 1e-4 of the
    target from epsilon 100 up, in powers of ten so that the reporting grid (1e-4) divides it.

    At epsilon 100 a calibration took 3-7 CPU-s on 1e-3 and takes 0.4-0.9 on 1e-2, finding the same noise
    to 5 digits in each of four settings (benchmarks/calibration_grid.py).
    """
    return max(1e-3, 10.0 ** (math.floor(math.log10(target_epsilon) + 1e-9) - 4))


def calibrate(
    make_event: Callable[[float], Any],
    target_epsilon: float,
    delta: float,
    tol: float = 1e-4,
    *,
    grid: float | None = None,
):
    """Smallest noise multiplier ``s`` with ``make_event(s)`` at most ``(target_epsilon, delta)``-DP.

    The answer is bracketed first: ``[0, 1]`` when noise 1 meets the target, else doubled until it does
    (``[hi / 2, hi]``), failing at once beyond ``SIGMA_CEILING``; then
    ``dp_accounting.calibrate_dp_mechanism`` (Brent) searches the bracket with fresh PLD accountants on
    ``grid`` (default :func:`calibration_grid`'s; pessimistic, so the default-grid epsilon reported
    afterwards is never higher). Deltas of 1/n or more, whose searches ran for minutes towards zero
    noise, are refused before (:func:`check_delta`).
    """
    import dp_accounting as dpa
    from dp_accounting.pld import PLDAccountant

    check_target_epsilon(target_epsilon)
    grid = grid or calibration_grid(target_epsilon)

    def meets(sigma: float) -> bool:  # a bracket probe: composed once, not kept in event_epsilon's cache
        return _composed.__wrapped__(make_event(sigma), grid).get_epsilon(delta) <= target_epsilon

    hi = 1.0
    while not meets(hi):
        hi *= 2
        if hi > SIGMA_CEILING:
            raise UserError(
                f"epsilon {target_epsilon:g} at delta {delta:.3g} needs a noise multiplier above "
                f"{SIGMA_CEILING:g}; raise --epsilon or train fewer steps"
            )
    return float(
        dpa.calibrate_dp_mechanism(
            lambda: PLDAccountant(value_discretization_interval=grid),
            make_event,
            target_epsilon,
            delta,
            bracket_interval=dpa.ExplicitBracketInterval(0.0 if hi == 1.0 else hi / 2, hi),
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
    plan: SamplingPlan, noise_multiplier: float, steps: int, delta: float, *, clip_norm: float
) -> PrivacyGuarantee:
    """Account a run sampled as ``plan`` and package the result (epsilon at the total ``delta``)."""
    n, q = plan.dataset_size, plan.sampling_probability

    def event(size: int):
        return dp_event(
            noise_multiplier,
            q,
            steps,
            dataset_size=size,
            physical_batch=plan.physical_batch,
            sampling=plan.sampling,
            truncation_analysis=plan.truncation_analysis or "pld",
        )

    eta = truncation_probability(n + 1, q, plan.physical_batch, steps) if plan.truncated else None
    if plan.truncated and plan.truncation_analysis == "union_bound":
        # Find eps with delta_poisson(eps) + (1 + e^eps) * eta = delta, by bisection on eps.
        if 2 * eta >= delta:
            raise UserError(
                f"truncation probability {eta:.3g} is not below delta/2 = {delta / 2:.3g}: "
                "lower the expected batch size"
            )
        worst = event(n)
        lo, hi = 0.0, math.log(delta / eta - 1)  # beyond this (1 + e^eps) * eta alone exceeds delta
        while hi - lo > 1e-4 * max(1.0, hi):
            mid = (lo + hi) / 2
            rest = delta - (1 + math.exp(mid)) * eta
            if rest > 0 and event_epsilon(worst, rest) <= mid:
                hi = mid
            else:
                lo = mid
        eps = hi
    else:
        eps, worst = max(
            (
                (event_epsilon(event(size), delta), event(size))
                for size in holder_sizes(n, plan.sampling, plan.truncation_analysis)
            ),
            key=lambda pair: pair[0],
        )
    return PrivacyGuarantee(
        epsilon=eps,
        delta=delta,
        noise_multiplier=noise_multiplier,
        sampling_probability=q,
        expected_batch_size=plan.expected_batch_size,
        steps=steps,
        dataset_size=n,
        sampling=plan.sampling,
        physical_batch=plan.physical_batch,
        truncation_analysis=plan.truncation_analysis,
        truncation_probability=eta,
        clip_norm=clip_norm,
        event_json=dp_event_to_json(worst),
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
                raise UserError(f"refusing to build a DP event from module {module!r}: not dp_accounting")
            cls = getattr(importlib.import_module(module), obj["class_name"])
            fields = {k: build(v) for k, v in obj.items() if k not in ("module_name", "class_name")}
            return cls(**fields)
        if isinstance(obj, list):
            return [build(v) for v in obj]
        return obj

    return build(json.loads(text))
