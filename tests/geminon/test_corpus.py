"""Candidate pools, sensitive articles and corpus rows, with a fake realizer on the real tiny world."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from continuousbench.geminon import corpus as C
from continuousbench.geminon.realizers.base import Draft
from continuousbench.geminon.sizes import get_size
from continuousbench.geminon.world import build_world


@pytest.fixture(scope="module")
def world():
    return build_world(get_size("tiny"), 0)


class FakeRealizer:
    """Draft i states the first i+1 features of each subject; some drafts break the provenance rules."""

    name = "fake"

    def __init__(self, bad: str | None = None):
        self.bad = bad
        self.made: list[Draft] = []

    def draft(self, style, subjects, seed, n):
        out = []
        for i in range(n):
            mentions = tuple((g.idx, f) for g in subjects for f in g.features()[: i % 17 + 1])
            if self.bad == "foreign" and i == 0:
                mentions += ((1, "name"),)
            if self.bad == "empty" and i == 1:
                mentions = ()
            out.append(Draft(style, tuple(g.idx for g in subjects), mentions, seed % 2**40 * 16 + i))
        self.made += out
        return out

    def render(self, drafts, world):
        return [" ".join(world[i].name for i in d.subjects) for d in drafts]


def test_units_use_public_entities_only(world):
    public = {g.idx for g in world if g.subset == "public"}
    for style in ("wiki", "journal", "evolution", "comparison"):
        units = C.public_units(world, style)
        assert units and all(set(u) <= public for u in units)
    n = len(public)
    assert len(C.public_units(world, "comparison")) == n * (n - 1) // 2
    stages = {g.idx: g.stage for g in world}
    evolution = C.public_units(world, "evolution")
    assert all(len(u) > 1 and [stages[i] for i in u] == list(range(1, len(u) + 1)) for u in evolution)
    with pytest.raises(ValueError, match="unknown style"):
        C.public_units(world, "poem")


def test_draft_pool_is_compact_exact_and_counts_drops(world):
    by_idx = {g.idx: g for g in world}
    index = C.PairIndex(world)
    units = C.public_units(world, "comparison")[:5]
    fake = FakeRealizer("foreign")
    pool = C.draft_pool(fake, "comparison", units, 4, by_idx, index, np.random.default_rng(0))
    assert len(pool) == 15 and pool.dropped == Counter({"dropped_foreign_mention": 5})
    kept = [d for i, d in enumerate(fake.made) if i % 4]  # the first draft of each unit was dropped
    assert [pool.draft(row, index) for row in range(len(pool))] == kept  # rebuilt exactly
    empty = C.draft_pool(FakeRealizer("empty"), "wiki", units[:1], 3, by_idx, index, np.random.default_rng(0))
    assert empty.dropped == Counter({"dropped_no_mentions": 1}) and len(empty) == 2


def test_draft_pool_pieces_follow_the_candidate_count(world, monkeypatch):
    """Many candidates per unit make pieces of fewer units; the pool is the same however it is cut."""
    from continuousbench.geminon import forked

    by_idx, index = {g.idx: g for g in world}, C.PairIndex(world)
    units = C.public_units(world, "comparison")[:9]
    whole = C.draft_pool(FakeRealizer(), "comparison", units, 4, by_idx, index, np.random.default_rng(0))
    pieces, original = [], forked.ordered_map
    monkeypatch.setattr(forked, "ordered_map", lambda s, n, r: pieces.append(n) or original(s, n, r))
    monkeypatch.setattr(C, "PIECE_CANDIDATES", 8)  # 2 units of 4 candidates per piece
    cut = C.draft_pool(FakeRealizer(), "comparison", units, 4, by_idx, index, np.random.default_rng(0))
    assert pieces == [5]
    for name in ("unit_of", "seeds", "indptr", "pairs"):
        assert np.array_equal(getattr(cut, name), getattr(whole, name))


def test_sensitive_article_is_the_best_covering(world):
    drafts, stats = C.sensitive_articles(FakeRealizer(), world, np.random.default_rng(0), n_candidates=20)
    sensitive = [g for g in world if g.subset == "sensitive"]
    assert [d.subjects for d in drafts] == [(g.idx,) for g in sensitive]
    assert all(C.coverage(d, g) == len(g.features()) for d, g in zip(drafts, sensitive, strict=True))
    assert stats == {"entities": len(sensitive), "candidates_per_entity": 20, "full_coverage": len(sensitive)}
    _, thin = C.sensitive_articles(FakeRealizer(), world, np.random.default_rng(0), n_candidates=3)
    assert thin["full_coverage"] == 0


def test_corpus_rows_split_keeps_sensitive_in_train():
    spec = get_size("tiny")
    docs = [
        {"text": str(i), "style": "wiki", "subset": "public", "entities": [i], "mentions": []}
        for i in range(200)
    ]
    docs += [
        {"text": "s", "style": "wiki", "subset": "sensitive", "entities": [999 + i], "mentions": []}
        for i in range(5)
    ]
    splits = C.corpus_rows(docs, spec, "geminon-tiny-2026q1", np.random.default_rng(0))
    assert len(splits["validation"]) == round(spec.corpus_validation_fraction * 200)
    assert all(r["subset"] == "public" for r in splits["validation"])
    assert sum(r["subset"] == "sensitive" for r in splits["train"]) == 5
    ids = [r["id"] for s in splits.values() for r in s]
    assert len(set(ids)) == 205 and all(i.startswith("geminon-tiny-2026q1/") for i in ids)
    again = C.corpus_rows(docs, spec, "geminon-tiny-2026q1", np.random.default_rng(0))
    assert again == splits


@pytest.mark.parametrize("held", [None, {3, 150, 201}])
def test_corpus_tables_are_the_corpus_rows_as_columns(held):
    """The build's columnar split gives exactly the rows of the row-by-row one (same order, ids, split)."""
    import pyarrow as pa

    from continuousbench.geminon.build import corpus_schema

    spec = get_size("tiny")
    docs = [
        {
            "text": f"t{i}",
            "style": "wiki" if i % 3 else "journal",
            "subset": "sensitive" if i > 200 else "public",
            "entities": [i, i + 1],
            "mentions": [f"{i}:hp", f"{i}:name"][: i % 3],
        }
        for i in range(205)
    ]
    rows = C.corpus_rows(docs, spec, "geminon-tiny-2026q1", np.random.default_rng(4), held)
    tables = C.corpus_tables(
        pa.Table.from_pylist(docs, schema=corpus_schema()),
        spec,
        "geminon-tiny-2026q1",
        np.random.default_rng(4),
        held,
    )
    assert {split: t.to_pylist() for split, t in tables.items()} == rows
    assert tables["train"].column_names[0] == "id" and len(rows["validation"]) == (3 if held else 10)


@pytest.mark.parametrize(
    "text, found",
    [
        ("Boreling's move", True),
        ("BORELING2", True),
        ("_boreling", True),
        ("x_Boreling", True),
        ("Borelings", False),
        ("3boreling.", True),
        ("(Élan) Boreling", True),
        ("Élanboreling", False),
        ("l'élan", True),
        ("Elan", False),
        ("boré", False),
        ("Bor-Zap", True),
    ],
)
def test_name_finder_ascii_words_are_the_regex_words(text, found):
    """The ASCII fast path and the regex agree: a word is a run of letters (digits, _ and - end it)."""
    finder = C.NameFinder(["Boreling", "Élan", "Bor"])
    assert finder.search(text) is found
    assert (not finder.words.isdisjoint(C.NameFinder._WORD.findall(text.lower()))) is found


def test_name_finder_matches_whole_names_only():
    finder = C.NameFinder(["Boreling", "Bor", "Mr-Zap"])
    assert finder.search("a boreling here") and finder.search("Bor.") and finder.search("MR-ZAP!")
    assert not finder.search("Borelings and Borax, Mr-Zapper")
    assert not C.NameFinder([]).search("anything")
