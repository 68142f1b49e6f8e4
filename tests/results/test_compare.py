"""`continuousbench compare`: paired differences of two real runs, checked against direct computations."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from continuousbench.results import compare
from continuousbench.stats import bootstrap_interval, newcombe_paired_interval


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_two_real_runs_through_the_command(finished_run, baseline_run, capsys):
    compare.cli([str(finished_run), str(baseline_run), "--json", "--resamples", "200"])
    result = json.loads(capsys.readouterr().out)
    assert result["release"] == "geminon-tiny-2026q1" and result["split"] == ["test"]
    assert result["questions"] == {"paired": 12, "only_a": 0, "only_b": 0}
    assert result["bootstrap"] == {
        "method": "percentile, paired",
        "resamples": 200,
        "seed": 0,
        "confidence": 0.95,
    }
    records = {r: json.loads((r / "results.json").read_text()) for r in (finished_run, baseline_run)}
    for part, strata in result["parts"].items():
        overall = strata["overall"]
        assert overall["n"] == 6
        for run, key in ((finished_run, "accuracy_a"), (baseline_run, "accuracy_b")):
            assert overall[key] == records[run]["metrics"][part]["metrics"]["exact_match"]["accuracy"]
        expected = {
            k: v["n"] for k, v in records[finished_run]["metrics"][part]["by_support"].items() if v["n"]
        }
        assert {k: v["n"] for k, v in strata["by_support"].items()} == expected
    compare.cli([str(finished_run), str(baseline_run), "--matcher", "contains"])
    table = capsys.readouterr().out
    assert "contains on geminon-tiny-2026q1" in table and "McNemar" in table


@pytest.fixture
def edited_pair(finished_run, tmp_path):
    """Two copies of a real run whose predictions the test rewrites."""
    copies = []
    for name in ("a", "b"):
        shutil.copytree(finished_run, tmp_path / name, ignore=shutil.ignore_patterns("model", "checkpoint-*"))
        copies.append(tmp_path / name)
    return copies


def _rewrite(run, **columns):
    table = pd.read_parquet(run / "predictions.parquet")
    for name, values in columns.items():
        table[name] = values
    table.to_parquet(run / "predictions.parquet", index=False)
    return table


def test_difference_interval_and_mcnemar_match_direct_computation(edited_pair):
    a_dir, b_dir = edited_pair
    a = np.array([1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0], bool)
    b = np.array([0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1], bool)
    table = _rewrite(a_dir, exact_match=a)
    _rewrite(b_dir, exact_match=b)
    result = compare.compare_runs(a_dir, b_dir, resamples=3000, seed=4)
    public = (table["part"] == "qa_public").to_numpy()
    d = result["parts"]["qa_public"]["overall"]
    x, y = a[public], b[public]
    assert d["difference"] == pytest.approx(x.mean() - y.mean())
    assert (d["a_only"], d["b_only"]) == (int((x & ~y).sum()), int((~x & y).sum()))
    assert d["p_value"] == pytest.approx(binomtest(d["a_only"], d["a_only"] + d["b_only"]).pvalue)
    assert d["bootstrap_ci95"] == list(
        bootstrap_interval(x.astype(float) - y.astype(float), resamples=3000, seed=4)
    )
    table2 = [int((x & y).sum()), d["a_only"], d["b_only"], int((~x & ~y).sum())]
    assert d["ci95"] == list(newcombe_paired_interval(*table2))


def test_different_question_sets_are_refused_unless_overlap(edited_pair, capsys):
    a_dir, b_dir = edited_pair
    table = pd.read_parquet(b_dir / "predictions.parquet")
    table.iloc[2:].to_parquet(b_dir / "predictions.parquet", index=False)
    with pytest.raises(ValueError, match=r"2 questions in A only.*--overlap"):
        compare.compare_runs(a_dir, b_dir, resamples=100)
    result = compare.compare_runs(a_dir, b_dir, resamples=100, overlap=True)
    assert result["questions"] == {"paired": 10, "only_a": 2, "only_b": 0}
    compare.cli([str(a_dir), str(b_dir), "--overlap", "--resamples", "100"])
    out = capsys.readouterr().out
    assert "A lost 2" in out and "B lost 0" in out


def _results(run):
    return json.loads((run / "results.json").read_text())


def _judged_by(run, model: str, verdicts) -> None:
    """Give a run llm_match verdicts and a judge entry naming ``model``."""
    from continuousbench.scoring.judge import identity

    _rewrite(run, llm_match=verdicts)
    record = json.loads((run / "results.json").read_text())
    record["judge"] = identity(f"endpoint:http://127.0.0.1:1/v1#{model}")
    (run / "results.json").write_text(json.dumps(record))


def test_llm_match_across_different_judges_is_refused_unless_flagged(edited_pair, capsys):
    from continuousbench.errors import UserError

    a_dir, b_dir = edited_pair
    n = len(pd.read_parquet(a_dir / "predictions.parquet"))
    _judged_by(a_dir, "big-judge", [True] * n)
    _judged_by(b_dir, "cheap-judge", [False] * n)
    with pytest.raises(
        UserError,
        match=r"judged by big-judge \(endpoint, prompt v2\), .* by cheap-judge .*"
        r"--different_judges",
    ):
        compare.compare_runs(a_dir, b_dir, matcher="llm_match", resamples=50)
    flagged = compare.compare_runs(a_dir, b_dir, matcher="llm_match", resamples=50, different_judges=True)
    assert flagged["judges"] == {
        "a": "big-judge (endpoint, prompt v2)",
        "b": "cheap-judge (endpoint, prompt v2)",
        "same": False,
    }
    compare.print_comparison(flagged)
    assert "DIFFERENT JUDGES" in capsys.readouterr().out
    _judged_by(b_dir, "big-judge", [False] * n)
    same = compare.compare_runs(a_dir, b_dir, matcher="llm_match", resamples=50)
    assert same["judges"]["same"] and same["parts"]["qa_public"]["overall"]["difference"] == 1.0
    assert "judges" not in compare.compare_runs(a_dir, b_dir, matcher="contains", resamples=50)


def _other_recipe(run, steps: int = 300) -> None:
    record = json.loads((run / "results.json").read_text())
    from continuousbench.results.canonical import digest

    settings = {**record["recipe"]["settings"], "max_steps": steps}
    record["recipe"].update(settings=settings, sha256=digest(settings))
    (run / "results.json").write_text(json.dumps(record))


def test_runs_of_different_recipes_are_refused_in_one_line_unless_flagged(edited_pair, invoke):
    a_dir, b_dir = edited_pair
    _other_recipe(b_dir)
    refused = invoke(["compare", a_dir, b_dir])
    assert refused.exit_code == 2 and len(refused.stderr.strip().splitlines()) == 1
    mine, theirs = (json.loads((d / "results.json").read_text())["recipe"]["sha256"][:8] for d in edited_pair)
    assert refused.stderr.startswith(
        f"error: {a_dir} was made with recipe non-canonical {mine}, {b_dir} with non-canonical {theirs} "
        "(max_steps 2 vs 300): "
    )
    assert "--different_recipes" in refused.stderr
    flagged = compare.compare_runs(a_dir, b_dir, resamples=50, different_recipes=True)
    assert flagged["recipes"]["same"] is False
    shown = invoke(["compare", a_dir, b_dir, "--different_recipes", "--resamples", "50"])
    assert shown.exit_code == 0 and "DIFFERENT RECIPES" in shown.stdout


def test_an_unjudged_run_is_named_as_the_cause_first(edited_pair):
    from continuousbench.errors import UserError

    a_dir, b_dir = edited_pair
    n = len(pd.read_parquet(a_dir / "predictions.parquet"))
    _judged_by(a_dir, "big-judge", [True] * n)
    with pytest.raises(UserError, match=rf"^{b_dir} was not judged \(evaluated without --judge\)"):
        compare.compare_runs(a_dir, b_dir, matcher="llm_match", resamples=50)
