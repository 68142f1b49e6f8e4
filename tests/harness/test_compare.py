"""`continuousbench compare`: paired differences of two real runs, checked against direct computations."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from continuousbench.harness import compare
from continuousbench.stats import bootstrap_interval


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
    assert d["ci95"] == list(bootstrap_interval(x.astype(float) - y.astype(float), resamples=3000, seed=4))


def test_questions_answered_by_one_run_only_are_left_out(edited_pair):
    a_dir, b_dir = edited_pair
    table = pd.read_parquet(b_dir / "predictions.parquet")
    table.iloc[2:].to_parquet(b_dir / "predictions.parquet", index=False)
    result = compare.compare_runs(a_dir, b_dir, resamples=100)
    assert result["questions"] == {"paired": 10, "only_a": 2, "only_b": 0}


def _results(run):
    return json.loads((run / "results.json").read_text())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("release", "b on geminon-tiny-2026q2 ("),
        ("split", "b on ['validation']: compare runs scored on the same split"),
        ("matcher", "was not scored with llm_match"),
        ("predictions", "has no predictions.parquet"),
        ("results", "has no results.json"),
    ],
)
def test_unlike_runs_are_refused_in_one_line(edited_pair, capsys, edit, message):
    a_dir, b_dir = edited_pair
    argv = [str(a_dir), str(b_dir)]
    if edit == "release":
        record = _results(b_dir)
        record["release"]["id"] = "geminon-tiny-2026q2"
        (b_dir / "results.json").write_text(json.dumps(record))
    elif edit == "split":
        _rewrite(b_dir, split="validation")
    elif edit == "matcher":
        argv += ["--matcher", "llm_match"]
    else:
        (b_dir / f"{edit}.{'parquet' if edit == 'predictions' else 'json'}").unlink()
    with pytest.raises(SystemExit) as info:
        compare.cli(argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    assert message in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["only-one"], "compare takes two run folders, got 1"),
        (["a", "b", "--resamples", "0"], "out of range"),
    ],
)
def test_bad_arguments_are_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        compare.cli(argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1 and message in err
