"""FictionalQA's held-out splits: ``build geminon --heldout {entity,document,style}``."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from continuousbench.errors import UserError
from continuousbench.geminon.build import GeminonBuildArguments, build_release
from continuousbench.release.ids import ReleaseId
from continuousbench.release.load import load_release

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_heldout")


@pytest.fixture(scope="module")
def heldout_root(tmp_path_factory):
    return tmp_path_factory.mktemp("heldout-home")


def _arguments(kind: str, out) -> GeminonBuildArguments:
    """The tiny build with held-out split ``kind``. Only ``entity`` is screened closed-book: its held-out
    entities' questions have no supporting training document, a case the default release lacks; the other
    tests check corpus splits, and screening is three quarters of a tiny build's time."""
    screening = None if kind == "entity" else ["none"]
    return GeminonBuildArguments(
        size="tiny", seed=0, out=str(out), heldout=kind, closed_book_models=screening
    )


@pytest.fixture(scope="module")
def built(heldout_root):
    """kind -> the folder of the tiny release built with that held-out split."""
    cache: dict[str, object] = {}

    def get(kind: str):
        if kind not in cache:
            cache[kind] = build_release(_arguments(kind, heldout_root), progress=False)
        return cache[kind]

    return get


def _corpus(folder):
    return {s: load_release(folder, "corpus", split=s).to_list() for s in ("train", "validation")}


def _manifest(folder) -> dict:
    return json.loads((folder / "release.json").read_text())


def _about(doc: dict) -> set[int]:
    return {*doc["entities"], *(int(m.split(":")[0]) for m in doc["mentions"])}


def test_ids_name_the_split_and_default_ids_are_unchanged():
    rid = ReleaseId.parse("geminon-tiny-2026q1-heldout-entity")
    assert (rid.heldout, str(rid), rid.heldout_option) == (
        "entity",
        "geminon-tiny-2026q1-heldout-entity",
        " --heldout entity",
    )
    assert str(ReleaseId.parse("geminon-tiny-2026q1")) == "geminon-tiny-2026q1"
    for bad in ("geminon-tiny-2026q1-heldout-author", "news-small-2026q1-heldout-entity"):
        with pytest.raises(UserError, match="bad release id"):
            ReleaseId.parse(bad)


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_entity_split_keeps_every_document_of_a_heldout_entity_out_of_train(built, tiny_release):
    folder = built("entity")
    assert folder.name == "geminon-tiny-2026q1-heldout-entity"
    manifest = _manifest(folder)
    record = manifest["generator"]["heldout"]
    assert manifest["heldout"] == "entity" and record["split"] == "entity"
    held = set(record["entities"])
    corpus = _corpus(folder)  # load_release verifies every file against release.json
    assert held and not any(_about(d) & held for d in corpus["train"])
    assert all(_about(d) & held for d in corpus["validation"])
    assert record["documents"] == len(corpus["validation"])
    # the same world and documents as the default release, split otherwise
    default = _corpus(tiny_release)
    texts = Counter(d["text"] for part in default.values() for d in part)
    assert texts == Counter(d["text"] for part in corpus.values() for d in part)
    # held-out entities' questions stay, with support 0, on both QA splits (test always has some)
    qa = {s: load_release(folder, "qa_public", split=s).to_list() for s in ("validation", "test")}
    assert {q["entity"] for q in qa["test"]} & held
    assert all(q["support_count"] == 0 for rows in qa.values() for q in rows if q["entity"] in held)
    assert "--heldout entity" in (folder / "README.md").read_text()


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_document_and_style_splits(built):
    corpus = _corpus(built("document"))
    train_texts = {d["text"] for d in corpus["train"]}
    assert not any(d["text"] in train_texts for d in corpus["validation"])
    keys = Counter(
        (e, d["style"])
        for d in corpus["train"] + corpus["validation"]
        for e in d["entities"]
        if d["subset"] == "public"
    )
    held = {(e, d["style"]) for d in corpus["validation"] for e in d["entities"]}
    assert {k for k in keys} <= held  # every public (entity, style) lost one document
    assert all(d["subset"] == "public" for d in corpus["validation"])

    folder = built("style")
    style = _manifest(folder)["generator"]["heldout"]["style"]
    corpus = _corpus(folder)
    assert {d["style"] for d in corpus["validation"]} == {style}
    assert not [d for d in corpus["train"] if d["style"] == style and d["subset"] == "public"]
    assert sum(d["subset"] == "sensitive" for d in corpus["train"]) == 6  # sensitive articles stay


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_heldout_build_is_deterministic(built, tmp_path):
    first = built("style")
    again = build_release(_arguments("style", tmp_path), progress=False)
    assert _manifest(again)["files"] == _manifest(first)["files"]


def test_unknown_split_is_one_line(tmp_path):
    with pytest.raises(UserError, match="--heldout entities is not a held-out split: choose one of entity"):
        build_release(GeminonBuildArguments(size="tiny", out=str(tmp_path), heldout="entities"))
    assert not any(tmp_path.iterdir())


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_the_figures_docs_memorization_md_states(built):
    """docs/memorization.md gives what each split moves on tiny, seed 0."""
    records = {k: _manifest(built(k))["generator"]["heldout"] for k in ("entity", "document", "style")}
    assert (len(records["entity"]["entities"]), records["entity"]["documents"]) == (3, 655)
    assert records["document"]["documents"] == 46
    assert (records["style"]["style"], records["style"]["documents"]) == ("wiki", 360)
