"""The harness scores a Private Evolution corpus: `continuousbench pe` with the tiny recipe and a real local
transformers API, then a two-step `evaluate --corpus` run on its output."""

import json
from pathlib import Path

import pytest

from continuousbench.dp import pe_command
from continuousbench.harness import run
from continuousbench.training.data import load_corpus

ROOT = Path(__file__).resolve().parents[2]
RECIPES = sorted((ROOT / "recipes" / "configs").glob("private-evolution-*.yaml"))


def test_pe_recipes_parse_with_the_real_parser():
    assert [r.stem for r in RECIPES] == [f"private-evolution-{t}" for t in ("geminon", "news", "tiny")]
    for recipe in RECIPES:
        (args,) = pe_command.make_parser().parse(
            ["--config", str(recipe), "--api", "offline:x", "--embedding_model", "m", "--output_dir", "o"]
        )
        assert args.epsilon == 10.0 and args.variations == 6 and args.sweep_voters == "validation"
        if "tiny" not in recipe.stem:  # paper App. D.3.1
            assert args.iterations == 10 and args.temperatures == [0.8, 1.0, 1.2, 1.4, 1.6]
            assert (args.sweep_num_samples, args.num_samples) == (2000, 20000)


@pytest.mark.slow
def test_harness_trains_on_a_pe_corpus(run_argv, tmp_path, tiny_release, tiny_model_dir):
    corpus = tmp_path / "pe"
    recipe = ROOT / "recipes/configs/private-evolution-tiny.yaml"
    pe_command.cli(
        [
            "--config",
            str(recipe),
            "--release",
            str(tiny_release),
            "--api",
            f"transformers:{tiny_model_dir}",
            "--embedding_model",
            str(tiny_model_dir),
            "--output_dir",
            str(corpus),
            "--max_new_tokens",
            "24",
        ]
    )
    texts = load_corpus(str(corpus))["text"]
    record = json.loads((corpus / "pe.json").read_text())
    assert len(texts) == 24 and record["selected_temperature"] in (0.8, 1.2)
    assert record["guarantee"]["private_runs"] == 1 and record["guarantee"]["mechanisms"] == 3
    results = run.cli(run_argv(tiny_release, tiny_model_dir, tmp_path / "eval", "--corpus", str(corpus)))
    assert results["corpus"]["documents"] == 24 and results["steps"] == 2
