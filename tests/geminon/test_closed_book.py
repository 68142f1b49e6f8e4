"""Closed-book screening at build time (FictionalQA's blind and informed attempts): the tiny release as
the default build makes it, and a build with a stand-in model whose answers the test chooses."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from datasets import load_dataset
from scipy import sparse

from continuousbench.geminon import closed_book as CB
from continuousbench.geminon.build import GeminonBuildArguments, build_release

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
    monkeypatch.setattr(CB, "load_model", lambda source, option: (source, None, {}))
    monkeypatch.setattr(CB, "check_available", lambda models: None)

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


def test_a_screening_model_that_cannot_be_loaded_is_refused_before_any_work(tmp_path):
    from continuousbench.errors import UserError

    refused = {
        "./no-such-model": "no model (config.json) there",
        "google/gemma-3-1b-pt": "not in the Hugging Face cache and the Hub is offline",  # HF_HUB_OFFLINE=1
    }
    for model, message in refused.items():
        with pytest.raises(UserError, match=re.escape(message)):
            args = GeminonBuildArguments(out=str(tmp_path), closed_book_models=[model])
            build_release(args, progress=False)
    assert not (tmp_path / ".work").exists()
