"""The leaderboard's time axis: a release's build date, and flags on rows whose base model was found
contaminated on the release or was published after it."""

import json

from continuousbench import leaderboard as lb
from continuousbench.leaderboard import page, timeline

RELEASE = "geminon-tiny-2026q1"
TIMELINE = {
    "releases": {RELEASE: {"built": "2026-04-01"}},
    "models": {"late/model": {"published": "2026-05-02"}, "early/model": {"published": "2025-03-12"}},
    "contamination": [
        {
            "model": "seen/model",
            "release": RELEASE,
            "verdict": "contaminated",
            "tests": {"min_k_plus_plus": {"p_value": 2.0e-5}},
        },
        {"model": "early/model", "release": RELEASE, "verdict": "not detected"},
    ],
}


def test_rows_flagged_by_contamination_or_publication_date(subs, edited, tmp_path):
    (tmp_path / "timeline.json").write_text(json.dumps(TIMELINE))
    loaded = timeline.load_timeline(tmp_path)
    models = ["seen/model", "late/model", "early/model", "unknown/model"]
    mine = [edited(s, base_model=m) for s, m in zip(subs, models, strict=False)]
    metric, rows = lb.rank(mine, RELEASE)
    note = timeline.annotate(rows, RELEASE, loaded)
    assert note == " Built 2026-04-01."
    flags = {r["record"]["base_model"]: r["flag"] for r in rows}
    assert flags == {
        "seen/model": "base model contaminated (Min-K%++ p = 2e-05)",
        "late/model": "base model published 2026-05-02, after the release (2026-04-01)",
        "early/model": None,
        "unknown/model": None,
    }
    html = page.table_html(rows, metric)
    assert "⚠ base model contaminated" in html and "after the release (2026-04-01)" in html


def test_no_or_bad_timeline_means_no_dates_and_no_flags(subs, tmp_path):
    assert timeline.load_timeline(tmp_path) == {}
    (tmp_path / "timeline.json").write_text("[1, 2]")
    assert timeline.load_timeline(tmp_path) == {}
    _, rows = lb.rank(subs, RELEASE)
    assert timeline.annotate(rows, RELEASE, {}) == "" and not any(r["flag"] for r in rows)
