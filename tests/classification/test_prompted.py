"""The prompted grid: its conditions, the scoring of replies (unparseable ones wrong and counted), the
best condition."""

from __future__ import annotations

from continuousbench.classification.prompted import best, demonstrations, grid, score

NAMES = ("negative", "neutral", "positive")


def test_the_grid_has_one_zero_shot_condition_and_each_k_with_each_seed():
    conditions = grid(["direct", "reasoning"], [0, 3, 5], [0, 1, 2])
    assert len(conditions) == 2 * (1 + 2 * 3)
    assert [c.name for c in conditions[:3]] == [
        "direct 0-shot",
        "direct 3-shot seed 0",
        "direct 3-shot seed 1",
    ]
    assert len(grid(["direct", "reasoning", "structured"], [0, 3, 5, 7], [0, 1, 2])) == 30  # the paper's


def test_unparseable_replies_count_as_wrong_and_are_reported():
    labels = [0, 1, 2, 2]
    read = [(0, 0), (None, 1), (None, None), (0, 2)]  # right; contains only; unparseable; exact wrong
    scores = score(labels, read, NAMES)
    metrics = scores["metrics"]
    assert (metrics["exact_match"]["accuracy"], metrics["contains"]["accuracy"]) == (0.25, 0.75)
    assert scores["unparseable"] == {"exact_match": 2, "contains": 1} and scores["n"] == 4
    positive = scores["by_class"]["positive"]
    assert positive["n"] == 2 and positive["exact_match"]["accuracy"] == 0.0
    assert positive["contains"]["accuracy"] == 0.5
    low, high = metrics["exact_match"]["ci95"]
    assert low < 0.25 < high


def test_the_best_condition_is_the_first_of_the_highest():
    def condition(name, acc):
        return {"condition": name, "metrics": {"exact_match": {"accuracy": acc}}}

    assert best([condition("a", 0.5), condition("b", 0.7), condition("c", 0.7)])["condition"] == "b"


def test_demonstrations_are_seeded_draws_from_the_training_split():
    from datasets import Dataset

    train = Dataset.from_dict({"text": [f"t{i}" for i in range(20)], "label": [i % 3 for i in range(20)]})
    assert demonstrations(train, 0, None) == []
    first, again, other = (demonstrations(train, 5, s) for s in (0, 0, 1))
    assert first == again and first != other and len(set(first)) == 5
