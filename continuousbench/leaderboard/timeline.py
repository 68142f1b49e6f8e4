"""The leaderboard's time axis: each release's build date and a flag on a row whose base model may have
seen the release (as LiveCodeBench marks problems released before a model's cutoff). The file and its
format are :mod:`continuousbench.results.timeline`'s; the Space and the static export both annotate
their ranked rows here.
"""

from __future__ import annotations

from typing import Any

from continuousbench.results.timeline import FILE, built, flag, load_timeline

__all__ = ["FILE", "annotate", "built", "flag", "load_timeline"]


def annotate(rows: list[dict], release: str, timeline: dict[str, Any]) -> str:
    """Add ``flag`` to each ranked row (and ⚠ to its evaluator label); return the release's date note."""
    for row in rows:
        row["flag"] = flag(timeline, release, row["record"]["base_model"])
        if row["flag"]:
            row["base_model"] = f"{row['base_model']} ⚠ {row['flag']}"
    date = built(timeline, release)
    return f" Built {date}." if date else ""
