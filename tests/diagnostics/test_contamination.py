"""Contamination test: Min-K% and Min-K%++ against a direct computation, and the membership verdict on a
tiny model trained on a release's corpus (flagged) and on its untrained base (not flagged)."""

import json
import math

import numpy as np
import pytest
import torch

from continuousbench.diagnostics import contamination as C
from continuousbench.loader import load_model


def _train_on(base, texts, out, epochs=1):
    """Plain next-token training of ``base`` on ``texts`` (the model "has seen" the corpus)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model, tok = AutoModelForCausalLM.from_pretrained(base), AutoTokenizer.from_pretrained(base)
    encoded = tok(list(texts), truncation=True, max_length=64)["input_ids"]
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(epochs):
        for start in range(0, len(encoded), 32):
            rows = encoded[start : start + 32]
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), tok.pad_token_id)
            labels = torch.full((len(rows), width), -100)
            for j, r in enumerate(rows):
                ids[j, : len(r)] = labels[j, : len(r)] = torch.tensor(r)
            model(input_ids=ids, attention_mask=(labels != -100).long(), labels=labels).loss.backward()
            optimiser.step()
            optimiser.zero_grad()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def base_model(tmp_path_factory):
    """An untrained tiny model whose tokenizer saw neither the release nor the control (a third world), as
    a real base model's tokenizer has seen neither: a tokenizer fitted to the release alone would split
    the control's names into more pieces, and even random weights would tell the two corpora apart."""
    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.release.load import load_release

    root = tmp_path_factory.mktemp("third-world")
    third = build_release(GeminonBuildArguments(quarter="2026q3", seed=7, out=str(root)), progress=False)
    texts = load_release(third, "corpus", "train")["text"]
    return save_tiny_model(tmp_path_factory.mktemp("base"), texts, vocab_size=1024)


@pytest.fixture(scope="module")
def seen_model(tmp_path_factory, tiny_release, base_model):
    from continuousbench.release.load import load_release

    texts = load_release(tiny_release, "corpus", "train")["text"]
    return _train_on(base_model, texts, tmp_path_factory.mktemp("seen"))


def test_scores_match_a_direct_computation(tiny_model_dir):
    model, tok, _ = load_model(str(tiny_model_dir))
    texts = ["Krinmar is a Lamp Geminon of type Fighting.", "A short one."]
    (lp, mu, sigma), _ = C.token_statistics(model, tok, texts, batch_size=2)  # padded beside a shorter one
    ids = tok(texts[0])["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0, :-1].double().cpu()
    direct = torch.log_softmax(logits, -1)
    for t, token in enumerate(ids[1:]):
        p = direct[t].exp()
        m = float((p * direct[t]).sum())
        s = math.sqrt(float((p * direct[t] ** 2).sum()) - m * m)
        assert lp[t] == pytest.approx(float(direct[t, token]), abs=1e-4)
        assert (mu[t], sigma[t]) == (pytest.approx(m, abs=1e-4), pytest.approx(s, rel=1e-3))
    z = (lp - mu) / sigma
    k = max(1, math.ceil(0.2 * len(lp)))
    scores = C.membership_scores([(lp, mu, sigma)], 0.2)
    assert scores["min_k"][0] == pytest.approx(np.sort(lp)[:k].mean())
    assert scores["min_k_plus_plus"][0] == pytest.approx(np.sort(z)[:k].mean())


@pytest.mark.slow
def test_flags_a_model_trained_on_the_corpus_and_not_its_base(invoke, tmp_path, tiny_release, base_model,
                                                              seen_model):  # fmt: skip
    reports = {}
    for name, model in (("seen", seen_model), ("base", base_model)):
        out = tmp_path / f"{name}.json"
        result = invoke(["contamination", "--model", model, "--release", tiny_release, "--documents", "150",
                         "--output", out])  # fmt: skip
        assert result.exit_code == 0, result.output
        reports[name] = json.loads(out.read_text())
    seen, base = reports["seen"]["tests"]["min_k_plus_plus"], reports["base"]["tests"]["min_k_plus_plus"]
    assert reports["seen"]["verdict"] == "contaminated" and seen["p_value"] < 0.01 and seen["auc"] > 0.6
    assert reports["base"]["verdict"] == "not detected" and base["p_value"] > 0.05
    assert "/.controls/seed-1000003/geminon-tiny-2026q1" in reports["base"]["control"]  # built once, reused


def _forged(tmp_path, release, **changes):
    """A copy of ``release`` whose manifest says ``changes`` (re-digested, so that it still verifies)."""
    import shutil

    from continuousbench.release.write import DIGEST_KEY, manifest_digest

    copy = shutil.copytree(release, tmp_path / "forged" / release.name)
    manifest = {**json.loads((copy / "release.json").read_text()), **changes}
    manifest[DIGEST_KEY] = manifest_digest(manifest)
    (copy / "release.json").write_text(json.dumps(manifest))
    return copy


def _errors(result):
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def test_control_of_another_size_or_the_release_itself_is_refused(invoke, tmp_path, tiny_release, base_model):
    other = _forged(tmp_path, tiny_release, size="small")
    result = invoke(["contamination", "--model", base_model, "--release", tiny_release, "--control", other])
    (line,) = _errors(result)
    assert result.exit_code == 2 and "is a geminon-small release" in line and "same track and size" in line
    result = invoke(
        ["contamination", "--model", base_model, "--release", tiny_release, "--control", tiny_release]
    )
    assert result.exit_code == 2 and "is the release itself" in _errors(result)[0]


def test_tokenizer_that_cannot_score_the_corpus_is_refused(invoke, tmp_path, tiny_release):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from continuousbench.demo.tinymodel import SPECIAL_TOKENS, make_tiny_model

    words = {t: i for i, t in enumerate([*SPECIAL_TOKENS.values(), "the", "is", "a"])}
    tok = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, **SPECIAL_TOKENS)
    make_tiny_model(tokenizer, hidden_size=16, num_layers=1).save_pretrained(tmp_path / "m")
    tokenizer.save_pretrained(tmp_path / "m")
    result = invoke(
        ["contamination", "--model", tmp_path / "m", "--release", tiny_release, "--documents", "4"]
    )
    (line,) = _errors(result)
    assert result.exit_code == 2 and "cannot score this corpus" in line and "'<unk>'" in line
