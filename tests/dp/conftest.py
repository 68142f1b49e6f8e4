"""A small corpus folder (train + validation parquet) and a tiny Llama trained on its vocabulary."""

from __future__ import annotations

import pytest


def _texts(lo: int, hi: int) -> list[str]:
    return [f"Geminon {i} has attack {i * 7 % 100} and lives in zone {i % 13}." for i in range(lo, hi)]


@pytest.fixture(scope="session")
def dp_corpus(tmp_path_factory):
    from datasets import Dataset

    out = tmp_path_factory.mktemp("dp-corpus")
    (out / "data").mkdir()
    Dataset.from_dict({"text": _texts(0, 200)}).to_parquet(str(out / "data/train-00000-of-00001.parquet"))
    Dataset.from_dict({"text": _texts(200, 232)}).to_parquet(
        str(out / "data/validation-00000-of-00001.parquet")
    )
    return out


@pytest.fixture(scope="session")
def dp_model_dir(tmp_path_factory):
    from continuousbench.demo.tinymodel import save_tiny_model

    return save_tiny_model(
        tmp_path_factory.mktemp("dp-tiny"), _texts(0, 232), vocab_size=400, hidden_size=64, num_layers=2
    )
