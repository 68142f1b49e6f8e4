"""LLM-match judge: numeric rule, the endpoint's answer cache, retries, unparseable replies, dead servers."""

from __future__ import annotations

import re
from collections import Counter

import fake_judges
import pytest
from fake_endpoint import FakeOpenAIServer, prompt_of

from continuousbench.errors import UserError
from continuousbench.llm import GenerationError, OfflineGenerator, make_generator
from continuousbench.llm.endpoint import EndpointGenerator
from continuousbench.scoring.judge import (
    JUDGE_PROMPT,
    MAX_FALSE_ACCEPT,
    MIN_ACCURACY,
    Judge,
    calibrate,
    calibration_cases,
    decide,
    decision_counts,
    gate,
    identity,
    label,
    numbers_close,
    parse_verdict,
    same_judge,
)
from continuousbench.scoring.match import judge_agreement, score
from continuousbench.stats import wilson_interval


class FakeJudge:
    """Says 1 when the reference's first word appears in the response; counts prompts it saw."""

    def __init__(self, reply: str | None = None, failures: int = 0):
        self.prompts: list[str] = []
        self.reply, self.failures = reply, failures

    def __call__(self, prompt: str, **sampling) -> str:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("endpoint down")
        self.prompts.append(prompt)
        if self.reply is not None:
            return self.reply
        reference = re.search(r"^REFERENCE: (\w+)", prompt, re.M).group(1).lower()
        response = re.search(r"^RESPONSE: (.*)$", prompt, re.M).group(1).lower()
        return " 1\n" if reference in response else "0"


def make_judge(fake: FakeJudge, **kwargs) -> Judge:
    return Judge(OfflineGenerator(fake, name="fake"), "fake-judge", **kwargs)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [("1", True), ("0", False), (" 1\n", True), ('"0"', False), ("**1**", True), ("1.", True)]
    + [("", None), ("yes", None), ("The answer is 1", None), ("10", None), ("0 or 1", None)],
)
def test_parse_verdict(text, verdict):
    assert parse_verdict(text) is verdict


def test_numbers_close_uses_relative_error_of_the_mean():
    assert numbers_close(*map(_d, ("10000", "10000.5")))  # 5e-5 relative error
    assert not numbers_close(*map(_d, ("10000", "10002")))  # 2e-4
    assert numbers_close(_d("0"), _d("0.0"))
    assert not numbers_close(_d("0"), _d("0.001"))


def _d(text):
    from decimal import Decimal

    return Decimal(text)


def test_numeric_questions_never_reach_the_judge():
    fake = FakeJudge()
    judge = make_judge(fake)
    verdicts = judge.match(
        ["HP?"] * 4, [["79"], ["79"], ["2.5"], ["10000"]], ["79 lbs", "790", "It is 2.5 m", "10000.5"]
    )
    assert verdicts == [True, False, True, True]
    assert fake.prompts == [] and judge.stats["numeric"] + judge.stats["exact"] == 4


def test_prompt_carries_question_reference_aliases_and_first_line_of_response():
    fake = FakeJudge()
    make_judge(fake).match(
        ["Types of Boreling?"], [["ghost and dark", "dark and ghost"]], ["Dark and ghost types\nQ: next"]
    )
    (prompt,) = fake.prompts
    assert prompt == JUDGE_PROMPT.format(
        question="Types of Boreling?",
        reference="ghost and dark (equivalent forms: dark and ghost)",
        response="Dark and ghost types",
    )


def _served_judge(server, cache_dir, model: str = "fake") -> Judge:
    spec = f"endpoint:{server.url}#{model}"
    return Judge(make_generator(spec, cache_dir=cache_dir, backoff=0.0), spec)


