"""Candidate pools, the sensitive articles and the final corpus rows (paper App. G.2).

Pools per public style, as in the paper:

- ``wiki`` / ``journal``: one unit per public entity, ~1000 candidates each in the paper;
- ``evolution``: one unit per multi-stage public line (members in stage order), ~1000 each;
- ``comparison``: one unit per unordered pair of public entities, 3 candidates each.

A unit gets the paper's number of candidates, raised where needed so the pool holds at least
``MIN_OVERSAMPLE`` times the style's target: the world is too small for the paper's ratio in tiny
(276 pairs x 3 < 1200 comparisons), and the paper's medium comparisons (345k candidates for 300k
documents) would leave the sampler almost no choice. With the template realizer the paper's pools are
cheap (a small build drafts 1.46M candidates in ~10 s); for costly realizers (an LLM writes every
candidate) ``oversample`` caps each pool at that multiple of the target instead.

Sensitive entities get one wiki article each, the best-covering of ``SENSITIVE_CANDIDATES`` drafts, and
appear in no other document: public pools only ever take public subjects.

Candidates are kept compact (pair ids in ragged numpy arrays, not ``Draft`` objects), so millions fit
in memory; a selected candidate's ``Draft`` is rebuilt exactly from its row for rendering.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from continuousbench.errors import UserError
from continuousbench.geminon.realizers.base import STYLES, Draft, Realizer
from continuousbench.geminon.schema import FEATURES, Geminon
from continuousbench.geminon.sizes import SizeSpec

if TYPE_CHECKING:
    import pyarrow as pa

PAPER_PER_UNIT: dict[str, int] = {"wiki": 1000, "journal": 1000, "evolution": 1000, "comparison": 3}
OVERSAMPLE: float | None = None  # None: the paper's pool sizes
MIN_OVERSAMPLE = 1.5
SENSITIVE_CANDIDATES = 100
_N_FEATURES = len(FEATURES)
_FEATURE_POS = {f: i for i, f in enumerate(FEATURES)}


class PairIndex:
    """(entity idx, canonical feature) <-> column of the incidence matrix; only applicable pairs exist."""

    def __init__(self, world: Sequence[Geminon]):
        self.entities = [g.idx for g in world]
        self.position = {idx: i for i, idx in enumerate(self.entities)}
        self.ids: dict[tuple[int, str], int] = {
            (g.idx, f): self.position[g.idx] * _N_FEATURES + _FEATURE_POS[f]
            for g in world
            for f in g.features()
        }
        self.n_pairs = len(world) * _N_FEATURES

    def pair(self, pair_id: int) -> tuple[int, str]:
        return self.entities[pair_id // _N_FEATURES], FEATURES[pair_id % _N_FEATURES]


def public_units(world: Sequence[Geminon], style: str) -> list[tuple[int, ...]]:
    """The subject groups a style drafts for, over public entities only."""
    public = [g for g in world if g.subset == "public"]
    if style in ("wiki", "journal"):
        return [(g.idx,) for g in public]
    if style == "evolution":
        lines: dict[int, list[Geminon]] = {}
        for g in public:
            lines.setdefault(g.line, []).append(g)
        return [
            tuple(g.idx for g in sorted(m, key=lambda g: g.stage))
            for _, m in sorted(lines.items())
            if len(m) > 1
        ]
    if style == "comparison":
        return [(a.idx, b.idx) for a, b in combinations(public, 2)]
    raise UserError(f"unknown style {style!r}; use one of {', '.join(STYLES)}")


@dataclass(frozen=True)
class PoolPlan:
    style: str
    units: int
    per_unit: int
    target: int

    @property
    def candidates(self) -> int:
        return self.units * self.per_unit

    @property
    def paper_candidates(self) -> int:
        return self.units * PAPER_PER_UNIT[self.style]


def plan_pool(style: str, units: int, target: int, oversample: float | None = OVERSAMPLE) -> PoolPlan:
    """Per-unit candidates: the paper's count, capped at ``oversample`` x target, >= MIN_OVERSAMPLE x."""
    if units == 0 or target == 0:
        return PoolPlan(style, units, 0, target)
    per_unit = PAPER_PER_UNIT[style]
    if oversample is not None:
        per_unit = min(per_unit, math.ceil(oversample * target / units))
    floor = MIN_OVERSAMPLE if oversample is None else min(oversample, MIN_OVERSAMPLE)
    return PoolPlan(style, units, max(per_unit, math.ceil(floor * target / units), 1), target)


