"""train-generator --tuning full: DP-SGD on every weight of the tiny Llama, end to end (the mechanism's
unit tests are in test_bookkeeping.py)."""

import json

import pytest
import torch
from dp_runs import DP_ARGS, walk_for_private_statistics

from continuousbench.dp.published import PUBLISHED_KEYS

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_full_tuning")]

FULL_ARGS = [*DP_ARGS[2:], "--tuning", "full"]  # DP_ARGS without --lora_r
# A run whose noise and batches replay (test seed), evaluated every step: the two tests below compare to it.
REPLAYABLE = [*FULL_ARGS, "--insecure_noise_seed", "7", "--eval_steps", "1"]
WEIGHTS = "model.safetensors"


@pytest.fixture(scope="module")
def full_generator(tmp_path_factory, train_generator):
    """(folder, every raw training statistic its steps computed: never to be published)."""
    from recording import recorded_dp_steps

    with recorded_dp_steps() as seen:
        path = train_generator(tmp_path_factory.mktemp("full") / "gen", *FULL_ARGS)
    return path, seen


def test_a_dp_full_run_meets_its_epsilon_and_says_what_it_trained(full_generator, dp_model_dir, dp_corpus):
    import dp_accounting as dpa
    from safetensors.torch import load_file

    from continuousbench.dp.train import GeneratorArguments, load_data
    from continuousbench.training.data import corpus_fingerprint

    folder, private_stats = full_generator
    privacy = json.loads((folder / "privacy.json").read_text())
    assert privacy["private"] and privacy["tuning"] == "full" and privacy["clipping"] == "bookkeeping"
    assert privacy["trained"].startswith("every weight of the base model (")
    assert "tied with the output layer" in privacy["trained"] and set(privacy) <= PUBLISHED_KEYS
    # the recorded event re-accounts to the published epsilon with dp_accounting's own PLD
    event = dpa.PoissonSampledDpEvent(
        privacy["sampling_probability"], dpa.GaussianDpEvent(privacy["noise_multiplier"])
    )
    pld = dpa.pld.PLDAccountant().compose(event, privacy["steps"])
    assert pld.get_epsilon(privacy["delta"]) == pytest.approx(privacy["epsilon"], rel=1e-3)
    assert privacy["epsilon"] == pytest.approx(10, rel=0.01)
    card = (folder / "README.md").read_text()
    assert f"DP-SGD trained {privacy['trained']}, which is released." in card
    assert "library_name: transformers" in card and "full-tuning" in card
    # a whole model, every tensor moved by the noisy steps
    assert (folder / "config.json").is_file() and not (folder / "adapter_config.json").exists()
    trained, base = load_file(folder / WEIGHTS), load_file(dp_model_dir / WEIGHTS)
    assert set(trained) == set(base) and all(not torch.equal(trained[k], base[k]) for k in base)
    _, train, val = load_data(GeneratorArguments(corpus=str(dp_corpus)))
    assert not walk_for_private_statistics(folder, private_stats, [corpus_fingerprint(train, val)])


def test_a_full_generator_samples_a_corpus(full_generator, tmp_path):
    from continuousbench.dp.synthesize import cli as synthesize
    from continuousbench.training.data import load_corpus

    out = synthesize(
        [
            "--generator",
            str(full_generator[0]),
            "--num_samples",
            "4",
            "--max_new_tokens",
            "8",
            "--batch_size",
            "2",
            "--output_dir",
            str(tmp_path / "syn"),
        ]
    )
    assert len(load_corpus(str(out))["text"]) == 4
    assert '"tuning": "full"' in (out / "privacy.json").read_text()


@pytest.fixture(scope="module")
def replayable_full_run(tmp_path_factory, train_generator):
    return train_generator(tmp_path_factory.mktemp("replay-full") / "whole", *REPLAYABLE)


def test_two_processes_train_the_same_weights_as_one(tmp_path, dp_corpus, dp_model_dir, replayable_full_run):
    """Each process clips its share of every batch, process 0 adds the one noise draw (test seed)."""
    from safetensors.torch import load_file
    from test_processes import torchrun

    torchrun(dp_corpus, dp_model_dir, tmp_path / "two", *REPLAYABLE)
    one, two = (load_file(d / WEIGHTS) for d in (replayable_full_run, tmp_path / "two"))
    assert set(one) == set(two) and all(torch.allclose(one[k], two[k], rtol=1e-4, atol=1e-6) for k in one)


def test_a_killed_full_run_resumes_to_the_same_bytes(tmp_path, train_generator, replayable_full_run, caplog):
    """Every weight, the optimizer state and the secret streams come back from the checkpoint."""
    import logging

    from test_dp_resume import kill_after_step_3

    kill_after_step_3(train_generator, tmp_path / "killed", REPLAYABLE)
    caplog.set_level(logging.INFO)
    resumed = train_generator(tmp_path / "killed", *REPLAYABLE, "--resume", "true")
    assert "resumed from checkpoint-2" in caplog.text
    assert (resumed / WEIGHTS).read_bytes() == (replayable_full_run / WEIGHTS).read_bytes()
