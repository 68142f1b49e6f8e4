"""The leaderboard without a browser: one static page (and JSON) with the Space's own ranking."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from continuousbench import leaderboard as lb

ROOT = Path(__file__).resolve().parents[2]


def _canonical(results_dataset, recipe: dict, tmp_path) -> Path:
    """A copy of the results dataset whose syn record was made with a canonical recipe."""
    import shutil

    results = tmp_path / "results"
    shutil.copytree(results_dataset, results)
    syn = next(results.rglob("syn-*.json"))
    record = json.loads(syn.read_text())
    record["recipe"] = recipe
    syn.write_text(json.dumps(record))
    return results


def test_the_static_page_has_the_same_ranking_in_plain_tables(
    results_dataset, canonical_recipe, tmp_path, invoke
):
    results = _canonical(results_dataset, canonical_recipe, tmp_path)
    out, data = tmp_path / "board.html", tmp_path / "board.json"
    done = invoke(["leaderboard", "--results", results, "--html", out, "--json", data])
    assert done.exit_code == 0 and "geminon-tiny-2026q1: 1 canonical, 3 other recipes" in done.stdout
    main, apart = pd.read_html(out)  # a script reads the page as it is
    subs, _ = lb.load_submissions(results)
    _, ranked_main = lb.rank(subs, "geminon-tiny-2026q1", recipes=lb.CANONICAL)
    _, ranked_apart = lb.rank(subs, "geminon-tiny-2026q1", recipes=lb.OTHER)
    assert list(main["submission"]) == [r["submission"] for r in ranked_main]
    assert list(apart["submission"]) == [r["submission"] for r in ranked_apart]
    assert set(apart["not canonical"]) == {"no recipe file (--config)"}
    page = out.read_text()
    assert "file:///" in page and "release.json" in page  # the local release: its manifest, no Hub link
    assert "huggingface.co/datasets/continuousbench" not in page
    rows = json.loads(data.read_text())["releases"]["geminon-tiny-2026q1"]
    assert [r["submission"] for r in rows["canonical"]] == list(main["submission"])
    assert [r["why_apart"] for r in rows["canonical"]] == [None]  # no "schema < 4" on a canonical row
    assert [r["recipe"] for r in rows["canonical"]] == ["geminon-tiny-demo"]
    again = invoke(["leaderboard", "--results", results, "--html", out])
    assert again.exit_code == 2 and "--overwrite" in again.stderr  # never replaced silently


@pytest.mark.slow  # ~6 s: CI only, not the fast lane
def test_the_space_writes_the_same_page(results_dataset, canonical_recipe, tmp_path, tiny_release):
    results = _canonical(results_dataset, canonical_recipe, tmp_path)
    out = tmp_path / "space.html"
    env = {
        **os.environ,
        "CONTINUOUSBENCH_RESULTS": str(results),
        "CONTINUOUSBENCH_HOME": str(tiny_release.parent),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run(
        [sys.executable, str(ROOT / "leaderboard" / "app.py"), "--html", str(out)],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    main, apart = pd.read_html(out)
    assert len(main) == 1 and len(apart) == 3


def test_the_static_page_shows_build_dates_and_contaminated_base_models(
    results_dataset, canonical_recipe, tmp_path, invoke, tiny_model_dir
):
    """As the Space does: the release's build date from the results' timeline, and a flag on the rows of a
    base model found contaminated on it (a local model, keyed as `submit` keyed the runs' base model)."""
    from continuousbench.results.timeline import record_built, record_contamination

    results = _canonical(results_dataset, canonical_recipe, tmp_path)
    record_built(results, {"geminon-tiny-2026q1": "2026-01-01"})
    tests = {"min_k_plus_plus": {"p_value": 2e-5}}
    report = {"model": str(tiny_model_dir), "release": "geminon-tiny-2026q1", "verdict": "contaminated"}
    record_contamination(results, {**report, "tests": tests})
    out, data = tmp_path / "board.html", tmp_path / "board.json"
    assert invoke(["leaderboard", "--results", results, "--html", out, "--json", data]).exit_code == 0
    page = out.read_text()
    assert "Built 2026-01-01." in page and "⚠ base model contaminated (Min-K%++ p = 2e-05)" in page
    board = json.loads(data.read_text())["releases"]["geminon-tiny-2026q1"]
    assert board["built"] == "2026-01-01"
    rows = board["canonical"] + board["other"]
    assert rows and all(r["flag"] == "base model contaminated (Min-K%++ p = 2e-05)" for r in rows)
