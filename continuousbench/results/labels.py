"""The labels a record is filed under on the leaderboard and in reports: its kind (DP model, DP data,
non-private data, other corpus) and its epsilon bucket."""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

from continuousbench.results.privacy_check import NOT_DP, delta_problem

NON_PRIVATE = "∞ (non-private)"
NO_STATEMENT = "no statement"
DP_MODEL, DP_DATA, NON_PRIVATE_DATA, OTHER_CORPUS = "DP model", "DP data", "non-private data", "corpus"


def kind_label(record: dict) -> str:
    """DP model (the evaluator trained with DP-SGD), DP data, non-private data, or a corpus without a
    privacy statement (e.g. the real one)."""
    if record.get("model_privacy"):
        return DP_MODEL
    privacy = record["corpus"].get("privacy")
    if privacy is None:
        return OTHER_CORPUS
    return DP_DATA if privacy["private"] and privacy.get("epsilon") is not None else NON_PRIVATE_DATA


def _guarantee(record: dict) -> dict | None:
    """The statement whose epsilon applies: the DP model's, else the corpus generator's."""
    return record.get("model_privacy") or record["corpus"].get("privacy")


def _bucket(guarantee: dict) -> float:
    """The epsilon bucket a statement earns: the epsilon asked for (``target_epsilon``) when the achieved
    one is within it (calibration stops just below the target: 9.99361 for 10), else the achieved epsilon
    rounded UP at two significant figures (10.04 -> 11), so no record sits in a bucket below what its
    statement achieves - a sweep that asked for 10 per run and composed to 26.4 is in bucket 27."""
    eps = float(guarantee["epsilon"])
    target = guarantee.get("target_epsilon") or guarantee.get("requested_epsilon")
    if target and eps <= float(target):
        return float(target)
    if not (eps > 0 and math.isfinite(eps)):
        return eps
    exact = Decimal(repr(eps))
    return float(exact.quantize(Decimal(1).scaleb(exact.adjusted() - 1), rounding=ROUND_CEILING))


def epsilon_bucket(record: dict) -> str:
    """The filter value: the epsilon bucket the statement earns, or no statement / non-private / a
    statement whose delta guarantees nothing (:data:`~continuousbench.results.privacy_check.NOT_DP`)."""
    guarantee = _guarantee(record)
    if guarantee is None:
        return NO_STATEMENT
    if not guarantee["private"] or guarantee.get("epsilon") is None:
        return NON_PRIVATE
    corpus = record["corpus"]
    given = str(corpus.get("privacy_source") or "").startswith("--corpus_privacy")
    if not record.get("model_privacy") and delta_problem(guarantee, corpus["documents"], given):
        return NOT_DP
    return f"{_bucket(guarantee):g}"


def epsilon_label(record: dict) -> str:
    """What the row shows: the bucket, and the achieved epsilon when it differs (and the one asked for,
    when the achieved one exceeds it)."""
    bucket, guarantee = epsilon_bucket(record), _guarantee(record)
    if bucket in (NO_STATEMENT, NON_PRIVATE, NOT_DP) or f"{guarantee['epsilon']:g}" == bucket:
        return bucket
    target = float(guarantee.get("target_epsilon") or guarantee.get("requested_epsilon") or math.inf)
    over = f", over the {target:g} asked for" if guarantee["epsilon"] > target else ""
    return f"{bucket} (achieved {guarantee['epsilon']:g}{over})"
