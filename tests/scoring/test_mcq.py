"""NEWS distractors of the answer's type and form: the type read model-free, and picks that look at the
options alone (longest, shortest, odd form out) at chance, where "same first word" pools beat it."""

from __future__ import annotations

import random

import pytest

from continuousbench.scoring import mcq


@pytest.mark.parametrize(
    ("question", "answer", "kind"),
    [
        ("On what day was the bridge closed?", "March 3, 2026", "date"),
        ("What year did it open?", "1998", "date"),
        ("How much did the city pay?", "4.5 million dollars", "number"),
        ("What share voted no?", "40%", "number"),
        ("Who won the runoff?", "Joe Biden", "person"),
        ("Who fined the carrier?", "Acme Airlines", "organisation"),
        ("Which party left the coalition?", "Green", "organisation"),
        ("Where did the storm land?", "Lyon", "place"),
        ("What was found in the river?", "a red car", "other"),
    ],
)
def test_answer_type(question, answer, kind):
    assert mcq.answer_type(question, answer) == kind


def news_like_questions(n: int = 400, seed: int = 0) -> list[dict]:
    """Questions about made-up events whose answers are dates, numbers (in three forms), people, places
    and organisations; most ask "what", as NEWS questions do whatever the answer's type."""
    rng = random.Random(seed)
    months = ["January", "March", "June", "October"]
    names = ["Ada", "Bruno", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana"]
    forms = {
        "date": lambda: f"{rng.choice(months)} {rng.randint(1, 28)}, 202{rng.randint(4, 6)}",
        "count": lambda: str(rng.randint(2, 999)),
        "money": lambda: f"{rng.randint(1, 90)}.{rng.randint(1, 9)} million dollars",
        "share": lambda: f"{rng.randint(1, 99)}%",
        "person": lambda: f"{rng.choice(names)} {rng.choice(names)}son",
        "organisation": lambda: f"{rng.choice(names)} Group",
        "place": lambda: rng.choice(["Lyon", "Porto", "Graz", "Tartu", "Split", "Bergen"]),
    }
    asks = {
        "date": "What date",
        "count": "What number of people",
        "money": "What amount",
        "share": "What share",
        "person": "What person",
        "organisation": "What group",
        "place": "What city",
    }
    kinds = [rng.choice(list(forms)) for _ in range(n)]
    return [
        {"id": f"q{i}", "question": f"{asks[kind]} is named in report {i}?", "answer": forms[kind]()}
        for i, kind in enumerate(kinds)
    ]


def by_first_word(rows: list[dict], seed: int) -> dict[str, list[str]]:
    """The options the rule before gave: other answers of questions with the same first word."""
    pools: dict[str, set[str]] = {}
    for row in rows:
        pools.setdefault(row["question"].split()[0], set()).add(row["answer"])
    options = {}
    for row in rows:
        rng = random.Random(f"{seed}:{row['id']}")
        others = sorted(pools[row["question"].split()[0]] - {row["answer"]})
        options[row["id"]] = rng.sample([row["answer"], *rng.sample(others, 3)], 4)
    return options


def test_model_free_picks_are_at_chance_with_typed_distractors():
    rows = news_like_questions()
    typed = mcq.model_free_accuracy(rows, mcq.derive_options(rows, seed=0))
    assert typed["chance"] == pytest.approx(0.25)
    for picker in ("longest", "shortest", "odd_form", "asked_type"):
        assert abs(typed[picker] - 0.25) < 0.07, typed  # 400 questions: 2.5 standard errors
    before = mcq.model_free_accuracy(rows, by_first_word(rows, seed=0))
    assert before["asked_type"] > 0.4, before  # "what" pools: the wording and the form give it away


def test_geminon_options_keep_their_attribute_pools(tiny_release):
    """Geminon's distractors are the attribute's other values, as before: a recorded release's options
    are derived again unchanged, and its model-free picks are not far above chance."""
    from continuousbench.harness.ranked import release_options
    from continuousbench.release.load import load_release

    splits = [s for part in ("qa_public", "qa_singleton") for s in load_release(tiny_release, part).values()]
    rows = [r for s in splits for r in s.to_list()]
    recorded = {r["id"]: list(r["options"]) for r in rows}
    assert mcq.derive_options(rows, seed=0) == recorded == release_options(str(tiny_release), seed=0)
    accuracy = mcq.model_free_accuracy(rows, recorded)  # 234 questions: 0.26, 0.26, 0.28, 0.26
    assert all(abs(accuracy[p] - accuracy["chance"]) < 0.08 for p in ("longest", "shortest", "odd_form"))
