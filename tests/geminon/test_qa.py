"""Questions, answers and support counts (paper G.3), on hand-made entities and on the tiny release."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from datasets import load_dataset
from ghost_entities import ghost

from continuousbench.geminon import qa as Q
from continuousbench.geminon.schema import Geminon


def geminon(idx: int, name: str, type2: str | None, subset: str = "public") -> Geminon:
    return ghost(
        idx,
        name,
        type2,
        classification="Lantern Geminon",
        type1="Ghost",
        ability="Levitate",
        evolution_line=(name,),
        move_description="A move.",
        line=idx,
        stage=1,
        subset=subset,
    )


WORLD = [
    geminon(10000, "Phantatch", "Dark"),
    geminon(10001, "Wispling", None),
    geminon(10002, "Hushmire", None, "sensitive"),
]
DOCS = [
    ["10000:name", "10000:type1", "10000:type2", "10000:hp"],
    ["10000:type1", "10000:move.name", "10000:hp", "10000:hp"],  # a repeated mention counts once
    ["10000:type2", "10001:type1", "10001:move.short_description"],
    ["10002:name", "10002:type1", "10002:hp"],
]


def test_answers_are_canonical_strings():
    dual, single = WORLD[0], WORLD[1]
    assert Q.answer(dual, "types") == ("Ghost and Dark", ["Dark and Ghost"])
    assert Q.answer(single, "types") == ("Ghost", [])
    assert Q.answer(dual, "hp") == ("79", [])
    assert Q.answer(dual, "special attack") == ("23", [])
    assert Q.answer(dual, "move.name") == ("Poltergeist", [])
    assert Q.answer(dual, "weight") == ("198", [])


def test_thirteen_questions_with_support_needing_every_feature():
    matrix = Q.mention_matrix(DOCS, WORLD)
    rows = {r["attribute"]: r for r in Q.question_rows(matrix, WORLD, "public") if r["entity"] == 10000}
    assert list(rows) == list(Q.TEMPLATES) and len(rows) == 13
    assert rows["hp"]["question"] == "What is the HP stat of Phantatch?"
    assert rows["weight"]["question"] == "What is the weight (in lbs) of Phantatch?"
    assert rows["types"]["support_count"] == 1  # type1 and type2 together only in the first document
    assert rows["hp"]["support_count"] == 2
    assert rows["move.name"]["support_count"] == 1
    assert rows["ability"]["support_count"] == 0
    wisp = {r["attribute"]: r for r in Q.question_rows(matrix, WORLD, "public") if r["entity"] == 10001}
    assert wisp["types"]["support_count"] == 1 and wisp["move.name"]["support_count"] == 0  # description only
    sensitive = Q.question_rows(matrix, WORLD, "sensitive")
    assert {r["entity"] for r in sensitive} == {10002} and len(sensitive) == 13
    assert len({r["id"] for r in Q.question_rows(matrix, WORLD, "public")}) == 26


def test_mention_matrix_reads_an_arrow_column_as_lists():
    import pyarrow as pa

    lists = Q.mention_matrix(DOCS, WORLD)
    column = pa.chunked_array([pa.array(DOCS[:1], pa.list_(pa.string())), pa.array(DOCS[1:])])
    arrow = Q.mention_matrix(column, WORLD)
    assert (arrow != lists).nnz == 0 and arrow.shape == (4, 3 * 17) and lists.sum() == 13
    with pytest.raises(ValueError, match="'10003:hp' names no entity"):
        Q.mention_matrix(pa.array([["10000:hp"], ["10003:hp"]]), WORLD)


def test_support_rows_cover_applicable_features_only():
    rows = Q.support_rows(Q.mention_matrix(DOCS, WORLD), WORLD)
    by_key = {(r["entity"], r["feature"]): r["count"] for r in rows}
    assert len(rows) == 17 + 16 + 16  # no type2 row for single-typed entities
    assert by_key[(10000, "type2")] == 2 and by_key[(10000, "hp")] == 2 and by_key[(10001, "type1")] == 1
    assert by_key[(10002, "hp")] == 1 and by_key[(10001, "ability")] == 0


def test_split_by_entity_is_disjoint_and_seeded():
    rows = [{"entity": e, "attribute": a} for e in range(20) for a in Q.TEMPLATES]
    split = Q.split_by_entity(rows, 0.25, np.random.default_rng(0))
    val, test = ({r["entity"] for r in split[s]} for s in ("validation", "test"))
    assert len(val) == 5 and len(test) == 15 and not val & test
    assert len(split["validation"]) + len(split["test"]) == len(rows)
    assert split == Q.split_by_entity(rows, 0.25, np.random.default_rng(0))
    two = Q.split_by_entity(rows[:26], 0.01, np.random.default_rng(0))
    assert len(two["validation"]) == 13 and len(two["test"]) == 13  # both splits keep at least one entity


# -- the built tiny release --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def release(tiny_release):
    folder = str(tiny_release)
    return {
        part: load_dataset(folder, part)
        for part in ("corpus", "qa_public", "qa_singleton", "support_counts", "entities")
    }


def test_every_entity_has_thirteen_questions_split_by_entity(release, tiny_release):
    """Thirteen an entity, less those the build's closed-book screening dropped (counted in the manifest)."""
    import json

    dropped = json.loads((tiny_release / "release.json").read_text())["generator"]["closed_book"]
    entities = release["entities"]["train"]
    for part, subset in (("qa_public", "public"), ("qa_singleton", "sensitive")):
        rows = [r for split in ("validation", "test") for r in release[part][split]]
        want = {r["idx"] for r in entities if r["subset"] == subset}
        asked = Counter(r["entity"] for r in rows)
        assert set(asked) == want and max(asked.values()) == 13
        assert 13 * len(want) - sum(asked.values()) == dropped["dropped_closed_book"].get(part, 0)
        val = {r["entity"] for r in release[part]["validation"]}
        test = {r["entity"] for r in release[part]["test"]}
        assert val and test and not val & test


def test_answers_match_the_entity_index(release):
    by_idx = {r["idx"]: r for r in release["entities"]["train"]}
    for r in release["qa_public"]["test"]:
        e = by_idx[r["entity"]]
        assert r["name"] == e["name"] and e["name"] in r["question"]
        if r["attribute"] == "types":
            types = [e["type1"], e["type2"]] if e["type2"] else [e["type1"]]
            assert (
                r["answer"] == " and ".join(types)
                and r["aliases"] == [" and ".join(types[::-1])][: len(types) - 1]
            )
        elif r["attribute"] == "move.name":
            assert r["answer"] == e["move_name"]
        else:
            assert r["answer"] == str(e[r["attribute"].replace(" ", "_")])


def test_support_count_agrees_with_support_counts_and_corpus(release):
    counts = {(r["entity"], r["feature"]): r["count"] for r in release["support_counts"]["train"]}
    train = [set(doc) for doc in release["corpus"]["train"]["mentions"]]
    assert all(counts[(int(m.split(":")[0]), m.split(":")[1])] >= 1 for doc in train for m in doc)
    for part in ("qa_public", "qa_singleton"):
        for split in ("validation", "test"):
            for r in release[part][split]:
                e, attribute = r["entity"], r["attribute"]
                if attribute == "types":
                    needed = {f"{e}:type1"} | ({f"{e}:type2"} if (e, "type2") in counts else set())
                    assert r["support_count"] == sum(needed <= doc for doc in train)
                    assert r["support_count"] <= counts[(e, "type1")]
                else:
                    assert r["support_count"] == counts[(e, attribute)]
                    assert r["support_count"] == sum(f"{e}:{attribute}" in doc for doc in train)
