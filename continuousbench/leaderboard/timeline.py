"""The time axis of the leaderboard: each release's build date, and a flag on a row whose base model may
have seen the release (as LiveCodeBench marks problems released before a model's cutoff).

A results dataset may hold ``timeline.json`` at its root (beside the ``<release id>/`` folders)::

    {"releases": {"geminon-small-2027q1": {"built": "2027-01-01"}},
     "models": {"google/gemma-3-1b-pt": {"published": "2025-03-12"}},
     "contamination": [{"model": "google/gemma-3-1b-pt", "release": "geminon-small-2027q1",
                        "verdict": "not detected", "tests": {"min_k_plus_plus": {"p_value": 0.4}}}]}

``built`` is the date ``continuousbench release`` recorded in its report, ``published`` the model card's
date, and each ``contamination`` entry the JSON that ``continuousbench contamination --output`` wrote.
A row is flagged when its base model was found contaminated on the release, or was published after
the release was built. A missing or unreadable file means no dates and no flags.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FILE = "timeline.json"


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


def built(timeline: dict[str, Any], release: str) -> str | None:
    """The release's build date (ISO), when the timeline records it."""
    entry = (timeline.get("releases") or {}).get(release) or {}
    return str(entry["built"]) if isinstance(entry, dict) and entry.get("built") else None


def flag(timeline: dict[str, Any], release: str, base_model: str) -> str | None:
    """Why a row of ``base_model`` on ``release`` may not be a fair one, or None."""
    for report in timeline.get("contamination") or []:
        if not isinstance(report, dict) or (report.get("model"), report.get("release")) != (
            base_model,
            release,
        ):
            continue
        if report.get("verdict") == "contaminated":
            p = ((report.get("tests") or {}).get("min_k_plus_plus") or {}).get("p_value")
            return "base model contaminated" + (f" (Min-K%++ p = {p:.2g})" if isinstance(p, float) else "")
    published = ((timeline.get("models") or {}).get(base_model) or {}).get("published")
    date = built(timeline, release)
    if published and date and str(published) > date:
        return f"base model published {published}, after the release ({date})"
    return None


def annotate(rows: list[dict], release: str, timeline: dict[str, Any]) -> str:
    """Add ``flag`` to each ranked row (and ⚠ to its evaluator label); return the release's date note."""
    for row in rows:
        row["flag"] = flag(timeline, release, row["record"]["base_model"])
        if row["flag"]:
            row["base_model"] = f"{row['base_model']} ⚠ {row['flag']}"
    date = built(timeline, release)
    return f" Built {date}." if date else ""
