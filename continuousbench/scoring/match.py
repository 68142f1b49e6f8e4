"""Answer normalisation, exact / contains / LLM-match, and accuracy by support count (paper §2.2, App. I.3).

A prediction is reduced to a compact canonical form before matching:

1. drop a leading ``A:`` / ``Answer:`` (the few-shot prompt ends with ``A:``; models sometimes echo it);
2. remove thousands separators (``1,000`` -> ``1000``) so the comma rule below does not cut numbers;
3. cut at the first line break, sentence end (``.``/``!``/``?`` followed by a space or the end, so the
   decimal point of ``2.5 m`` is kept), comma, or unit marker written after a number (``79 lbs``,
   ``14m``; a unit word with no number before it, as in ``Meter Geminon``, is kept);
4. Unicode NFC, casefold, strip punctuation at both ends, remove all whitespace.

References go through the same function, so a prediction equal to its reference always matches.
Numbers compare as numbers: ``"79."``, ``"79 lbs"``, ``" 79"`` and ``"79.0"`` all equal ``79``.

``contains`` is the lenient rule used to select checkpoints: a text reference must occur in the
normalised prediction (``"the spore geminon"`` contains ``"spore geminon"``); a numeric reference
must equal one of the prediction's number tokens, so ``"790"`` and ``"1979"`` do not contain ``79``.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Protocol

from continuousbench.errors import UserError
from continuousbench.stats import wilson_interval


class Matcher(Protocol):
    """What ``llm_match`` needs (a :class:`~continuousbench.scoring.judge.Judge`); matching knows no judge."""

    def match(
        self, questions: Sequence[str], references: Sequence[Sequence[str]], responses: Sequence[str]
    ) -> list[bool | None]: ...


MATCHERS = ("exact_match", "contains", "llm_match")
DEFAULT_MATCHERS = ("exact_match", "contains")  # llm_match needs a judge
# Per-question outcomes reported like the matchers' but decided without the greedy answer: the
# ranked-choice pick among the release's options (continuousbench.scoring.mcq): lm-eval's acc_norm (mcq)
# and, beside it, its unnormalised acc (mcq_acc).
RANKED = ("mcq", "mcq_acc")
SCORES = MATCHERS + RANKED
THRESHOLDS = (0, 200, 400, 600, 800)  # the paper's support strata (>= k documents)
# Lower edges of the support-count buckets (a bucket is [edge, next edge)); 0 holds unsupported questions.
SUPPORT_BUCKETS: tuple[int, ...] = (0, 2, 5, 10, 20, 50, 100, 200, 400, 600, 800, 1600)
INTERVAL = {"interval": "wilson", "confidence": 0.95}  # how every `ci95` of a score is computed

_PREFIX = re.compile(r"^\s*(?:a|answer)\s*:\s*", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_UNITS = (
    r"lbs?|pounds?|kgs?|kilograms?|grams?|g|mm|cm|centimet(?:er|re)s?|m|met(?:er|re)s?|km"
    r"|ft|feet|foot|inch(?:es)?|in"
)
# Earliest boundary wins: line break | sentence end | comma | unit marker directly after a number.
_BOUNDARY = re.compile(rf"\n|[.!?](?=\s|$)|,|(?<=\d)\s*(?:{_UNITS})\b", re.IGNORECASE)
_EDGE = "\"'`*_()[]{}<>.,;:!?¡¿“”‘’«»„"
_WHITESPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")
# A number token inside a longer answer; a minus counts only when it does not join two words.
_NUMBER_TOKEN = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?|\d+(?:\.\d+)?")


def answer_segment(text: str) -> str:
    """Steps 1-3 and case/punctuation folding, whitespace kept (number tokens are read from this)."""
    text = _THOUSANDS.sub("", _PREFIX.sub("", text))
    cut = _BOUNDARY.search(text)
    if cut:
        text = text[: cut.start()]
    text = unicodedata.normalize("NFC", text).casefold()
    return text.strip().strip(_EDGE + " \t").strip()


@lru_cache(maxsize=65536)  # references repeat across a test set; predictions are cheap to redo
def normalize(text: str) -> str:
    """The canonical form compared by every matcher, e.g. ``"Spore Geminon."`` -> ``"sporegeminon"``."""
    return _WHITESPACE.sub("", answer_segment(text))


def as_number(normal: str) -> Decimal | None:
    """The value of a normalised answer that is a plain number, else None (``"1e5"``, ``"nan"`` are not)."""
    if not _NUMBER.fullmatch(normal):
        return None
    try:
        return Decimal(normal)
    except InvalidOperation:  # pragma: no cover - the regex admits only valid literals
        return None


def number_tokens(text: str) -> list[Decimal]:
    """Every number written in the answer segment of ``text``."""
    return [Decimal(t) for t in _NUMBER_TOKEN.findall(answer_segment(text))]


def _as_list(references: str | Sequence[str]) -> list[str]:
    return [references] if isinstance(references, str) else list(references)


def exact_match(prediction: str, references: str | Sequence[str]) -> bool:
    """The normalised prediction equals a normalised reference (numbers by value)."""
    pred = normalize(prediction)
    pred_num = as_number(pred)
    for ref in map(normalize, _as_list(references)):
        ref_num = as_number(ref)
        if ref and (pred == ref or (ref_num is not None and pred_num == ref_num)):
            return True
    return False


def contains(prediction: str, references: str | Sequence[str]) -> bool:
    """A normalised reference occurs in the normalised prediction; numeric references by token value."""
    pred = normalize(prediction)
    tokens: list[Decimal] | None = None
    for ref in map(normalize, _as_list(references)):
        ref_num = as_number(ref)
        if ref_num is not None:
            tokens = number_tokens(prediction) if tokens is None else tokens
            if ref_num in tokens:
                return True
        elif ref and ref in pred:
            return True
    return False


def _summary(values: Sequence[bool | None]) -> dict:
    """Accuracy, its Wilson 95% interval, population std of the 0/1 correctness and the question count;
    None (no verdict) counts as incorrect."""
    n = len(values)
    if n == 0:
        return {"accuracy": None, "ci95": None, "std": None, "count": 0}
    correct = sum(1 for v in values if v)
    acc = correct / n
    ci = wilson_interval(correct, n)
    return {"accuracy": acc, "ci95": list(ci), "std": math.sqrt(acc * (1.0 - acc)), "count": n}


def _rate(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def judge_agreement(per_example: dict[str, Sequence[bool | None]]) -> dict:
    """How LLM-match relates to the code matchers, so a reader sees at a glance whether it inflates.

    Per code matcher: the share of questions where both agree, and the judge's accept rate where that
    matcher says right and where it says wrong; then the accept rate where exact match and contains are
    both wrong (the verdicts only the judge gives). A missing verdict counts as a rejection."""
    judged = [v is True for v in per_example["llm_match"]]
    out: dict = {}
    for name in ("exact_match", "contains"):
        base = per_example[name]
        out[f"vs_{name}"] = {
            "agreement": _rate([j == b for j, b in zip(judged, base, strict=True)]),
            "accept_when_right": _rate([j for j, b in zip(judged, base, strict=True) if b]),
            "accept_when_wrong": _rate([j for j, b in zip(judged, base, strict=True) if not b]),
        }
    both_wrong = [
        j
        for j, e, c in zip(judged, per_example["exact_match"], per_example["contains"], strict=True)
        if not e and not c
    ]
    out["both_wrong"] = {"count": len(both_wrong), "accept_rate": _rate(both_wrong)}
    return out


def threshold_rows(support_counts: Sequence[int], k: int) -> list[int]:
    """Rows of the ``>=k`` stratum: questions supported by at least ``k`` documents."""
    return [i for i, c in enumerate(support_counts) if c >= k]


def bucket_bounds(buckets: Sequence[int]) -> list[tuple[int, int | None]]:
    """``[low, high)`` per bucket; the last is open (``high`` None)."""
    edges = [*buckets, None]
    return list(zip(edges[:-1], edges[1:], strict=True))


def bucket_rows(support_counts: Sequence[int], low: int, high: int | None) -> list[int]:
    return [i for i, c in enumerate(support_counts) if c >= low and (high is None or c < high)]


def _aggregate(per_example: dict[str, list], rows: Sequence[int]) -> dict:
    out = {}
    for name, values in per_example.items():
        picked = [values[i] for i in rows]
        out[name] = _summary(picked)
        if name == "llm_match":
            out[name]["unparseable"] = sum(1 for v in picked if v is None)
    return out


def by_group(per_example: dict[str, list], groups: Sequence[str], names: Sequence[str]) -> dict[str, dict]:
    """``{name: {"n", <matcher>: accuracy...}}`` over the questions whose ``groups`` label is ``name`` (e.g.
    trained-on vs held-out entities): the same figures as a support stratum, for a split of another kind."""
    return {
        name: {"n": len(rows), **_aggregate(per_example, rows)}
        for name in names
        for rows in [[i for i, g in enumerate(groups) if g == name]]
    }


def _is_count(value) -> bool:
    """A non-negative whole number; ``True`` and ``1.0`` are not counts (they would be scored as 1)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0


