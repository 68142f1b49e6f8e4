"""Rank the records of a results dataset: the logic of the leaderboard Space (``leaderboard/app.py``;
its sortable table is :mod:`continuousbench.leaderboard.page`, its static export
:mod:`continuousbench.leaderboard.export`).

A results dataset is a folder (or a Hub dataset repo) of records written by ``continuousbench submit``,
one JSON file per run under ``<release id>/``. Per release, submissions are ranked by the primary
metric on ``qa_public`` (exact match for Geminon; LLM match for NEWS when every submission has it),
each with its Wilson 95% interval. Equal accuracies share a rank (1, 2, 2, 4); the same record
submitted twice is listed once. Each row says whether it can be told apart from the row above: with
both records' per-question outcomes, by the exact McNemar test on the questions both answered
(p < 0.05 separates); without them, by whether the two 95% intervals overlap (a cruder rule, and the
row says so).

Each row also says what kind of thing was made private (:func:`kind_label`): a corpus (DP data, a
non-private synthetic corpus, or a corpus without a statement) or the evaluator itself (a DP *model*,
``evaluate --epsilon``, paper App. E: a diagnostic upper bound, not a DP synthesis method).

A record is left out, with one line saying why, when it does not follow the schema, when it claims a
release other than the folder it sits in, when that release is unknown here (neither built under the
release root nor a tag of the releases' Hub repo: :class:`~continuousbench.leaderboard.releases.
ReleaseIndex`), when it repeats another record, or when another record of the same corpus, recipe and
release stands for it (one row per corpus: :mod:`.rows`). A release with a canonical evaluation (NEWS:
support >= 200) is ranked on those questions, with their own n and interval (:mod:`.rows`).

Budgets are bucketed by the epsilon each statement achieves (:func:`epsilon_bucket`): a record whose
achieved epsilon exceeds the one it asked for is in the bucket of the achieved one, never inside the
smaller one, and a statement whose delta is not below 1/n has a bucket of its own (no DP guarantee).

The fixed harness: the main table ranks the runs made with a canonical recipe, recomputed from each
record's settings and the published list of canonical digests (:func:`~continuousbench.results.
canonical.standing`; the record's own ``recipe.canonical`` is not trusted); the others are ranked apart
(``rank(..., recipes=OTHER)``), each saying why it is not canonical. Every
row names what was made (:func:`method_label`: no training, train on real, a synthetic corpus and its
generator, direct DP fine-tuning) and the run folder it came from.

Ranked by LLM match, each row names its judge (model, prompt version, calibration accuracy), and a row
judged differently from the row above says so: their verdicts are not comparable (docs/judge.md).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from continuousbench.hub import hub_repo_id
from continuousbench.leaderboard.releases import HUB, ReleaseIndex
from continuousbench.leaderboard.rows import PART, one_per_corpus, ranked_accuracy, ranked_outcomes
from continuousbench.results import schema
from continuousbench.results.canonical import recipe_label, standing
from continuousbench.results.labels import (  # noqa: F401 (the leaderboard's names for them)
    DP_DATA,
    DP_MODEL,
    NO_STATEMENT,
    NON_PRIVATE,
    NON_PRIVATE_DATA,
    OTHER_CORPUS,
    epsilon_bucket,
    epsilon_label,
    kind_label,
)
from continuousbench.results.privacy_check import NOT_DP  # noqa: F401 (the leaderboard's name for it)
from continuousbench.scoring.judge import label as judge_label
from continuousbench.scoring.judge import same_judge
from continuousbench.stats import paired_difference

ALL = "all"
CANONICAL, OTHER = "canonical", "other recipes"  # the main table, and the runs listed apart
ALPHA = 0.05
SHORT = {"exact_match": "EM", "contains": "contains", "llm_match": "LLM match"}


@dataclass(frozen=True)
class Submission:
    name: str  # the record's file name without .json
    record: dict
    path: str = ""  # ``<release id>/<name>.json`` inside the results dataset
    release_at: str = ""  # the release's Hub page, or its local manifest file; "": not known


def _folder(source: str | Path) -> Path:
    """A local results folder, or a snapshot of the Hub dataset repo ``org/name`` (records only)."""
    path = Path(str(source)).expanduser()
    if path.is_dir():
        return path
    if not hub_repo_id(str(source)):
        raise FileNotFoundError(
            f"results dataset {source} is neither a folder nor a Hub dataset repo org/name"
        )
    from huggingface_hub import snapshot_download

    repo = str(source).removeprefix("hf://datasets/")
    return Path(snapshot_download(repo, repo_type="dataset", allow_patterns=["*/*.json"]))


def load_submissions(
    source: str | Path, releases: ReleaseIndex | None = None
) -> tuple[list[Submission], list[str]]:
    """Every valid record under ``source`` whose release ``releases`` knows (default: the local release
    root and ``$CONTINUOUSBENCH_HUB_REPO``), and one line per file that was left out and why."""
    releases = releases or ReleaseIndex()
    subs, problems, seen = [], [], {}
    for file in sorted(_folder(source).glob("*/*.json")):
        where = f"{file.parent.name}/{file.name}"
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            problems.append(f"{where}: not JSON ({err})")
            continue
        issues = schema.validate(record)
        if issues:
            problems.append(f"{where}: {issues[0]}")
            continue
        if record.get("task") == "classification":  # a saturation study's run: no release to rank on
            problems.append(f"{where}: a classification run (saturation study), not a release's")
            continue
        claimed = record["release"]["id"]
        if claimed != file.parent.name:
            problems.append(f"{where}: claims release {claimed} but sits in folder {file.parent.name}")
            continue
        digest = hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()
        if digest in seen:
            problems.append(f"{where}: the same record as {seen[digest]} (listed once)")
            continue
        at, unknown = releases.find(record["release"])
        if unknown:
            problems.append(f"{where}: {unknown}")
            continue
        seen[digest] = where
        subs.append(Submission(file.stem, record, where, at))
    subs, repeated = one_per_corpus(subs)
    return subs, problems + repeated


def left_out_html(problems: list[str]) -> str:
    """The "Left out" list as HTML, every line escaped (file names and messages come from submitters)."""
    if not problems:
        return ""
    items = "".join(f"<li><code>{html.escape(p)}</code></li>" for p in problems)
    return f"<p>Left out ({len(problems)} record{'s' if len(problems) > 1 else ''}):</p><ul>{items}</ul>"


def releases(subs: list[Submission]) -> list[str]:
    """Release ids present, newest quarter first."""
    from continuousbench.release.ids import ReleaseId

    def newest(rid: str) -> tuple:  # a held-out split (``-heldout-entity``) sits beside its quarter
        parsed = ReleaseId.parse(rid)
        return (parsed.year, parsed.quarter, rid)

    return sorted({s.record["release"]["id"] for s in subs}, key=newest, reverse=True)


def primary_metric(subs: list[Submission]) -> str:
    """exact_match, or llm_match on the NEWS track when every submission was judged."""
    judged = all("llm_match" in s.record["matchers"] for s in subs)
    return "llm_match" if subs and judged and subs[0].record["release"]["track"] == "news" else "exact_match"


def generator_label(record: dict) -> str:
    """The generator of the corpus when its synthesis settings name it, else the corpus folder's name."""
    sampling = (record["corpus"].get("generation") or {}).get("sampling") or {}
    name = sampling.get("generator") or sampling.get("model") or record["corpus"]["source"]
    return _local_name(str(name))


