"""Label-conditioned generators: records with their label line, synthesize --per_class, class balances
(uniform, stated, public or DP counts) and the DP counts composed into the corpus's guarantee."""

from __future__ import annotations

import json

import pytest
from dp_runs import NONPRIVATE_ARGS

from continuousbench.dp import labels
from continuousbench.dp.accounting import account, dp_event_from_json, event_epsilon
from continuousbench.dp.sampling import SamplingPlan

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_labels")

NAMES = ("even", "odd")


def test_allocate_adds_up_exactly_and_follows_the_weights():
    assert labels.allocate(12, {"a": 1, "b": 1, "c": 1}) == {"a": 4, "b": 4, "c": 4}
    assert labels.allocate(10, {"a": 1, "b": 1, "c": 1}) == {"a": 4, "b": 3, "c": 3}
    counts = labels.allocate(1000, {"a": 17.34, "b": 24.63, "c": 0.0})
    assert sum(counts.values()) == 1000 and counts["c"] == 0 and counts["b"] > counts["a"]


def test_class_priors_uniform_stated_or_a_counts_file(tmp_path):
    assert labels.class_prior("uniform", NAMES).weights == {"even": 1.0, "odd": 1.0}
    stated = labels.class_prior("odd=3,even=1", NAMES)
    assert stated.weights == {"odd": 3.0, "even": 1.0} and stated.source == "stated"
    file = tmp_path / "counts.json"
    file.write_text(json.dumps(labels.counts_record([0, 0, 0, 1], NAMES, noise_multiplier=None)))
    public = labels.class_prior(str(file), NAMES)
    assert public.weights == {"even": 3.0, "odd": 1.0} and public.source == "public counts"
    for bad in ("even=1", "even=1,odd=-1", "even=0,odd=0", "fair"):
        with pytest.raises(ValueError, match="--class_prior") as err:
            labels.class_prior(bad, NAMES)
        assert "\n" not in str(err.value)


def _generator_privacy(n: int = 200) -> dict:
    """What a DP generator's privacy.json says (the fields the composition reads)."""
    guarantee = account(SamplingPlan(n, 8.0, "poisson", None, None), 3.0, 2, 1e-5, clip_norm=1e-3)
    return {"private": True, **guarantee.to_dict()}


def test_dp_counts_spend_what_the_generator_left_and_re_account():
    privacy = _generator_privacy()
    sigma = labels.calibrate_counts(privacy, 2 * privacy["epsilon"])
    record = labels.counts_record([0] * 150 + [1] * 50, NAMES, noise_multiplier=sigma, insecure_seed=3)
    assert record["source"] == "dp" and record["counts"] != {"even": 150, "odd": 50}
    assert abs(record["counts"]["even"] - 150) < 6 * sigma
    composed = labels.compose(privacy, record)
    assert privacy["epsilon"] < composed["epsilon"] <= 2 * privacy["epsilon"] + 1e-9
    # the published event is exactly what was accounted: rebuilt, it gives the published epsilon
    rebuilt = event_epsilon(dp_event_from_json(composed["event_json"]), composed["delta"])
    assert rebuilt == pytest.approx(composed["epsilon"], rel=1e-9)
    assert composed["private"] is False  # an insecure (test) seed carries no guarantee
    with pytest.raises(ValueError, match="nothing is left"):
        labels.calibrate_counts(privacy, privacy["epsilon"] * 0.9)


@pytest.fixture(scope="module")
def labelled_corpus(tmp_path_factory):
    from datasets import Dataset

    def rows(lo, hi):
        texts = [f"Geminon {i} has attack {i * 7 % 100} and lives in zone {i % 13}." for i in range(lo, hi)]
        return Dataset.from_dict({"text": texts, "parity": [NAMES[i % 2] for i in range(lo, hi)]})

    out = tmp_path_factory.mktemp("labelled")
    (out / "data").mkdir()
    rows(0, 200).to_parquet(str(out / "data/train-00000-of-00001.parquet"))
    rows(200, 232).to_parquet(str(out / "data/validation-00000-of-00001.parquet"))
    return out


@pytest.fixture(scope="module")
def conditioned(tmp_path_factory, train_generator, labelled_corpus):
    out = tmp_path_factory.mktemp("conditioned") / "gen"
    args = ["--label_column", "parity", "--label_map", "even,odd", *NONPRIVATE_ARGS]
    return train_generator(out, *args, corpus=labelled_corpus)


def test_records_carry_their_label_line(labelled_corpus):
    train, val, names = labels.labelled_records(str(labelled_corpus), "text", "parity", "even,odd")
    assert names == NAMES and train[1].startswith("Label: odd\nGeminon 1 ") and len(val) == 32
    with pytest.raises(ValueError, match="read off the private records"):
        labels.labelled_records(str(labelled_corpus), "text", "parity", None)


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_per_class_yields_the_requested_count_of_each_label(conditioned, tmp_path, invoke):
    from datasets import load_dataset

    assert labels.read_spec(conditioned) == NAMES
    common = ["synthesize", "--generator", conditioned, "--max_new_tokens", "6", "--batch_size", "4"]
    done = invoke([*common, "--output_dir", tmp_path / "uniform", "--per_class", "3"])
    assert done.exit_code == 0, done.output
    corpus = load_dataset(str(tmp_path / "uniform"), split="train")
    assert sorted(corpus["label"]) == ["even"] * 3 + ["odd"] * 3
    synthesis = json.loads((tmp_path / "uniform" / "synthesis.json").read_text())
    assert synthesis["per_class"] == {"even": {"asked": 3, "kept": 3}, "odd": {"asked": 3, "kept": 3}}
    assert "no private data was used" in (tmp_path / "uniform" / "README.md").read_text()
    done = invoke(
        [*common, "--output_dir", tmp_path / "stated", "--per_class", "4", "--class_prior", "even=3,odd=1"]
    )
    assert done.exit_code == 0, done.output
    stated = load_dataset(str(tmp_path / "stated"), split="train")["label"]
    assert (stated.count("even"), stated.count("odd")) == (6, 2)
    privacy = json.loads((tmp_path / "stated" / "privacy.json").read_text())
    assert privacy["class_balance"]["source"] == "stated"


def test_per_class_needs_a_conditioned_generator_and_no_num_samples(conditioned, tmp_path, invoke):
    import shutil

    plain = tmp_path / "plain"
    shutil.copytree(conditioned, plain)
    (plain / labels.LABELS_FILE).unlink()
    done = invoke(["synthesize", "--generator", plain, "--output_dir", tmp_path / "a", "--per_class", "2"])
    assert done.exit_code == 2 and "needs a label-conditioned generator" in done.stderr
    done = invoke(
        [
            "synthesize",
            "--generator",
            conditioned,
            "--output_dir",
            tmp_path / "b",
            "--per_class",
            "2",
            "--num_samples",
            "4",
        ]
    )
    assert done.exit_code == 2 and "pass one" in done.stderr


def test_count_noise_has_the_calibrated_std_and_secret_seeds_differ():
    import numpy as np

    noise = [
        labels.counts_record([0, 1], NAMES, noise_multiplier=2.0, insecure_seed=s)["counts"]["even"] - 1
        for s in range(2000)
    ]
    assert abs(np.std(noise) - 2.0) < 0.1 and abs(np.mean(noise)) < 0.15
    first, second = (labels.counts_record([0, 1], NAMES, noise_multiplier=2.0) for _ in range(2))
    assert first["counts"] != second["counts"] and first["secret"]
