"""Answer normalisation, exact / contains, and aggregation by support count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from continuousbench.scoring.match import contains, exact_match, normalize, score

TYPES = ["ghost and dark", "dark and ghost"]

# (prediction, references, exact_match, contains) - written by hand; the metric tests reuse this table.
CASES = [
    # numbers: units, punctuation, notation
    ("79", "79", True, True),
    ("79.", "79", True, True),
    ("79 lbs", "79", True, True),
    ("79lbs", "79", True, True),
    ("79 pounds", "79", True, True),
    ("79 kg", "79", True, True),
    ("79 cm", "79", True, True),
    (" 79", "79", True, True),
    ("79.0", "79", True, True),
    ("079", "79", True, True),
    ("790", "79", False, False),
    ("1979", "79", False, False),
    ("79.5", "79", False, False),
    ("7.9", "79", False, False),
    ("-79", "79", False, False),
    ("seventy-nine", "79", False, False),
    ("79\n\nQ: What is the HP stat of Boreling?", "79", True, True),
    ("The HP stat is 79.", "79", False, True),
    ("It has 790 HP", "79", False, False),
    ("79, 80", "79", True, True),
    ("80, 79", "79", False, False),
    ("A: 79", "79", True, True),
    ("Answer: 79", "79", True, True),
    ("1,000 lbs", "1000", True, True),
    ("1000", "1,000", True, True),
    ("2.5 m", "2.5", True, True),
    ("2.5m", "2.5", True, True),
    ("2.50", "2.5", True, True),
    ("2.5 m tall", "2.5", True, True),
    ("2", "2.5", False, False),
    ("14 m", "14", True, True),
    ("14 M", "14", True, True),
    ("14 meters", "14", True, True),
    ("14 metres.", "14", True, True),
    ("1.4 m", "14", False, False),
    ("It is 14 m tall", "14", False, True),
    # empty and degenerate predictions
    ("", "79", False, False),
    ("   ", "79", False, False),
    ("\n79", "79", False, False),
    ("I don't know", "Spore Geminon", False, False),
    ("Q: What", "Spore Geminon", False, False),
    # multi-word names, case, punctuation, trailing explanations
    ("Spore Geminon", "Spore Geminon", True, True),
    ("Spore Geminon.", "Spore Geminon", True, True),
    ("Spore Geminon?", "Spore Geminon", True, True),
    ("spore geminon", "Spore Geminon", True, True),
    ("SPORE GEMINON", "Spore Geminon", True, True),
    ("Spore  Geminon", "Spore Geminon", True, True),
    ("SporeGeminon", "Spore Geminon", True, True),
    ("A: Spore Geminon.", "Spore Geminon", True, True),
    ("Spore Geminon, a rare kind", "Spore Geminon", True, True),
    ("Spore Geminon\nQ: What is", "Spore Geminon", True, True),
    ("Spore Geminon. It lives in caves.", "Spore Geminon", True, True),
    ("It is a Spore Geminon.", "Spore Geminon", False, True),
    ("The answer is Spore Geminon", "Spore Geminon", False, True),
    ("Parasite Geminon", "Spore Geminon", False, False),
    ("Spore", "Spore Geminon", False, False),
    ("Meter Geminon", "Meter Geminon", True, True),
    ("Meter", "Meter Geminon", False, False),
    ("Suction Cups", "Suction Cups", True, True),
    ('"Suction Cups"', "Suction Cups", True, True),
    ("**Suction Cups**", "Suction Cups", True, True),
    ("Suction Cup", "Suction Cups", False, False),
    ("Poltergeist!", "Poltergeist", True, True),
    ("Will-O-Wisp", "Will-O-Wisp", True, True),
    ("will o wisp", "Will-O-Wisp", False, False),
    ("King's Shield.", "King's Shield", True, True),
    ("Jaw Lock (a biting move)", "Jaw Lock", False, True),
    ("Drought", "drought", True, True),
    # non-ASCII
    ("Flabébé", "Flabébé", True, True),
    ("FLABÉBÉ", "Flabébé", True, True),
    ("Flabe\u0301be\u0301", "Flabébé", True, True),  # decomposed accents
    ("Flabebe", "Flabébé", False, False),
    ("Ünterwald", "ünterwald", True, True),
    ("Der Ünterwald-Stamm", "Ünterwald", False, True),
    # types in either order (answer + alias), single types
    ("ghost and dark", TYPES, True, True),
    ("Dark and Ghost.", TYPES, True, True),
    ("ghost", TYPES, False, False),
    ("Ghost and Dark types", TYPES, False, True),
    ("ghost", ["ghost"], True, True),
    ("ghost, dark", ["ghost"], True, True),
    ("ghostly", ["ghost"], False, True),  # contains ignores word boundaries (documented)
]


def test_table_is_large_enough():
    assert len(CASES) >= 60


@pytest.mark.parametrize(("prediction", "references", "exact", "contained"), CASES)
def test_matchers(prediction, references, exact, contained):
    assert exact_match(prediction, references) is exact
    assert contains(prediction, references) is contained
    assert not exact or contained, "exact match must imply contains"


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("Spore Geminon.", "sporegeminon"),
        ("79 lbs", "79"),
        ("2.5 m", "2.5"),
        ("A: 1,234 kg", "1234"),
        ("  Flabébé!  ", "flabébé"),
        ("Mt. Pyre", "mt"),  # a sentence end is a sentence end, abbreviations included
    ],
)
def test_normalize(text, normal):
    assert normalize(text) == normal


def test_score_overall_and_strata():
    preds = ["79", "Spore Geminon", "790", "ghost", "14 m"]
    refs = ["79", ["Spore Geminon"], "79", TYPES, "14"]
    support = [100, 250, 450, 650, 900]
    out = score(preds, refs, support_counts=support, buckets=[0, 200, 500])
    assert out["n"] == 5
    em = out["metrics"]["exact_match"]
    assert em == {
        "accuracy": 0.6,
        "ci95": [pytest.approx(wilson(3, 5)[0]), pytest.approx(wilson(3, 5)[1])],
        "std": pytest.approx(math.sqrt(0.24)),
        "count": 5,
    }
    assert out["per_example"]["exact_match"] == [True, True, False, False, True]
    assert list(out["by_support"]) == [">=0", ">=200", ">=400", ">=600", ">=800"]
    assert out["by_support"][">=400"]["n"] == 3
    assert out["by_support"][">=400"]["exact_match"]["accuracy"] == pytest.approx(1 / 3)
    at_800 = out["by_support"][">=800"]["contains"]
    assert at_800 == {"accuracy": 1.0, "ci95": [pytest.approx(wilson(1, 1)[0]), 1.0], "std": 0.0, "count": 1}
    lows = [(b["low"], b["high"], b["n"], b["mean_support"]) for b in out["buckets"]]
    assert lows == [(0, 200, 1, 100.0), (200, 500, 2, 350.0), (500, None, 2, 775.0)]
    assert out["buckets"][1]["exact_match"]["accuracy"] == 0.5


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The textbook Wilson score interval, written out (no continuity correction)."""
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_every_stratum_and_bucket_has_an_interval_around_its_accuracy():
    rng = np.random.default_rng(3)
    refs = [str(i) for i in range(60)]
    preds = [r if rng.random() < 0.4 else "no" for r in refs]
    support = [int(c) for c in rng.integers(0, 1000, size=60)]
    out = score(preds, refs, support_counts=support, buckets=[0, 100, 500])
    summaries = [out["metrics"], *out["by_support"].values(), *out["buckets"]]
    for s in summaries:
        for name in ("exact_match", "contains"):
            m = s[name]
            if m["count"] == 0:
                assert m["ci95"] is None
                continue
            k = round(m["accuracy"] * m["count"])
            assert m["ci95"] == [pytest.approx(v) for v in wilson(k, m["count"])]
            assert m["ci95"][0] <= m["accuracy"] <= m["ci95"][1]


