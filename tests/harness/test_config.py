from pathlib import Path

import pytest
import yaml

from continuousbench.harness.run import make_parser

ROOT = Path(__file__).resolve().parents[2]
# Evaluator recipes: every config except the generators', PE's and private prediction's (dp parsers).
RECIPES = sorted(
    p
    for p in (ROOT / "recipes" / "configs").glob("*.yaml")
    if "generator" not in p.stem and not p.stem.startswith("private-")
)
# Paper Table 30: (dataset, size, tuning) -> (learning rate, sequence length)
TABLE_30 = {
    ("news", "1b", "full"): (1e-4, 1024),
    ("news", "1b", "lora"): (5e-4, 1024),
    ("news", "4b", "full"): (5e-5, 1024),
    ("news", "4b", "lora"): (1e-4, 1024),
    ("geminon", "1b", "full"): (1e-4, 256),
    ("geminon", "1b", "lora"): (2e-4, 256),
    ("geminon", "4b", "full"): (5e-5, 256),
    ("geminon", "4b", "lora"): (2e-4, 256),
}


def parse(*argv: str):
    harness, model, training = make_parser().parse(["--output_dir", "/tmp/cb-unused", *argv])
    return harness, model, training


def test_defaults_are_table_29():
    _, model, t = parse()
    assert (t.adam_beta1, t.adam_beta2, t.weight_decay) == (0.9, 0.995, 0.1)
    assert t.optim.startswith("adamw") and t.lr_scheduler_type == "cosine" and t.warmup_steps == 0.1
    assert t.max_steps == 10_000 and t.samples_per_step == 32
    assert t.per_device_train_batch_size * t.gradient_accumulation_steps * t.world_size == 32
    assert t.packing and t.packing_strategy == "wrapped"
    assert t.metric_for_best_model == "qa_contains" and t.load_best_model_at_end and t.greater_is_better
    assert t.use_cpu and not t.bf16 and not t.activation_checkpointing  # this machine has no accelerator
    assert (model.model, model.tuning, model.lora_r, model.lora_alpha) == (
        "google/gemma-3-1b-pt",
        "lora",
        128,
        None,
    )


@pytest.mark.parametrize("recipe", RECIPES, ids=[p.stem for p in RECIPES])
def test_every_recipe_parses_with_the_real_parser(recipe):
    harness, model, t = parse("--config", str(recipe), "--release", "geminon-tiny-2026q1")
    # Table 29's 32 samples per optimizer step; the CPU demo recipe packs 16 blocks of twice the length
    if not t.private:  # DP recipes train on Poisson batches of expected_batch_size instead
        assert t.per_device_train_batch_size * t.gradient_accumulation_steps == t.samples_per_step
    assert t.samples_per_step == (16 if "tiny" in recipe.stem else 32)
    text = recipe.read_text()
    assert text.startswith("# ") and "Made for" in text.splitlines()[1]  # the hardware it was made for
    assert all(f"# {group}" in text for group in ("Model", "Data", "Trainer"))
    key = tuple(recipe.stem.split("-"))
    if key in TABLE_30:
        dataset, size, tuning = key
        assert (t.learning_rate, t.max_length) == TABLE_30[key]
        assert (model.model, model.tuning, harness.track) == (f"google/gemma-3-{size}-pt", tuning, dataset)


def test_all_eight_paper_presets_exist():
    assert {f"{d}-{s}-{t}" for d, s, t in TABLE_30} <= {p.stem for p in RECIPES}


def test_precedence_default_then_yaml_then_command_line():
    recipe = str(ROOT / "recipes/configs/geminon-1b-lora.yaml")
    assert parse()[2].learning_rate == 2e-4
    assert parse("--config", recipe)[2].max_length == 256
    _, model, t = parse("--config", recipe, "--learning_rate", "3e-3", "--steps", "7", "--lora_r", "4")
    assert (t.learning_rate, t.max_steps, model.lora_r) == (3e-3, 7, 4)


def test_unknown_keys_are_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"learning_rate": 1e-4, "lerning_rate": 1e-4}))
    with pytest.raises(ValueError, match="lerning_rate"):
        parse("--config", str(bad))
    with pytest.raises(ValueError, match="--lerning_rate"):
        parse("--lerning_rate", "1e-4")


def test_accumulation_follows_the_per_device_batch():
    assert parse("--per_device_train_batch_size", "4")[2].gradient_accumulation_steps == 8
    with pytest.raises(ValueError, match="not a multiple"):
        parse("--per_device_train_batch_size", "5")


def test_accelerate_configs_are_yaml_for_their_hardware():
    configs = {
        p.stem: yaml.safe_load(p.read_text()) for p in (ROOT / "recipes/accelerate_configs").glob("*.yaml")
    }
    assert configs["cpu"]["use_cpu"] is True and configs["cpu"]["num_processes"] == 1
    assert configs["single_gpu"]["mixed_precision"] == "bf16"
    assert configs["multi_gpu"]["distributed_type"] == "MULTI_GPU"