def _local_name(path: str) -> str:
    """A local path by its last component (``submit`` writes them as ``.../name``); a Hub id as is."""
    return Path(path).name if Path(path).is_absolute() or path.startswith(".../") else path


def method_label(record: dict) -> str:
    """What was made: the base model untrained, training on the release's own corpus, a synthetic
    corpus (by its generator), the evaluator itself trained with DP-SGD, or another corpus by name."""
    corpus = record["corpus"]
    if record.get("steps") == 0:
        return "no training (base model)"
    if record.get("model_privacy"):
        return "direct DP fine-tuning (DP model)"
    if corpus.get("generation"):
        return f"synthetic ({generator_label(record)})"
    if Path(str(corpus["source"])).name == record["release"]["id"]:
        return "train on real"
    return f"corpus {_local_name(str(corpus['source']))}"


def is_canonical(record: dict) -> bool:
    """Made with a recipe that is canonical now, recomputed from the record's settings (never its flag)."""
    return standing(record).canonical


def why_apart(record: dict) -> str | None:
    """Why a run is not in the main table (None: it is)."""
    return standing(record).why_apart


def model_label(record: dict) -> str:
    """A Hub id as is; a local folder by its name (the path says nothing to other readers)."""
    return _local_name(record["base_model"])


def choices(subs: list[Submission], release: str) -> dict[str, list[str]]:
    """The filter values present for ``release`` (each list starts with ``all``)."""
    mine = [s.record for s in subs if s.record["release"]["id"] == release]

    def values(key) -> list[str]:
        return [ALL, *sorted({key(r) for r in mine})]

    return {
        "kind": values(kind_label),
        "epsilon": [ALL, *sorted({epsilon_bucket(r) for r in mine}, key=_bucket_order)],
        "generator": values(generator_label),
        "base_model": values(model_label),
        "tuning": values(lambda r: r["tuning"]),
    }


