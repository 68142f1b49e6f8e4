"""Move descriptions state the move's facts, in our words, deterministically."""

from __future__ import annotations

from continuousbench.geminon.moves import describe_move
from continuousbench.geminon.priors import Move, load_priors


def test_descriptions_state_facts():
    fire = Move("Heat Wave", "Fire", "special", 95, 90, 10, 0)
    text = describe_move(fire)
    assert "Fire" in text and "special" in text and "95 power" in text and "90%" in text
    status = Move("Calm Mind", "Psychic", "status", None, None, 20, 0)
    text = describe_move(status)
    assert "never misses" in text and "power" not in text and "Psychic" in text
    assert "priority +1" in describe_move(Move("Quick Jab", "Normal", "physical", 40, 100, 30, 1))
    assert "priority -4" in describe_move(Move("Slow Hit", "Ice", "physical", 60, 100, 10, -4))


def test_descriptions_deterministic_and_varied():
    moves = load_priors().moves
    texts = [describe_move(m) for m in moves]
    assert texts == [describe_move(m) for m in moves]
    openings = {
        t.split(" with ")[0].split(" that ")[0].replace(m.type, "T")
        for t, m in zip(texts, moves, strict=True)
    }
    assert len(openings) >= 6  # several wordings, not one template
    for text, move in zip(texts, moves, strict=True):
        assert move.type in text
        assert (f"{move.power} power" in text) == (move.power is not None)
        assert (f"{move.accuracy}%" in text) == (move.accuracy is not None)
