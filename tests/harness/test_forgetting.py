"""The forgetting monitor: a general corpus mixed into training, its held-out sample's loss before and
after, checked against the same loss computed from the base model and the run's model on their own."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_mix_corpus_loss_before_and_after_training(tmp_path, tiny_release, run_argv):
    import numpy as np
    import pandas as pd

    from continuousbench.demo.demo import SHIPPED_BASE
    from continuousbench.harness import forgetting
    from continuousbench.harness.run import cli
    from continuousbench.loader import load_model
    from continuousbench.training.data import load_corpus

    general = SHIPPED_BASE / "replay.parquet"  # the base model's own pretraining text: "web text" here
    out = tmp_path / "run"
    extra = (
        "--mix_corpus",
        str(general),
        "--mix_ratio",
        "0.5",
        "--warmup_steps",
        "0",
        "--eval_steps",
        "3",
        "--save_steps",
        "3",
    )
    cli(run_argv(tiny_release, SHIPPED_BASE, out, *extra, steps=3, tuning="full"))
    results = json.loads((out / "results.json").read_text())
    record = results["forgetting"]
    texts = list(load_corpus(str(general))["text"])
    assert record["heldout_documents"] == min(64, len(texts) // 2) and record["ratio"] == 0.5
    assert record["change"] == pytest.approx(record["loss_after"] - record["loss_before"])
    base, tokenizer, _ = load_model(str(SHIPPED_BASE), dtype="float32")
    trained, _, _ = load_model(str(out), dtype="float32")
    order = np.random.default_rng(results["seed"]).permutation(len(texts))
    held = [texts[i] for i in sorted(int(i) for i in order[: record["heldout_documents"]])]
    before, after = (forgetting.heldout_loss(m, tokenizer, held, 64) for m in (base, trained))
    assert (before, after) == pytest.approx((record["loss_before"], record["loss_after"]), rel=1e-5)
    assert record["loss_after"] != record["loss_before"]
    assert pd.read_parquet(out / "predictions.parquet")["mcq"].dtype == bool
