"""Private Evolution: accounting, the noisy vote, the loop on a deterministic offline API, FID."""

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from scipy.linalg import sqrtm

from continuousbench.dp import pe
from continuousbench.dp.accounting import account_evolution, dp_event_from_json
from continuousbench.dp.pe_prompts import TONES, parse_variation_prompt, random_prompts, variation_prompts
from continuousbench.embeddings.encoders import make_embedder
from continuousbench.embeddings.fid import frechet_distance
from continuousbench.llm import make_generator


def pld_epsilon(sigma: float, count: int, delta: float) -> float:
    accountant = PLDAccountant()
    accountant.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(sigma), count))
    return accountant.get_epsilon(delta)


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
@pytest.mark.parametrize(("target", "iterations", "runs"), [(1.0, 10, 1), (10.0, 10, 1), (10.0, 10, 6)])
def test_epsilon_equals_dp_accounting_for_recorded_noise(target, iterations, runs):
    g = account_evolution(target, 1e-6, iterations=iterations, private_runs=runs, dataset_size=2000)
    assert g.mechanisms == iterations * runs
    assert g.epsilon == pytest.approx(pld_epsilon(g.noise_multiplier, g.mechanisms, 1e-6), rel=1e-12)
    assert 0.98 * target <= g.epsilon <= target  # calibrated close to, never above, the budget
    event = dp_event_from_json(g.event_json)
    assert event == dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(g.noise_multiplier), iterations * runs)


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_more_runs_need_more_noise_and_inf_needs_none():
    one = account_evolution(10.0, 1e-6, iterations=10, private_runs=1, dataset_size=2000)
    six = account_evolution(10.0, 1e-6, iterations=10, private_runs=6, dataset_size=2000)
    assert six.noise_multiplier > 2 * one.noise_multiplier
    free = account_evolution(float("inf"), 1e-6, iterations=10, private_runs=1, dataset_size=2000)
    assert free.noise_multiplier == 0.0 and free.event_json is None


def test_frechet_distance_matches_closed_forms():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(400, 5)), rng.normal(size=(300, 5)) @ rng.normal(size=(5, 5)) + 2.0
    mu, cov_a, cov_b = a.mean(0) - b.mean(0), np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    scipy_fid = mu @ mu + np.trace(cov_a + cov_b - 2 * sqrtm(cov_a @ cov_b).real)
    assert frechet_distance(a, b) == pytest.approx(scipy_fid, rel=1e-8)
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-9)
    assert frechet_distance(a, a + 3.0) == pytest.approx(5 * 9.0, rel=1e-9)  # pure mean shift
    few = rng.normal(size=(4, 32))  # fewer rows than dimensions: singular covariances stay finite
    assert np.isfinite(frechet_distance(few, rng.normal(size=(6, 32))))
    with pytest.raises(ValueError, match="at least 2"):
        frechet_distance(a[:1], b)


def test_every_voter_votes_once_for_its_nearest_candidate():
    candidates = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]], dtype=np.float32)
    voters = np.array([[1.0, 0.0], [9.0, 1.0], [8.0, 0.0], [0.5, 9.0], [0.0, 1.0]], dtype=np.float32)
    assert pe.vote_histogram(voters, candidates).tolist() == [2, 2, 1]


def test_select_ranks_noisy_counts_and_breaks_ties_by_seed():
    noisy = np.array([0.5, 7.0, -3.0, 2.0, 0.2, 7.5])
    assert pe.select(noisy, 3, 0.0, np.random.default_rng(0)).tolist() == [1, 3, 5]
    # threshold 1: indices 0, 2, 4 all clip to 0 and tie; the tie-break follows the public seed only
    picks = {tuple(pe.select(noisy, 4, 1.0, np.random.default_rng(s)).tolist()) for s in range(20)}
    assert all(set(p) >= {1, 3, 5} for p in picks) and len(picks) == 3
    assert (
        pe.select(noisy, 4, 1.0, np.random.default_rng(3)).tolist()
        == pe.select(noisy, 4, 1.0, np.random.default_rng(3)).tolist()
    )


def test_noise_comes_from_os_entropy_not_the_seed():
    counts = np.zeros(1000, dtype=np.int64)
    np.random.seed(0)
    first = pe.noisy_histogram(counts, 3.0)
    np.random.seed(0)
    second = pe.noisy_histogram(counts, 3.0)
    assert not np.allclose(first, second)
    assert first.std() == pytest.approx(3.0, rel=0.15)
    assert pe.noisy_histogram(counts + 2, 0.0).tolist() == [2.0] * 1000


