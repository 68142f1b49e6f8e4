"""`continuousbench report`: intervals per run, mean ± sd over seeds, plots with error bars, safe outputs."""

import copy
import json

import pytest

from continuousbench.results import report
from continuousbench.stats import mean_sd


def _tree(folder):
    return {p.relative_to(folder): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_runs_differing_only_by_seed_form_a_group(finished_run, seed_twin, baseline_run, tmp_path, capsys):
    before = {run: _tree(run) for run in (finished_run, seed_twin, baseline_run)}
    support, bars, rows = tmp_path / "support.png", tmp_path / "bars.png", tmp_path / "rows.json"
    argv = [str(finished_run), str(seed_twin), str(baseline_run), "--support_plot", str(support)]
    result = report.cli([*argv, "--plot", str(bars), "--json", str(rows)])
    groups = result["seed_groups"]
    assert [len(g["runs"]) for g in groups] == [2, 1] and groups[0]["seeds"] == [0, 1]
    assert groups[1]["runs"] == ["no-training"]
    records = [json.loads((r / "results.json").read_text()) for r in (finished_run, seed_twin)]
    em = [r["metrics"]["qa_public"]["metrics"]["exact_match"]["accuracy"] for r in records]
    mean, sd = mean_sd(em)
    assert groups[0]["metrics"]["qa_public/exact_match"] == {"mean": mean, "sd": sd, "runs": 2}
    out = capsys.readouterr().out
    assert "mean ± sd, 2 seeds" in out and "Wilson 95% interval" in out
    ci = records[0]["metrics"]["qa_public"]["metrics"]["exact_match"]["ci95"]
    assert f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" in out
    for png in (support, bars):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(rows.read_text())["seed_groups"][0]["runs"] == groups[0]["runs"]
    assert {run: _tree(run) for run in before} == before  # nothing written into a run folder


def test_mean_and_sd_over_seeds_per_metric_and_bucket(finished_run):
    base = json.loads((finished_run / "results.json").read_text())
    runs = {}
    for seed, acc in ((0, 0.2), (1, 0.4), (2, 0.9)):
        r = copy.deepcopy(base)
        r["seed"] = r["training_args"]["seed"] = seed
        r["metrics"]["qa_public"]["metrics"]["contains"]["accuracy"] = acc
        r["metrics"]["qa_public"]["buckets"][-1]["n"] = 5
        r["metrics"]["qa_public"]["buckets"][-1]["mean_support"] = 2000.0 + seed
        r["metrics"]["qa_public"]["buckets"][-1]["contains"] = {
            "accuracy": acc / 2,
            "ci95": [0, 1],
            "count": 5,
        }
        runs[f"syn-seed{seed}"] = r
    other = copy.deepcopy(base)
    other["training_args"]["learning_rate"] = other["recipe"]["settings"]["learning_rate"] = 0.5  # not a twin
    runs["syn-lr"] = other
    groups = report.seed_groups(runs)
    assert [g["runs"] for g in groups] == [["syn-seed0", "syn-seed1", "syn-seed2"], ["syn-lr"]]
    assert groups[0]["label"] == "syn-seed"
    stats = groups[0]["metrics"]["qa_public/contains"]
    assert (stats["mean"], stats["sd"]) == pytest.approx(mean_sd([0.2, 0.4, 0.9]))
    last = [b for b in groups[0]["buckets"]["qa_public"]["contains"] if b["high"] is None][0]
    assert (last["mean"], last["sd"]) == pytest.approx(mean_sd([0.1, 0.2, 0.45]))
    assert last["mean_support"] == pytest.approx(2001.0) and last["runs"] == 3


@pytest.mark.parametrize("where", ["inside", "exists"])
def test_outputs_never_land_in_a_run_folder_nor_replace_a_file_silently(
    finished_run, tmp_path, capsys, where
):
    target = finished_run / "report.png" if where == "inside" else tmp_path / "old.png"
    if where == "exists":
        target.write_bytes(b"keep")
    with pytest.raises(SystemExit) as info:
        report.cli([str(finished_run), "--plot", str(target)])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1
    if where == "inside":
        assert "an input of this command" in err and not target.exists()
    else:
        assert "pass --overwrite" in err and target.read_bytes() == b"keep"
        report.cli([str(finished_run), "--plot", str(target), "--overwrite"])
        assert target.read_bytes()[:4] == b"\x89PNG"


def test_rows_carry_kind_and_epsilon(finished_run):
    from continuousbench.results import report
    from continuousbench.results.record import load

    record = load(finished_run)
    record["corpus"]["privacy"] = {"private": True, "epsilon": 9.99361, "delta": 1e-6}
    dp = json.loads(json.dumps(record))
    record["corpus"]["privacy"] = None
    rows = report.comparison_rows({"dp": dp, "real": record})
    assert [(r["kind"], r["epsilon"]) for r in rows] == [
        ("DP data", "10 (achieved 9.99361)"),
        ("corpus", "no statement"),
    ]


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_named_rows_with_mauve_comparisons_and_the_four_findings(
    finished_run, baseline_run, tmp_path, capsys
):
    """What a study's report job passes: NAME=FOLDER rows, MAUVE files, a paired comparison and the
    findings' roles; the findings are written as data and printed under the table."""
    from continuousbench.results.compare import compare_runs

    record = json.loads((finished_run / "results.json").read_text())
    release = record["corpus"]["path"]  # the real corpus: the MAUVE reference
    paired = compare_runs(finished_run, baseline_run)
    (tmp_path / "cmp.json").write_text(json.dumps(paired))
    files = {"ref": (0.2, 0.95, release), "cand": (0.5, None, "other")}
    for name, (mean, ceiling, reference) in files.items():
        scores = {
            "candidate": "synthetic/x",
            "reference": reference,
            "candidate_vs_reference": {"mean": mean, "std": 0.01},
        }
        if ceiling:
            scores["reference_disjoint"] = {"mean": ceiling, "std": 0.0}
        (tmp_path / f"{name}.json").write_text(json.dumps(scores))
    findings = tmp_path / "findings.json"
    result = report.cli(
        [
            f"trained={finished_run}",
            f"base={baseline_run}",
            "--mauve",
            f"trained={tmp_path / 'ref.json'}",
            f"base={tmp_path / 'cand.json'}",
            "--compare",
            str(tmp_path / "cmp.json"),
            "--findings",
            str(findings),
            "--finding_rows",
            "none=base",
            "real=trained",
            "syn=trained",
            "dp_syn=base",
            "dp_syn_mauve=base",
        ]
    )
    rows = {r["run"]: r for r in result["runs"]}
    # the run trained on the reference corpus gets its disjoint halves (the ceiling), the other its score
    assert (rows["trained"]["mauve"], rows["base"]["mauve"]) == (0.95, 0.5)
    checked = json.loads(findings.read_text())
    assert checked == result["findings"] and len(checked) == 4
    em = {n: r["qa_public/exact_match"] for n, r in rows.items()}
    assert checked[3]["holds"] == (0.5 >= 0.95 / 2 and em["base"] < em["trained"] / 4)
    assert checked[0]["holds"] == (em["trained"] >= 0.5 and em["base"] <= 0.05)
    assert f"McNemar p = {paired['parts']['qa_public']['overall']['p_value']:.2g}" in checked[2]["evidence"]
    out = capsys.readouterr().out
    assert "MAUVE" in out and "0.950 ± 0.000" in out and "trained (A) vs base (B): exact_match" in out
    assert out.count("hold") >= 4 and all(f["finding"] in out for f in checked)


def _judged(record: dict, model: str, *, override: bool = False) -> dict:
    from continuousbench.scoring.judge import identity

    record = copy.deepcopy(record)
    record["matchers"] = [*record["matchers"], "llm_match"]
    judge = identity(f"endpoint:http://127.0.0.1:1/v1#{model}")
    judge["calibration"] = {"accuracy": 0.6 if override else 0.95, "override": override}
    record["judge"] = judge
    return record


def test_llm_columns_of_different_or_overridden_judges_are_labelled(finished_run, capsys):
    from continuousbench.results.record import load

    base = load(finished_run)
    same = {"a": _judged(base, "big"), "b": _judged(base, "big")}
    assert report.judge_warning(same) is None
    mixed = {"a": _judged(base, "big"), "b": _judged(base, "cheap"), "c": _judged(base, "big", override=True)}
    warning = report.judge_warning(mixed)
    assert warning.startswith("DIFFERENT JUDGES (a: big (endpoint, prompt v")
    assert warning.endswith("CALIBRATION OVERRIDDEN for c: their LLM verdicts are not trusted")
    rows = report.comparison_rows(mixed)
    assert [r["judge"].split(" ")[0] for r in rows] == ["big", "cheap", "big"]
    report.print_table(rows, console=report.wide_console(), warning=warning)
    out = capsys.readouterr().out
    assert "DIFFERENT JUDGES" in out and "OVERRIDDEN" in out and "judge" in out


def test_the_recipe_column_names_the_recipe(finished_run, canonical_recipe, capsys):
    from continuousbench.results.record import load

    record = load(finished_run)
    canonical = copy.deepcopy(record)
    canonical["recipe"] = canonical_recipe
    flagged = copy.deepcopy(record)  # a flag is not a recipe: the name is recomputed from the settings
    flagged["recipe"].update(name="geminon-tiny-demo", canonical=True, why_not_canonical=None)
    rows = report.comparison_rows({"mine": record, "canon": canonical, "flagged": flagged})
    mine = f"non-canonical {record['recipe']['sha256'][:8]}"
    assert [r["recipe"] for r in rows] == [mine, "geminon-tiny-demo", mine]
    report.print_table(rows, console=report.wide_console(240))
    assert "geminon-tiny-demo" in capsys.readouterr().out
