"""Names and classifications for evolution lines (paper App. G.1.4): an offline namer and an LLM namer.

Rules every line must meet (``line_violation``): one (name, classification) per stage; names of
6-12 letters, unique, not a real Pokémon species name, not forbidden, sharing a root (a common
prefix of at least 3 letters) along a multi-stage line; classifications ``"<Noun> Geminon"``; a
multi-stage line's classification tuple not forbidden (no two multi-stage lines share one).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Protocol

import numpy as np

from continuousbench.geminon.themes import THEMES, noun_groups
from continuousbench.llm import TextGenerator
from continuousbench.llm.parse import json_objects

log = logging.getLogger(__name__)

NAME_MIN, NAME_MAX = 6, 12
ROOT_MIN = 3  # letters a line's names must share at the start
CLASS_SUFFIX = " Geminon"
_CLASSIFICATION = re.compile(r"[A-Z][A-Za-z'-]*(?: [A-Z][A-Za-z'-]*)? Geminon")

ONSETS = (
    "b",
    "br",
    "ch",
    "d",
    "dr",
    "f",
    "fl",
    "g",
    "gl",
    "gr",
    "k",
    "kr",
    "l",
    "m",
    "n",
    "p",
    "pr",
    "qu",
    "r",
    "s",
    "sh",
    "sk",
    "sn",
    "st",
    "t",
    "th",
    "tr",
    "v",
    "vr",
    "w",
    "z",
    "zh",
)
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "y")
CODAS = ("", "", "", "n", "r", "l", "x", "m", "sk", "th", "nd")
# Suffixes by position in a line: young forms sound small, final forms grand; single-stage lines
# take a middle or final suffix.
SUFFIXES: dict[str, tuple[str, ...]] = {
    "first": ("let", "mote", "kit", "pip", "bit", "ee", "nub", "wisp"),
    "middle": ("ran", "dor", "lash", "vex", "mar", "rix", "tor", "zel"),
    "final": ("stat", "gon", "thrax", "mora", "zar", "dreth", "lord", "naught"),
}
SUFFIXES["single"] = SUFFIXES["middle"] + SUFFIXES["final"]
POSITIONS: dict[int, tuple[str, ...]] = {
    1: ("single",),
    2: ("first", "final"),
    3: ("first", "middle", "final"),
}


class Namer(Protocol):
    """Names one evolution line: ``stages`` are the line's attribute dicts in stage order."""

    def name_line(
        self, stages: list[dict], forbidden: set[str], forbidden_tuples: Collection[tuple[str, ...]] = ()
    ) -> list[tuple[str, str]]: ...


def _real_names() -> frozenset[str]:
    from continuousbench.geminon.priors import load_priors

    return frozenset(n.lower() for n in load_priors().species_names)


def line_violation(
    named: Sequence[tuple[str, str]],
    n_stages: int,
    forbidden: Collection[str],
    forbidden_tuples: Collection[tuple[str, ...]],
    real_names: Collection[str],
) -> str | None:
    """Why ``named`` breaks a rule (one line, usable as re-query feedback), or None when it is valid."""
    if len(named) != n_stages:
        return f"expected {n_stages} stages, got {len(named)}"
    blocked = {n.lower() for n in forbidden} | {n.lower() for n in real_names}
    names = [n for n, _ in named]
    for name, classification in named:
        if not (name.isalpha() and NAME_MIN <= len(name) <= NAME_MAX):
            return f"name {name!r} must be {NAME_MIN}-{NAME_MAX} letters"
        if name.lower() in blocked:
            return f"name {name!r} is already taken or is a real Pokemon name"
        if not _CLASSIFICATION.fullmatch(classification):
            return f"classification {classification!r} must read '<Noun>{CLASS_SUFFIX}'"
    if len({n.lower() for n in names}) != len(names):
        return f"names {names} repeat within the line"
    if n_stages > 1 and len(os.path.commonprefix([n.lower() for n in names])) < ROOT_MIN:
        return f"names {names} must share a root of at least {ROOT_MIN} letters"
    if n_stages > 1 and tuple(c for _, c in named) in set(forbidden_tuples):
        return f"classification tuple {tuple(c for _, c in named)} is already used by another line"
    return None