def test_a_rerun_of_judging_pays_nothing_the_endpoint_cache_is_the_only_cache(tmp_path):
    fake = FakeJudge()
    reply = {"Parasite": "I think not"}  # one unparseable reply: cached like any answer, reported each time
    served = lambda body: reply.get(fake_judges.fields(prompt_of(body))[2]) or fake(prompt_of(body))  # noqa: E731
    questions, refs = ["Class?"] * 4, [["Spore Geminon"]] * 4
    responses = ["a Spore Geminon", "Parasite", "a Spore Geminon", "Ghost"]  # one asked twice
    with FakeOpenAIServer(reply=served) as server:
        first = _served_judge(server, tmp_path)
        assert first.match(questions, refs, responses) == [True, None, True, False]
        assert len(server.requests) == 3 and first.stats["judged"] == 3 and first.stats["cached"] == 0
        again = _served_judge(server, tmp_path)  # a new process: the same cache file
        assert again.match(questions, refs, responses) == [True, None, True, False]
        assert len(server.requests) == 3, "a rerun must send no request"
        assert again.stats == {**first.stats, "judged": 0, "cached": 3}
        assert again.stats["unparseable"] == 1
        other = _served_judge(server, tmp_path, model="another-judge")
        other.match(questions, refs, responses)
        assert len(server.requests) == 6, "a different judge model must not reuse verdicts"
    assert {p.name.split(".")[0] for p in tmp_path.iterdir()} == {"llm-cache"}  # none of the judge's own


def test_an_old_verdict_database_is_ignored(tmp_path):
    (tmp_path / "judge-cache.sqlite").write_bytes(b"SQLite format 3\x00 from an earlier version")
    with FakeOpenAIServer(reply=lambda body: "1") as server:
        assert _served_judge(server, tmp_path).match(["Q?"], [["Lyon"]], ["in Lyon"]) == [True]
    assert len(server.requests) == 1


def test_transient_failures_are_retried_by_the_endpoint_alone():
    with FakeOpenAIServer(reply=lambda body: "1", fail_first=2) as server:
        judge = Judge(EndpointGenerator(server.url, "fake", backoff=0.0, max_in_flight=1), "judge")
        assert judge.match(["Class?"], [["Spore Geminon"]], ["a Spore"]) == [True]
    assert len(server.requests) == 3  # two 503s, then the answer: one retry layer


def test_a_judge_that_does_not_answer_is_one_clear_error():
    fake = FakeJudge(failures=10)
    with pytest.raises(GenerationError, match=r"judge 'fake-judge' did not answer \(ConnectionError"):
        make_judge(fake).match(["Q?"], [["Spore"]], ["Spores"])
    assert fake.failures == 9  # asked once: a scripted backend is not retried by the judge


def test_unreachable_endpoint_is_one_clear_error():
    endpoint = EndpointGenerator(
        "http://127.0.0.1:9/v1", model="judge", retries=2, backoff=0.0, request_timeout=2.0
    )
    with pytest.raises(
        GenerationError,
        match=r"judge 'judge' did not answer \(GenerationError: endpoint "
        r"http://127.0.0.1:9/v1 did not answer after 2 tries",
    ):
        Judge(endpoint, "judge").match(["Q?"], [["Spore"]], ["Spores"])


def test_unparseable_verdicts_are_reported_not_guessed():
    fake = FakeJudge(reply="I think they match")
    judge = make_judge(fake)
    out = score(
        ["the Spore Geminon", "79"],
        [["Spore Geminon"], ["79"]],
        questions=["Class?", "HP?"],
        matchers=["exact_match", "llm_match"],
        judge=judge,
    )
    assert out["per_example"]["llm_match"] == [None, True]
    half = [pytest.approx(v) for v in wilson_interval(1, 2)]  # the unparseable verdict counts as wrong
    assert out["metrics"]["llm_match"] == {
        "accuracy": 0.5,
        "ci95": half,
        "std": 0.5,
        "count": 2,
        "unparseable": 1,
    }
    assert judge.stats["unparseable"] == 1


def test_llm_match_strata():
    out = score(
        ["a Spore Geminon", "Parasite", "ghost"],
        ["Spore Geminon", "Spore Geminon", "ghost"],
        questions=["q1", "q2", "q3"],
        support_counts=[300, 300, 10],
        matchers=["llm_match"],
        judge=make_judge(FakeJudge()),
        thresholds=[200],
    )
    assert out["by_support"][">=200"]["llm_match"] == {
        "accuracy": 0.5,
        "ci95": [pytest.approx(v) for v in wilson_interval(1, 2)],
        "std": 0.5,
        "count": 2,
        "unparseable": 0,
    }


# --- code decides before the judge; calibration; identity -----------------------------------------


def test_numbers_close_is_the_papers_rule_against_the_signed_mean():
    assert numbers_close(_d("-10000"), _d("-10000.5"))
    assert not numbers_close(_d("5"), _d("-5")), "a zero mean is an infinite relative error"
    assert not numbers_close(_d("1000"), _d("1000.2")), "2e-4 is outside 0.01 %"
    assert numbers_close(_d("1000"), _d("1000.05"))


