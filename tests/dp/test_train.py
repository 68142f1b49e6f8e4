import json

import pytest

from continuousbench.dp import accounting

pytestmark = pytest.mark.slow

COMMON = [
    "--lora_r",
    "4",
    "--steps",
    "4",
    "--max_length",
    "48",
    "--eval_steps",
    "2",
    "--save_steps",
    "2",
    "--learning_rate",
    "1e-3",
    "--seed",
    "0",
]


def _train(tmp_path, dp_corpus, dp_model_dir, name, *extra):
    from continuousbench.dp.train import cli

    out = tmp_path / name
    cli(["--corpus", str(dp_corpus), "--model", str(dp_model_dir), "--output_dir", str(out), *COMMON, *extra])
    return out


@pytest.fixture(scope="module")
def dp_generator(tmp_path_factory, dp_corpus, dp_model_dir):
    return _train(
        tmp_path_factory.mktemp("gen"),
        dp_corpus,
        dp_model_dir,
        "dp",
        "--epsilon",
        "10",
        "--sampling",
        "poisson",
        "--expected_batch_size",
        "8",
        "--micro_batch_size",
        "4",
    )


def test_dp_run_card_carries_statement(dp_generator):
    privacy = json.loads((dp_generator / "privacy.json").read_text())
    assert privacy["private"] and privacy["epsilon"] == pytest.approx(10, rel=0.01)
    event = accounting.dp_event_from_json(privacy["event_json"])
    assert accounting.event_epsilon(event, privacy["delta"]) == pytest.approx(privacy["epsilon"])
    assert privacy["delta"] == pytest.approx(accounting.default_delta(200))
    card = (dp_generator / "README.md").read_text()
    assert f"({privacy['epsilon']:.4g}, {privacy['delta']:.3g})-differential" in card
    assert "Add-or-remove one record" in card and privacy["event_json"] in card
    assert "base_model:" in card and "differential-privacy" in card
    assert (dp_generator / "adapter_model.safetensors").is_file()
    assert not list(dp_generator.glob("checkpoint-*"))


def test_nonprivate_run_uses_the_evaluator_recipe(tmp_path, dp_corpus, dp_model_dir):
    out = _train(
        tmp_path,
        dp_corpus,
        dp_model_dir,
        "np",
        "--per_device_train_batch_size",
        "4",
        "--samples_per_step",
        "4",
    )
    privacy = json.loads((out / "privacy.json").read_text())
    assert privacy["private"] is False and privacy["validation_loss"] > 0
    assert "without differential privacy" in (out / "README.md").read_text()


def test_refuses_existing_output(tmp_path, dp_corpus, dp_model_dir, capsys):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("keep")
    with pytest.raises(SystemExit):
        _train(tmp_path, dp_corpus, dp_model_dir, "x", "--epsilon", "10")
    assert "pass --overwrite or --resume" in capsys.readouterr().err


def test_synthesis_loads_in_harness_and_is_seeded(tmp_path, dp_generator):
    from continuousbench.dp.synthesize import cli
    from continuousbench.harness.data import load_corpus

    args = [
        "--generator",
        str(dp_generator),
        "--num_samples",
        "6",
        "--max_new_tokens",
        "12",
        "--batch_size",
        "3",
    ]
    cli([*args, "--output_dir", str(tmp_path / "a")])
    cli([*args, "--output_dir", str(tmp_path / "b")])
    a, b = load_corpus(str(tmp_path / "a")), load_corpus(str(tmp_path / "b"))
    assert a["text"] == b["text"] and len(a) >= 1
    parquet = "data/train-00000-of-00001.parquet"
    assert (tmp_path / "a" / parquet).read_bytes() == (tmp_path / "b" / parquet).read_bytes()
    card = (tmp_path / "a" / "README.md").read_text()
    assert "configs:" in card and "Privacy statement" in card and "Add-or-remove one record" in card
    from continuousbench.harness.results import corpus_privacy

    stated = json.loads((tmp_path / "a" / "privacy.json").read_text())
    assert "history" not in stated and "validation_loss" not in stated  # losses on private records stay home
    privacy = corpus_privacy(tmp_path / "a")
    assert privacy["private"] and privacy["unit"] == "record"
    assert privacy["epsilon"] == pytest.approx(10, rel=0.01)
    assert json.loads((tmp_path / "a" / "synthesis.json").read_text())["sampling"]["seed"] == 0
    with pytest.raises(SystemExit):
        cli([*args, "--output_dir", str(tmp_path / "a")])
