"""continuousbench audit: the one-run bound detects a non-private run's leakage and respects a DP claim."""

import json

import numpy as np
import pytest

pytestmark = pytest.mark.slow

COMMON = [
    "--canaries",
    "64",
    "--canary_tokens",
    "8",
    "--lora_r",
    "16",
    "--max_length",
    "48",
    "--learning_rate",
    "1e-2",
    "--seed",
    "0",
]


def run_audit(invoke, corpus, model, out, *args):
    result = invoke(
        ["audit", "--corpus", str(corpus), "--model", str(model), "--output_dir", str(out), *COMMON, *args]
    )
    assert result.exit_code == 0, result.stderr[-2000:]
    return json.loads((out / "audit.json").read_text()), result


def test_a_non_private_many_pass_run_is_caught(invoke, tmp_path, small_corpus, trained_base_dir):
    """One record per example (no packing), as the DP path and the canary scores see them; 100 passes."""
    record, result = run_audit(
        invoke,
        small_corpus,
        trained_base_dir,
        tmp_path / "np",
        "--steps",
        "200",
        "--eval_steps",
        "200",
        "--save_steps",
        "200",
        "--per_device_train_batch_size",
        "8",
        "--samples_per_step",
        "8",
        "--delta",
        "1e-5",
        "--disable_tqdm",
        "true",
        "--packing",
        "false",
    )
    assert record["claimed_epsilon"] == float("inf") and record["delta"] == 1e-5
    assert record["epsilon_lower_bound"] > 0.5, record["grid"]
    canaries = record["canary_records"]
    assert len(canaries) == 64 and 10 < sum(c["included"] for c in canaries) < 54
    included = np.array([c["included"] for c in canaries])
    scores = np.array([c["score"] for c in canaries])
    assert scores[included].mean() > scores[~included].mean()
    assert "empirical epsilon >=" in result.stdout
    assert (tmp_path / "np" / "adapter_model.safetensors").is_file()  # the audited generator, beside it
    assert not (tmp_path / "np" / ".audit-work").exists()


def test_a_dp_run_at_epsilon_1_stays_within_its_claim(invoke, tmp_path, small_corpus, trained_base_dir):
    """At delta 1e-5 the 64 canaries can refute epsilon 1: a run without noise gets about 2.6 (see
    tests/diagnostics/test_one_run.py), so this test can fail."""
    record, _ = run_audit(
        invoke,
        small_corpus,
        trained_base_dir,
        tmp_path / "dp",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--sampling",
        "poisson",
        "--expected_batch_size",
        "8",
        "--micro_batch_size",
        "8",
        "--steps",
        "30",
        "--eval_steps",
        "30",
        "--save_steps",
        "30",
    )
    assert record["claimed_epsilon"] == pytest.approx(1, rel=0.01) and record["delta"] == 1e-5
    assert record["can_refute_claim"] and record["largest_reachable_bound"] > 2
    assert record["epsilon_lower_bound"] <= 1 and record["within_claim"]


def test_scoring_many_canaries_shows_progress_and_the_same_scores(dp_model_dir, monkeypatch, caplog):
    """Scoring is chunked with a progress line after each chunk (many canaries were silent); the scores
    are those of one pass."""
    import logging

    from continuousbench import stages
    from continuousbench.diagnostics import audit

    canaries = [{"text": f"canary {i} " * 3, "included": i % 2 == 0} for i in range(40)]
    whole = audit.score(dp_model_dir, canaries, 32, "loss")
    monkeypatch.setattr(audit, "SCORE_CHUNK", 16)
    monkeypatch.setattr(stages, "PROGRESS_EVERY", 0.0)
    with caplog.at_level(logging.INFO, logger="continuousbench.stages"):
        assert audit.score(dp_model_dir, canaries, 32, "loss") == whole
    assert "audit: scoring canaries under the generator: 16 of 40 canaries, about" in caplog.text
