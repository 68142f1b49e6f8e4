"""The fixed harness: recipes are self-contained, their settings have a digest, canonical runs are named."""

import json
import os
from pathlib import Path

import pytest

from continuousbench.harness import recipe as recipes
from continuousbench.harness.run import make_parser
from continuousbench.results import canonical

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "recipes" / "configs" / "geminon-tiny-demo.yaml"
EVALUATOR_RECIPES = sorted(
    p
    for p in (ROOT / "recipes" / "configs").glob("*.yaml")
    if "generator" not in p.stem and not p.stem.startswith("private-")
)


def parsed(*argv: str):
    h, m, t = make_parser().parse(["--output_dir", os.devnull, *argv])
    return h, m, t


def test_every_evaluator_recipe_is_canonical_under_its_own_name():
    """The registry names every shipped evaluator recipe with the digest of its settings (a recipe
    changed on purpose: regenerate the table with the command in harness/recipe.py's docstring)."""
    found = {p.stem: recipes.digest(recipes.file_settings(str(p))) for p in EVALUATOR_RECIPES}
    assert found == canonical.current()
    # the published list only grows: every entry closed or current, one current entry per recipe
    entries = canonical.published()
    assert all(e["until"] is None or e["since"] <= e["until"] for e in entries)
    assert sorted(e["name"] for e in entries if e["until"] is None) == sorted(found)


def test_the_tiny_recipe_names_its_model_and_replay_corpus_relative_to_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # any folder: the paths are read beside the YAML's real file
    h, m, t = parsed("--config", str(TINY))
    recipes.rebase(h, m, str(TINY))
    recipes.check(h)
    base = ROOT / "continuousbench" / "demo" / "base"
    assert Path(m.model).resolve() == base and Path(h.replay_corpus).resolve() == base / "replay.parquet"
    record = recipes.record(h, m, t, str(TINY))
    assert record["canonical"] and record["name"] == "geminon-tiny-demo"
    assert record["settings"]["model"].startswith("sha256:") and record["why_not_canonical"] is None


def test_a_recipe_copied_beside_another_base_model_is_another_recipe(tmp_path, tiny_model_dir):
    """The base model is named by its files, not its path: the demo recipe copied next to a different
    ``base/`` folder is not canonical; next to a copy of the same files it is."""
    import shutil

    shipped = ROOT / "continuousbench" / "demo" / "base"
    for name, model in (("same", shipped), ("other", tiny_model_dir)):
        folder = tmp_path / name
        (folder / "configs").mkdir(parents=True)
        shutil.copytree(model, folder / "base")
        shutil.copy(shipped / "replay.parquet", folder / "base" / "replay.parquet")
        (folder / "base" / "notes.md").write_text("a file that is not the model's")
        copy = folder / "configs" / "geminon-tiny-demo.yaml"
        copy.write_text(TINY.read_text())
        h, m, t = parsed("--config", str(copy))
        recipes.rebase(h, m, str(copy))
        assert recipes.record(h, m, t, str(copy))["canonical"] is (name == "same"), name


def test_dp_sampling_options_are_the_recipes_and_the_clipping_algorithm_is_not():
    """Under truncated Poisson sampling the batch cap sets q and sigma: another mechanism; ghost and
    per-sample clipping compute the same clipped sum, and micro-batches only change memory."""
    dp = ROOT / "recipes" / "configs" / "dp-direct-geminon-1b.yaml"
    base = recipes.record(*parsed("--config", str(dp)), str(dp))
    assert base["canonical"] and base["settings"]["sampling"] == "truncated_poisson"
    assert "clipping" not in base["settings"] and "physical_batch_size" in base["settings"]
    for same in (["--clipping", "ghost"], ["--micro_batch_size", "3"]):
        assert recipes.record(*parsed("--config", str(dp), *same), str(dp))["sha256"] == base["sha256"]
    capped = recipes.record(*parsed("--config", str(dp), "--physical_batch_size", "256"), str(dp))
    assert not capped["canonical"] and "physical_batch_size 512 -> 256" in capped["why_not_canonical"]


def test_a_command_line_override_makes_a_different_non_canonical_recipe():
    h, m, t = parsed("--config", str(TINY), "--max_steps", "300")
    recipes.rebase(h, m, str(TINY))
    record = recipes.record(h, m, t, str(TINY))
    assert not record["canonical"] and record["name"] is None
    assert record["sha256"] != canonical.current()["geminon-tiny-demo"]
    assert record["why_not_canonical"] == "changed on the command line: max_steps 150 -> 300"
    # hardware and replicate knobs are not the recipe's
    h, m, t = parsed("--config", str(TINY), "--seed", "3", "--per_device_train_batch_size", "8")
    recipes.rebase(h, m, str(TINY))
    assert recipes.record(h, m, t, str(TINY))["canonical"]


