"""A small corpus folder (train + validation parquet) and a tiny Llama trained on its vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from dp_runs import DP_ARGS


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


@pytest.fixture(scope="session")
def train_generator(dp_corpus, dp_model_dir):
    """``train_generator(out, *args)``: run the command in-process on the tiny corpus and model."""
    from continuousbench.dp.train import cli

    def _train(out, *args, corpus=None):
        corpus = dp_corpus if corpus is None else corpus
        cli(["--corpus", str(corpus), "--model", str(dp_model_dir), "--output_dir", str(out), *args])
        return out

    return _train


@dataclass
class TrainedGenerator:
    path: Path
    private_stats: list[float]  # every raw training statistic the run computed (never to be published)


@pytest.fixture(scope="session")
def dp_generator(tmp_path_factory, train_generator):
    """One DP generator of the session, with the raw training losses its steps computed."""
    from recording import recorded_dp_steps

    with recorded_dp_steps() as seen:
        path = train_generator(tmp_path_factory.mktemp("gen") / "dp", *DP_ARGS)
    return TrainedGenerator(path, seen)


@pytest.fixture(scope="session")
def trained_base_dir(tmp_path_factory, dp_model_dir):
    """The tiny Llama after 200 full fine-tuning steps on the corpus's text: a base model whose output
    layer can make confident predictions (a random one cannot, so LoRA could memorise nothing)."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from continuousbench.dp.dpsgd import encode_records, pad_batch

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(dp_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(dp_model_dir)
    records = encode_records(tokenizer, _texts(0, 232), 48)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    for _ in range(200):
        ids, mask, labels = pad_batch(
            [records[i] for i in rng.choice(len(records), 32)], tokenizer.pad_token_id, "cpu"
        )
        model(input_ids=ids, attention_mask=mask, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    out = tmp_path_factory.mktemp("trained-base")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """16 training and 16 validation records: canaries are a large share of what an audit trains on."""
    from datasets import Dataset

    out = tmp_path_factory.mktemp("small-corpus")
    (out / "data").mkdir()
    Dataset.from_dict({"text": _texts(0, 16)}).to_parquet(str(out / "data/train-00000-of-00001.parquet"))
    Dataset.from_dict({"text": _texts(200, 216)}).to_parquet(
        str(out / "data/validation-00000-of-00001.parquet")
    )
    return out
