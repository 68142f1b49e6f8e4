"""The leaderboard's ranking logic on a results dataset made of real submitted records."""

import json

import pytest

from continuousbench import leaderboard as lb
from continuousbench.stats import mcnemar_exact, wilson_interval


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
    assert options["generator"] == [lb.ALL, "geminon-tiny-2026q1"]  # the corpus folder, named by no synthesis
    assert options["tuning"] == [lb.ALL, "lora"] and len(options["base_model"]) == 2
    assert names(lb.rank(subs, release, epsilon="10")[1]) == ["dp-eps10"]
    assert lb.rank(subs, release, tuning="full")[1] == []
    model = options["base_model"][1]
    assert len(lb.rank(subs, release, base_model=model)[1]) == 4


def test_table_and_plot(subs):
    metric, rows = lb.rank(subs, "geminon-tiny-2026q1")
    frame = lb.table(rows, metric)
    assert list(frame["#"]) == [1, 2, 3, 4] and frame["EM %"].iloc[0] == 100.0
    assert frame["95% CI"].iloc[3] == "[0.0, 39.0]"
    urls = lb.links(rows[0]["sub"], "")
    assert urls["card"] == ""  # a local base model and no pushed model: no card link
    # a release built here and not on the Hub: its local manifest (served by the Space)
    assert urls["release"] == "/gradio_api/file=" + str(rows[0]["sub"].release_at)
    assert urls["release"].endswith("geminon-tiny-2026q1/release.json")
    fig = lb.support_figure(rows, metric)
    # one panel per kind, at most 4 series each, colours from the colour-blind-safe palette
    assert [ax.get_title() for ax in fig.axes] == list(dict.fromkeys(r["kind"] for r in rows))
    colours = {line.get_color() for ax in fig.axes for line in ax.lines}
    assert colours <= set(lb.PALETTE) and all(ax.get_legend() is not None for ax in fig.axes)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    for ax in fig.axes:  # each legend below its panel, never over the data
        assert ax.get_legend().get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y0


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

    from continuousbench.scoring.judge import identity

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


def _copy(results_dataset, tmp_path):
    import shutil

    folder = tmp_path / "results"
    shutil.copytree(results_dataset, folder)
    return folder


def test_ties_share_a_rank_and_duplicates_collapse(results_dataset, tmp_path):
    folder = _copy(results_dataset, tmp_path)
    syn = next(folder.rglob("syn-*.json"))
    (syn.parent / "zz-again-000000000000.json").write_bytes(syn.read_bytes())  # the same record twice
    record = json.loads(syn.read_text())
    record["corpus"]["fingerprint"] = "e" * 64  # another corpus with the same score
    (syn.parent / "syn2-000000000000.json").write_text(json.dumps(record))
    subs, problems = lb.load_submissions(folder)
    assert len(problems) == 1 and "the same record as" in problems[0] and "zz-again-" in problems[0]
    _, rows = lb.rank(subs, "geminon-tiny-2026q1")
    assert [r["rank"] for r in rows] == [1, 1, 3, 4, 5] and names(rows)[:2] == ["syn", "syn2"]


def test_the_same_corpus_submitted_twice_is_one_row(results_dataset, tmp_path):
    """Another seed, and the same corpus without its statement (a study that lost it): one row per
    (corpus fingerprint, recipe digest, release), the one that claims least among those that state
    something, whatever the scores; the others are left out naming it."""
    folder = _copy(results_dataset, tmp_path)
    dp = next(folder.rglob("dp-eps10-*.json"))
    record = json.loads(dp.read_text())
    stated = record["corpus"]["privacy"]
    for name, seed, privacy, correct in (
        ("dp-seed1", 1, stated, 6),
        ("dp-unstated", 0, None, 6),
        ("dp-eps20", 0, {**stated, "epsilon": 20.0}, 1),
    ):
        again = json.loads(json.dumps(record))
        again.update(seed=seed)
        again["training_args"]["seed"] = seed
        again["corpus"]["privacy"] = privacy
        acc = again["metrics"]["qa_public"]["metrics"]["exact_match"]
        acc.update(accuracy=correct / 6, ci95=list(wilson_interval(correct, 6)))
        (dp.parent / f"{name}-000000000000.json").write_text(json.dumps(again))
    subs, problems = lb.load_submissions(folder)
    kept = [s.path for s in subs if s.record["corpus"]["fingerprint"] == record["corpus"]["fingerprint"]]
    assert kept == ["geminon-tiny-2026q1/dp-eps20-000000000000.json"]  # the weakest claim stands
    ending = f"as {kept[0]}, which stands for it (one row per corpus)"
    assert len(problems) == 3 and all(p.endswith(ending) for p in problems)
    _, rows = lb.rank(subs, "geminon-tiny-2026q1")
    assert len(rows) == 4 and [r["epsilon"] for r in rows].count("20") == 1


