"""train-generator under two processes (torchrun, gloo on CPU): one output, the same mechanism."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from dp_runs import DP_ARGS, NONPRIVATE_ARGS

pytestmark = pytest.mark.slow

RECIPE = Path(__file__).parents[2] / "recipes" / "train_generator.py"
EXPECTED = {
    ".continuousbench-train-generator.json",
    "README.md",
    "adapter_config.json",
    "adapter_model.safetensors",
    "privacy.json",
    "tokenizer.json",
    "tokenizer_config.json",
}


def torchrun(corpus, model, out, *args) -> subprocess.CompletedProcess:
    """The documented command: ``torchrun --standalone --nproc_per_node 2 recipes/train_generator.py ...``."""
    command = [
        str(Path(sys.executable).with_name("torchrun")),
        "--standalone",
        "--nproc_per_node",
        "2",
        str(RECIPE),
        "--corpus",
        str(corpus),
        "--model",
        str(model),
        "--output_dir",
        str(out),
        *args,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_dp_under_two_processes_is_the_one_process_mechanism(
    tmp_path, dp_corpus, dp_model_dir, train_generator
):
    """Same test seed: each process clips its share, process 0 adds the one noise draw -> same adapter."""
    from safetensors.torch import load_file

    args = [*DP_ARGS, "--insecure_noise_seed", "11"]
    done = torchrun(dp_corpus, dp_model_dir, tmp_path / "two", *args)
    one = train_generator(tmp_path / "one", *args)
    two = tmp_path / "two"
    assert {p.name for p in two.iterdir()} == EXPECTED and done.stdout.strip().splitlines()[-1] == str(two)
    a, b = load_file(one / "adapter_model.safetensors"), load_file(two / "adapter_model.safetensors")
    assert all(torch.allclose(a[k], b[k], rtol=1e-4, atol=1e-6) for k in a)
    histories = [json.loads((d / "privacy.json").read_text())["validation"]["history"] for d in (one, two)]
    assert [h["step"] for h in histories[0]] == [h["step"] for h in histories[1]]
    assert done.stderr.count("continuousbench.dp.train: generator published") == 1  # process 0 only


def test_nonprivate_under_two_processes_writes_one_generator(tmp_path, dp_corpus, dp_model_dir):
    out = tmp_path / "np"
    args = [*NONPRIVATE_ARGS, "--per_device_train_batch_size", "2"]  # 2 per process x 2 = 4 per step
    done = torchrun(dp_corpus, dp_model_dir, out, *args)
    assert {p.name for p in out.iterdir()} == EXPECTED and done.stdout.strip().splitlines()[-1] == str(out)
    privacy = json.loads((out / "privacy.json").read_text())
    assert privacy["private"] is False and privacy["validation"]["loss"] > 0