def test_score_std_matches_numpy_and_empty_stratum():
    preds = ["1", "2", "3", "x"]
    out = score(preds, ["1", "2", "9", "y"], support_counts=np.array([5, 6, 7, 8]), thresholds=[0, 1000])
    assert out["metrics"]["contains"]["std"] == pytest.approx(np.std([1, 1, 0, 0]))
    assert out["by_support"][">=1000"] == {
        "n": 0,
        "exact_match": {"accuracy": None, "ci95": None, "std": None, "count": 0},
        "contains": {"accuracy": None, "ci95": None, "std": None, "count": 0},
    }
    assert "buckets" not in score(preds, ["1"] * 4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": ["a", "b"], "references": ["a"]}, "references has 1 items"),
        ({"predictions": "ab", "references": ["a", "b"]}, "predictions must be a sequence of strings"),
        ({"predictions": [1], "references": ["1"]}, "predictions must be a sequence of strings"),
        ({"predictions": ["a"], "references": [[]]}, "non-empty list"),
        ({"predictions": ["a"], "references": ["..."]}, "normalises to an empty answer"),
        ({"predictions": ["a"], "references": ["a"], "matchers": ["rouge"]}, "matchers must be"),
        ({"predictions": ["a"], "references": ["a"], "matchers": ["llm_match"]}, "llm_match needs judge"),
        ({"predictions": ["a"], "references": ["a"], "support_counts": [1, 2]}, "support_counts has 2"),
        ({"predictions": ["a"], "references": ["a"], "support_counts": [-1]}, "non-negative integers"),
        ({"predictions": ["a"], "references": ["a"], "buckets": [0, 10]}, "buckets need support_counts"),
        ({"predictions": ["a"], "references": ["a"], "support_counts": [1], "buckets": [10, 0]}, "strictly"),
    ],
)
def test_score_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        score(**kwargs)