def test_a_record_claiming_another_release_is_left_out(results_dataset, tmp_path):
    folder = _copy(results_dataset, tmp_path)
    syn = next(folder.rglob("syn-*.json"))
    record = json.loads(syn.read_text())
    record["release"]["id"] = "geminon-tiny-2099q4"
    syn.write_text(json.dumps(record))
    subs, problems = lb.load_submissions(folder)
    assert lb.releases(subs) == ["geminon-tiny-2026q1"]
    assert problems == [
        f"geminon-tiny-2026q1/{syn.name}: claims release geminon-tiny-2099q4 but sits in "
        "folder geminon-tiny-2026q1"
    ]


def test_left_out_names_are_escaped(results_dataset, tmp_path):
    folder = _copy(results_dataset, tmp_path)
    (folder / "geminon-tiny-2026q1" / "x`<img src=x onerror=alert(1)>`.json").write_text("{bad")
    _, problems = lb.load_submissions(folder)
    page = lb.left_out_html(problems)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_epsilon_buckets_group_achieved_budgets_by_the_requested_one(subs):
    record = json.loads(json.dumps(next(s.record for s in subs if s.name.startswith("dp-eps10-"))))
    for achieved, bucket, shown in (
        (9.99998, "10", "10 (achieved 9.99998)"),
        (10.0, "10", "10"),
        (0.4987, "0.5", "0.5 (achieved 0.4987)"),
        (10.04, "11", "11 (achieved 10.04)"),  # never rounded down into a bucket it does not meet
    ):
        record["corpus"]["privacy"]["epsilon"] = achieved
        assert (lb.epsilon_bucket(record), lb.epsilon_label(record)) == (bucket, shown)
    record["corpus"]["privacy"].update(epsilon=7.2, target_epsilon=8)
    assert lb.epsilon_bucket(record) == "8"


def test_a_record_above_its_requested_epsilon_is_ranked_in_the_bucket_it_achieves(subs, edited):
    """A sweep made before --epsilon was its total: it asked for 10 per run and its statement achieves
    26.41 composed; it is ranked with 27, never inside the 10 table."""
    dp = next(s for s in subs if s.name.startswith("dp-eps10-"))
    privacy = {**dp.record["corpus"]["privacy"], "epsilon": 26.41, "target_epsilon": 10}
    sweep = edited(dp, corpus={**dp.record["corpus"], "privacy": privacy})
    mixed = [sweep if s is dp else s for s in subs]
    assert lb.epsilon_bucket(sweep.record) == "27"
    assert lb.epsilon_label(sweep.record) == "27 (achieved 26.41, over the 10 asked for)"
    assert lb.rank(mixed, "geminon-tiny-2026q1", epsilon="10")[1] == []
    assert [r["submission"] for r in lb.rank(mixed, "geminon-tiny-2026q1", epsilon="27")[1]] == [dp.name]
    assert "27" in lb.choices(mixed, "geminon-tiny-2026q1")["epsilon"]


