"""Hand-made Ghost-type entities for the QA and LLM-realizer tests (a module: test files do not import
each other)."""

from __future__ import annotations

from continuousbench.geminon.schema import Geminon

# What every hand-made ghost has; the tests check answers and drafts against these values.
SHARED = {
    "hp": 79,
    "attack": 48,
    "defense": 56,
    "special_attack": 23,
    "special_defense": 88,
    "speed": 84,
    "base_stat_total": 378,
    "weight": 198,
    "height": 14,
    "move_name": "Poltergeist",
}


def ghost(idx: int, name: str, type2: str | None, **fields) -> Geminon:
    """A ghost with the :data:`SHARED` stats; ``fields`` gives the rest (classification, line, stage...)."""
    return Geminon(idx=idx, name=name, type2=type2, **SHARED, **fields)
