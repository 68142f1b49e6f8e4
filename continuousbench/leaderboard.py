"""Rank the records of a results dataset: the logic of the leaderboard Space (``leaderboard/app.py``).

A results dataset is a folder (or a Hub dataset repo) of records written by ``continuousbench submit``,
one JSON file per run under ``<release id>/``. Per release, submissions are ranked by the primary
metric on ``qa_public`` (exact match for Geminon; LLM match for NEWS when every submission has it),
each with its Wilson 95% interval. Each row says whether it can be told apart from the row above:
with both records' per-question outcomes, by the exact McNemar test on the questions both answered
(p < 0.05 separates); without them, by whether the two 95% intervals overlap (a cruder rule, and the
row says so).

Each row also says what kind of thing was made private (:func:`kind_label`): a corpus (DP data, a
non-private synthetic corpus, or a corpus without a statement) or the evaluator itself (a DP *model*,
``evaluate --epsilon``, paper App. E: a diagnostic upper bound, not a DP synthesis method). A DP model's
epsilon is labelled as such, so that no filter puts it beside DP data of the same epsilon.

Ranked by LLM match, each row names its judge (model, prompt version, calibration accuracy), and a row
judged differently from the row above says so: their verdicts are not comparable (docs/judge.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from continuousbench.harness import results
from continuousbench.judge import label as judge_label
from continuousbench.judge import same_judge
from continuousbench.stats import paired_difference

ALL = "all"
PART = "qa_public"  # ranked part: the facts a corpus can teach (singletons are shown beside)
ALPHA = 0.05
NON_PRIVATE = "∞ (non-private)"
NO_STATEMENT = "no statement"
SHORT = {"exact_match": "EM", "contains": "contains", "llm_match": "LLM match"}
DP_MODEL, DP_DATA, NON_PRIVATE_DATA, OTHER_CORPUS = "DP model", "DP data", "non-private data", "corpus"


@dataclass(frozen=True)
class Submission:
    name: str  # the record's file name without .json
    record: dict


def _folder(source: str | Path) -> Path:
    """A local results folder, or a snapshot of the Hub dataset repo ``org/name`` (records only)."""
    path = Path(str(source)).expanduser()
    if path.is_dir():
        return path
    from continuousbench.harness.submit import is_hub_target

    if not is_hub_target(str(source)):
        raise FileNotFoundError(
            f"results dataset {source} is neither a folder nor a Hub dataset repo org/name"
        )
    from huggingface_hub import snapshot_download

    repo = str(source).removeprefix("hf://datasets/")
    return Path(snapshot_download(repo, repo_type="dataset", allow_patterns=["*/*.json"]))


def load_submissions(source: str | Path) -> tuple[list[Submission], list[str]]:
    """Every valid record under ``source``, and one line per file that was left out and why."""
    subs, problems = [], []
    for file in sorted(_folder(source).glob("*/*.json")):
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            problems.append(f"{file.parent.name}/{file.name}: not JSON ({err})")
            continue
        issues = results.validate(record)
        if issues:
            problems.append(f"{file.parent.name}/{file.name}: {issues[0]}")
        else:
            subs.append(Submission(file.stem, record))
    return subs, problems


def releases(subs: list[Submission]) -> list[str]:
    """Release ids present, newest quarter first."""
    return sorted(
        {s.record["release"]["id"] for s in subs}, key=lambda r: (r.rsplit("-", 1)[-1], r), reverse=True
    )


def primary_metric(subs: list[Submission]) -> str:
    """exact_match, or llm_match on the NEWS track when every submission was judged."""
    judged = all("llm_match" in s.record["matchers"] for s in subs)
    return "llm_match" if subs and judged and subs[0].record["release"]["track"] == "news" else "exact_match"


def kind_label(record: dict) -> str:
    """DP model (the evaluator trained with DP-SGD), DP data, non-private data, or a corpus without a
    privacy statement (e.g. the real one)."""
    if record.get("model_privacy"):
        return DP_MODEL
    privacy = record["corpus"].get("privacy")
    if privacy is None:
        return OTHER_CORPUS
    return DP_DATA if privacy["private"] and privacy.get("epsilon") is not None else NON_PRIVATE_DATA


def epsilon_label(record: dict) -> str:
    model = record.get("model_privacy")
    if model:
        return f"{model['epsilon']:g} ({DP_MODEL})"
    privacy = record["corpus"].get("privacy")
    if privacy is None:
        return NO_STATEMENT
    if not privacy["private"] or privacy.get("epsilon") is None:
        return NON_PRIVATE
    return f"{privacy['epsilon']:g}"


def model_label(record: dict) -> str:
    """A Hub id as is; a local folder by its name (the path says nothing to other readers)."""
    model = record["base_model"]
    return Path(model).name if Path(model).is_absolute() else model


def choices(subs: list[Submission], release: str) -> dict[str, list[str]]:
    """The filter values present for ``release`` (each list starts with ``all``)."""
    mine = [s.record for s in subs if s.record["release"]["id"] == release]

    def values(key) -> list[str]:
        return [ALL, *sorted({key(r) for r in mine})]

    return {
        "kind": values(kind_label),
        "epsilon": values(epsilon_label),
        "base_model": values(model_label),
        "tuning": values(lambda r: r["tuning"]),
    }


def _accuracy(record: dict, part: str, metric: str) -> dict | None:
    return record["metrics"].get(part, {}).get("metrics", {}).get(metric)


def _outcomes(record: dict, metric: str) -> dict[str, bool] | None:
    q = (record.get("questions") or {}).get(PART)
    if not q or metric not in q["outcomes"]:
        return None
    return {i: bit == "1" for i, bit in zip(q["ids"], q["outcomes"][metric], strict=True)}


def separation(upper: dict, lower: dict, metric: str) -> dict:
    """Can ``lower`` be told apart from ``upper`` on the ranked part? Paired when both carry outcomes."""
    a, b = _outcomes(upper, metric), _outcomes(lower, metric)
    common = sorted(set(a) & set(b)) if a and b else []
    if common:
        d = paired_difference([a[i] for i in common], [b[i] for i in common])
        return {"method": "mcnemar", "p_value": d["p_value"], "separable": d["p_value"] < ALPHA, "n": d["n"]}
    hi, lo = _accuracy(upper, PART, metric)["ci95"], _accuracy(lower, PART, metric)["ci95"]
    return {"method": "interval overlap", "p_value": None, "separable": lo[1] < hi[0], "n": None}


def _note(sep: dict | None) -> str:
    if sep is None:
        return "-"
    verdict = "separable" if sep["separable"] else "≈ not separable"
    if sep["method"] == "mcnemar":
        return f"{verdict} (McNemar p = {sep['p_value']:.2g}, {sep['n']} paired questions)"
    return (
        f"{verdict} (95% intervals {'disjoint' if sep['separable'] else 'overlap'}; no per-question outcomes)"
    )


def rank(
    subs: list[Submission], release: str, *, epsilon: str = ALL, base_model: str = ALL, tuning: str = ALL,
    kind: str = ALL,
) -> tuple[str, list[dict]]:  # fmt: skip
    """(primary metric, ranked rows) of ``release`` after the filters; best first."""
    mine = [s for s in subs if s.record["release"]["id"] == release]
    metric = primary_metric(mine)
    kept = [
        s for s in mine
        if epsilon in (ALL, epsilon_label(s.record)) and base_model in (ALL, model_label(s.record))
        and tuning in (ALL, s.record["tuning"]) and kind in (ALL, kind_label(s.record))
    ]  # fmt: skip

    def key(s: Submission) -> tuple:
        acc = _accuracy(s.record, PART, metric)
        value = None if acc is None else acc["accuracy"]
        return (value is None, -(value or 0.0), s.name)  # best first, unscored last, then by name

    rows, previous = [], None
    for position, sub in enumerate(sorted(kept, key=key), start=1):
        acc = _accuracy(sub.record, PART, metric)
        single = _accuracy(sub.record, "qa_singleton", metric)
        sep = separation(previous.record, sub.record, metric) if previous is not None else None
        note = _note(sep)
        if sep is not None and metric == "llm_match":
            sep["same_judge"] = same_judge(previous.record.get("judge"), sub.record.get("judge"))
            note += "" if sep["same_judge"] else "; judged by a different judge: not comparable"
        rows.append({
            "rank": position, "submission": sub.name, "base_model": model_label(sub.record),
            "tuning": sub.record["tuning"], "kind": kind_label(sub.record),
            "epsilon": epsilon_label(sub.record),
            "accuracy": acc["accuracy"], "ci95": acc["ci95"], "questions": acc["count"],
            "singleton": single["accuracy"] if single else None, "separation": sep, "vs_above": note,
            "judge": judge_label(sub.record.get("judge")),
            "record": sub.record,
        })  # fmt: skip
        previous = sub
    return metric, rows


def table(rows: list[dict], metric: str):
    """The ranking as a pandas DataFrame for display (accuracies in %)."""
    import pandas as pd

    def pct(v) -> str:
        return "-" if v is None else f"{100 * v:.1f}"

    judges = {"judge": [r["judge"] for r in rows]} if metric == "llm_match" else {}
    return pd.DataFrame(
        {
            "#": [r["rank"] for r in rows],
            "submission": [r["submission"] for r in rows],
            "base model": [r["base_model"] for r in rows],
            "tuning": [r["tuning"] for r in rows],
            "kind": [r["kind"] for r in rows],
            "ε": [r["epsilon"] for r in rows],
            f"public {SHORT[metric]} %": [pct(r["accuracy"]) for r in rows],
            "95% CI": [f"[{pct(r['ci95'][0])}, {pct(r['ci95'][1])}]" for r in rows],
            "n": [r["questions"] for r in rows],
            f"singleton {SHORT[metric]} %": [pct(r["singleton"]) for r in rows],
            "vs. the row above": [r["vs_above"] for r in rows],
            **judges,
        }
    )


def support_figure(rows: list[dict], metric: str, *, top: int = 8):
    """Accuracy by support count of the ``top`` ranked rows, each bucket with its Wilson interval."""
    from continuousbench.harness.plots import bucket_series
    from continuousbench.harness.plots import support_figure as figure

    series = []
    for row in rows[:top]:
        for part in ("qa_public", "qa_singleton"):
            buckets = row["record"]["metrics"].get(part, {}).get("buckets", [])
            s = bucket_series(
                f"#{row['rank']} {row['submission']} {part.removeprefix('qa_')}", buckets, metric
            )
            if s is not None:
                series.append(s)
    caption = "error bars: Wilson 95% interval of each bucket's accuracy"
    return figure(series, f"{metric} by support count (top {min(top, len(rows))})", caption=caption)