def test_a_statement_whose_delta_guarantees_nothing_has_no_epsilon_bucket(subs, edited):
    dp = next(s for s in subs if s.name.startswith("dp-eps10-"))
    documents = dp.record["corpus"]["documents"]
    given = "--corpus_privacy /x.json"
    cases = [(0.5, given, lb.NOT_DP), (1 / documents, given, lb.NOT_DP), (0.9 / documents, given, "10")]
    for delta, source, bucket in [*cases, (0.9 / documents, "privacy.json", "10")]:
        privacy = {**dp.record["corpus"]["privacy"], "delta": delta}
        corpus = {**dp.record["corpus"], "privacy": privacy, "privacy_source": source}
        record = edited(dp, corpus=corpus).record
        assert lb.epsilon_bucket(record) == bucket and lb.epsilon_label(record) == bucket
    # a generator's own statement is about its private records (dataset_size: 100), not the larger
    # synthetic corpus sampled from it; a participant's file is held to the corpus it is submitted with
    privacy = {**dp.record["corpus"]["privacy"], "delta": 1 / 200, "dataset_size": 100}
    assert documents > 200
    for source, bucket in (("privacy.json", "10"), ("--corpus_privacy /x.json", lb.NOT_DP)):
        own = edited(dp, corpus={**dp.record["corpus"], "privacy": privacy, "privacy_source": source})
        assert lb.epsilon_bucket(own.record) == bucket


def test_the_card_link_is_the_pushed_models_else_the_base_models(subs, edited):
    commit = "https://huggingface.co/me/tiny-eval/commit/" + "a" * 40
    pushed = edited(subs[0], hub_commit=commit)
    assert lb.card_url(pushed.record) == "https://huggingface.co/me/tiny-eval/blob/" + "a" * 40 + "/README.md"
    hub_base = edited(subs[0], base_model="org/base-1b")
    assert lb.card_url(hub_base.record) == "https://huggingface.co/org/base-1b"
    named = edited(subs[0], base_model="org/base-1b", model_repo="me/by-hand")  # submit --model_repo
    assert lb.card_url(named.record) == "https://huggingface.co/me/by-hand"
    for elsewhere in ("https://evil.example/me/x/commit/" + "a" * 40, "javascript:alert(1)"):
        assert lb.card_url(edited(subs[0], base_model="org/base-1b", hub_commit=elsewhere).record) == (
            "https://huggingface.co/org/base-1b"
        )


def test_canonical_runs_make_the_main_table_and_the_others_say_why(subs, edited, canonical_recipe):
    canon = edited(subs[0], recipe=canonical_recipe)
    flagged = {**subs[1].record["recipe"], "name": "geminon-tiny-demo", "canonical": True}
    flagged["why_not_canonical"] = None
    others = [edited(subs[1], recipe=flagged), *subs[2:]]  # a flag is not trusted: recomputed
    mixed = [canon, *others]
    _, main = lb.rank(mixed, "geminon-tiny-2026q1", recipes=lb.CANONICAL)
    _, apart = lb.rank(mixed, "geminon-tiny-2026q1", recipes=lb.OTHER)
    assert [r["submission"] for r in main] == [canon.name] and main[0]["recipe"] == "geminon-tiny-demo"
    assert main[0]["why_apart"] is None
    assert len(apart) == 3 and [r["rank"] for r in apart][0] == 1  # ranked among themselves
    reasons = ["no recipe file (--config)", "not one of the canonical recipes"]
    assert sorted({r["why_apart"] for r in apart}) == reasons
    assert "not canonical" in lb.table(apart, "exact_match").columns
    assert "not canonical" not in lb.table(main, "exact_match").columns