@dataclass
class Pool:
    """One style's candidates: unit, realizer seed and pair ids (ragged, in the draft's mention order)."""

    style: str
    units: list[tuple[int, ...]]
    unit_of: np.ndarray
    seeds: np.ndarray
    indptr: np.ndarray
    pairs: np.ndarray
    texts: list[str | None] | None = None
    dropped: Counter = field(default_factory=Counter)

    def __len__(self) -> int:
        return len(self.unit_of)

    def draft(self, row: int, index: PairIndex) -> Draft:
        """The selected candidate's ``Draft``, exactly as the realizer made it."""
        pairs = self.pairs[self.indptr[row] : self.indptr[row + 1]]
        return Draft(
            style=self.style,
            subjects=self.units[self.unit_of[row]],
            mentions=tuple(index.pair(int(p)) for p in pairs),
            seed=int(self.seeds[row]),
            text=self.texts[row] if self.texts is not None else None,
        )


def _check_draft(draft: Draft, style: str, unit: tuple[int, ...], index: PairIndex) -> str | None:
    """Why a draft cannot enter the pool (its provenance must stay within its own subjects), else None."""
    if draft.style != style or tuple(draft.subjects) != unit:
        return "dropped_wrong_subjects"
    if not draft.mentions:
        return "dropped_no_mentions"
    for m in draft.mentions:
        if m[0] not in unit:
            return "dropped_foreign_mention"
        if m not in index.ids:
            return "dropped_inapplicable_feature"
    if draft.text is not None and not draft.text.strip():
        return "dropped_empty_text"
    return None


UNIT_CHUNK = 2_000  # at most this many units per piece of a pool drafted in a forked process
PIECE_CANDIDATES = 40_000  # and about this many candidates: a wiki pool (1000 per unit) splits too


