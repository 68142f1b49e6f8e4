"""Short move descriptions written by this project from structured move facts (no reference prose).

Every description states only the facts it was given (class, type, power, accuracy, PP, priority);
the wording variant is a deterministic function of the move, so a move always reads the same.
"""

from __future__ import annotations

import hashlib

from continuousbench.geminon.priors import Move

# Openings by damage class; {A} marks where the article goes, {cls} the damage class, {type} the type.
_DAMAGING = (
    "{A} {cls} {type} move",
    "{A} {type}-type {cls} attack",
    "{A} {cls} attack of the {type} type",
)
_STATUS = (
    "A status move of the {type} type",
    "{A} {type}-type status move",
    "A non-damaging {type} move",
)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _variant(name: str, n: int) -> int:
    # A stable hash (not Python's salted hash()) so the choice is identical across runs and machines.
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big") % n


def _accuracy(move: Move, variant: int) -> str:
    if move.accuracy is None:
        return "never misses"
    return ("has {a}% accuracy", "hits {a}% of the time", "lands with {a}% accuracy")[variant % 3].format(
        a=move.accuracy
    )


def _priority(move: Move) -> str:
    if move.priority > 0:
        return f" It acts with priority +{move.priority}."
    if move.priority < 0:
        return f" It acts with priority {move.priority}."
    return ""


def describe_move(move: Move) -> str:
    """One or two sentences built from ``move``'s facts, e.g. "A special Fire move with 90 power ..."."""
    variant = _variant(move.name, 6)
    opening = (_STATUS if move.damage_class == "status" else _DAMAGING)[variant % 3]
    rest = opening.removeprefix("{A} ").format(cls=move.damage_class, type=move.type)
    head = f"{_article(rest).capitalize()} {rest}" if opening.startswith("{A}") else rest
    if move.power is not None:
        body = f"{head} with {move.power} power that {_accuracy(move, variant)}."
    else:
        body = f"{head} that {_accuracy(move, variant)}."
    if move.pp is not None and variant >= 3:  # half the moves also state their PP
        body += f" It has {move.pp} PP."
    return body + _priority(move)