@pytest.mark.parametrize(
    ("response", "refs", "decided"),
    [
        ("", ["Lyon"], ("empty", False)),
        ("  .", ["Lyon"], ("empty", False)),
        ("Lyon.", ["Lyon"], ("exact", True)),
        ("the UN", ["United Nations", "the UN"], ("exact", True)),  # an alias
        ("4821.3", ["4821"], ("numeric", True)),
        ("4823", ["4821"], ("numeric", False)),
        ("It weighs 70 or 4821", ["4821"], ("numeric", True)),  # alternatives may be listed
        ("seventy-nine", ["79"], None),  # spelled out: the judge reads it
        ("It was held in Lyon", ["Lyon"], None),
        ("$1.25 million", ["1,250,000 dollars"], None),
    ],
)
def test_decide_takes_empty_exact_and_numeric_cases(response, refs, decided):
    assert decide(response, refs) == decided


def test_code_rules_agree_with_every_calibration_case_they_decide():
    decided = [(c, decide(c["response"], [c["reference"]])) for c in calibration_cases()]
    taken = [(c["id"], d[1], bool(c["verdict"])) for c, d in decided if d is not None]
    assert len(taken) >= 8 and all(got == want for _, got, want in taken), taken


def test_calibration_set_is_balanced_and_covers_the_cases_of_the_issue():
    cases = calibration_cases()
    assert 30 <= len(cases) <= 60 and len({c["id"] for c in cases}) == len(cases)
    assert Counter(c["verdict"] for c in cases) == {0: len(cases) // 2, 1: len(cases) // 2}
    kinds = {c["kind"] for c in cases}
    assert {
        "paraphrase",
        "more specific",
        "missing part",
        "wrong entity",
        "number within tolerance",
        "number outside tolerance",
        "empty",
        "verbose",
    } <= kinds


def test_exact_numeric_and_empty_cases_never_reach_the_judge_endpoint():
    with FakeOpenAIServer(reply=fake_judges.served(fake_judges.rule_following)) as server:
        judge = Judge(make_generator(f"endpoint:{server.url}#j"), "j")
        responses = ["Lyon", "", "4821.3", "151", "It was held in Lyon", "Marseille, France"]
        refs = [["Lyon"], ["Lyon"], ["4821"], ["115"], ["Lyon"], ["Lyon"]]
        verdicts = judge.match(["Where?"] * 6, refs, responses)
    assert verdicts == [True, False, True, False, True, False]
    asked = [fake_judges.fields(r["messages"][0]["content"])[2] for r in server.requests]
    assert sorted(asked) == ["It was held in Lyon", "Marseille, France"]
    assert judge.stats == {"empty": 1, "exact": 1, "numeric": 2, "cached": 0, "judged": 2, "unparseable": 0}
    assert decision_counts(refs, responses) == {"empty": 1, "exact": 1, "numeric": 2, "judge": 2}


def _calibrate_served(reply, **gate_options):
    with FakeOpenAIServer(reply=fake_judges.served(reply)) as server:
        spec = f"endpoint:{server.url}#judge-model"
        figures = calibrate(Judge(make_generator(spec), spec))
        return spec, figures, gate(figures, "endpoint:…#judge-model", **gate_options), len(server.requests)


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("always 1", fake_judges.always("1")),
        ("always 0", fake_judges.always("0")),
        ("coin flip", fake_judges.coin_flip(seed=3)),
        ("accepts half the wrong answers", fake_judges.half_wrong_accepting),
    ],
)
def test_bad_judges_are_refused_in_one_line_naming_the_judge_and_its_figures(name, reply):
    with pytest.raises(UserError) as err:
        _calibrate_served(reply)
    message = str(err.value)
    assert "\n" not in message and message.startswith("--judge endpoint:…#judge-model failed calibration")
    assert re.search(r"accuracy \d+% \(needs >= 85%\), false accepts \d+%", message), message
    assert "--judge_override_calibration" in message


