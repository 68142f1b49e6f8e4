"""The time axis of a results dataset: when each release was built, when each base model was published,
and which base models were found contaminated on which releases. One file, ``timeline.json``, at the root
of the results dataset (beside its ``<release id>/`` folders)::

    {"releases": {"geminon-small-2027q1": {"built": "2027-01-01"}},
     "models": {"google/gemma-3-1b-pt": {"published": "2025-03-12"}},
     "contamination": [{"model": "google/gemma-3-1b-pt", "release": "geminon-small-2027q1",
                        "verdict": "not detected", "alpha": 0.01,
                        "tests": {"min_k_plus_plus": {"p_value": 0.4, "auc": 0.51}}}]}

``release --quarter ... --results DIR`` writes each release's build date, ``contamination ... --results
DIR`` its verdict (one entry per model and release: a later test replaces an earlier one); a model's
publication date is written by hand (its card's date). The Space and ``leaderboard --html/--json`` read
it: each release shows its build date, and a row is flagged when its base model was found contaminated on
the release or was published after it was built.

Models are keyed as ``submit`` records a run's base model (:func:`model_key`): a Hub id as it is, a local
folder by its last component (``.../base``), so a verdict on a local model finds that model's rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

FILE = "timeline.json"


def model_key(model: str) -> str:
    """A model as the timeline and a submitted record name it: a local folder (a path, or a folder that
    exists here) as ``.../<name>``, anything else (a Hub id, a name already shortened) as it is."""
    text = str(model).rstrip("/")
    if text.startswith(".../"):
        return text
    path = Path(text).expanduser()
    if text.startswith((".", "/", "~")) or path.exists():
        return f".../{path.resolve().name}"
    return text


def load_timeline(source: str | Path) -> dict[str, Any]:
    """``timeline.json`` of a results folder or Hub dataset repo; empty when there is none, it cannot be
    fetched, or it is not a JSON object (the ranking never waits on it)."""
    path = Path(str(source)).expanduser() / FILE
    try:
        if not path.parent.is_dir():
            from huggingface_hub import hf_hub_download

            repo = str(source).removeprefix("hf://datasets/")
            path = Path(hf_hub_download(repo, FILE, repo_type="dataset"))
        data = json.loads(path.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - no file, no network, not JSON: no dates and no flags
        return {}
    return data if isinstance(data, dict) else {}


def update(results: str | Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Apply ``change`` to the timeline of the results folder ``results`` (created if missing) and write it
    atomically; a file that is not a timeline is refused in one line rather than replaced."""
    from continuousbench.errors import UserError
    from continuousbench.files import read_json, write_json

    folder = Path(results).expanduser()
    if folder.exists() and not folder.is_dir():
        raise UserError(
            f"--results {results} is a file; name the results folder (where `submit --to` writes)"
        )
    path = folder / FILE
    timeline = read_json(path) if path.is_file() else {}
    if not isinstance(timeline, dict):
        raise UserError(f"{path} is not a timeline (a JSON object); move it away")
    change(timeline)
    return write_json(path, timeline)


def record_built(results: str | Path, dates: Mapping[str, str]) -> Path:
    """Each release's build date (ISO), as ``release`` records it."""

    def change(timeline: dict[str, Any]) -> None:
        releases = timeline.setdefault("releases", {})
        for release, day in dates.items():
            releases.setdefault(release, {})["built"] = day

    return update(results, change)


def record_contamination(results: str | Path, report: Mapping[str, Any]) -> Path:
    """A ``contamination`` verdict, keyed by (model key, release): a later test replaces an earlier one."""
    entry = {
        k: report[k]
        for k in ("release", "verdict", "alpha", "unit", "tests", "documents", "controls", "withheld_because")
        if k in report  # not its per-document scores: they stay in the command's own output
    }
    entry["model"] = model_key(report["model"])

    def change(timeline: dict[str, Any]) -> None:
        kept = [
            e
            for e in timeline.get("contamination") or []
            if not (
                isinstance(e, dict)
                and (e.get("model"), e.get("release")) == (entry["model"], entry["release"])
            )
        ]
        timeline["contamination"] = [*kept, entry]

    return update(results, change)


def built(timeline: Mapping[str, Any], release: str) -> str | None:
    """The release's build date (ISO), when the timeline records it."""
    entry = (timeline.get("releases") or {}).get(release) or {}
    return str(entry["built"]) if isinstance(entry, dict) and entry.get("built") else None


def flag(timeline: Mapping[str, Any], release: str, base_model: str) -> str | None:
    """Why a row of ``base_model`` on ``release`` may not be a fair one, or None."""
    key = model_key(base_model)
    for report in timeline.get("contamination") or []:
        if not isinstance(report, dict) or report.get("release") != release:
            continue
        if model_key(str(report.get("model"))) != key or report.get("verdict") != "contaminated":
            continue
        p = ((report.get("tests") or {}).get("min_k_plus_plus") or {}).get("p_value")
        return "base model contaminated" + (f" (Min-K%++ p = {p:.2g})" if isinstance(p, float) else "")
    models = timeline.get("models") or {}
    published = (models.get(base_model) or models.get(key) or {}).get("published")
    date = built(timeline, release)
    if published and date and str(published) > date:
        return f"base model published {published}, after the release ({date})"
    return None
