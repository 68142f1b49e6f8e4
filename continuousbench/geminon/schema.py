"""The Geminon record (paper App. G.1.4) and the 17 canonical features that provenance uses."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# The six battle stats, in the order the paper lists them; BST is their sum.
STATS: tuple[str, ...] = ("hp", "attack", "defense", "special attack", "special defense", "speed")

# Canonical feature names (paper Table 28): every provenance string is normalised to one of these.
FEATURES: tuple[str, ...] = (
    "name",
    "classification",
    "type1",
    "type2",
    "ability",
    "hp",
    "attack",
    "defense",
    "special attack",
    "special defense",
    "speed",
    "base_stat_total",
    "weight",
    "height",
    "evolution_line",
    "move.name",
    "move.short_description",
)

# Feature -> column of the `entities` config / attribute of `Geminon` (snake case, no dots).
FEATURE_COLUMN: dict[str, str] = {f: f.replace(" ", "_").replace(".", "_") for f in FEATURES} | {
    "move.short_description": "move_description",
}


@dataclass(frozen=True)
class Geminon:
    """One entity of the world index. Units as in the paper: weight in lbs, height in m (integers)."""

    idx: int
    name: str
    classification: str
    type1: str
    type2: str | None
    ability: str
    hp: int
    attack: int
    defense: int
    special_attack: int
    special_defense: int
    speed: int
    base_stat_total: int
    weight: int
    height: int
    evolution_line: tuple[str, ...]
    move_name: str
    move_description: str
    line: int  # index of the evolution line (0-based, in id order)
    stage: int  # 1, 2 or 3
    subset: str  # "public" or "sensitive"

    def value(self, feature: str) -> Any:
        """The value of a canonical feature (``"special attack"``, ``"move.name"`` ...)."""
        return getattr(self, FEATURE_COLUMN[feature])

    def features(self) -> tuple[str, ...]:
        """Canonical features that apply to this entity (``type2`` only when it has one)."""
        return tuple(f for f in FEATURES if f != "type2" or self.type2 is not None)

    def to_record(self) -> dict[str, Any]:
        """A flat row for the `entities` config."""
        row = asdict(self)
        row["evolution_line"] = list(self.evolution_line)
        return row

    @classmethod
    def from_record(cls, row: dict[str, Any]) -> Geminon:
        fields = {k: row[k] for k in cls.__dataclass_fields__}
        fields["evolution_line"] = tuple(fields["evolution_line"])
        return cls(**fields)


def mention(idx: int, feature: str) -> str:
    """The provenance string stored in a document's `mentions` column."""
    if feature not in FEATURE_COLUMN:
        raise ValueError(f"unknown feature {feature!r}; expected one of {', '.join(FEATURES)}")
    return f"{idx}:{feature}"


def parse_mention(text: str) -> tuple[int, str]:
    idx, _, feature = text.partition(":")
    return int(idx), feature
