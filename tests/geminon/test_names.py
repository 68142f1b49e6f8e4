"""Namers: rule checks, the offline namer, and the LLM namer's parsing, re-queries and fallback."""

from __future__ import annotations

import json
import logging
import re

import pytest

from continuousbench import llm
from continuousbench.geminon.names import (
    LLMNamer,
    OfflineNamer,
    line_violation,
    make_namer,
    parse_named,
)
from continuousbench.geminon.sizes import SizeSpec
from continuousbench.geminon.world import build_world

REAL = {"pikachu", "bulbasaur"}
STAGES = [{"stage": s, "type1": "Fire", "type2": None, "hp": 50 * s} for s in (1, 2, 3)]
GOOD = [("Emberlet", "Candle Geminon"), ("Emberdor", "Torch Geminon"), ("Embergon", "Beacon Geminon")]


@pytest.mark.parametrize(
    ("named", "problem"),
    [
        (GOOD[:2], "expected 3 stages"),
        ([("Emb", "Candle Geminon"), *GOOD[1:]], "6-12 letters"),
        ([("Ember-let", "Candle Geminon"), *GOOD[1:]], "6-12 letters"),
        ([("Pikachu", "Candle Geminon"), *GOOD[1:]], "real Pokemon"),
        ([("Emberlet", "Candle"), *GOOD[1:]], "Geminon"),
        ([("Zorblet", "Candle Geminon"), *GOOD[1:]], "root"),
        ([GOOD[0], GOOD[0], GOOD[2]], "repeat"),
    ],
)
def test_line_violation(named, problem):
    assert problem in line_violation(named, 3, set(), set(), REAL)


def test_line_violation_forbidden():
    assert line_violation(GOOD, 3, set(), set(), REAL) is None
    assert "taken" in line_violation(GOOD, 3, {"EMBERDOR"}, set(), REAL)
    used = {tuple(c for _, c in GOOD)}
    assert "tuple" in line_violation(GOOD, 3, set(), used, REAL)
    # single-stage lines are exempt from the tuple rule
    assert line_violation(GOOD[:1], 1, set(), {(GOOD[0][1],)}, REAL) is None


def test_offline_namer_rules():
    namer = OfflineNamer(seed=3, real_names=REAL)
    taken: set[str] = set()
    tuples: set[tuple[str, ...]] = set()
    for i in range(200):
        n = 1 + i % 3
        named = namer.name_line(STAGES[:n], taken, tuples)
        assert line_violation(named, n, taken, tuples, REAL) is None
        taken.update(name for name, _ in named)
        if n > 1:
            tuples.add(tuple(c for _, c in named))
    again = OfflineNamer(seed=3, real_names=REAL).name_line(STAGES, set(), set())
    assert again == OfflineNamer(seed=3, real_names=REAL).name_line(STAGES, set(), set())


def test_parse_named():
    payload = {"stages": [{"name": n, "classification": c} for n, c in GOOD]}
    assert parse_named(f"Sure!\n```json\n{json.dumps(payload)}\n```\nEnjoy.") == GOOD
    assert parse_named(json.dumps(payload["stages"])) == GOOD
    assert parse_named("{not json at all") is None
    assert parse_named('{"stages": [{"name": "Emberlet"}]}') is None
    assert parse_named("no braces here") is None
    assert parse_named(json.dumps(payload, indent=1).replace("\n  }", ",\n  }")) == GOOD  # trailing commas


def scripted(answers: list[str]):
    prompts: list[str] = []

    def fn(prompt: str, **sampling) -> str:
        prompts.append(prompt)
        return answers[min(len(prompts), len(answers)) - 1]

    return llm.OfflineGenerator(fn), prompts


def as_json(named, fence: bool = False) -> str:
    text = json.dumps({"stages": [{"name": n, "classification": c} for n, c in named]})
    return f"```json\n{text}\n```" if fence else text


def test_llm_namer_requeries_until_valid():
    bad = [("Pikachu", "Candle Geminon"), *GOOD[1:]]
    generator, prompts = scripted(["I think {Emberlet: oops", as_json(bad), as_json(GOOD, fence=True)])
    namer = LLMNamer(generator, max_retries=5, real_names=REAL)
    assert namer.name_line(STAGES, set(), set()) == GOOD
    assert len(prompts) == 3
    assert '"hp": 150' in prompts[0] and "rejected" not in prompts[0]
    assert "not valid JSON" in prompts[1]
    assert "real Pokemon" in prompts[2] and "Pikachu" in prompts[2]
    assert namer.stats == {"queries": 3, "dropped_malformed_json": 1, "dropped_rule_violation": 1}


def test_llm_namer_falls_back(caplog):
    generator, prompts = scripted(["```\nnothing useful\n```"])
    namer = LLMNamer(generator, max_retries=2, real_names=REAL)
    with caplog.at_level(logging.WARNING):
        named = namer.name_line(STAGES, set(), set())
    assert line_violation(named, 3, set(), set(), REAL) is None
    assert len(prompts) == 2 and namer.stats["fallback_offline"] == 1
    assert "offline namer" in caplog.text


def test_llm_namer_in_build_world():
    """An LLM namer that always answers with the same tuple is steered by the forbidden list."""
    counter = iter(range(10_000))

    def fn(prompt: str, **sampling) -> str:
        n = len(re.findall(r'"stage": \d', prompt))
        root = "Vel" + "".join("abcdefghij"[int(d)] for d in f"{next(counter):03d}")
        return as_json([(root + s, "Lantern Geminon") for s in ("kit", "dor", "gon")[:n]])

    spec = SizeSpec(name="mini", lines={3: 2, 2: 2, 1: 2}, sensitive_lines={3: 1, 2: 1, 1: 1})
    namer = LLMNamer(llm.OfflineGenerator(fn))
    world = build_world(spec, seed=0, namer=namer)
    multi = {g.evolution_line for g in world if len(g.evolution_line) > 1}
    tuples = {tuple(h.classification for h in world if h.evolution_line == line) for line in multi}
    assert len(tuples) == len(multi) == 4  # the repeated tuple was rejected; the fallback filled in
    assert namer.stats["dropped_rule_violation"] > 0 and namer.stats["fallback_offline"] > 0


def test_make_namer(monkeypatch):
    assert isinstance(make_namer("offline", seed=1), OfflineNamer)
    monkeypatch.setitem(llm.OFFLINE, "echo-names", lambda prompt, **kw: as_json(GOOD))
    assert isinstance(make_namer("offline:echo-names"), LLMNamer)
    with pytest.raises(ValueError, match="text generator"):
        make_namer("nonsense")