def test_a_record_whose_settings_no_longer_match_its_canonical_digest_is_listed_apart(
    subs, edited, canonical_recipe, monkeypatch
):
    """Canonical is recomputed: settings edited after the run, while the record still claims the canonical
    digest (and flag), do not hash to it; settings of a recipe version the list has since superseded
    are apart with that version's dates."""
    from continuousbench.leaderboard.ranking import why_apart
    from continuousbench.results import canonical

    changed = {**canonical_recipe["settings"], "max_steps": 1}
    claimed = edited(subs[0], recipe={**canonical_recipe, "settings": changed})
    assert claimed.record["recipe"]["canonical"] and not lb.is_canonical(claimed.record)
    assert why_apart(claimed.record) == "its recipe settings do not hash to the recipe digest it records"
    _, main = lb.rank([claimed, *subs[1:]], "geminon-tiny-2026q1", recipes=lb.CANONICAL)
    assert main == []
    older = {**canonical_recipe, "settings": changed, "sha256": canonical.digest(changed)}
    entry = {"name": "geminon-tiny-demo", "sha256": canonical.digest(changed)}
    entry.update(since="2026-01-02", until="2026-04-01")
    published = canonical.published()
    monkeypatch.setattr(canonical, "published", lambda: (*published, entry))
    superseded = edited(subs[0], recipe=older)
    assert not lb.is_canonical(superseded.record) and why_apart(superseded.record) == (
        "made with geminon-tiny-demo as it was canonical from 2026-01-02 until 2026-04-01 (superseded)"
    )


def test_rows_name_the_method_and_the_run_folder(subs, edited):
    _, rows = lb.rank(subs, "geminon-tiny-2026q1")
    by_name = {r["submission"].rsplit("-", 1)[0]: r for r in rows}
    assert by_name["real-run"]["method"] == "train on real"
    assert by_name["syn"]["run"].endswith("/syn")  # the run folder and its parent, whatever --name said
    dp_model = edited(subs[0], model_privacy={"kind": "dp-model"})
    untrained = edited(subs[0], steps=0)
    generation = {"sampling": {"generator": "g1"}}
    made = edited(subs[0], corpus={**subs[0].record["corpus"], "generation": generation})
    assert lb.method_label(dp_model.record) == "direct DP fine-tuning (DP model)"
    assert lb.method_label(untrained.record) == "no training (base model)"
    assert lb.method_label(made.record) == "synthetic (g1)"


def test_a_record_for_an_unknown_release_is_left_out_and_counted(results_dataset, tmp_path):
    import shutil

    results = tmp_path / "results"
    shutil.copytree(results_dataset, results)
    syn = next(results.rglob("syn-*.json"))
    record = json.loads(syn.read_text())
    record["release"]["id"] = "geminon-tiny-2099q4"
    (results / "geminon-tiny-2099q4").mkdir()
    (results / "geminon-tiny-2099q4" / syn.name).write_text(json.dumps(record))
    subs, problems = lb.load_submissions(results)
    assert lb.releases(subs) == ["geminon-tiny-2026q1"]  # the future quarter is not the front page
    assert len(problems) == 1 and "release geminon-tiny-2099q4 is not known: not under" in problems[0]
    assert "Left out (1 record):" in lb.left_out_html(problems)


def test_the_release_link_is_the_hub_page_when_the_release_is_a_tag_there(subs, tiny_release, monkeypatch):
    from types import SimpleNamespace

    from fake_hub import patch_hub

    calls = []
    refs = SimpleNamespace(tags=[SimpleNamespace(name="geminon-tiny-2026q1")])
    patch_hub(monkeypatch, {"list_repo_refs": refs}, lambda name, self, args, kwargs: calls.append(kwargs))
    index = lb.ReleaseIndex(root=tiny_release.parent, hub_repo="org/releases")
    at, why = index.find(subs[0].record["release"])
    tag = "geminon-tiny-2026q1"
    assert why is None and at == f"https://huggingface.co/datasets/org/releases/tree/{tag}/{tag}"
    index.find(subs[0].record["release"])
    assert calls == [{"repo_type": "dataset"}]  # the tags are asked once


