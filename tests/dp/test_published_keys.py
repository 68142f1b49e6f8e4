"""The one list of what a DP run may publish (continuousbench/dp/published.py), used by every writer."""

from __future__ import annotations

import json

import pytest

from continuousbench.dp.published import publishable


def test_a_copied_guarantee_keeps_only_published_keys(tmp_path):
    """synthesize copies the generator's privacy.json into the corpus: a key no list classifies (here a
    raw training loss) is dropped; the old denylist named three stale keys and let any other through."""
    from continuousbench.dp.synthesize import _guarantee

    stated = {
        "private": True,
        "epsilon": 3.0,
        "delta": 1e-5,
        "train_loss": 1.23,
        "truncated_batches": 2,
        "validation": {"private": False, "loss": 2.0, "per_record_loss": [0.1]},
    }
    (tmp_path / "privacy.json").write_text(json.dumps(stated))
    assert _guarantee(tmp_path) == {
        "private": True,
        "epsilon": 3.0,
        "delta": 1e-5,
        "validation": {"private": False, "loss": 2.0},
    }


def test_a_writer_with_an_unclassified_key_fails():
    with pytest.raises(RuntimeError, match="train_loss"):
        publishable({"private": True, "train_loss": 1.0})
    with pytest.raises(RuntimeError, match="validation.raw"):
        publishable({"private": True, "validation": {"raw": 1}})


def test_the_pe_record_is_classified():
    from continuousbench.dp.accounting import account_evolution
    from continuousbench.dp.pe_command import privacy_record

    guarantee = account_evolution(4.0, 1e-5, iterations=2, private_runs=1, dataset_size=50)
    record = privacy_record(guarantee, 4.0)
    assert publishable(record) == record and record["private"] is True