def draft_pool(
    realizer: Realizer,
    style: str,
    units: Sequence[tuple[int, ...]],
    per_unit: int,
    world: Mapping[int, Geminon],
    index: PairIndex,
    rng: np.random.Generator,
    on_units: Callable[[int], None] | None = None,
) -> Pool:
    """Draft ``per_unit`` candidates for every unit and keep them compactly; count what is dropped.

    Units draft from their own seeds, so pieces of them may run in forked processes
    (:mod:`~continuousbench.geminon.forked`); the pieces are joined in unit order."""
    from continuousbench.geminon.forked import ordered_map

    unit_seeds = rng.integers(0, 2**62, size=len(units))
    step = max(1, min(UNIT_CHUNK, PIECE_CANDIDATES // max(per_unit, 1)))
    pieces = [(a, min(a + step, len(units))) for a in range(0, len(units), step)]
    state = (realizer, style, units, unit_seeds, per_unit, world, index)
    parts: list[tuple] = []
    dropped: Counter = Counter()
    with ordered_map(state, len(pieces), realizer) as ordered:
        for (a, b), part in zip(pieces, ordered(_draft_units, pieces), strict=True):
            parts.append(part)
            dropped.update(part[4])
            if on_units:  # progress: this many more units drafted
                on_units(b - a)
    unit_of, seeds, lengths, pairs = (np.concatenate([p[i] for p in parts] or [[]]) for i in range(4))
    texts = [t for p in parts for t in p[5]]
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return Pool(
        style=style,
        units=list(units),
        unit_of=np.asarray(unit_of, dtype=np.int32),
        seeds=np.asarray(seeds, dtype=np.int64),
        indptr=indptr,
        pairs=np.asarray(pairs, dtype=np.int32),
        texts=texts if any(t is not None for t in texts) else None,
        dropped=dropped,
    )


def _draft_units(state: tuple, piece: tuple[int, int]) -> tuple:
    """Units ``piece[0]:piece[1]`` of a pool: (unit_of, seeds, lengths, pairs) arrays, what was
    dropped, the texts."""
    realizer, style, units, unit_seeds, per_unit, world, index = state
    unit_of: list[int] = []
    seeds: list[int] = []
    lengths: list[int] = []
    pairs: list[int] = []
    texts: list[str | None] = []
    dropped: Counter = Counter()
    ids = index.ids
    for u in range(*piece):
        unit = units[u]
        subjects = [world[i] for i in unit]
        for draft in realizer.draft(style, subjects, int(unit_seeds[u]), per_unit):
            reason = _check_draft(draft, style, unit, index)
            if reason:
                dropped[reason] += 1
                continue
            if not 0 <= draft.seed < 2**63:
                raise UserError(
                    f"realizer {realizer.name!r} gave draft seed {draft.seed}: seeds must fit in 63 bits"
                )
            pairs.extend(ids[m] for m in draft.mentions)
            lengths.append(len(draft.mentions))
            unit_of.append(u)
            seeds.append(draft.seed)
            texts.append(draft.text)
    arrays = (
        np.asarray(unit_of, dtype=np.int32),
        np.asarray(seeds, dtype=np.int64),
        np.asarray(lengths, dtype=np.int64),
        np.asarray(pairs, dtype=np.int32),
    )
    return (*arrays, dropped, texts)


def coverage(draft: Draft, entity: Geminon) -> int:
    """How many of the entity's applicable features a draft states."""
    return len({f for i, f in draft.mentions if i == entity.idx} & set(entity.features()))


def _unusable(draft: Draft, g: Geminon, world: Mapping[int, Geminon]) -> str | None:
    """Why a candidate cannot be ``g``'s sensitive article, or None."""
    from continuousbench.geminon.realizers.grounding import check_grounding

    if draft.subjects != (g.idx,) or any(i != g.idx for i, _ in draft.mentions):
        return "dropped_other_subjects"
    if draft.text is not None and check_grounding(draft.text, draft.mentions, world):
        return "dropped_ungrounded"  # an LLM's text stating facts off its provenance
    return None


def sensitive_articles(
    realizer: Realizer,
    world: Sequence[Geminon],
    rng: np.random.Generator,
    n_candidates: int = SENSITIVE_CANDIDATES,
) -> tuple[list[Draft], dict[str, int]]:
    """One wiki draft per sensitive entity: the best coverage of its applicable features (first of equals).

    Unusable candidates (:func:`_unusable`) are dropped and counted by reason; an entity left with none
    fails in one line: its singleton questions would have no document."""
    by_idx = {g.idx: g for g in world}
    sensitive = [g for g in world if g.subset == "sensitive"]
    seeds = rng.integers(0, 2**62, size=len(sensitive))
    chosen: list[Draft] = []
    full = 0
    dropped: Counter = Counter()
    for g, seed in zip(sensitive, seeds, strict=True):
        drafts = realizer.draft("wiki", [g], int(seed), n_candidates)
        reasons = [_unusable(d, g, by_idx) for d in drafts]
        dropped.update(r for r in reasons if r)
        usable = [d for d, r in zip(drafts, reasons, strict=True) if r is None]
        if not usable:
            why = "".join(f", {n} {r.removeprefix('dropped_')}" for r, n in sorted(Counter(reasons).items()))
            raise UserError(
                f"--realizer {realizer.name} gave no usable article for sensitive entity {g.idx} ({g.name}): "
                f"{len(drafts)} of {n_candidates} drafts readable{why}; use a stronger model or raise "
                "--sensitive_candidates (finished entities are kept: rerun with --resume)"
            )
        best = max(usable, key=lambda d: coverage(d, g))  # max keeps the first of equals
        full += coverage(best, g) == len(g.features())
        chosen.append(best)
    stats = {"entities": len(sensitive), "candidates_per_entity": n_candidates, "full_coverage": full}
    return chosen, stats | dict(sorted(dropped.items()))


class NameFinder:
    """Finds whole-word occurrences of given names, case-insensitively, fast enough for millions of texts.

    Plain one-word names are looked up in a set of the text's words (a regex alternation of hundreds of
    names costs ~0.2 ms per article); names with other characters fall back to a regex. In an ASCII text
    a word is a run of ASCII letters, found with bytes operations (a fifth of the regex's time).
    """

    _WORD = re.compile(r"[^\W\d_]+")
    _ASCII_WORDS = bytes(c if chr(c).isascii() and chr(c).isalpha() else 32 for c in range(256))

    def __init__(self, names: Iterable[str]):
        names = set(names)
        self.words = {n.lower() for n in names if self._WORD.fullmatch(n)}
        self.ascii_words = {w.encode() for w in self.words if w.isascii()}
        others = sorted(names - {n for n in names if self._WORD.fullmatch(n)}, key=len, reverse=True)
        self.pattern = (
            re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in others) + r")(?!\w)", re.IGNORECASE)
            if others
            else None
        )

    def search(self, text: str) -> bool:
        if text.isascii():
            words = text.encode().lower().translate(self._ASCII_WORDS).split()
            if not self.ascii_words.isdisjoint(words):
                return True
        elif self.words and not self.words.isdisjoint(self._WORD.findall(text.lower())):
            return True
        return self.pattern is not None and self.pattern.search(text) is not None


