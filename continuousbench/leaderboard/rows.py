"""What the leaderboard ranks a record by, recomputed from the record: one row per corpus, and the accuracy
on the release's canonical questions.

* **One row per (release, corpus fingerprint, recipe digest, base model).** The same corpus submitted
  twice - two seeds, or a study's run beside a direct one - is one experiment, not two entries. The row
  kept is chosen without looking at scores: the one whose statement claims least (no statement only
  when none states anything; then non-private; then the largest epsilon), then the lowest seed, then the
  file name; the others are listed as left out, naming the row that stands for them.
* **The canonical subset.** A release whose manifest names a canonical evaluation (NEWS: ``qa_public``
  questions with support >= 200) is ranked on those questions only: the accuracy, its Wilson interval and
  n are the subset's (``metrics.qa_public.by_support[">=200"]``), and paired tests use the same questions.
"""

from __future__ import annotations

import math
from typing import Any

from continuousbench.results.canonical import recipe_digest
from continuousbench.stats import wilson_interval

PART = "qa_public"  # ranked part: the facts a corpus can teach (singletons are shown beside)


def corpus_key(record: dict) -> tuple | None:
    """What makes two records one row; None for a DP model run (its corpus has no public fingerprint)."""
    fingerprint = record["corpus"].get("fingerprint")
    if fingerprint is None:
        return None
    return (record["release"]["id"], fingerprint, recipe_digest(record), record["base_model"])


def claim(record: dict) -> tuple:
    """Sort key: the weakest privacy claim first (a statement before none, non-private before DP, then the
    largest epsilon)."""
    privacy = record.get("model_privacy") or record["corpus"].get("privacy")
    if privacy is None:
        return (1, 0.0)
    epsilon = privacy.get("epsilon") if privacy.get("private") else None
    return (0, -(math.inf if epsilon is None else float(epsilon)))


def one_per_corpus(subs: list[Any]) -> tuple[list[Any], list[str]]:
    """(the submissions kept, one line per submission left out), in the order given; ``subs`` are
    :class:`~continuousbench.leaderboard.ranking.Submission` (``record``, ``path``)."""
    groups: dict[tuple, list[Any]] = {}
    for sub in subs:
        key = corpus_key(sub.record)
        if key is not None:
            groups.setdefault(key, []).append(sub)
    dropped, problems = set(), []
    for group in groups.values():
        keep, *rest = sorted(group, key=lambda s: (claim(s.record), s.record.get("seed") or 0, s.path))
        for sub in rest:
            dropped.add(id(sub))
            same = f"the same corpus (fingerprint), recipe and release as {keep.path}"
            problems.append(f"{sub.path}: {same}, which stands for it (one row per corpus)")
    return [s for s in subs if id(s) not in dropped], problems


def canonical_subset(record: dict) -> int | None:
    """The least support of the release's canonical questions on the ranked part, or None (rank all)."""
    evaluation = record.get("canonical") or {}
    if evaluation.get("part") != PART or evaluation.get("min_support") is None:
        return None
    return int(evaluation["min_support"])


def ranked_accuracy(record: dict, metric: str) -> dict | None:
    """The accuracy the row is ranked by ({accuracy, ci95, count}): on the canonical subset when the
    release has one, else on every ranked question; None when the metric was not computed there. The
    subset's figures come from its support stratum, else from the per-question outcomes, else from the
    record's ``canonical`` number (its primary metric), each with the Wilson interval on the subset's n."""
    part = record["metrics"].get(PART, {})
    least = canonical_subset(record)
    if least is None:
        return part.get("metrics", {}).get(metric)
    stratum = (part.get("by_support", {}).get(f">={least}") or {}).get(metric)
    if stratum is not None:
        return stratum
    outcomes = ranked_outcomes(record, metric)
    if outcomes is not None:
        return _wilson(sum(outcomes.values()), len(outcomes))
    evaluation = record["canonical"]
    if evaluation.get("primary_metric") == metric and evaluation.get("accuracy") is not None:
        return _wilson(round(evaluation["accuracy"] * evaluation["n"]), evaluation["n"])
    return None


def _wilson(correct: int, n: int) -> dict:
    interval = wilson_interval(correct, n)
    return {"accuracy": correct / n if n else None, "ci95": list(interval) if interval else None, "count": n}


def ranked_outcomes(record: dict, metric: str) -> dict[str, bool] | None:
    """Per question of the ranked questions: right or wrong (None without per-question outcomes)."""
    q = (record.get("questions") or {}).get(PART)
    if not q or metric not in q["outcomes"]:
        return None
    least = canonical_subset(record) or 0
    return {
        i: bit == "1"
        for i, bit, support in zip(q["ids"], q["outcomes"][metric], q["support_counts"], strict=True)
        if support >= least
    }
