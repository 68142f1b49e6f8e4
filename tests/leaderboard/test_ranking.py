"""The leaderboard's ranking logic on a results dataset made of real submitted records."""

import json

import pytest

from continuousbench import leaderboard as lb
from continuousbench.stats import mcnemar_exact, wilson_interval


@pytest.fixture(scope="module")
def subs(results_dataset):
    loaded, problems = lb.load_submissions(results_dataset)
    assert problems == []
    return loaded


def names(rows):
    return [r["submission"].rsplit("-", 1)[0] for r in rows]


def test_ranked_by_exact_match_with_intervals_and_separation(subs):
    assert lb.releases(subs) == ["geminon-tiny-2026q1"]
    metric, rows = lb.rank(subs, "geminon-tiny-2026q1")
    assert metric == "exact_match"
    assert names(rows) == ["syn", "dp-eps100", "dp-eps10", "real-run"] and [r["rank"] for r in rows] == [
        1,
        2,
        3,
        4,
    ]
    assert [r["accuracy"] for r in rows] == pytest.approx([1, 5 / 6, 2 / 6, 0])
    assert rows[0]["ci95"] == pytest.approx(list(wilson_interval(6, 6)))
    assert [r["epsilon"] for r in rows] == [lb.NON_PRIVATE, "100", "10", lb.NO_STATEMENT]
    # syn 6/6 vs dp-eps100 5/6 on the same questions: one discordant question, McNemar p = 1.
    assert rows[1]["separation"] == {"method": "mcnemar", "p_value": 1.0, "separable": False, "n": 6}
    assert rows[1]["vs_above"].startswith("≈ not separable (McNemar p = 1")
    # dp-eps10 was submitted without predictions: the interval rule, and the row says so.
    assert (
        rows[2]["separation"]["method"] == "interval overlap"
        and "no per-question outcomes" in rows[2]["vs_above"]
    )
    assert rows[0]["vs_above"] == "-"


def test_paired_separation_matches_mcnemar_on_the_outcomes(subs):
    by_name = {s.name.rsplit("-", 1)[0]: s.record for s in subs}
    sep = lb.separation(by_name["syn"], by_name["real-run"], "exact_match")
    assert sep["method"] == "mcnemar" and sep["p_value"] == pytest.approx(mcnemar_exact(6, 0))
    assert sep["separable"]  # 6 of 6 against 0 of 6: p = 0.031


def test_filters(subs):
    release = "geminon-tiny-2026q1"
    options = lb.choices(subs, release)
    assert options["epsilon"] == [lb.ALL, "10", "100", lb.NO_STATEMENT, lb.NON_PRIVATE]
    assert options["tuning"] == [lb.ALL, "lora"] and len(options["base_model"]) == 2
    assert names(lb.rank(subs, release, epsilon="10")[1]) == ["dp-eps10"]
    assert lb.rank(subs, release, tuning="full")[1] == []
    model = options["base_model"][1]
    assert len(lb.rank(subs, release, base_model=model)[1]) == 4


def test_table_and_plot(subs):
    metric, rows = lb.rank(subs, "geminon-tiny-2026q1")
    frame = lb.table(rows, metric)
    assert list(frame["#"]) == [1, 2, 3, 4] and frame["public EM %"].iloc[0] == "100.0"
    assert frame["95% CI"].iloc[3] == "[0.0, 39.0]"
    fig = lb.support_figure(rows, metric)
    assert len(fig.axes[0].lines) >= 4


def test_invalid_records_are_left_out_in_one_line_each(results_dataset, tmp_path):
    import shutil

    folder = tmp_path / "results"
    shutil.copytree(results_dataset, folder)
    bad = next(folder.rglob("syn-*.json"))
    record = json.loads(bad.read_text())
    record["metrics"]["qa_public"]["metrics"]["exact_match"]["ci95"] = [0.0, 0.1]
    bad.write_text(json.dumps(record))
    (folder / "geminon-tiny-2026q1" / "junk.json").write_text("{not json")
    subs, problems = lb.load_submissions(folder)
    assert len(subs) == 3 and len(problems) == 2
    assert any("does not contain the accuracy" in p for p in problems) and any(
        "not JSON" in p for p in problems
    )
    with pytest.raises(FileNotFoundError, match="neither a folder nor a Hub dataset repo"):
        lb.load_submissions(tmp_path / "missing" / "deeper")


def test_llm_match_rows_name_their_judge_and_flag_a_different_one(subs):
    import copy

    from continuousbench.judge import identity

    judged = []
    for sub, model in zip(subs[:3], ["big-judge", "big-judge", "cheap-judge"], strict=True):
        record = copy.deepcopy(sub.record)
        record["release"]["track"], record["matchers"] = "news", [*record["matchers"], "llm_match"]
        for m in record["metrics"].values():
            m["metrics"]["llm_match"] = m["metrics"]["exact_match"]
        for q in (record.get("questions") or {}).values():
            q["outcomes"]["llm_match"] = q["outcomes"]["exact_match"]
        calibration = {"accuracy": 0.95, "override": False}
        record["judge"] = {**identity(f"endpoint:http://127.0.0.1:1/v1#{model}"), "calibration": calibration}
        judged.append(lb.Submission(sub.name, record))
    metric, rows = lb.rank(judged, "geminon-tiny-2026q1")
    assert metric == "llm_match"
    assert {r["judge"].split(" ")[0] for r in rows} == {"big-judge", "cheap-judge"}
    assert all(r["judge"].endswith("(endpoint, prompt v2, calibration 95%)") for r in rows)
    flagged = [r for r in rows[1:] if not r["separation"]["same_judge"]]
    assert flagged and all("different judge: not comparable" in r["vs_above"] for r in flagged)
    assert all("different judge" not in r["vs_above"] for r in rows[1:] if r["separation"]["same_judge"])
    assert list(lb.table(rows, metric)["judge"]) == [r["judge"] for r in rows]
    assert "judge" not in lb.table(*reversed(lb.rank(subs, "geminon-tiny-2026q1"))).columns