def _listlike(value) -> bool:
    return not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and hasattr(value, "__iter__")


def _sequence(name: str, value, n: int | None = None) -> None:
    if not _listlike(value):
        raise UserError(f"{name} must be a list with one item per prediction, got {type(value).__name__}")
    if n is not None and len(value) != n:
        raise UserError(f"{name} has {len(value)} items but predictions has {n}: pass one per prediction")


def check_inputs(predictions, references, *, questions=None, support_counts=None) -> None:
    """The per-question inputs of :func:`score` (and of the ``qa_match`` metric), else one-line ValueError."""
    if not _listlike(predictions) or not all(isinstance(p, str) for p in predictions):
        raise UserError("predictions must be a sequence of strings (decode model outputs to text first)")
    n = len(predictions)
    if n == 0:
        raise UserError("predictions is empty: pass one answer per question (at least one)")
    _sequence("references", references, n)
    for i, refs in enumerate(references):
        refs = _as_list(refs) if isinstance(refs, str) or hasattr(refs, "__iter__") else [refs]
        if not refs or not all(isinstance(r, str) for r in refs):
            raise UserError(f"references[{i}] must be a string or a non-empty list of strings, got {refs!r}")
        if not all(normalize(r) for r in refs):
            raise UserError(f"references[{i}] = {refs!r} normalises to an empty answer; fix the reference")
    if questions is not None:
        _sequence("questions", questions, n)
        if not all(isinstance(q, str) for q in questions):
            raise UserError("questions must be strings, one per prediction")
    if support_counts is not None:
        _sequence("support_counts", support_counts, n)
        bad = next((i for i, c in enumerate(support_counts) if not _is_count(c)), None)
        if bad is not None:
            raise UserError(
                f"support_counts[{bad}] = {support_counts[bad]!r}: support_counts must be non-negative "
                "integers (documents supporting each question)"
            )