class OfflineNamer:
    """Syllable-based names (root + position suffix) and themed classifications, seeded."""

    def __init__(self, seed: int = 0, real_names: Collection[str] | None = None, max_tries: int = 1000):
        self.rng = np.random.default_rng(seed)
        self.real_names = (
            frozenset(n.lower() for n in real_names) if real_names is not None else _real_names()
        )
        self.max_tries = max_tries
        self._roots: set[str] = set()

    def _pick(self, options: Sequence[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    def _root(self) -> str:
        syllables = 1 + int(self.rng.integers(2))
        root = "".join(self._pick(ONSETS) + self._pick(VOWELS) for _ in range(syllables))
        return root + self._pick(CODAS)

    def _names(self, n_stages: int) -> list[str]:
        root = self._root()
        suffixes = [self._pick(SUFFIXES[p]) for p in POSITIONS[n_stages]]
        return [(root + s).capitalize() for s in suffixes]

    def _classifications(self, stages: list[dict], widen: bool) -> tuple[str, ...]:
        groups = noun_groups(stages[0]["type1"])
        if stages[-1].get("type2"):  # a late secondary type may inspire the theme too
            groups += noun_groups(stages[-1]["type2"])
        if widen:  # the line's own themes are used up by earlier lines: borrow from every type
            groups = [g for t in THEMES for g in noun_groups(t)]
        group = groups[int(self.rng.integers(len(groups)))]
        # Non-decreasing positions in a small-to-grand group: the noun stays or grows along the line.
        picks = np.sort(self.rng.integers(len(group), size=len(stages)))
        return tuple(group[i] + CLASS_SUFFIX for i in picks)

    def name_line(
        self, stages: list[dict], forbidden: set[str], forbidden_tuples: Collection[tuple[str, ...]] = ()
    ) -> list[tuple[str, str]]:
        tuples = set(forbidden_tuples)
        for attempt in range(self.max_tries):
            relaxed = attempt >= self.max_tries // 2  # preferences give way before the rules do
            names = self._names(len(stages))
            named = list(zip(names, self._classifications(stages, widen=relaxed), strict=True))
            root = names[0][:ROOT_MIN].lower()
            if len(stages) > 1 and root in self._roots and not relaxed:
                continue  # distinct roots between lines keep lines easy to tell apart
            if line_violation(named, len(stages), forbidden, tuples, self.real_names) is None:
                self._roots.add(root)
                return named
        raise RuntimeError(f"OfflineNamer found no valid names in {self.max_tries} tries; raise max_tries")


PROMPT = """You name creatures for an invented monster encyclopedia. Below is one evolution line as JSON
(stage order, with types, battle stats, size, ability and signature move):

{line}

Give every stage a NAME and a CLASSIFICATION, following these rules:
- names are single invented words of {lo}-{hi} letters, pronounceable, not real words and not names of
  existing Pokemon; all names of the line start with the same root of at least {root} letters and grow
  more elaborate with each stage;
- a classification is one common real-world noun followed by " Geminon" (e.g. "Lantern Geminon"); it
  fits the line's types and stays the same or changes to a related noun from stage to stage.
{feedback}
Answer with JSON only, in this shape:
{{"stages": [{{"name": "...", "classification": "... Geminon"}}]}}
"""


def parse_named(text: str) -> list[tuple[str, str]] | None:
    """(name, classification) pairs from a model answer (``{"stages": [...]}`` or the bare list), read by
    the one tolerant parser of model JSON (fences, chatter, trailing commas); None if absent."""
    items, _ = json_objects(text)
    stages = next((i["stages"] for i in items if isinstance(i.get("stages"), list)), items)
    try:
        named = [(str(s["name"]).strip(), str(s["classification"]).strip()) for s in stages]
    except (KeyError, TypeError):
        return None
    return named or None


class LLMNamer:
    """Asks a text generator for a line's names; re-queries with feedback on a rule violation and,
    after ``max_retries`` failed answers, falls back to the offline namer (counted in ``stats``)."""

    def __init__(
        self,
        generator: TextGenerator,
        max_retries: int = 5,
        *,
        seed: int = 0,
        temperature: float = 0.7,
        real_names: Collection[str] | None = None,
    ):
        self.generator = generator
        self.max_retries = max_retries
        self.seed = seed
        self.temperature = temperature
        self.real_names = (
            frozenset(n.lower() for n in real_names) if real_names is not None else _real_names()
        )
        self.fallback = OfflineNamer(seed, real_names=self.real_names)
        self.stats: Counter = Counter()

    def prompt(self, stages: list[dict], feedback: str = "") -> str:
        line = json.dumps(stages, indent=1, ensure_ascii=False, sort_keys=True)
        return PROMPT.format(line=line, lo=NAME_MIN, hi=NAME_MAX, root=ROOT_MIN, feedback=feedback)

    def name_line(
        self, stages: list[dict], forbidden: set[str], forbidden_tuples: Collection[tuple[str, ...]] = ()
    ) -> list[tuple[str, str]]:
        tuples = set(forbidden_tuples)
        rejected: list[str] = []
        feedback = ""
        for attempt in range(self.max_retries):
            self.stats["queries"] += 1
            answer = self.generator.generate(
                [self.prompt(stages, feedback)],
                temperature=self.temperature,
                seed=self.seed + attempt,
                max_new_tokens=512,
            )[0]
            named = parse_named(answer)
            if named is None:
                self.stats["dropped_malformed_json"] += 1
                feedback = "\nYour previous answer was not valid JSON of the requested shape.\n"
                continue
            problem = line_violation(named, len(stages), forbidden, tuples, self.real_names)
            if problem is None:
                return named
            self.stats["dropped_rule_violation"] += 1
            rejected += [n for n, _ in named]
            if len(stages) > 1:
                rejected.append(" / ".join(c for _, c in named))
            feedback = (
                f"\nYour previous answer was rejected: {problem}. Do not use any of these again: "
                f"{', '.join(dict.fromkeys(rejected))}.\n"
            )
        self.stats["fallback_offline"] += 1
        log.warning("LLM namer gave no valid answer in %d tries; using the offline namer", self.max_retries)
        return self.fallback.name_line(stages, forbidden, tuples)


def make_namer(spec: str, seed: int = 0, generator: TextGenerator | None = None) -> Namer:
    """``"offline"`` -> OfflineNamer(seed); anything else is a ``continuousbench.llm.make_generator`` spec
    (``generator``: the one already built from it)."""
    if spec == "offline":
        return OfflineNamer(seed)
    from continuousbench.llm import make_generator

    return LLMNamer(generator or make_generator(spec), seed=seed)
