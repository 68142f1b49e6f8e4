"""The offline template realizer: varied prose whose every stated fact is in its provenance.

``draft`` only picks a theme and which optional facts an article states (integer draws, cached
mention tuples: no text is built), so pools of millions of candidates are cheap. ``render`` turns
the mention set into prose in the style's voice; phrasing, order and openers come from a PRNG seeded
by ``Draft.seed``, whose low bits also carry the theme, so a draft renders byte-identically anywhere.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate

from continuousbench.geminon.realizers.base import Draft, check_style
from continuousbench.geminon.schema import FEATURES, STATS, Geminon

THEME_BITS = 6  # Draft.seed = (random bits << THEME_BITS) | theme index
ALL = (
    "name",
    "classification",
    "typing",
    "ability",
    *STATS,
    "base_stat_total",
    "weight",
    "height",
    "evolution_line",
    "move",
)

# style -> (theme, weight, features always stated, features each stated with probability 1/2).
# Groups: "typing" = type1 (+ type2 when the entity has one); "move" = move name + description.
THEMES: dict[str, tuple[tuple[str, int, tuple[str, ...], tuple[str, ...]], ...]] = {
    "wiki": (
        ("complete", 3, ALL, ()),
        ("infobox", 2, ALL, ()),
        (
            "identity",
            2,
            ("name", "classification", "typing"),
            ("ability", "base_stat_total", "evolution_line", "height", "weight", "move.name"),
        ),
        (
            "typing",
            2,
            ("name", "typing", "ability"),
            ("classification", "move.name", "attack", "special attack"),
        ),
        ("kit", 2, ("name", "move", "ability"), ("typing", "attack", "special attack", "speed")),
        ("stats", 3, ("name",), (*STATS, *STATS[::2], "base_stat_total")),
        ("physical", 2, ("name", "weight", "height"), ("classification", "typing", "evolution_line", "hp")),
        (
            "evolution",
            2,
            ("name", "evolution_line"),
            ("classification", "move.name", "ability", "base_stat_total"),
        ),
        ("glance", 2, ("name",), ALL[1:]),
    ),
    "journal": (
        (
            "offence",
            2,
            ("name", "attack", "special attack", "move.name"),
            ("move", "speed", "base_stat_total"),
        ),
        ("defence", 2, ("name", "hp", "defense", "special defense"), ("base_stat_total", "weight")),
        ("tempo", 2, ("name", "speed", "attack"), ("special attack", "weight", "height")),
        ("ability", 2, ("name", "ability", "typing"), ("move.name", "base_stat_total", "classification")),
        ("move", 2, ("name", "move"), ("typing", "attack", "special attack")),
        ("size", 2, ("name", "weight", "height"), ("speed", "hp", "classification")),
        ("evolution", 2, ("name", "evolution_line", "classification"), ("base_stat_total", "ability")),
        ("typing", 2, ("name", "typing", "classification"), ("ability", "defense", "special defense")),
        ("teamfit", 2, ("name", "base_stat_total", "typing", "ability"), ("speed", "move.name")),
    ),
    "evolution": (
        ("growth", 2, ("name", "evolution_line", "weight", "height"), ("classification",)),
        ("offence", 2, ("name", "evolution_line", "attack", "special attack"), ("move.name",)),
        ("defence", 2, ("name", "evolution_line", "hp", "defense"), ("special defense",)),
        ("tempo", 2, ("name", "evolution_line", "speed"), ("base_stat_total", "weight")),
        ("types", 2, ("name", "evolution_line", "typing"), ("classification",)),
        ("ability", 1, ("name", "evolution_line", "ability"), ("classification", "move.name")),
        ("moves", 1, ("name", "evolution_line", "move.name"), ("move",)),
        ("breakpoint", 2, ("name", "evolution_line", "base_stat_total"), ("attack", "speed", "hp")),
        ("summary", 2, ("name", "evolution_line", "base_stat_total", "classification"), ("speed", "typing")),
    ),
    "comparison": (
        ("physical", 3, ("name", "weight", "height"), ("typing", "classification")),
        ("combat", 3, ("name",), (*STATS, "attack", "speed", "base_stat_total")),
        ("bulk", 2, ("name", "hp", "defense", "special defense"), ("speed",)),
        ("utility", 2, ("name", "ability", "move.name"), ("move", "evolution_line")),
        ("overall", 2, ("name", "base_stat_total", "typing"), ("speed", "attack")),
    ),
}
_MIN_FEATURES = {"stats": 3, "glance": 5, "combat": 3}  # themes whose optional draws may come up short


def expand(groups: set[str], e: Geminon) -> tuple[str, ...]:
    """Canonical features (schema order) stated by ``groups`` for entity ``e``."""
    out = set(groups) - {"typing", "move"}
    if "typing" in groups:
        out.update(("type1", "type2") if e.type2 is not None else ("type1",))
    if "move" in groups:
        out.update(("move.name", "move.short_description"))
    return tuple(f for f in FEATURES if f in out)


class TemplateRealizer:
    """Offline default realizer (see the module docstring)."""

    name = "template"
    parallel_render = True  # each draft renders from its own seed alone: chunks may render in processes

    def __init__(self) -> None:
        self._cum = {s: list(accumulate(w for _, w, _, _ in t)) for s, t in THEMES.items()}
        self._features: dict[tuple, tuple[str, ...]] = {}  # (style, theme, mask, has type2) -> features

    def _chosen(self, style: str, theme: int, mask: int, e: Geminon) -> tuple[str, ...]:
        key = (style, theme, mask, e.type2 is not None)
        found = self._features.get(key)
        if found is None:
            name, _, core, opt = THEMES[style][theme]
            chosen = set(core) | {g for i, g in enumerate(opt) if mask >> i & 1}
            for g in opt:  # top up deterministically so thin draws still make a real article
                if len(chosen) >= _MIN_FEATURES.get(name, 0):
                    break
                chosen.add(g)
            found = self._features[key] = expand(chosen, e)
        return found

    def draft(self, style: str, subjects: Sequence[Geminon], seed: int, n: int) -> list[Draft]:
        check_style(style, subjects)
        idxs = tuple(e.idx for e in subjects)
        rng = random.Random(f"{style}|{seed}|{idxs}")
        themes, cum = THEMES[style], self._cum[style]
        total, cache, out = cum[-1], {}, []
        random_, getrandbits = rng.random, rng.getrandbits
        for i in range(n):
            # every wiki pool starts with a full-coverage article (sensitive entities need one)
            theme = 0 if i == 0 and style == "wiki" else bisect_right(cum, random_() * total)
            key = (theme, getrandbits(len(themes[theme][3]) or 1))
            mentions = cache.get(key)
            if mentions is None:
                mentions = cache[key] = tuple(
                    (e.idx, f) for e in subjects for f in self._chosen(style, *key, e)
                )
            out.append(Draft(style, idxs, mentions, getrandbits(40) << THEME_BITS | theme))
        return out

    def render(self, drafts: Sequence[Draft], world: Mapping[int, Geminon]) -> list[str]:
        from continuousbench.geminon.realizers import multi, single

        texts = []
        for d in drafts:
            try:
                subjects = [world[i] for i in d.subjects]
            except KeyError as err:
                raise ValueError(f"draft subject {err.args[0]} is not in the world index") from None
            theme = THEMES[d.style][d.seed & (1 << THEME_BITS) - 1][0]
            feats: dict[int, set[str]] = {i: set() for i in d.subjects}
            for i, f in d.mentions:
                feats[i].add(f)
            rng = random.Random(d.seed)
            if d.style in ("wiki", "journal"):
                texts.append(single.render(d.style, theme, subjects[0], feats[d.subjects[0]], rng))
            elif d.style == "evolution":
                texts.append(multi.render_evolution(theme, subjects, feats, rng))
            else:
                texts.append(multi.render_comparison(theme, subjects, feats, rng))
        return texts