def test_mcq_columns_show_only_when_a_record_carries_ranked_choice(subs, edited):
    from continuousbench.leaderboard import page
    from continuousbench.leaderboard.export import as_data

    metric, rows = lb.rank(subs, "geminon-tiny-2026q1")
    by_name = {r["submission"].rsplit("-", 1)[0]: r for r in rows}
    real = by_name["real-run"]["record"]["metrics"]["qa_public"]["metrics"]["mcq"]  # the harness's own
    assert by_name["real-run"]["mcq"] == real["accuracy"] and by_name["real-run"]["mcq_ci95"] == real["ci95"]
    assert by_name["syn"]["mcq"] is None  # rescored without ranked choice
    frame = lb.table(rows, metric)
    shown = dict(zip(frame["submission"], frame["MCQ %"], strict=True))
    assert shown[by_name["real-run"]["submission"]] == round(100 * real["accuracy"], 1)
    assert frame["MCQ 95% CI"].tolist().count("-") == 3
    assert '<button type="button" class="cb-sort">MCQ %' in page.table_html(rows, metric, "")
    data = {"releases": {"r": {"metric": metric, "canonical": rows, "other": []}}, "left_out": []}
    exported = as_data(data)
    assert exported["releases"]["r"]["canonical"][-1]["mcq"] == by_name[names(rows)[-1]]["mcq"]

    def without_mcq(sub):
        metrics = json.loads(json.dumps(sub.record["metrics"]))
        for part in metrics.values():
            part["metrics"].pop("mcq", None)
        return edited(sub, metrics=metrics)

    _, plain = lb.rank([without_mcq(s) for s in subs], "geminon-tiny-2026q1")
    assert not [c for c in lb.table(plain, metric).columns if "MCQ" in c]
    assert "MCQ" not in page.table_html(plain, metric, "")


def test_news_ranks_on_its_canonical_questions_with_their_own_interval(subs, edited):
    """A release whose manifest names a canonical evaluation (NEWS: support >= 200; here 66 of the tiny
    release's 60-81) is ranked on those questions: accuracy, Wilson interval and n are the subset's, and
    the paired test compares the same questions. Here the order flips against all questions."""
    syn = next(s for s in subs if s.name.startswith("syn-"))
    assert len(syn.record["questions"]["qa_public"]["support_counts"]) == 6

    def news(name: str, bits: str):
        record = json.loads(json.dumps(syn.record))
        record["release"]["track"] = "news"
        record["questions"]["qa_public"]["support_counts"] = [78, 81, 70, 62, 66, 60]  # canonical: 0, 1, 2, 4
        record["questions"]["qa_public"]["outcomes"]["exact_match"] = bits
        right = bits.count("1")
        record["metrics"]["qa_public"]["metrics"]["exact_match"].update(
            accuracy=right / 6, ci95=list(wilson_interval(right, 6))
        )
        evaluation = {"part": "qa_public", "split": "test", "primary_metric": "exact_match"}
        record["canonical"] = {**evaluation, "min_support": 66, "n": 4, "accuracy": None}
        return lb.Submission(name, record, f"r/{name}.json")

    late, early = news("late", "000111"), news("early", "110000")  # all questions: 3/6 and 2/6
    _, rows = lb.rank([late, early], "geminon-tiny-2026q1")
    assert [r["submission"] for r in rows] == ["early", "late"]  # canonical subset: 2/4 and 1/4
    assert [r["accuracy"] for r in rows] == [0.5, 0.25] and [r["questions"] for r in rows] == [4, 4]
    assert rows[0]["ci95"] == pytest.approx(list(wilson_interval(2, 4)))
    assert rows[1]["separation"]["n"] == 4  # McNemar on the 4 canonical questions
    plain = [edited(s, canonical=None) for s in (late, early)]  # no canonical evaluation: all questions
    assert [r["submission"] for r in lb.rank(plain, "geminon-tiny-2026q1")[1]] == ["late", "early"]
    # without per-question outcomes: the stratum's figures when the release's threshold is a stratum,
    # else the record's canonical number on its own n
    stratum = edited(early, questions=None)
    stratum.record["metrics"]["qa_public"]["by_support"][">=66"] = {
        "n": 4,
        "exact_match": {"accuracy": 0.5, "ci95": list(wilson_interval(2, 4)), "count": 4},
    }
    stated = edited(late, questions=None)
    stated.record["canonical"].update(accuracy=0.25)
    _, rows = lb.rank([stated, stratum], "geminon-tiny-2026q1")
    assert [(r["submission"], r["accuracy"], r["questions"]) for r in rows] == [
        ("early", 0.5, 4),
        ("late", 0.25, 4),
    ]
    assert rows[1]["ci95"] == pytest.approx(list(wilson_interval(1, 4)))
