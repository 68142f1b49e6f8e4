"""MAUVE on the tiny release with the tiny Llama as encoder: ordering, determinism, CLI."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from continuousbench.diagnostics.mauve import cli, embed_texts, mauve_score, reference_mauve

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_mauve")

N, SEEDS = 60, (0, 1)


@pytest.fixture(scope="module")
def real_texts(tiny_release):
    from datasets import load_dataset

    texts = load_dataset(str(tiny_release), "corpus", split="train")["text"]
    assert len(texts) >= 2 * N, "the tiny corpus is too small for this test"
    return texts


def junk(texts: list[str], seed: int = 0) -> list[str]:
    """The same characters in random order: same length and alphabet, no language."""
    rng = random.Random(seed)
    return ["".join(rng.sample(t, len(t))) for t in texts]


@pytest.fixture(scope="module")
def same_and_junk(real_texts, tiny_model_dir):
    half, kw = len(real_texts) // 2, {"model_path": tiny_model_dir, "n_samples": N, "seeds": SEEDS}
    return mauve_score(real_texts[:half], real_texts[half:], **kw), mauve_score(
        junk(real_texts[:half]), real_texts[half:], **kw
    )


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_same_distribution_scores_higher_than_junk(same_and_junk):
    same, bad = same_and_junk
    assert same["mean"] > 0.5
    assert same["mean"] > bad["mean"] + 0.3, (same, bad)
    assert 0 <= same["fid"] < bad["fid"]  # the FID of the same features (proxies reads it) agrees


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_mean_and_std_over_seeds(same_and_junk):
    same, _ = same_and_junk
    assert same["n"] == N and same["seeds"] == list(SEEDS) and len(same["scores"]) == len(SEEDS)
    assert same["mean"] == pytest.approx(np.mean(same["scores"]))
    assert same["std"] == pytest.approx(np.std(same["scores"]))
    assert all(0.0 < s <= 1.0 for s in same["scores"])


@pytest.mark.slow  # ~6 s: CI only, not the fast lane
def test_fixed_seed_is_deterministic(real_texts, tiny_model_dir, same_and_junk):
    half = len(real_texts) // 2
    again = mauve_score(
        real_texts[:half], real_texts[half:], model_path=tiny_model_dir, n_samples=N, seeds=[1]
    )
    assert again["scores"] == same_and_junk[0]["scores"][1:]


def test_more_samples_than_texts_is_stated_not_silent(real_texts, tiny_model_dir, caplog):
    few = real_texts[:6]
    result = mauve_score(few, real_texts[6:40], model_path=tiny_model_dir, n_samples=100_000, seeds=[0])
    assert result["n"] == 6 and result["n_samples_requested"] == 100_000
    assert "--n_samples 100000 is more than the corpora hold (6 candidate" in caplog.text


def test_reference_mauve_splits_the_real_corpus(real_texts, tiny_model_dir, same_and_junk):
    ref = reference_mauve(real_texts, model_path=tiny_model_dir, n_samples=N, seeds=(0,))
    assert ref["n"] == N and ref["mean"] > same_and_junk[1]["mean"] + 0.3


def test_embeddings_ignore_padding(tiny_model_dir):
    short = "Boreling is a Spore Geminon."
    long = "A much longer document about several Geminon and their moves. " * 4
    alone = embed_texts([short], tiny_model_dir)
    batched = embed_texts([long, short], tiny_model_dir, batch_size=2)
    assert alone.dtype == np.float32 and batched.shape == (2, alone.shape[1])
    np.testing.assert_allclose(batched[1], alone[0], atol=1e-5)
    assert not np.allclose(batched[0], batched[1])


def test_cli_writes_json_and_refuses_to_overwrite(real_texts, tiny_release, tiny_model_dir, tmp_path, capsys):
    from datasets import Dataset

    candidate = tmp_path / "candidate.parquet"
    Dataset.from_dict({"body": junk(real_texts[:40])}).to_parquet(str(candidate))
    out = tmp_path / "mauve.json"
    argv = ["--candidate", str(candidate), "--reference", str(tiny_release), "--model", str(tiny_model_dir)]
    argv += ["--text-column", "body", "--n-samples", "20", "--seeds", "0", "1", "--output", str(out)]
    results = cli(argv)
    assert json.loads(out.read_text()) == results
    assert results["candidate_vs_reference"]["n"] == 20
    assert results["candidate_vs_reference"]["mean"] < results["reference_disjoint"]["mean"]
    assert "disjoint halves" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        cli(argv)
    assert exit_info.value.code == 2 and "--overwrite" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli([*argv, "--no-such-flag", "1"])


def test_mauve_text_is_not_imported_with_the_module():
    code = "import sys, continuousbench.diagnostics.mauve; assert 'mauve' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
