"""facts, qa, filter, support: the rules checked by code, malformed answers counted, endpoints."""

from __future__ import annotations

import json
import re
from collections import Counter

import pyarrow.parquet as pq
import pytest

from continuousbench import llm
from continuousbench.errors import UserError
from continuousbench.news import facts, qa
from continuousbench.news.models import ModelArguments
from continuousbench.news.offline import answer
from continuousbench.news.shards import read_rows


def stats(folder) -> dict:
    return json.loads((folder / "stats.json").read_text())


def texts_by_cluster(clustered) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for row in read_rows(clustered).to_pylist():
        out.setdefault(row["cluster"], {})[row["id"]] = row["text"]
    return out


def test_facts_are_stated_in_three_reports_of_their_cluster(model_stages, clustered):
    rows = read_rows(model_stages["facts"]).to_pylist()
    members = texts_by_cluster(clustered)
    assert rows and {r["cluster"] for r in rows} <= set(members)
    for r in rows:
        assert len(set(r["article_ids"])) >= 3 and set(r["article_ids"]) <= set(r["shown_ids"])
        assert set(r["shown_ids"]) <= set(members[r["cluster"]]) and r["fact"] and r["anchor"]
    found = stats(model_stages["facts"])
    assert found["dropped_fact_missing_text"] > 0 and found["dropped_not_an_object"] > 0


def test_answers_are_verbatim_in_three_articles(model_stages, clustered):
    members = texts_by_cluster(clustered)
    rows = read_rows(model_stages["qa"]).to_pylist()
    assert rows
    for r in rows:
        pattern = re.compile(rf"(?<!\w){re.escape(r['answer'].lower())}(?!\w)")
        holding = sorted(i for i, t in members[r["cluster"]].items() if pattern.search(t.lower()))
        assert holding == sorted(r["verbatim_ids"]) and r["verbatim_count"] == len(holding) >= 3
    assert stats(model_stages["qa"])["dropped_missing_field"] > 0
    # (whether the offline model happens to give away an answer depends on the clusters it is shown; the
    # rule itself is checked on a fixed reply in test_verbatim_rule_is_code_not_model)
    assert not any(re.search(rf"(?i)(?<!\w){re.escape(r['answer'])}(?!\w)", r["question"]) for r in rows)


def test_verbatim_rule_is_code_not_model(tmp_path):
    folded = [
        ("a", "the referee was tomasz brenner."),
        ("b", "tomasz brenner refereed"),
        ("c", "brenner, tomasz"),
        ("d", "tomasz brennerson"),
        ("e", "tomasz brenner"),
    ]
    reply = json.dumps(
        [
            {
                "question": "Who refereed the Northern Cup final on January 18, 2026?",
                "answer": "Tomasz Brenner",
                "fact": 1,
            },
            {"question": "Who scored?", "answer": "Brenner, Tomasz", "fact": 1},
            {"question": "Did Tomasz Brenner referee the final?", "answer": "Tomasz Brenner", "fact": 1},
        ]
    )
    args = qa.QAArguments(facts="", articles="", output="", min_reports=3)
    rows, counts = qa.read_questions(7, reply, ["a fact"], folded, args)
    assert [r["answer"] for r in rows] == ["Tomasz Brenner"] and rows[0]["verbatim_ids"] == ["a", "b", "e"]
    assert counts["dropped_answer_not_verbatim"] == 1  # "Brenner, Tomasz" is in one article only
    assert counts["dropped_answer_in_question"] == 1  # checked in code, not only asked of the model


def test_closed_book_correct_and_ambiguous_questions_are_dropped(model_stages):
    verdicts = pq.read_table(model_stages["filter"] / "verdicts.parquet").to_pylist()
    kept = {r["id"] for r in read_rows(model_stages["filter"]).to_pylist()}
    assert len(verdicts) == len(read_rows(model_stages["qa"]))
    for v in verdicts:
        assert (v["id"] in kept) == (v["closed_book_correct"] is False and v["standalone"] is True)
        assert (v["reason"] is None) == (v["id"] in kept)
    found = stats(model_stages["filter"])
    reasons = Counter(v["reason"] for v in verdicts if v["reason"])
    assert all(found[k] == n for k, n in reasons.items())
    assert found["output"] == len(kept) == found["input"] - sum(reasons.values())


def test_support_counts_are_the_supporting_articles(model_stages, clustered):
    rows = read_rows(model_stages["support"]).to_pylist()
    openbook = pq.read_table(model_stages["support"] / "openbook.parquet").to_pylist()
    texts = {r["id"]: r["text"] for r in read_rows(clustered).to_pylist()}
    assert rows and any(r["support_count"] > 0 for r in rows)
    for r in rows:
        read = [o for o in openbook if o["question_id"] == r["id"]]
        assert r["support_count"] == len(r["supporting_ids"]) == sum(o["correct"] is True for o in read)
        assert r["candidates"] == len(read) and set(r["supporting_ids"]) <= {o["article_id"] for o in read}
        for article in r["supporting_ids"]:  # the offline reader answers with a span of the article
            assert r["answer"].lower() in texts[article].lower()
        assert not r["closed_book_correct"]
    assert stats(model_stages["support"])["prompts"] == len(openbook)


