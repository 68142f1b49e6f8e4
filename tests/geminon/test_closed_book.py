"""Closed-book screening at build time (FictionalQA's blind and informed attempts) and names that avoid
every earlier quarter's: the tiny release as the default build makes it, and builds with a stand-in model
whose answers the test chooses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from datasets import load_dataset
from scipy import sparse

from continuousbench.geminon import closed_book as CB
from continuousbench.geminon.build import GeminonBuildArguments, build_release
from continuousbench.release.ids import ReleaseId
from continuousbench.release.registry import earlier_under

QA = ("qa_public", "qa_singleton")


def _rows(folder):
    loaded = {part: load_dataset(str(folder), part) for part in QA}
    return {part: [r for s in ("validation", "test") for r in loaded[part][s]] for part in QA}


def test_the_tiny_release_is_screened_by_the_demo_base(tiny_release):
    manifest = json.loads((tiny_release / "release.json").read_text())
    screened = manifest["generator"]["closed_book"]
    assert screened["models"] == [CB.DEMO_BASE] and screened["questions"] == 234
    kept = _rows(tiny_release)
    dropped = sum(screened["dropped_closed_book"].values())
    assert sum(map(len, kept.values())) == 234 - dropped
    assert screened["figures"][CB.DEMO_BASE]["informed_asked"] == 234
    for rows in kept.values():
        for r in rows:  # every kept question: one blind answer, wrong; an informed answer; its flag
            (blind,) = r["blind_answers"]
            assert not CB.is_correct(blind, [r["answer"], *r["aliases"]])
            assert r["informed_answer"] is not None
            assert r["ill_posed"] == (not CB.is_correct(r["informed_answer"], [r["answer"], *r["aliases"]]))
    assert json.loads((tiny_release / "names.json").read_text())["names"] == sorted(
        n.casefold() for n in load_dataset(str(tiny_release), "entities", split="train")["name"]
    )


@pytest.fixture
def knowing(monkeypatch):
    """A stand-in screening model that knows every answer about entity 10000, blind or informed."""
    monkeypatch.setattr(CB, "load_model", lambda spec: (spec, None))

    def answer_all(model, tokenizer, prompts, advance):
        advance(len(prompts))
        known = {q: a for q, a in knowing.answers.items() if q in "".join(prompts)}
        return [next((a for q, a in known.items() if p.endswith(f"Q: {q}\nA:")), "no idea") for p in prompts]

    knowing.answers = {}
    monkeypatch.setattr(CB, "answer_all", answer_all)
    return knowing


def test_questions_answered_blind_are_dropped_and_counted(tmp_path, tiny_release, knowing):
    rows = _rows(tiny_release)
    about = [r for r in rows["qa_public"] if r["entity"] == rows["qa_public"][0]["entity"]]
    knowing.answers = {r["question"]: r["answer"] for r in about}
    folder = build_release(
        GeminonBuildArguments(out=str(tmp_path), closed_book_models=["stand-in"]), progress=False
    )
    screened = json.loads((folder / "release.json").read_text())["generator"]["closed_book"]
    assert screened["dropped_closed_book"] == {"qa_public": len(about)}
    figures = {"blind_correct": len(about), "informed_correct": len(about), "informed_asked": 234}
    assert screened["figures"] == {"stand-in": figures}
    kept = _rows(folder)
    assert not {r["question"] for r in about} & {r["question"] for r in kept["qa_public"]}
    assert all(r["ill_posed"] and r["blind_answers"] == ["no idea"] for p in QA for r in kept[p])


def test_supporting_document_is_the_shortest_stating_every_needed_feature():
    # documents x features: doc 0 states features 0 and 1, doc 1 only 0, doc 2 both (shorter than doc 0)
    matrix = sparse.csc_matrix(np.array([[1, 1], [1, 0], [1, 1]]))
    lengths = np.array([50, 10, 30])
    assert CB.supporting_documents(matrix, [[0], [0, 1], [1, 1]], lengths) == [1, 2, 2]
    assert CB.supporting_documents(sparse.csc_matrix((3, 1)), [[0]], lengths) == [-1]


def test_screening_models_default_by_size_and_none_refused_with_others():
    from continuousbench.errors import UserError

    assert CB.screening_models(None, "tiny") == (CB.DEMO_BASE,)
    assert CB.screening_models(["none"], "small") == ()
    with pytest.raises(UserError, match="give it alone"):
        CB.screening_models(["none", "x/y"], "tiny")
    assert CB.model_key("/some/where/my-model") == ".../my-model" and CB.model_key("org/m") == "org/m"


def test_earlier_means_strictly_earlier_quarters_of_the_track_at_any_size(tmp_path):
    present = ["geminon-tiny-2026q1", "geminon-small-2026q1", "geminon-tiny-2026q2", "geminon-small-2026q3"]
    for rid in [*present, "news-small-2026q1", "geminon-tiny-2026q1-heldout-entity"]:
        (tmp_path / rid).mkdir()
        (tmp_path / rid / "release.json").write_text("{}")
    found = [str(r) for r in earlier_under(ReleaseId.parse("geminon-small-2026q2"), tmp_path)]
    assert found == ["geminon-small-2026q1", "geminon-tiny-2026q1", "geminon-tiny-2026q1-heldout-entity"]


def test_a_later_quarter_draws_no_name_of_an_earlier_one(tmp_path, tiny_release):
    """The earlier quarter here holds exactly the names 2026q2 draws when nothing is avoided."""

    def build(root):
        args = GeminonBuildArguments(quarter="2026q2", out=str(root), closed_book_models=["none"])
        folder = build_release(args, progress=False)
        return folder, set(json.loads((folder / "names.json").read_text())["names"])

    _, drawn = build(tmp_path / "alone")
    earlier = tmp_path / "root" / "geminon-tiny-2026q1"
    earlier.mkdir(parents=True)
    for name in ("release.json", "README.md"):  # what listing releases and the root's card read
        (earlier / name).write_bytes((tiny_release / name).read_bytes())
    (earlier / "names.json").write_text(json.dumps({"names": sorted(drawn)}))
    later, names = build(tmp_path / "root")
    assert len(names) == 18 and not names & drawn
    generator = json.loads((later / "release.json").read_text())["generator"]
    assert generator["avoided"]["releases"] == ["geminon-tiny-2026q1"] and generator["avoided"]["names"] == 18
    assert generator["closed_book"]["models"] == []