def corpus_split(
    public: np.ndarray, spec: SizeSpec, rng: np.random.Generator, held: set[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The documents' shuffled order and, position by position, whether that document goes to validation.

    ``public`` flags the public documents: the first ``corpus_validation_fraction`` of them in the shuffled
    order go to validation (sensitive ones never do), unless ``held`` (positions in the documents of a
    held-out split, :mod:`~continuousbench.geminon.heldout`) names the validation documents exactly.
    """
    order = rng.permutation(len(public))
    if held is not None:
        return order, np.isin(order, np.fromiter(held, dtype=np.int64, count=len(held)))
    shuffled = public[order]
    n_val = round(spec.corpus_validation_fraction * int(public.sum()))
    return order, shuffled & (np.cumsum(shuffled) <= n_val)


def doc_ids(release_id: str, n: int) -> list[str]:
    """``<release id>/<position>``, zero-padded to at least 7 digits, for positions ``0..n-1``."""
    width = max(7, len(str(n)))
    return [f"{release_id}/{position:0{width}d}" for position in range(n)]


def corpus_rows(
    docs: Sequence[dict],
    spec: SizeSpec,
    release_id: str,
    rng: np.random.Generator,
    held: set[int] | None = None,
) -> dict[str, list[dict]]:
    """Shuffle the documents, give them ids, and split public ones into train/validation
    (:func:`corpus_split`); ``docs`` rows carry ``text, style, subset, entities, mentions``."""
    public = np.array([d["subset"] == "public" for d in docs], dtype=bool)
    order, to_val = corpus_split(public, spec, rng, held)
    splits: dict[str, list[dict]] = {"train": [], "validation": []}
    for doc_id, i, val in zip(doc_ids(release_id, len(docs)), order, to_val, strict=True):
        splits["validation" if val else "train"].append({"id": doc_id, **docs[int(i)]})
    return splits


def corpus_tables(
    docs: pa.Table, spec: SizeSpec, release_id: str, rng: np.random.Generator, held: set[int] | None = None
) -> dict[str, pa.Table]:
    """:func:`corpus_rows` for an arrow table of documents: the same splits as arrow tables (``id``
    first), taken column by column, so a million texts are never a million Python objects (a table of
    one chunk per column gives splits of one chunk per column)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    public = pc.equal(docs["subset"], "public").to_numpy(zero_copy_only=False)
    order, to_val = corpus_split(public, spec, rng, held)
    ids = pa.array(doc_ids(release_id, len(order)), pa.string())
    return {
        split: docs.take(order[mask]).add_column(0, "id", ids.filter(mask))
        for split, mask in (("train", ~to_val), ("validation", to_val))
    }


def unique_mentions(mentions: list[str]) -> list[str]:
    """A document's ``"idx:feature"`` mentions deduplicated in the order stated (its ``mentions`` column)."""
    return mentions if len(set(mentions)) == len(mentions) else list(dict.fromkeys(mentions))