def tracks(subs: list[Submission]) -> list[str]:
    return sorted({s.record["release"]["track"] for s in subs})


def _bucket_order(bucket: str) -> tuple:
    try:
        return (0, float(bucket))
    except ValueError:
        return (1, bucket)


def _local_url(path: Path, static: bool) -> str:
    """A local file: served by the Space (``allowed_paths``), or a ``file:`` URL in a static page."""
    return path.resolve().as_uri() if static else "/gradio_api/file=" + quote(str(path.resolve()))


def links(sub: Submission, source: str | Path, *, static: bool = False) -> dict[str, str]:
    """URLs of the row's model card (:func:`card_url`), submitted record and release (its Hub page when
    it is on the Hub, else its local manifest), each built from quoted parts (nothing from a record
    reaches the page raw); an empty URL: no such page. ``static``: for a page read without the Space."""
    record, folder = sub.record, Path(str(source)).expanduser()
    if folder.is_dir():
        record_url = _local_url(folder / sub.path, static)
    else:
        repo = str(source).removeprefix("hf://datasets/")
        record_url = f"{HUB}/datasets/{quote(repo)}/blob/main/{quote(sub.path)}"
    at = sub.release_at
    release = at if at.startswith(HUB) else _local_url(Path(at), static) if at else ""
    return {"card": card_url(record), "record": record_url, "release": release}


# ``hub_commit`` as ``evaluate --push_to_hub`` writes it (huggingface_hub's CommitInfo.commit_url).
_MODEL_COMMIT = re.compile(r"^https://huggingface\.co/([\w.-]+/[\w.-]+)/commit/([0-9a-f]{40})$")


def card_url(record: dict) -> str:
    """The run's own model card when its model is on the Hub - at the upload's commit (``hub_commit``,
    so it is the card of the scored model), else in ``model_repo`` - otherwise the base model's Hub page;
    '' for a local base model."""
    pushed = _MODEL_COMMIT.match(record.get("hub_commit") or "")
    if pushed and hub_repo_id(pushed.group(1)):
        return f"{HUB}/{quote(pushed.group(1))}/blob/{pushed.group(2)}/README.md"
    own = hub_repo_id(record.get("model_repo"))
    if own:
        return f"{HUB}/{quote(own)}"
    model = record["base_model"]
    return "" if Path(model).is_absolute() or not hub_repo_id(model) else f"{HUB}/{quote(model)}"


def _accuracy(record: dict, part: str, metric: str) -> dict | None:
    return record["metrics"].get(part, {}).get("metrics", {}).get(metric)