def test_prompts_draw_styles_and_tones_from_fixed_lists():
    assert len(TONES) == 9 and len(set(TONES)) == 9
    prompts = random_prompts("geminon", 200, np.random.default_rng(0))
    assert len(set(prompts)) == 4 and all(parse_variation_prompt(p) is None for p in prompts)
    rewrites = variation_prompts(["first text", "second\n\ntext"], 3, np.random.default_rng(0))
    assert [parse_variation_prompt(p) for p in rewrites] == ["first text"] * 3 + ["second\n\ntext"] * 3
    with pytest.raises(ValueError, match="--prompt_set"):
        random_prompts("recipes", 1, np.random.default_rng(0))


def private_and_validation(dp_corpus):
    from continuousbench.training.data import load_corpus

    return (load_corpus(str(dp_corpus), split=s)["text"] for s in ("train", "validation"))


def test_population_moves_toward_the_private_records(dp_corpus, dp_model_dir, pe_word_api, tmp_path):
    private, validation = private_and_validation(dp_corpus)
    embed = make_embedder(str(dp_model_dir))
    voters, reference = embed(private), embed(validation)
    api = pe.PEApi(make_generator(pe_word_api))
    evolution = pe.Evolution(num_samples=16, iterations=6, variations=6, seed=0)
    texts, history = evolution.run(api, embed, voters, reference, 0.0, tmp_path / "a")
    fids = [h["fid"] for h in history]
    assert [h["iteration"] for h in history] == list(range(7)) and len(texts) == 16
    assert history[1]["candidates"] == 16 * 7 and history[1]["selected_rewrites"] > 0
    assert fids[-1] < 0.75 * fids[0], fids
    again, _ = evolution.run(api, embed, voters, reference, 0.0, tmp_path / "b")
    assert again == texts  # epsilon = inf: the public seed alone fixes the result
    # A killed run resumes at its next iteration, with the same result.
    (tmp_path / "a" / pe.ITERATION_FILE.format(6)).unlink()
    (tmp_path / "a" / pe.ITERATION_FILE.format(5)).unlink()
    resumed, resumed_history = evolution.run(api, embed, voters, reference, 0.0, tmp_path / "a")
    assert resumed == texts and resumed_history == history


def test_api_that_returns_nothing_is_one_clear_error(pe_word_api):
    from continuousbench.llm import OFFLINE

    OFFLINE["pe-silent"] = lambda prompt, **_: "  "
    api = pe.PEApi(make_generator("offline:pe-silent"))
    with pytest.raises(ValueError, match="only empty texts for 3 RANDOM_API prompts; check --api"):
        api.random(3, np.random.default_rng(0))


def test_sentence_transformers_folders_use_their_own_pipeline(dp_model_dir, tmp_path):
    from sentence_transformers import SentenceTransformer, models

    body = models.Transformer(str(dp_model_dir), max_seq_length=32)
    folder = tmp_path / "st"
    SentenceTransformer(
        modules=[body, models.Pooling(body.get_embedding_dimension(), "mean"), models.Normalize()]
    ).save(str(folder))
    rows = make_embedder(str(folder))(["Geminon 1 has attack 7.", "river stone music"])
    assert rows.shape == (2, 64) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)  # its Normalize module ran
    with pytest.raises(FileNotFoundError, match="--embedding_model"):
        make_embedder(str(tmp_path / "missing"))


def test_a_large_generation_shows_progress_and_gives_the_texts_of_one_call(monkeypatch, caplog):
    """The PE API asks in chunks with a progress line after each (a large --num_samples was silent);
    prompt i keeps seed + i, so the texts are exactly those of one call."""
    import logging

    from continuousbench import stages
    from continuousbench.llm import OFFLINE

    OFFLINE["pe-seeded"] = lambda prompt, seed, **_: f"{prompt[-12:]} {seed}"
    api = pe.PEApi(make_generator("offline:pe-seeded"))
    whole = api.random(10, np.random.default_rng(0))
    monkeypatch.setattr(pe, "CHUNK", 4)
    monkeypatch.setattr(stages, "PROGRESS_EVERY", 0.0)
    with caplog.at_level(logging.INFO, logger="continuousbench.stages"):
        assert api.random(10, np.random.default_rng(0)) == whole
    assert "pe: RANDOM_API: 4 of 10 texts, about" in caplog.text and "8 of 10 texts" in caplog.text
