"""The prompt templates (classification/prompts.py), and replies read as labels: exact / contains,
unparseable ones."""

from __future__ import annotations

import pytest

from continuousbench.classification.prompts import TaskText, prompt, read_reply

NAMES = ("negative", "neutral", "positive")
SCORES = ("1", "3", "5", "6", "8")


@pytest.mark.parametrize(
    ("template", "reply", "expected"),
    [
        ("direct", " positive", (2, 2)),
        ("direct", " Positive.\nThe review is glowing.", (2, 2)),
        ("direct", " it is positive", (None, 2)),  # contains only
        ("direct", " positive or negative", (None, None)),  # two classes named: neither rule reads one
        ("direct", " 746 lbs for it.", (None, None)),  # the tiny base model's kind of reply: unparseable
        ("direct", "", (None, None)),
        ("reasoning", " The buyer returned it and wants a refund.\nAnswer: negative", (0, 0)),
        ("reasoning", " Not positive at all, rather negative.\nAnswer: negative.", (0, 0)),
        ("reasoning", " It sounds neutral to me.", (None, 1)),  # no Answer line: the whole reply
        ("reasoning", " Both positive and negative points.", (None, None)),
        ("reasoning", " Answer: unsure", (None, None)),  # an answer field that names no class
        ("structured", ' {"label": "neutral"}', (1, 1)),
        ("structured", ' ```json\n{"label": "Negative",}\n```', (0, 0)),  # fences, trailing comma
        ("structured", ' {"label": "posit', (None, None)),  # cut by the token budget
        ("structured", ' {"label": "neutral", "why": "plain"', (1, 1)),  # cut after the label
        ("structured", " neutral", (None, 1)),  # no JSON at all: contains reads the reply
        ("structured", ' {"class": "neutral"}', (None, 1)),
    ],
)
def test_replies_are_read_as_labels(template, reply, expected):
    assert read_reply(template, reply, NAMES) == expected


def test_numeric_classes_are_read_as_numbers():
    assert read_reply("direct", " 6", SCORES) == (3, 3)
    assert read_reply("direct", " 6.0", SCORES) == (3, 3)
    assert read_reply("direct", " 10", SCORES) == (None, None)  # 10 is not 1
    assert read_reply("reasoning", "Solid work, I'd say 8/10.\nAnswer: 8", SCORES) == (4, 4)
    assert read_reply("direct", " 5 or 6", SCORES) == (None, None)


def test_a_prompt_states_the_classes_and_shows_its_shots():
    task = TaskText("ICLR paper review", "the score", SCORES, ("a", "b", "c", "d", "e"))
    text = prompt("structured", task, "Great paper " * 400, [("Weak.", 0), ("Strong.", 4)], max_chars=50)
    assert "1 (a); 3 (b); 5 (c); 6 (d); 8 (e)" in text
    assert text.count('JSON: {"label": ') == 2 and text.endswith("JSON:")
    assert 'Text: Weak.\nJSON: {"label": "1"}' in text
    assert max(len(line) for line in text.splitlines()[1:]) < 80  # long texts are cut
    with pytest.raises(ValueError, match="unknown template"):
        prompt("chatty", task, "x")
