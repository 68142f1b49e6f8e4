"""Model cards of real runs: what the card claims, checked with huggingface_hub's own card tools."""

import json

import pytest
from huggingface_hub import ModelCard
from huggingface_hub.repocard_data import model_index_to_eval_results

from continuousbench.harness.card import model_card
from continuousbench.results.record import load


def _card(record) -> ModelCard:
    text = str(model_card(record, "tiny-eval"))
    return ModelCard(text)  # parses the YAML metadata back as the Hub does (validate() would post to it)


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_a_dp_data_run_says_so_with_the_generators_budget(finished_run):
    record = load(finished_run)
    record["corpus"]["privacy"] = {"private": True, "epsilon": 9.99998, "delta": 1e-6, "unit": "record"}
    record["corpus"]["source"] = "org/dp-syn-eps10"
    card = _card(record)
    assert "Trained on DP synthetic data" in card.text and "epsilon 10, delta 1e-06" in card.text
    assert "https://huggingface.co/datasets/org/dp-syn-eps10" in card.text
    assert "dp-synthetic-data" in card.data.tags


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_a_local_base_model_is_no_hub_id_and_metadata_round_trips(finished_run):
    record = load(finished_run)
    assert record["base_model"].startswith("/")  # the tiny test model is a local folder
    card = _card(record)
    assert card.data.base_model is None and record["base_model"] in card.text
    assert card.data.license == "other" and card.data.license_name
    assert card.data.datasets is None  # a release read from a local folder has no Hub repo to name
    name, results = model_index_to_eval_results(card.data.to_dict()["model-index"])
    assert name == "tiny-eval" and len(results) == len(card.data.eval_results) > 0
    assert "no differential-privacy guarantee" in card.text or "states no privacy" in card.text


def test_a_hub_base_model_and_a_published_release_are_named(finished_run):
    record = json.loads(json.dumps(load(finished_run)))
    record.update(base_model="org/tiny-llama", base_model_revision="a" * 40)
    record["release"]["given"] = "org-data/geminon-releases"
    card = _card(record)
    assert card.data.base_model == "org/tiny-llama" and card.data.datasets == ["org-data/geminon-releases"]
    assert card.data.license_link == "https://huggingface.co/org/tiny-llama"
