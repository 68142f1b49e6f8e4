"""Nothing computed on the private training records without noise is published (issue 11)."""

import json
from pathlib import Path

import pytest
from dp_runs import SYNTHESIS_ARGS, renderings, walk_for_private_statistics

from continuousbench.dp import published
from continuousbench.dp.published import PUBLISHED_KEYS

pytestmark = pytest.mark.slow

# privacy.json may hold the keys continuousbench/dp/published.py classifies, and nothing else
ALLOWED_KEYS, VALIDATION_KEYS = PUBLISHED_KEYS, published.VALIDATION_KEYS


def _numbers(value) -> list[float]:
    """Every number in a JSON value."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return [float(value)] if isinstance(value, int | float) and not isinstance(value, bool) else []


def test_generator_and_corpus_folders_hold_no_raw_training_statistic(tmp_path, dp_generator, dp_corpus):
    from continuousbench.dp.synthesize import cli as synthesize
    from continuousbench.dp.train import GeneratorArguments, load_data
    from continuousbench.training.data import corpus_fingerprint

    folder = dp_generator.path
    privacy = json.loads((folder / "privacy.json").read_text())
    assert set(privacy) <= ALLOWED_KEYS, set(privacy) - ALLOWED_KEYS
    assert set(privacy["validation"]) <= VALIDATION_KEYS and privacy["validation"]["private"] is False
    _, train, val = load_data(GeneratorArguments(corpus=str(dp_corpus)))
    secrets = [
        corpus_fingerprint(train, val),
        "train_loss",
        "training_loss",
        "truncated_batches",
        "batch_sizes",
    ]
    # A tiny random model's losses all sit near ln(vocabulary): a training loss can round to the published
    # validation loss (held-out records, public by the statement) at the walk's precision. Such bytes are
    # there for the public value; every other rendering of every training loss is still looked for.
    public = {r for v in _numbers(privacy["validation"]) for r in renderings(v)}
    private = [x for x in dp_generator.private_stats if not renderings(x) & public]
    assert private, "every training loss coincides with a validation figure: the walk would check nothing"
    assert not walk_for_private_statistics(folder, private, secrets)
    assert not [p for p in folder.rglob("*") if "checkpoint" in p.name or p.name == "state.pt"]

    corpus = synthesize(["--generator", str(folder), *SYNTHESIS_ARGS, "--output_dir", str(tmp_path / "syn")])
    assert not walk_for_private_statistics(Path(corpus), private, secrets)


def test_the_walk_finds_a_planted_statistic(tmp_path, dp_generator):
    """The check above can fail: a raw loss written anywhere is found."""
    planted = tmp_path / "leaky"
    planted.mkdir()
    (planted / "log.json").write_text(json.dumps({"loss": dp_generator.private_stats[1]}))
    assert walk_for_private_statistics(planted, dp_generator.private_stats, [])


def test_log_lines_above_debug_hold_no_raw_training_statistic(tmp_path, train_generator, caplog):
    """INFO reaches job logs and consoles others read: the raw training loss and this process's Poisson
    batch size are logged at DEBUG only (docs/generators.md, "What logs may hold")."""
    import logging

    from dp_runs import DP_ARGS
    from recording import recorded_dp_steps

    with caplog.at_level(logging.DEBUG, logger="continuousbench.dp.loop"), recorded_dp_steps() as seen:
        train_generator(tmp_path / "gen", *DP_ARGS, "--steps", "2")
    means = {f"{loss:.4f}" for loss in seen[1::2]}
    debug = " ".join(r.getMessage() for r in caplog.records if r.levelno <= logging.DEBUG)
    above = " ".join(r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG)
    assert "private training loss" in debug and any(m in debug for m in means)  # the operator's, at DEBUG
    assert "private training loss" not in above and not any(m in above for m in means)
