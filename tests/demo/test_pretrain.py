"""The base-model stage: a pretraining world disjoint from the release, its text mixture, the model."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from continuousbench.demo.pretrain import (
    BaseRecipe,
    make_pretraining_world,
    pretrain_base_model,
    release_names,
)
from continuousbench.geminon.sizes import SizeSpec

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_pretrain")

SMALL = SizeSpec(
    name="pretrain",
    lines={3: 1, 2: 2, 1: 2},
    sensitive_lines={},
    mix={"comparison": 40, "evolution": 10, "journal": 30, "wiki": 30},
)


@pytest.fixture(scope="module")
def world(tiny_release):
    return make_pretraining_world(SMALL, seed=7, forbidden_names=release_names(tiny_release))


def test_world_is_disjoint_from_the_release(world, tiny_release):
    names = {n.lower() for n in release_names(tiny_release)}
    assert len(world.world) == 3 + 4 + 2
    assert not names & {g.name.lower() for g in world.world}
    assert all(g.subset == "public" for g in world.world)
    text = " ".join(world.documents).lower()
    assert not any(n in text.split() for n in names)


def test_questions_cover_every_entity_with_the_harness_format(world):
    from continuousbench.scoring.prompts import GEMINON_HEADER

    assert len(world.questions) == 13 * len(world.world)
    assert {q["entity"] for q in world.questions} == {g.idx for g in world.world}
    texts = world.texts(qa_fraction=0.25, seed=0)
    qa_docs = [t for t in texts if t.startswith(GEMINON_HEADER)]
    assert qa_docs and len(texts) == len(world.documents) + len(qa_docs)
    q = world.questions[0]
    assert any(f"Q: {q['question']}\nA: {q['answer']}" in d for d in qa_docs)
    share = sum(map(len, qa_docs)) / sum(map(len, texts))
    assert 0.18 < share < 0.32


def test_held_out_entities_are_in_documents_but_not_in_qa_text(world):
    import re

    from continuousbench.scoring.prompts import GEMINON_HEADER

    kept, held = world.hold_out(0.3, seed=0)
    held_entities = {q["entity"] for q in held}
    assert len(held_entities) == round(0.3 * len(world.world)) and len(held) == 13 * len(held_entities)
    assert not held_entities & {q["entity"] for q in kept.questions}
    assert kept.documents == world.documents and len(kept.questions) + len(held) == len(world.questions)
    names = [g.name for g in world.world if g.idx in held_entities]
    qa_text = "".join(t for t in kept.texts(0.25, seed=0) if t.startswith(GEMINON_HEADER))
    documents = " ".join(world.documents)
    for name in names:
        assert re.search(rf"\b{name}\b", documents) and not re.search(rf"\b{name}\b", qa_text)
    assert world.hold_out(0.3, seed=0) == (kept, held) and world.hold_out(0.3, seed=1) != (kept, held)


def test_tokenizer_text_has_no_entity_names(world):
    texts = world.without_names(world.documents)
    assert len(texts) == len(world.documents) and sum(map(len, texts)) < sum(map(len, world.documents))
    assert not any(g.name in t for t in texts for g in world.world)


def test_world_and_mixture_are_deterministic(world, tiny_release):
    again = make_pretraining_world(SMALL, seed=7, forbidden_names=release_names(tiny_release))
    assert again.documents == world.documents and again.questions == world.questions
    assert world.texts(0.25, seed=1) == again.texts(0.25, seed=1)
    assert sorted(world.texts(0.0)) == sorted(world.documents)
    with pytest.raises(ValueError, match="qa_fraction"):
        world.texts(1.0)


@pytest.mark.slow
def test_pretrain_base_model_writes_a_loadable_model(world, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "base"
    texts = world.texts(0.25)
    recipe = BaseRecipe(steps=3, samples_per_step=4, max_length=64, vocab_size=512, bf16=False, curve_every=0)
    pretrain_base_model(
        out,
        texts,
        recipe,
        eval_questions=world.questions[:8],
        held_out_questions=world.questions[8:12],
        tokenizer_texts=world.without_names(texts),
    )
    info = json.loads((out / "pretraining.json").read_text())
    assert info["training"]["steps"] == 3 and info["loss_last"] < info["loss_first"] + 1.0
    assert set(info["pretraining_world_qa"]) >= {"exact_match", "contains", "questions"}
    assert info["held_out_qa"]["questions"] == 4
    tok = AutoTokenizer.from_pretrained(out)
    # the tokenizer never saw the names, so they split into pieces, as the release's names do
    assert all(len(tok.tokenize(" " + g.name)) > 1 for g in world.world)
    assert len(tok) <= 512 and AutoModelForCausalLM.from_pretrained(out).config.num_hidden_layers == 4
    with pytest.raises(FileExistsError, match="overwrite"):
        pretrain_base_model(out, texts, replace(recipe, steps=1))
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_the_shipped_base_model_comes_from_its_recorded_recipe(tmp_path):
    """What `demo --rebuild_base` makes before training is the shipped model's, byte for byte where it is a
    file: the world (names), the tokenizer, the replay file; the weights load into the recorded
    architecture. (The 3,000 training steps take ~20 minutes on one core; that run reproduced the shipped
    model.safetensors byte for byte: docs/demo.md.)"""

    import numpy as np
    from transformers import AutoModelForCausalLM

    from continuousbench.demo import demo
    from continuousbench.demo.pretrain import BaseRecipe, make_pretraining_world, save_texts
    from continuousbench.demo.tinymodel import train_tokenizer
    from continuousbench.files import read_json, sha256_file
    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    shipped = demo.SHIPPED_BASE
    info = read_json(shipped / "pretraining.json")
    recipe = BaseRecipe(**{**info["recipe"], "lines": tuple(info["recipe"]["lines"])})
    assert recipe == BaseRecipe()  # the recorded recipe is the code's default
    assert all(sha256_file(shipped / n) == d for n, d in demo.BASE_SHA256.items())
    args = GeminonBuildArguments(size="tiny", quarter=demo.QUARTER, seed=0, out=str(tmp_path))
    names = release_names(build_release(args, progress=False))
    world = make_pretraining_world(recipe.spec(), seed=recipe.world_seed, forbidden_names=names)
    assert sorted(g.name for g in world.world) == info["pretraining_world"]["names"]
    qa_world, _ = world.hold_out(recipe.held_out_fraction, recipe.seed)
    texts = qa_world.texts(qa_fraction=recipe.qa_fraction)
    assert len(texts) == info["documents"]
    tokenizer = train_tokenizer(world.without_names(texts), vocab_size=recipe.vocab_size)
    tokenizer.save_pretrained(str(tmp_path / "tok"))
    ours, theirs = (json.loads((p / "tokenizer.json").read_text()) for p in (tmp_path / "tok", shipped))
    assert ours["model"] == theirs["model"]  # vocabulary and merges
    replay = qa_world.qa_documents(2 * len(qa_world.questions), np.random.default_rng(recipe.seed))
    save_texts(tmp_path / "replay.parquet", replay)
    assert sha256_file(tmp_path / "replay.parquet") == demo.BASE_SHA256["replay.parquet"]  # byte for byte
    model = AutoModelForCausalLM.from_pretrained(shipped)
    assert sum(p.numel() for p in model.parameters()) == info["parameters"]
    assert info["held_out_qa"]["exact_match"] > 0.9 and info["training"]["steps"] == recipe.steps