def check_options(matchers, thresholds, buckets=None, *, with_support: bool = True) -> None:
    """The options of :func:`score` (and of the metric, also at ``evaluate.load``); else one-line error."""
    if (
        not _listlike(matchers)
        or not matchers
        or any(m not in MATCHERS for m in matchers)
        or len(set(matchers)) != len(matchers)
    ):
        raise UserError(f"matchers must be distinct names from {MATCHERS}, got {matchers!r}")
    if not _listlike(thresholds) or not all(_is_count(t) for t in thresholds):
        raise UserError(f"thresholds must be non-negative integers, got {thresholds!r}")
    if buckets is not None:
        if not with_support:
            raise UserError("buckets need support_counts")
        if not _listlike(buckets) or not all(_is_count(b) for b in buckets):
            raise UserError(f"buckets must be non-negative integers, got {buckets!r}")
        if not len(buckets) or list(buckets) != sorted(set(buckets)):
            raise UserError(f"buckets must be strictly increasing non-negative edges, got {buckets!r}")


def score(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    questions: Sequence[str] | None = None,
    support_counts: Sequence[int] | None = None,
    matchers: Sequence[str] = DEFAULT_MATCHERS,
    judge: Matcher | None = None,
    thresholds: Sequence[int] = THRESHOLDS,
    buckets: Sequence[int] | None = None,
    ranked: Mapping[str, Sequence[bool]] | None = None,
) -> dict:
    """Score predictions against references (answer + aliases), overall and by support count.

    ``by_support[">=k"]`` covers questions with support count >= k; bucket i covers
    ``[buckets[i], buckets[i+1])`` and the last one ``[buckets[-1], inf)`` (``high`` None). Every
    accuracy comes with ``ci95`` (Wilson 95% interval, :mod:`continuousbench.stats`), ``count`` (its
    questions) and ``std`` (population std of the 0/1 correctness); an empty stratum has accuracy,
    ci95 and std None. For
    ``llm_match`` an unparseable verdict is None in ``per_example``, counted in ``unparseable`` and
    scored as incorrect, so every matcher shares one denominator. ``ranked`` adds outcomes decided
    elsewhere (``{"mcq": [...]}``, one bool per question), aggregated the same way.
    """
    check_inputs(predictions, references, questions=questions, support_counts=support_counts)
    check_options(matchers, thresholds, buckets, with_support=support_counts is not None)
    if "llm_match" in matchers and (judge is None or questions is None):
        raise UserError(
            "llm_match needs judge=Judge(...) and questions=[...]; drop it from matchers otherwise"
        )
    per_example: dict[str, list] = {}
    for name in matchers:
        match name:
            case "exact_match":
                per_example[name] = [exact_match(p, r) for p, r in zip(predictions, references, strict=True)]
            case "contains":
                per_example[name] = [contains(p, r) for p, r in zip(predictions, references, strict=True)]
            case "llm_match":
                per_example[name] = judge.match(questions, [_as_list(r) for r in references], predictions)
    for name, values in (ranked or {}).items():
        if name not in RANKED or len(values) != len(predictions):
            raise ValueError(f"ranked outcome {name!r} must be one of {RANKED}, one per prediction")
        per_example[name] = [bool(v) for v in values]
    n = len(predictions)
    result: dict = {"n": n, "metrics": _aggregate(per_example, range(n))}
    if support_counts is not None:
        result["by_support"] = {}
        for k in thresholds:
            rows = threshold_rows(support_counts, k)
            result["by_support"][f">={k}"] = {"n": len(rows), **_aggregate(per_example, rows)}
    if buckets is not None:
        result["buckets"] = []
        for low, high in bucket_bounds(buckets):
            rows = bucket_rows(support_counts, low, high)
            mean = sum(support_counts[i] for i in rows) / len(rows) if rows else None
            result["buckets"].append(
                {
                    "low": low,
                    "high": high,
                    "n": len(rows),
                    "mean_support": mean,
                    **_aggregate(per_example, rows),
                }
            )
    result["per_example"] = per_example
    return result
