"""Harness fixtures: a tiny Gemma 3 beside conftest's tiny Llama, and the arguments of a seconds-long run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_gemma_dir(tmp_path_factory, tiny_release):
    """A tiny Gemma 3 text model with a tokenizer trained on the tiny release's corpus."""
    from datasets import load_dataset

    from continuousbench.demo.tinymodel import save_tiny_model

    corpus = load_dataset(str(tiny_release), "corpus", split="train")
    out = tmp_path_factory.mktemp("tiny-gemma3")
    return save_tiny_model(out, corpus["text"], arch="gemma3", vocab_size=1024, hidden_size=64, num_layers=2)


def tiny_run_argv(release, model, output_dir, *extra: str, steps: int = 2, tuning: str = "lora") -> list[str]:
    """Arguments of a tiny run: 8 blocks of 64 tokens per step, 4 validation and 6 test questions per part."""
    return [
        "--release", str(release), "--model", str(model), "--tuning", tuning, "--lora_r", "8",
        "--output_dir", str(output_dir), "--steps", str(steps), "--eval_steps", "1", "--save_steps", "1",
        "--per_device_train_batch_size", "8", "--samples_per_step", "8", "--max_length", "64",
        "--learning_rate", "1e-3", "--logging_steps", "1", "--qa-eval-limit", "4", "--qa-test-limit", "6",
        "--max-new-tokens", "8", "--dataloader_num_workers", "0", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory, tiny_release, tiny_model_dir):
    """One finished LoRA run folder on the tiny release (shared by the output and report tests)."""
    from continuousbench.harness.run import cli

    out = tmp_path_factory.mktemp("runs") / "llama-lora"
    cli(tiny_run_argv(tiny_release, tiny_model_dir, out))
    return out


@pytest.fixture(scope="session")
def run_argv():
    """:func:`tiny_run_argv`, for tests (conftest modules are not importable)."""
    return tiny_run_argv


def _interrupt_training(evaluation: int, monkeypatch) -> None:
    """Ctrl-C during training: validation pass number ``evaluation`` of the next run raises
    KeyboardInterrupt (the checkpoints of the passes before it are saved)."""
    from continuousbench.harness import run

    real, calls = run.selection_eval, []

    def selection_eval(*args, **kwargs):
        eval_fn = real(*args, **kwargs)

        def interrupted(model):
            calls.append(1)
            if len(calls) == evaluation:
                raise KeyboardInterrupt
            return eval_fn(model)

        return interrupted

    monkeypatch.setattr(run, "selection_eval", selection_eval)


@pytest.fixture(scope="session")
def interrupt_training():
    """:func:`_interrupt_training` ``(evaluation, monkeypatch)``."""
    return _interrupt_training
