"""Harness fixtures: a tiny Gemma 3 beside conftest's tiny Llama (tiny runs are in tests/conftest.py)."""

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
