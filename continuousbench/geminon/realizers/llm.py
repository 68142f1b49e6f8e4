"""The LLM realizer: a text generator writes the articles and lists their provenance (paper App. G.2).

Answers are read by the one tolerant parser of model JSON (:func:`continuousbench.llm.parse.json_objects`:
fences, prose around the list, trailing commas, broken items dropped and counted) and provenance strings
are normalised to the 17 canonical features.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from continuousbench.errors import UserError
from continuousbench.geminon.realizers.base import Draft, check_style
from continuousbench.geminon.realizers.grounding import check_grounding
from continuousbench.geminon.realizers.llm_prompts import build_prompt
from continuousbench.geminon.schema import FEATURES, Geminon
from continuousbench.llm import TextGenerator
from continuousbench.llm.parse import json_objects

# Prefixes models put before a key: "g1_info.", "geminon1.", "data.", "base form:" ...
_PREFIX = re.compile(
    r"^(?:(?:g\d*_info|g\d+|geminon\s*\d*|gem\d*|data|info|stats?|base form|middle stage|final stage|"
    r"stage\s*\d|base_stats|attributes)\s*[._:/>-]\s*)+"
)
# Variants and typos seen in provenance lists -> canonical feature.
ALIASES: dict[str, str] = {
    **dict.fromkeys(("species", "species name", "geminon name", "nam", "names"), "name"),
    **dict.fromkeys(
        (
            "class",
            "category",
            "species classification",
            "classificaton",
            "clasification",
            "classifications",
            "title",
        ),
        "classification",
    ),
    **dict.fromkeys(
        ("type", "type 1", "type_1", "primary type", "first type", "type one", "typ1", "type1_name"), "type1"
    ),
    **dict.fromkeys(("type 2", "type_2", "secondary type", "second type", "type two", "typ2"), "type2"),
    **dict.fromkeys(("abilities", "ablity", "abilty", "passive", "passive ability", "trait"), "ability"),
    **dict.fromkeys(("health", "hit points", "health points", "hit_points", "hps"), "hp"),
    **dict.fromkeys(("atk", "attack stat", "physical attack", "attak", "phys attack"), "attack"),
    **dict.fromkeys(("def", "defence", "physical defense", "defense stat", "defens"), "defense"),
    **dict.fromkeys(
        (
            "sp_atk",
            "sp. atk",
            "spatk",
            "sp atk",
            "special_attack",
            "spa",
            "sp.atk",
            "special-attack",
            "spattack",
            "special atk",
            "sp_attack",
            "special attack stat",
            "spl attack",
        ),
        "special attack",
    ),
    **dict.fromkeys(
        (
            "sp_def",
            "sp. def",
            "spdef",
            "sp def",
            "special_defense",
            "special defence",
            "sp.def",
            "special-defense",
            "special def",
            "sp_defense",
            "special_defence",
        ),
        "special defense",
    ),
    **dict.fromkeys(("spd", "spe", "speed stat", "spead", "velocity"), "speed"),
    **dict.fromkeys(
        (
            "bst",
            "base stat total",
            "total",
            "stat total",
            "base stats total",
            "basestattotal",
            "total stats",
            "base_total",
            "stat_total",
            "base stat",
            "stats total",
        ),
        "base_stat_total",
    ),
    **dict.fromkeys(
        ("weight_lbs", "weight (lbs)", "weight_lb", "wt", "mass", "weight lbs", "weigth"), "weight"
    ),
    **dict.fromkeys(("height_m", "height (m)", "ht", "height m", "hight", "heigth"), "height"),
    **dict.fromkeys(
        (
            "evolution line",
            "evolution",
            "evolutions",
            "evolution chain",
            "evo_line",
            "line",
            "evolution_chain",
            "evolution stage",
            "evolutionary line",
            "evolves",
        ),
        "evolution_line",
    ),
    **dict.fromkeys(
        ("move", "move_name", "move name", "signature move", "moves", "move.title", "movename"), "move.name"
    ),
    **dict.fromkeys(
        (
            "move.description",
            "move_description",
            "move.desc",
            "description",
            "short_description",
            "move effect",
            "move.effect",
            "move short description",
            "move.short_desc",
            "move desc",
            "move.shortdescription",
            "short description",
            "move_short_description",
        ),
        "move.short_description",
    ),
}
# Keys that stand for several features at once; callers expand them (type2 only where it exists).
EXPAND: dict[str, tuple[str, ...]] = dict.fromkeys(
    ("types", "typing", "type1/type2", "type1 and type2", "type1+type2", "type(s)"), ("type1", "type2")
) | dict.fromkeys(
    ("move.*", "move (name and description)", "move details"), ("move.name", "move.short_description")
)


def normalize_feature(raw: str) -> str | None:
    """The canonical feature a provenance string names, or None when it cannot be resolved."""
    s = _PREFIX.sub("", str(raw).strip().strip("`'\" ").lower()).strip()
    if s in FEATURES:
        return s
    if s in ALIASES:
        return ALIASES[s]
    s = s.replace("_", " ")
    if s in FEATURES:
        return s
    return ALIASES.get(s)


def parse_articles(raw: str) -> tuple[list[dict], Counter]:
    """Article objects (a non-empty ``text``) from a model answer, and counts of what was dropped and why."""
    items, stats = json_objects(raw)
    out = [item for item in items if isinstance(item.get("text"), str) and item["text"].strip()]
    stats["dropped_missing_text"] += len(items) - len(out)
    return out, +stats


def _provenance(item: dict, n_subjects: int) -> dict[int, list]:
    """Provenance lists by subject position: ``used_1``/``g1_info``/``geminon2`` ... (1-based)."""
    lists: dict[int, list] = {}
    flat = [(k, v) for k, v in item.items() if k != "text" and isinstance(v, list)]
    for outer in (v for k, v in item.items() if isinstance(v, dict)):  # {"provenance": {"g1": [...]}}
        flat += [(str(k), v) for k, v in outer.items() if isinstance(v, list)]
    for key, value in flat:
        digits = re.findall(r"\d", key)
        pos = int(digits[0]) - 1 if digits else 0
        if 0 <= pos < n_subjects:
            lists.setdefault(pos, []).extend(value)
    return lists


def draft_seed(seed: int, k: int) -> int:
    """A 63-bit id for the ``k``-th draft of a call seeded ``seed`` (pools store seeds as int64).

    The text travels in the draft, so the seed only has to be distinct and reproducible; unit seeds
    already use up to 62 bits, so ``seed * 1_000_000 + k`` would overflow.
    """
    return int(np.random.SeedSequence([seed, k]).generate_state(1, dtype=np.uint64)[0] >> 1)


class LLMRealizer:
    """Drafting calls the generator; the texts and normalised mentions are stored in the drafts."""

    def __init__(
        self, generator: TextGenerator, articles_per_call: int = 10, strict: bool = False, **sampling: Any
    ) -> None:
        if articles_per_call < 1:
            raise UserError(f"articles_per_call must be >= 1, got {articles_per_call}")
        self.generator, self.articles_per_call, self.strict = generator, articles_per_call, strict
        self.sampling = {"temperature": 1.0, "max_new_tokens": 4096} | sampling
        self.name = f"llm:{generator.name}"
        self.stats: Counter = Counter()

    def _mentions(self, item: dict, subjects: Sequence[Geminon]) -> tuple[tuple[int, str], ...]:
        found: set[tuple[int, str]] = set()
        for pos, raws in _provenance(item, len(subjects)).items():
            e = subjects[pos]
            for raw in raws:
                key = str(raw).strip().lower()
                feats = EXPAND.get(key) or ((normalize_feature(raw),) if normalize_feature(raw) else ())
                if not feats:
                    self.stats["unresolved_feature"] += 1
                for f in feats:
                    if f == "type2" and e.type2 is None:
                        self.stats["dropped_inapplicable_feature"] += key not in EXPAND
                    else:
                        found.add((e.idx, f))
        for e in subjects:  # a text that names a Geminon mentions its name, whatever the list says
            if (e.idx, "name") not in found and re.search(
                rf"(?<![A-Za-z]){re.escape(e.name)}(?![A-Za-z])", item["text"]
            ):
                found.add((e.idx, "name"))
                self.stats["added_name_mention"] += 1
        order = {f: k for k, f in enumerate(FEATURES)}
        return tuple(sorted(found, key=lambda m: ([e.idx for e in subjects].index(m[0]), order[m[1]])))

    def draft(self, style: str, subjects: Sequence[Geminon], seed: int, n: int) -> list[Draft]:
        check_style(style, subjects)
        calls = -(-n // self.articles_per_call)
        prompts = [
            build_prompt(style, subjects, self.articles_per_call, seed * 1000 + c) for c in range(calls)
        ]
        answers = self.generator.generate(prompts, seed=seed, **self.sampling)
        world = {e.idx: e for e in subjects}
        drafts: list[Draft] = []
        for answer in answers:
            items, dropped = parse_articles(answer)
            self.stats.update(dropped)
            for item in items:
                mentions = self._mentions(item, subjects)
                if self.strict and check_grounding(item["text"], mentions, world):
                    self.stats["dropped_ungrounded"] += 1
                    continue
                idxs = tuple(e.idx for e in subjects)
                drafts.append(
                    Draft(style, idxs, mentions, draft_seed(seed, len(drafts)), item["text"].strip())
                )
        self.stats["articles"] += min(n, len(drafts))
        self.stats["short_of_requested"] += max(0, n - len(drafts))
        return drafts[:n]

    def render(self, drafts: Sequence[Draft], world: Mapping[int, Geminon]) -> list[str]:
        missing = [d.seed for d in drafts if d.text is None]
        if missing:
            raise UserError(
                f"{len(missing)} drafts carry no text; LLM drafts must come from LLMRealizer.draft"
            )
        return [d.text for d in drafts]  # type: ignore[misc]
