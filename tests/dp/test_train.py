"""train-generator end to end on a tiny model: the statement, what is published, overwrite, sweep, ranges."""

import json
from pathlib import Path

import pytest
from dp_runs import DP_ARGS, NONPRIVATE_ARGS, SYNTHESIS_ARGS

from continuousbench.dp import accounting


@pytest.mark.slow
def test_dp_run_card_carries_a_complete_statement(dp_generator):
    dp_generator = dp_generator.path
    privacy = json.loads((dp_generator / "privacy.json").read_text())
    assert privacy["private"] and privacy["epsilon"] == pytest.approx(10, rel=0.01)
    assert privacy["target_epsilon"] == 10  # asked for: the leaderboard's epsilon filter groups by it
    event = accounting.dp_event_from_json(privacy["event_json"])
    assert accounting.event_epsilon(event, privacy["delta"]) == pytest.approx(privacy["epsilon"])
    assert privacy["delta"] == pytest.approx(accounting.default_delta(200))
    assert privacy["validation"]["private"] is False and privacy["validation"]["history"]
    card = (dp_generator / "README.md").read_text()
    assert f"({privacy['epsilon']:.4g}, {privacy['delta']:.3g})-\ndifferential" in card.replace(
        "-differential", "-\ndifferential"
    )
    for needed in (
        "Add-or-remove one record",
        privacy["event_json"],
        "base_model:",
        "differential-privacy",
        "at most 48 tokens",
        "BPE model",
        "1/n^1.1 with n = 200",
        "treated as public",
        "operating system's entropy",
        "Neither depends on `--seed`",
        "validation split**, which gets no",
        "opacus 1.6",
        "dp-accounting 0.6",
        "torch 2.",
        "are not published",
    ):
        assert needed in card, needed
    assert (dp_generator / "adapter_model.safetensors").is_file()
    hidden = [p.name for p in dp_generator.iterdir() if p.name.startswith(".")]
    assert hidden == [".continuousbench-train-generator.json"]  # no work folder, no checkpoints


@pytest.mark.slow
def test_nonprivate_run_uses_the_evaluator_recipe(tmp_path, train_generator):
    out = train_generator(tmp_path / "np", *NONPRIVATE_ARGS)
    privacy = json.loads((out / "privacy.json").read_text())
    assert privacy["private"] is False and privacy["validation"]["loss"] > 0
    assert "without differential privacy" in (out / "README.md").read_text()


def test_step_defaults_follow_tables_29_and_31():
    from continuousbench.dp.train import make_parser

    _, _, dp = make_parser().parse(["--output_dir", "/tmp/unused", "--epsilon", "10"])
    _, _, public = make_parser().parse(["--output_dir", "/tmp/unused"])
    assert (dp.max_steps, public.max_steps) == (3000, 10_000)


@pytest.mark.slow
def test_overwrite_replaces_only_our_files_and_only_when_done(tmp_path, dp_corpus, train_generator):
    out = tmp_path / "gen"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    train_generator(out, *DP_ARGS)
    adapter = (out / "adapter_model.safetensors").read_bytes()
    with pytest.raises(SystemExit) as err:  # a finished generator is not replaced silently
        train_generator(out, *DP_ARGS)
    assert err.value.code == 2
    no_validation = tmp_path / "train-only"
    (no_validation / "data").mkdir(parents=True)
    (no_validation / "data" / "train.txt").write_text("one record\nanother record\n")
    with pytest.raises(SystemExit):  # a failing --overwrite keeps the old generator
        train_generator(out, *DP_ARGS, "--overwrite", "true", corpus=no_validation)
    assert (out / "adapter_model.safetensors").read_bytes() == adapter
    train_generator(out, *DP_ARGS, "--overwrite", "true")
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "adapter_model.safetensors").read_bytes() != adapter  # new secret noise


