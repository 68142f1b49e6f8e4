"""The `continuousbench evaluate` / `report` commands through the real dispatcher, and `accelerate launch`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_evaluate_help_shows_the_recipe_arguments(invoke):
    result = invoke(["evaluate", "--help"])
    assert result.exit_code == 0
    flags = "--release --corpus --text_column --model --tuning --steps --resume --judge --qa_eval_limit"
    for flag in (
        *flags.split(),
        "--push_to_hub",
        "--hub_model_id",
        "--output_dir",
        "--overwrite",
        "--config",
    ):
        assert flag in result.output, flag


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_evaluate_through_the_cli(invoke, run_argv, tmp_path, tiny_release, tiny_model_dir):
    """A run ends with one line: EM and contains with their intervals per part, and the run folder;
    ``--json`` prints the whole record instead (it printed a 45-line JSON digest)."""
    out = tmp_path / "cli"
    result = invoke(["evaluate", *run_argv(tiny_release, tiny_model_dir, out, steps=0)])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["steps"] == 0 and "json" not in results["harness_args"]
    (line,) = result.stdout.strip().splitlines()
    em = results["metrics"]["qa_public"]["metrics"]["exact_match"]
    assert line.startswith(f"qa_public: EM {em['accuracy']:.3f} [{em['ci95'][0]:.2f}, {em['ci95'][1]:.2f}]")
    assert "contains" in line and "qa_singleton: EM" in line and line.endswith(f"-> {out}")
    argv = run_argv(tiny_release, tiny_model_dir, out, "--json", "--overwrite", steps=0)
    again = invoke(["evaluate", *argv])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["metrics"] == results["metrics"]


def test_evaluate_errors_are_one_line(invoke, run_argv, tmp_path, tiny_model_dir):
    result = invoke(["evaluate", *run_argv(tmp_path / "nowhere", tiny_model_dir, tmp_path / "x")])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error:") and len(result.output.strip().splitlines()) == 1
    result = invoke(["evaluate", "--release", "geminon-tiny-2026q1", "--lerning_rate", "1"])
    assert result.exit_code == 2 and "lerning_rate" in result.output


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_report_table_and_plot(invoke, finished_run, tmp_path):
    plot, rows_json = tmp_path / "cmp.png", tmp_path / "rows.json"
    result = invoke(["report", str(finished_run), "--plot", str(plot), "--json", str(rows_json)])
    assert result.exit_code == 0, result.output
    assert "llama-lora" in result.output and "public EM" in result.output
    assert plot.read_bytes()[:4] == b"\x89PNG"
    row = json.loads(rows_json.read_text())["runs"][0]
    metrics = json.loads((finished_run / "results.json").read_text())["metrics"]
    assert row["qa_public/contains"] == metrics["qa_public"]["metrics"]["contains"]["accuracy"]
    missing = invoke(["report", str(tmp_path)])
    assert missing.exit_code == 2 and "has no results.json" in missing.output


@pytest.mark.slow
def test_accelerate_launch_end_to_end(run_argv, tmp_path, tiny_release, tiny_model_dir):
    out = tmp_path / "launched"
    launch = "-m accelerate.commands.launch --cpu --num_processes 1 --num_machines 1 --mixed_precision no"
    script = str(ROOT / "recipes" / "evaluate.py")
    cmd = [sys.executable, *launch.split(), script, *run_argv(tiny_release, tiny_model_dir, out, steps=1)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["steps"] == 1 and (out / "model" / "adapter_model.safetensors").is_file()


@pytest.mark.slow
def test_two_processes_train_together_share_the_answers_and_write_one_output(
    run_argv, tmp_path, tiny_release, tiny_model_dir, torchrun_evaluate
):
    """``torchrun`` with two CPU processes (gloo): data-parallel training, each process answers half of
    every QA pass, and one complete output, written once."""
    import pandas as pd

    out = tmp_path / "ddp"
    argv = run_argv(tiny_release, tiny_model_dir, out, "--per_device_train_batch_size", "4", steps=2)
    proc = torchrun_evaluate(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count(f"-> {out}") == 1  # the scores are printed by one process
    # 4 validation questions per pass, 6 test questions per part: each process answered half
    assert "4 items answered in 2 shares: 2 + 2" in proc.stderr
    assert proc.stderr.count("6 items answered in 2 shares: 3 + 3") == 4  # per part: answers, ranked choice
    results = json.loads((out / "results.json").read_text())
    assert results["training_args"]["world_size"] == 2 and results["tokens_per_step"] == 8 * 64
    assert [h["step"] for h in results["validation_history"]] == [1, 2]
    table = pd.read_parquet(out / "predictions.parquet")
    per_part = table.groupby("part")["id"].nunique().to_dict()
    assert len(table) == 12 and per_part == {"qa_public": 6, "qa_singleton": 6}
    assert (out / "model" / "adapter_model.safetensors").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ddp"]  # nothing beside it (no trainer_output)
    assert not (out / ".evaluate-work").exists()


@pytest.mark.parametrize(
    "argv", [["compare", "--help"], ["submit", "--help"], ["publish", "release", "--help"]]
)
def test_new_commands_are_registered(invoke, argv):
    result = invoke(argv)
    assert result.exit_code == 0 and "usage: continuousbench" in result.output