def test_malformed_and_empty_answers_are_counted(clustered, tmp_path):
    replies = iter(["", "no JSON here, sorry", '[{"fact": "x", "anchor": "y", "articles": [1]}', "[]"] * 10)
    llm.OFFLINE["news-broken"] = lambda prompt, **s: next(replies)
    with pytest.raises(
        UserError,
        match=r"news facts: 4 of 4 answers \(100%\) from offline:news-broken were "
        r"unusable \(.*above --max_dropped 0.5\)",
    ) as refused:  # nothing to pass on
        facts.main(
            facts.FactsArguments(input=str(clustered), output=str(tmp_path)),
            ModelArguments(llm="offline:news-broken"),
        )
    assert "dropped_malformed_output 1" in str(refused.value) and not (tmp_path / "data").exists()
    found = json.loads((tmp_path / ".news-facts-work" / "stats.json").read_text())  # kept, with the counts
    assert found["dropped_empty_response"] == 1 and found["dropped_malformed_output"] == 1
    assert found["dropped_fact_under_min_reports"] == 1 and found["clusters_without_facts"] == 4
    assert found["output"] == 0
    llm.OFFLINE["news-broken"] = lambda prompt, **s: next(replies)
    with pytest.raises(ValueError, match="news facts kept no rows of 4"):  # allowed, but still nothing kept
        facts.main(
            facts.FactsArguments(input=str(clustered), output=str(tmp_path / "2")),
            ModelArguments(llm="offline:news-broken", max_dropped=1.0),
        )


def test_endpoint_backend_gives_the_offline_answers(clustered, model_stages, tmp_path, fake_openai_server):
    from fake_endpoint import prompt_of

    server = fake_openai_server(reply=lambda body: answer(prompt_of(body)))
    model = ModelArguments(llm=f"endpoint:{server.url}#fake", max_in_flight=4)
    out = facts.main(facts.FactsArguments(input=str(clustered), output=str(tmp_path / "f")), model)
    assert read_rows(out).to_pylist() == read_rows(model_stages["facts"]).to_pylist()
    assert sum("chat" in str(r) or "messages" in r for r in server.requests) >= 4
    assert json.loads((out / "stats.json").read_text())["structured_output"] == "json_schema"  # recorded


def test_a_server_dying_mid_stage_resumes_without_paying_twice(
    clustered, fake_openai_server, tmp_path, no_backoff
):
    from fake_endpoint import prompt_of

    server = fake_openai_server(reply=lambda body: answer(prompt_of(body)))
    server.fail_after = 3  # GET /models, then two answers; then HTTP 500 for good
    args = facts.FactsArguments(input=str(clustered), output=str(tmp_path), chunk=1)
    model = ModelArguments(llm=f"endpoint:{server.url}#fake", max_in_flight=1, max_dropped=1.0)
    with pytest.raises(llm.GenerationError, match=r"after 4 tries \(HTTP 503: try again\)"):
        facts.main(args, model)
    answered = [r for r in server.requests[:3] if "messages" in r]
    server.fail_after, before = None, len(server.requests)  # the server is back
    facts.main(facts.FactsArguments(input=str(clustered), output=str(tmp_path), chunk=1, resume=True), model)
    asked_again = [prompt_of(r) for r in server.requests[before:] if "messages" in r]
    assert len(answered) == 2 and not {prompt_of(r) for r in answered} & set(asked_again)


def test_answers_cut_at_their_budget_are_reported_as_truncated(clustered, tmp_path, fake_openai_server):
    server = fake_openai_server(finish=lambda body: "length")  # every answer stops at its budget
    model = ModelArguments(llm=f"endpoint:{server.url}#fake", max_new_tokens=8)
    with pytest.raises(UserError, match=r"dropped_truncated 4; answers cut at --max_new_tokens 8: raise"):
        facts.main(facts.FactsArguments(input=str(clustered), output=str(tmp_path)), model)
    found = json.loads((tmp_path / ".news-facts-work" / "stats.json").read_text())
    assert found["dropped_truncated"] == 4 and "dropped_empty_response" not in found


def test_the_filter_judge_passes_the_harness_calibration_gate(model_stages, tmp_path, fake_openai_server):
    from continuousbench.news import filter as filtering

    yes_man = fake_openai_server(reply=lambda body: "1")
    args = filtering.FilterArguments(input=str(model_stages["qa"]), output=str(tmp_path))
    with pytest.raises(UserError, match=r"--judge endpoint:.*#fake failed calibration on 40 cases: accuracy"):
        filtering.main(args, ModelArguments(llm="offline:news", judge=f"endpoint:{yes_man.url}#fake"))
    assert not (tmp_path / "data").exists()
    recorded = stats(model_stages["filter"])["judge_record"]  # the offline stand-in, used with the override
    assert recorded["kind"] == "offline" and recorded["calibration"]["override"]