@pytest.mark.slow
def test_sweep_publishes_only_the_selected_run(tmp_path, train_generator):
    args = [*DP_ARGS, "--steps", "2", "--lr_sweep", "1e-3,1e-2"]
    out = train_generator(tmp_path / "sweep", *args)
    privacy = json.loads((out / "privacy.json").read_text())
    losses = privacy["validation"]["learning_rates"]
    assert set(losses) == {"0.001", "0.01"} and privacy["learning_rate"] == float(min(losses, key=losses.get))
    assert not list(out.glob("lr-*")) and not list(out.rglob("checkpoint-*"))
    card = (out / "README.md").read_text()
    assert "among 2 runs" in card and "**not** accounted for" not in card
    # --epsilon 10 is the sweep's total: both runs composed meet it, and the published event, steps and
    # truncation figures are those of both runs, so re-accounting the event gives the published epsilon
    from dp_accounting.pld import PLDAccountant

    from continuousbench.dp.accounting import dp_event, event_epsilon

    assert privacy["target_epsilon"] == 10 and privacy["epsilon"] <= 10
    assert privacy["epsilon"] == pytest.approx(10, rel=0.01)
    accountant = PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(accounting.dp_event_from_json(privacy["event_json"]))
    assert accountant.get_epsilon(privacy["delta"]) == privacy["epsilon"]  # exactly what is published
    assert privacy["runs_accounted"] == 2 and privacy["steps"] == 2 * privacy["steps_per_run"] == 4
    one_run = dp_event(privacy["noise_multiplier"], privacy["sampling_probability"], privacy["steps_per_run"])
    assert privacy["epsilon_per_run"] == pytest.approx(event_epsilon(one_run, privacy["delta"]), rel=1e-3)
    assert privacy["epsilon"] > privacy["epsilon_per_run"] and privacy["lr_sweep_accounted"] is True
    headline = card.split("## Privacy statement", 1)[1].strip().split("\n")[0]
    assert f"({privacy['epsilon']:.4g}, " in headline
    assert f"each run alone: ({privacy['epsilon_per_run']:.4g}, " in headline
    assert "| steps | 4 (2 runs of 2) |" in card and privacy["event_json"] in card


RECIPES = sorted((Path(__file__).parents[2] / "recipes" / "configs").glob("generator-*.yaml"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.name)
def test_generator_recipes_follow_tables_29_to_31(recipe):
    from continuousbench.dp.train import make_parser

    args, model, config = make_parser().parse(["--config", str(recipe), "--output_dir", "/tmp/unused"])
    prompt, full = recipe.stem.endswith("-prompt"), recipe.stem.endswith("-full")
    if prompt:  # App. E: a soft prompt, random uniform in [-0.01, 0.01]
        assert model.tuning == "prompt" and model.prompt_init == "random_uniform"
        assert model.prompt_init_range == 0.01
    elif full:  # every weight, kept in float32 under bf16 autocast
        assert (model.tuning, model.dtype, config.bf16) == ("full", "float32", True)
    else:
        assert model.tuning == "lora" and model.lora_r == 128
    assert config.max_length in (256, 1024)
    if recipe.stem.endswith(("-dp", "-dp-prompt", "-dp-full")):  # Table 31
        assert config.private and config.max_steps == 3000 and config.clip_norm == 1e-3
        assert (config.sampling, config.truncation_analysis) == ("truncated_poisson", "pld")
        assert (config.physical_batch_size, config.expected_batch_size) == (512, "auto")
        # rank-128 per-record gradients would not fit; a soft prompt's are tiny; every weight: book-keeping
        assert config.clipping == ("per_sample" if prompt else "bookkeeping" if full else "ghost")
    else:  # Table 29
        assert not config.private and config.max_steps == 10_000 and config.samples_per_step == 32
    weight_decay = 0.0 if prompt else 0.1  # decay would pull a soft prompt towards 0
    assert (config.adam_beta2, config.lr_scheduler_type) == (0.995, "cosine")
    assert config.weight_decay == weight_decay


@pytest.mark.slow
def test_synthesis_loads_in_harness_and_is_seeded(tmp_path, dp_generator):
    dp_generator = dp_generator.path
    from continuousbench.dp.synthesize import cli
    from continuousbench.training.data import load_corpus

    args = ["--generator", str(dp_generator), *SYNTHESIS_ARGS]
    cli([*args, "--output_dir", str(tmp_path / "a")])
    cli([*args, "--output_dir", str(tmp_path / "b")])
    a, b = load_corpus(str(tmp_path / "a")), load_corpus(str(tmp_path / "b"))
    assert a["text"] == b["text"] and len(a) >= 1
    parquet = "data/train-00000-of-00001.parquet"
    assert (tmp_path / "a" / parquet).read_bytes() == (tmp_path / "b" / parquet).read_bytes()
    card = (tmp_path / "a" / "README.md").read_text()
    assert "configs:" in card and "Privacy statement" in card and "Add-or-remove one record" in card
    from continuousbench.results.privacy_statement import corpus_privacy

    stated = json.loads((tmp_path / "a" / "privacy.json").read_text())
    assert "history" not in stated and "validation_loss" not in stated  # losses on private records stay home
    assert stated["validation"]["private"] is False  # the validation losses say what they are
    privacy = corpus_privacy(tmp_path / "a")
    assert privacy["private"] and privacy["unit"] == "record"
    assert privacy["epsilon"] == pytest.approx(10, rel=0.01)
    assert json.loads((tmp_path / "a" / "synthesis.json").read_text())["sampling"]["seed"] == 0
    with pytest.raises(SystemExit):
        cli([*args, "--output_dir", str(tmp_path / "a")])