def test_always_one_figures():
    figures = calibrate(Judge(OfflineGenerator(fake_judges.always("1")), "yes-man"))
    assert (figures["accuracy"], figures["false_accept"], figures["false_reject"]) == (0.5, 1.0, 0.0)
    assert figures["cases"] == len(calibration_cases()) and len(figures["missed"]) == figures["cases"] // 2


def test_a_rule_following_judge_passes_and_every_case_is_asked_once():
    _, figures, passed, requests = _calibrate_served(fake_judges.rule_following)
    assert requests == figures["cases"] == len(calibration_cases())
    assert figures["accuracy"] == (figures["cases"] - 3) / figures["cases"] and figures["missed"] == sorted(
        fake_judges.RULE_FOLLOWER_MISTAKES, key=[c["id"] for c in calibration_cases()].index
    )
    assert passed["passed"] and not passed["override"]
    assert passed["min_accuracy"] == MIN_ACCURACY and passed["max_false_accept"] == MAX_FALSE_ACCEPT


def test_override_keeps_a_failing_judge_and_says_so():
    _, _, outcome, _ = _calibrate_served(fake_judges.always("1"), override=True)
    assert outcome["override"] and not outcome["passed"]


def test_calibration_is_cached_like_every_verdict_and_the_gate_still_decides(tmp_path):
    with FakeOpenAIServer(reply=fake_judges.served(fake_judges.always("1"))) as server:
        figures = calibrate(_served_judge(server, tmp_path))
        again = _served_judge(server, tmp_path)
        assert calibrate(again) == figures and again.stats["judged"] == 0
        assert len(server.requests) == again.stats["cached"] == len(calibration_cases())
    with pytest.raises(UserError, match="failed calibration"):  # a cached bad judge is refused all the same
        gate(calibrate(again), "yes-man")


def test_identity_leaves_out_urls_and_tells_judges_apart():
    a = identity("endpoint:https://me:key@judge.example/v1#gemini-2.5-flash-lite")
    assert a["kind"] == "endpoint" and a["model"] == "gemini-2.5-flash-lite" and "key" not in str(a)
    assert identity("endpoint:http://127.0.0.1:8000/v1")["model"] is None
    b = identity("completions:http://other/v1#gemini-2.5-flash-lite")
    assert same_judge(a, identity("endpoint:http://elsewhere/v1#gemini-2.5-flash-lite"))
    assert not same_judge(a, b) and not same_judge(a, None)
    assert label(None) == "-"
    assert label({**a, "calibration": {"accuracy": 0.925, "override": True}}) == (
        "gemini-2.5-flash-lite (endpoint, prompt v2, calibration 92%) OVERRIDDEN"
    )


def test_agreement_shows_how_much_the_judge_inflates():
    out = judge_agreement(
        {
            "exact_match": [True, False, False, False],
            "contains": [True, True, False, False],
            "llm_match": [True, True, True, None],
        }
    )
    assert out["vs_exact_match"] == {
        "agreement": 0.5,
        "accept_when_right": 1.0,
        "accept_when_wrong": pytest.approx(2 / 3),
    }
    assert out["vs_contains"] == {"agreement": 0.75, "accept_when_right": 1.0, "accept_when_wrong": 0.5}
    assert out["both_wrong"] == {"count": 2, "accept_rate": 0.5}


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_judges_that_share_a_model_name_on_other_servers_are_each_asked(tmp_path):
    """The answer cache (and so calibration and every verdict) is keyed on the server, not the name."""
    replies = {
        "always 1": fake_judges.always("1"),
        "always 0": fake_judges.always("0"),
        "rule": fake_judges.rule_following,
    }
    figures, record = {}, {}
    for name, reply in replies.items():
        with FakeOpenAIServer(reply=fake_judges.served(reply), models=("m",), served_as=name) as server:
            judge = _served_judge(server, tmp_path, model="m")  # one cache folder for all three
            judge.generator.check()
            figures[name] = calibrate(judge)
            assert len(server.requests) == 1 + len(calibration_cases())  # /models, then every case
            record[name] = identity(judge.model_name, judge.generator)
            assert record[name]["endpoint"] == server.url
    assert figures["always 1"]["false_accept"] == 1 and figures["always 0"]["false_accept"] == 0
    assert figures["rule"]["accuracy"] > MIN_ACCURACY
    assert record["always 1"]["server"] == {"served": ["m"], "answered_by": "always 1"}
    assert not same_judge(record["always 1"], record["rule"])  # same name, another model answering