def test_an_edited_copy_is_not_canonical_and_no_recipe_says_so(tmp_path):
    copy = tmp_path / "mine.yaml"
    copy.write_text(TINY.read_text().replace("max_steps: 150", "max_steps: 151"))
    h, m, t = parsed("--config", str(copy))
    why = recipes.record(h, m, t, str(copy))["why_not_canonical"]
    assert why == "mine.yaml is not one of the canonical recipes (recipes/configs)"
    h, m, t = parsed()
    assert recipes.record(h, m, t, None)["why_not_canonical"] == "no recipe file (--config)"


def test_replay_fraction_without_a_replay_corpus_is_refused_in_one_line(tmp_path, invoke, tiny_release):
    bare = tmp_path / "bare.yaml"
    bare.write_text("tuning: full\nreplay_fraction: 0.25\n")
    result = invoke(["evaluate", "--config", bare, "--release", tiny_release, "--output_dir", tmp_path / "r"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: replay_fraction 0.25 is set but no replay corpus is given; name it in the recipe "
        "(replay_corpus: <path relative to the YAML>) or pass --replay_corpus, or drop replay_fraction"
    ]
    assert not (tmp_path / "r").exists()


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_the_tiny_recipes_usage_line_trains_with_its_replay_corpus(tmp_path, monkeypatch, tiny_release):
    """A participant's path: the recipe's own usage line (plus a short budget) from another folder on a
    JSONL corpus with a privacy statement; the shipped base model and its replay corpus are used with no
    extra flag, results.json says which recipe it was and what the corpus states, and submit says why
    the run is not in the main table."""
    from datasets import load_dataset

    from continuousbench.harness.run import cli
    from continuousbench.results import submit

    monkeypatch.chdir(tmp_path)
    texts = load_dataset(str(tiny_release), "corpus", split="train")["text"][:64]
    Path("mine.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    Path("mine-privacy.json").write_text('{"private": true, "epsilon": 8, "delta": 1e-6}')
    cli(
        [
            "--config",
            str(TINY),
            "--release",
            str(tiny_release),
            "--corpus",
            "mine.jsonl",
            "--corpus_privacy",
            "mine-privacy.json",
            "--output_dir",
            "run",
            "--steps",
            "1",
            "--eval_steps",
            "1",
            "--save_steps",
            "1",
            "--samples_per_step",
            "2",
            "--per_device_train_batch_size",
            "2",
            "--qa_eval_limit",
            "2",
            "--qa_test_limit",
            "2",
            "--max_new_tokens",
            "4",
        ]
    )
    record = json.loads((tmp_path / "run" / "results.json").read_text())
    replay = record["corpus"]["replay"]
    assert Path(replay["path"]) == ROOT / "continuousbench" / "demo" / "base" / "replay.parquet"
    assert replay["fraction"] == 0.25 and record["schema_version"] == 4
    assert record["corpus"]["privacy"] == {
        "private": True,
        "epsilon": 8,
        "delta": 1e-6,
        "unit": "record",
        "adjacency": "add-or-remove",
    }
    assert record["corpus"]["privacy_source"] == f"--corpus_privacy {tmp_path / 'mine-privacy.json'}"
    assert record["recipe"]["canonical"] is False and record["recipe"]["name"] is None
    assert record["recipe"]["why_not_canonical"].startswith(
        "changed on the command line: eval_steps 50 -> 1, max_new_tokens 24 -> 4, max_steps 150 -> 1"
    )
    submitted = submit.main(submit.SubmitArguments(run="run", to="results"))
    assert len(submitted["notes"]) == 1 and submitted["notes"][0].startswith("not a canonical recipe")


def test_the_demos_command_line_is_the_canonical_recipe():
    """The demo and its study pass the same model and replay corpus as absolute paths, bf16 and a seed:
    the same recipe, so the demo's rows rank in the leaderboard's main table."""
    base = ROOT / "continuousbench" / "demo" / "base"
    replay = str(base / "replay.parquet")
    h, m, t = parsed(
        "--config",
        str(TINY),
        "--model",
        str(base),
        "--replay_corpus",
        replay,
        "--bf16",
        "false",
        "--seed",
        "1",
    )
    recipes.rebase(h, m, str(TINY))
    recipes.check(h)
    assert recipes.record(h, m, t, str(TINY))["name"] == "geminon-tiny-demo"
