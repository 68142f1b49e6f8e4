"""LLM-match judge: numeric rule, on-disk cache, retries, unparseable verdicts, failing endpoints."""

from __future__ import annotations

import re

import pytest

from continuousbench.judge import JUDGE_PROMPT, Judge, numbers_close, parse_verdict
from continuousbench.llm import GenerationError, OfflineGenerator
from continuousbench.llm.endpoint import EndpointGenerator
from continuousbench.scoring import score
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


def make_judge(fake: FakeJudge, cache_dir=None, **kwargs) -> Judge:
    return Judge(OfflineGenerator(fake, name="fake"), cache_dir, "fake-judge", backoff=0.0, **kwargs)


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
    assert fake.prompts == [] and judge.stats["numeric"] == 4


def test_prompt_carries_question_reference_aliases_and_first_line_of_response():
    fake = FakeJudge()
    make_judge(fake).match(
        ["Types of Boreling?"], [["ghost and dark", "dark and ghost"]], ["Dark and ghost\nQ: next"]
    )
    (prompt,) = fake.prompts
    assert prompt == JUDGE_PROMPT.format(
        question="Types of Boreling?",
        reference="ghost and dark (equivalent forms: dark and ghost)",
        response="Dark and ghost",
    )


def test_cache_hit_avoids_a_second_call(tmp_path):
    fake = FakeJudge()
    args = (["Class?", "Class?"], [["Spore Geminon"], ["Spore Geminon"]], ["a Spore Geminon", "Parasite"])
    assert make_judge(fake, tmp_path).match(*args) == [True, False]
    assert len(fake.prompts) == 2
    again = make_judge(fake, tmp_path)  # a new process would see the same sqlite file
    assert again.match(*args) == [True, False]
    assert len(fake.prompts) == 2 and again.stats["cached"] == 2
    other_model = Judge(OfflineGenerator(fake), tmp_path, "another-judge", backoff=0.0)
    other_model.match(*args)
    assert len(fake.prompts) == 4, "a different judge model must not reuse verdicts"


def test_transient_failures_are_retried():
    fake = FakeJudge(failures=2)
    judge = make_judge(fake, retries=3)
    assert judge.match(["Class?"], [["Spore Geminon"]], ["Spore Geminon"]) == [True]


def test_a_judge_that_does_not_answer_is_one_clear_error():
    with pytest.raises(
        GenerationError, match=r"judge 'fake-judge' did not answer after 3 tries \(ConnectionError"
    ):
        make_judge(FakeJudge(failures=10), retries=3).match(["Q?"], [["Spore"]], ["Spore"])


def test_unreachable_endpoint_is_one_clear_error():
    endpoint = EndpointGenerator("http://127.0.0.1:9/v1", model="judge", retries=1, backoff=0.0, timeout=2.0)
    judge = Judge(endpoint, None, "judge", retries=2, backoff=0.0)
    with pytest.raises(GenerationError, match="judge 'judge' did not answer after 2 tries"):
        judge.match(["Q?"], [["Spore"]], ["Spore"])


def test_unparseable_verdicts_are_reported_not_guessed_nor_cached(tmp_path):
    fake = FakeJudge(reply="I think they match")
    judge = make_judge(fake, tmp_path)
    out = score(
        ["Spore Geminon", "79"],
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
    make_judge(fake, tmp_path).match(["Class?"], [["Spore Geminon"]], ["Spore Geminon"])
    assert len(fake.prompts) == 2, "an unparseable verdict must be asked again, not served from the cache"


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
