"""Nothing computed on the private training records without noise is published (issue 11)."""

import json
from pathlib import Path

import pytest
from dp_runs import walk_for_private_statistics

pytestmark = pytest.mark.slow

# privacy.json may hold these keys and nothing else (anything new must be classified here first).
ALLOWED_KEYS = {
    "private", "dp_sgd", "learning_rate", "validation", "epsilon", "delta", "noise_multiplier",
    "sampling_probability", "expected_batch_size", "steps", "dataset_size", "sampling", "physical_batch",
    "truncation_analysis", "truncation_probability", "clip_norm", "event_json", "sampling_plan",
    "secure_noise", "max_tokens_per_record", "tokenizer", "lr_sweep_accounted", "versions",
    "epsilon_per_run", "runs_accounted", "target_epsilon",  # the requested budget: configuration
    "tuning", "trained",  # what was trained: configuration
    "selection",  # the sweep's grid and rule, and each run's validation loss (validation split: not private)
}  # fmt: skip
VALIDATION_KEYS = {"private", "note", "loss", "history", "learning_rates", "best_step"}


def test_generator_and_corpus_folders_hold_no_raw_training_statistic(tmp_path, dp_generator, dp_corpus):
    from continuousbench.dp.synthesize import cli as synthesize
    from continuousbench.dp.train import GeneratorArguments, fingerprint, load_data

    folder = dp_generator.path
    privacy = json.loads((folder / "privacy.json").read_text())
    assert set(privacy) <= ALLOWED_KEYS, set(privacy) - ALLOWED_KEYS
    assert set(privacy["validation"]) <= VALIDATION_KEYS and privacy["validation"]["private"] is False
    _, train, val = load_data(GeneratorArguments(corpus=str(dp_corpus)))
    secrets = [fingerprint(train, val), "train_loss", "training_loss", "truncated_batches", "batch_sizes"]
    assert not walk_for_private_statistics(folder, dp_generator.private_stats, secrets)
    assert not [p for p in folder.rglob("*") if "checkpoint" in p.name or p.name == "state.pt"]

    corpus = synthesize(
        ["--generator", str(folder), "--num_samples", "6", "--max_new_tokens", "12", "--batch_size", "3",
         "--output_dir", str(tmp_path / "syn")]
    )  # fmt: skip
    assert not walk_for_private_statistics(Path(corpus), dp_generator.private_stats, secrets)


def test_the_walk_finds_a_planted_statistic(tmp_path, dp_generator):
    """The check above can fail: a raw loss written anywhere is found."""
    planted = tmp_path / "leaky"
    planted.mkdir()
    (planted / "log.json").write_text(json.dumps({"loss": dp_generator.private_stats[1]}))
    assert walk_for_private_statistics(planted, dp_generator.private_stats, [])
