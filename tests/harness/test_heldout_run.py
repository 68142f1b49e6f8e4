"""``evaluate`` on a ``build geminon --heldout entity`` release: QA on trained-on vs held-out entities."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from continuousbench.geminon.build import GeminonBuildArguments, build_release
from continuousbench.results.schema import validate

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_heldout_run")


@pytest.fixture(scope="module")
def heldout_run(tmp_path_factory, tiny_model_dir, run_argv):
    from continuousbench.harness.run import cli

    root = tmp_path_factory.mktemp("heldout-run")
    args = GeminonBuildArguments(size="tiny", out=str(root), heldout="entity")
    release = build_release(args, progress=False)
    argv = run_argv(release, tiny_model_dir, root / "run", steps=0)
    argv[argv.index("--qa-test-limit") + 1] = "60"  # enough questions for both groups
    cli(argv)
    return release, root / "run"


@pytest.mark.slow  # ~11 s: CI only, not the fast lane
def test_results_report_trained_and_heldout_entities(heldout_run):
    release, run = heldout_run
    held = set(json.loads((release / "release.json").read_text())["generator"]["heldout"]["entities"])
    results = json.loads((run / "results.json").read_text())
    assert validate(results) == []
    assert results["release"]["id"] == "geminon-tiny-2026q1-heldout-entity"
    groups = results["metrics"]["qa_public"]["by_heldout"]
    table = pd.read_parquet(run / "predictions.parquet")
    table = table[table["part"] == "qa_public"]
    is_held = table["id"].map(lambda i: int(i.split("-")[0]) in held)
    assert groups["heldout"]["n"] > 0 and groups["trained"]["n"] > 0
    for name, rows in (("heldout", table[is_held]), ("trained", table[~is_held])):
        assert groups[name]["n"] == len(rows)
        for matcher in ("contains", "mcq"):
            assert groups[name][matcher]["accuracy"] == pytest.approx(rows[matcher].mean())
            assert groups[name][matcher]["ci95"] is not None
        assert groups[name]["answer_nll"]["mean"] == pytest.approx(rows["answer_nll"].mean())
    # singleton questions are about sensitive entities, never held out
    singleton = results["metrics"]["qa_singleton"]
    assert singleton["by_heldout"]["heldout"]["n"] == 0
    assert singleton["by_heldout"]["trained"]["n"] == singleton["n"]


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_default_release_records_no_groups(finished_run):
    results = json.loads((finished_run / "results.json").read_text())
    assert all("by_heldout" not in m for m in results["metrics"].values())


@pytest.mark.slow  # ~10 s: CI only, not the fast lane
def test_report_shows_trained_and_heldout_entities(heldout_run, invoke, tmp_path, finished_run):
    _, run = heldout_run
    out = tmp_path / "report.json"
    done = invoke(["report", str(run), str(finished_run), "--json", str(out)])
    assert done.exit_code == 0, done.stderr
    assert "Trained-on vs held-out entities" in done.stdout and "held-out" in done.stdout
    rows = json.loads(out.read_text())["heldout"]
    results = json.loads((run / "results.json").read_text())
    groups = results["metrics"]["qa_public"]["by_heldout"]
    public = [r for r in rows if r["part"] == "qa_public"]
    assert [(r["run"], r["group"]) for r in public] == [(run.name, "trained-on"), (run.name, "held-out")]
    assert [r["contains"] for r in public] == [
        groups["trained"]["contains"]["accuracy"],
        groups["heldout"]["contains"]["accuracy"],
    ]
    assert {r["run"] for r in rows} == {run.name}  # the default release's run splits nothing