def separation(upper: dict, lower: dict, metric: str) -> dict:
    """Can ``lower`` be told apart from ``upper`` on the ranked questions? Paired when both carry outcomes."""
    a, b = ranked_outcomes(upper, metric), ranked_outcomes(lower, metric)
    common = sorted(set(a) & set(b)) if a and b else []
    if common:
        d = paired_difference([a[i] for i in common], [b[i] for i in common])
        return {"method": "mcnemar", "p_value": d["p_value"], "separable": d["p_value"] < ALPHA, "n": d["n"]}
    hi, lo = ranked_accuracy(upper, metric)["ci95"], ranked_accuracy(lower, metric)["ci95"]
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
    subs: list[Submission],
    release: str,
    *,
    epsilon: str = ALL,
    base_model: str = ALL,
    tuning: str = ALL,
    kind: str = ALL,
    generator: str = ALL,
    recipes: str = ALL,
) -> tuple[str, list[dict]]:
    """(primary metric, ranked rows) of ``release`` after the filters; best first, ties share a rank.
    ``recipes``: ALL, CANONICAL (the main table) or OTHER (the runs listed apart)."""
    mine = [s for s in subs if s.record["release"]["id"] == release]
    metric = primary_metric(mine)
    kept = [
        s
        for s in mine
        if epsilon in (ALL, epsilon_bucket(s.record))
        and base_model in (ALL, model_label(s.record))
        and tuning in (ALL, s.record["tuning"])
        and kind in (ALL, kind_label(s.record))
        and generator in (ALL, generator_label(s.record))
        and recipes in (ALL, CANONICAL if is_canonical(s.record) else OTHER)
    ]

    def key(s: Submission) -> tuple:
        acc = ranked_accuracy(s.record, metric)
        value = None if acc is None else acc["accuracy"]
        return (value is None, -(value or 0.0), s.name)  # best first, unscored last, then by name

    rows, previous, place = [], None, 0
    for position, sub in enumerate(sorted(kept, key=key), start=1):
        acc = ranked_accuracy(sub.record, metric)
        value = None if acc is None else acc["accuracy"]
        if not rows or value != rows[-1]["accuracy"]:
            place = position  # competition ranking: 1, 2, 2, 4
        single = _accuracy(sub.record, "qa_singleton", metric)
        mcq = _accuracy(sub.record, PART, "mcq")  # schema 4: ranked-choice accuracy, chance 1/4
        sep = separation(previous.record, sub.record, metric) if previous is not None else None
        note = _note(sep)
        if sep is not None and metric == "llm_match":
            sep["same_judge"] = same_judge(previous.record.get("judge"), sub.record.get("judge"))
            note += "" if sep["same_judge"] else "; judged by a different judge: not comparable"
        rows.append(
            {
                "rank": place,
                "submission": sub.name,
                "path": sub.path,
                "run": (sub.record.get("submitted") or {}).get("run_folder") or "-",
                "method": method_label(sub.record),
                "canonical": is_canonical(sub.record),
                "recipe": recipe_label(sub.record),
                "why_apart": why_apart(sub.record),
                "generator": generator_label(sub.record),
                "base_model": model_label(sub.record),
                "tuning": sub.record["tuning"],
                "kind": kind_label(sub.record),
                "epsilon": epsilon_label(sub.record),
                "accuracy": value,
                "ci95": acc["ci95"] if acc else [None, None],
                "questions": acc["count"] if acc else 0,
                "singleton": single["accuracy"] if single else None,
                "mcq": mcq["accuracy"] if mcq else None,
                "mcq_ci95": mcq["ci95"] if mcq else None,
                "separation": sep,
                "vs_above": note,
                "judge": judge_label(sub.record.get("judge")),
                "record": sub.record,
                "sub": sub,
            }
        )
        previous = sub
    return metric, rows


def table(rows: list[dict], metric: str):
    """The ranking as a pandas DataFrame of display values (accuracies in %, numbers kept numeric so
    that sorting is numeric; None: no value). The Space renders it with :mod:`.page`, links added."""
    import pandas as pd

    def pct(v) -> str:
        return "-" if v is None else f"{100 * v:.1f}"

    def num(v) -> float | None:
        return None if v is None else round(100 * v, 1)

    judges = {"judge": [r["judge"] for r in rows]} if metric == "llm_match" else {}
    graded = (
        {  # only when some record carries it (schema 4): older ones show "-"
            "MCQ %": [num(r["mcq"]) for r in rows],
            "MCQ 95% CI": [
                f"[{pct(r['mcq_ci95'][0])}, {pct(r['mcq_ci95'][1])}]" if r["mcq_ci95"] else "-" for r in rows
            ],
        }
        if any(r["mcq"] is not None for r in rows)
        else {}
    )
    apart = {}
    if any(not r["canonical"] for r in rows):
        apart = {"not canonical": [r["why_apart"] or "-" for r in rows]}
    return pd.DataFrame(
        {
            "#": [r["rank"] for r in rows],
            "submission": [r["submission"] for r in rows],
            "evaluator": [r["base_model"] for r in rows],
            "tuning": [r["tuning"] for r in rows],
            "kind": [r["kind"] for r in rows],
            "ε": [r["epsilon"] for r in rows],
            f"{SHORT[metric]} %": [num(r["accuracy"]) for r in rows],
            "95% CI": [f"[{pct(r['ci95'][0])}, {pct(r['ci95'][1])}]" for r in rows],
            "n": [r["questions"] for r in rows],
            "singleton %": [num(r["singleton"]) for r in rows],
            **graded,
            "vs. row above": [r["vs_above"] for r in rows],
            "method": [r["method"] for r in rows],  # what was made, and where
            "run": [r["run"] for r in rows],
            "recipe": [r["recipe"] for r in rows],
            **judges,
            **apart,
        }
    )
