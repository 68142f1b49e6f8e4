"""A CPU DP step reuses the memory the previous step freed (continuousbench.dp.host_memory)."""

import ast
import os
import subprocess
import sys
import textwrap

import pytest

# A fresh process: glibc's thresholds are per process, set by make_private.
STEPS = textwrap.dedent(
    """
    import resource, sys, tempfile, torch
    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.dp import dpsgd
    from continuousbench.dp.randomness import SecretStreams
    from continuousbench.training.modeling import load_model_and_tokenizer

    torch.set_num_threads(1)
    texts = [f"Geminon {i} has attack {i * 7 % 100} in zone {i % 13} " * 8 for i in range(32)]
    folder = save_tiny_model(tempfile.mkdtemp(), texts, vocab_size=512, hidden_size=256, num_layers=2)
    model, tok = load_model_and_tokenizer(str(folder), lora_rank=16, dtype="float32")
    rows = dpsgd.encode_records(tok, texts, 128)
    optimizer = torch.optim.AdamW(dpsgd.check_trainable(model), lr=1e-4)
    comps = dpsgd.make_private(
        model, optimizer, noise_multiplier=1.0, expected_batch_size=len(rows),
        generator=SecretStreams.create(device="cpu").noise, secure_mode=True,
    )
    faults = []
    for _ in range(7):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        dpsgd.dp_step(comps, rows, clip_norm=1e-3, micro_batch=len(rows), pad_id=tok.pad_token_id)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    print(faults)
    """
)


def _faults_per_step(**env: str) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-c", STEPS],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", **env},
    )
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and Linux's fault counter")
def test_later_dp_steps_fault_in_no_fresh_memory():
    # glibc's own thresholds hand the per-record gradients' pages back after each step and fault them in
    # again on the next: ~30,000 faults a step, more than the first step's in six steps; kept, a few stray
    first, *later = _faults_per_step()
    assert sum(later) < first / 2, (first, later)


def test_the_users_own_malloc_settings_win(monkeypatch):
    from continuousbench.dp import host_memory

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert host_memory.keep_freed_memory() is False
