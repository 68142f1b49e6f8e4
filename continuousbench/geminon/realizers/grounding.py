"""Checks that an article states exactly its provenance: every mentioned value verbatim, no other facts.

Used by the tests on thousands of rendered articles, and usable on LLM output to audit its
provenance lists. The check is lexical: names, types, abilities, moves, descriptions and numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from continuousbench.geminon.schema import STATS, Geminon, parse_mention

NUMERIC = frozenset((*STATS, "base_stat_total", "weight", "height"))
STRINGS = ("classification", "type1", "type2", "ability", "move.name", "move.short_description")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w])")
_UNIT = {"weight": "{} lbs", "height": "{} m"}
_NAME_RE: dict[int, tuple[re.Pattern, dict[str, int]]] = {}


def _word(value: str) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z])" + re.escape(value) + r"(?![A-Za-z])")


def _names(world: Mapping[int, Geminon]) -> tuple[re.Pattern, dict[str, int]]:
    """One regex matching any entity name of ``world`` (cached per world object)."""
    key = id(world)
    if key not in _NAME_RE:
        by_name = {e.name: e.idx for e in world.values()}
        alt = "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True))
        _NAME_RE.clear()  # keep one world only: ids of dead objects may be reused
        _NAME_RE[key] = (re.compile(r"(?<![A-Za-z])(?:" + alt + r")(?![A-Za-z])"), by_name)
    return _NAME_RE[key]


def check_grounding(
    text: str, mentions: Iterable[tuple[int, str] | str], world: Mapping[int, Geminon]
) -> list[str]:
    """Problems found in ``text`` given its ``mentions`` ((idx, feature) or ``"idx:feature"``)."""
    pairs = {parse_mention(m) if isinstance(m, str) else tuple(m) for m in mentions}
    problems: list[str] = []
    unknown = {i for i, _ in pairs if i not in world}
    if unknown:
        return [f"mentioned entity {i} is not in the world" for i in sorted(unknown)]
    masked, stated = text, []
    for i, f in pairs:
        e = world[i]
        if f == "evolution_line":
            stated += [(i, f, n) for n in e.evolution_line]
        elif f in STRINGS or f == "name":
            value = e.value(f)
            if value is None:
                problems.append(f"{i}:{f} is mentioned but the entity has no {f}")
            else:
                stated.append((i, f, value))
        elif f in NUMERIC:
            form = _UNIT.get(f, "{}").format(e.value(f))
            if not re.search(r"(?<![\w.])" + re.escape(form) + r"(?![\w])", text):
                problems.append(f"{i}:{f} value {form!r} is not stated")
        else:
            problems.append(f"unknown feature {f!r} in mentions")
    for i, f, value in sorted(stated, key=lambda s: -len(s[2])):
        pattern = _word(value)
        if not pattern.search(text):
            problems.append(f"{i}:{f} value {value!r} is not stated")
        masked = pattern.sub("§", masked)
    allowed = {world[i].value(f) for i, f in pairs if f in NUMERIC}
    problems += [
        f"number {n} is not a mentioned value" for n in _NUMBER.findall(masked) if int(n) not in allowed
    ]
    pattern, by_name = _names(world)
    covered = {n for i, f in pairs if f == "evolution_line" for n in world[i].evolution_line}
    named = {i for i, f in pairs if f == "name"}
    for name in set(pattern.findall(text)):
        if by_name[name] not in named and name not in covered:
            problems.append(f"name {name!r} is stated without its name mention")
    for i in {i for i, _ in pairs}:
        e = world[i]
        for f in STRINGS:
            value = e.value(f)
            if (i, f) not in pairs and value and _word(value).search(masked):
                problems.append(f"{i}:{f} value {value!r} is stated but not mentioned")
    return problems
