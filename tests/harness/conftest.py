"""Harness fixtures: a tiny Gemma 3 beside conftest's tiny Llama (tiny runs, Ctrl-C: tests/conftest.py)."""

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
