"""The committed priors reproduce the reference figures and derive byte-identically from the CSVs."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from continuousbench.geminon.priors import ATTRIBUTES, PRIORS_PATH, derive_priors, load_priors

BUILDER = Path(__file__).parents[2] / "builders" / "derive_priors.py"

# Stage-1 mean and std for species ids <= 998, as the reference folder's SOURCES.md states them.
REFERENCE = {
    "hp": (61.97, 26.18),
    "attack": (68.72, 29.60),
    "defense": (65.31, 30.57),
    "special attack": (61.97, 30.75),
    "special defense": (62.55, 28.48),
    "speed": (62.16, 29.01),
}


def test_reference_figures():
    priors = load_priors()
    assert priors.counts == {"stage1": 519, "pairs_2_1": 359, "pairs_3_1": 120}
    for attribute, (mean, std) in REFERENCE.items():
        assert priors.stage1[attribute].mean == pytest.approx(mean, abs=0.005)
        assert priors.stage1[attribute].std == pytest.approx(std, abs=0.005)
    bst = priors.stage1["base_stat_total"]
    assert (round(bst.mean, 1), round(bst.std, 1)) == (382.7, 127.4)
    assert set(priors.stage1) == set(ATTRIBUTES) == set(priors.ratios["2/1"]) == set(priors.ratios["3/1"])
    assert all(s.min < s.max for s in priors.stage1.values())


def test_pools():
    priors = load_priors()
    assert len(priors.types) == 18 and "Fire" in priors.types
    names = [m.name for m in priors.moves]
    assert len(names) == len(set(names)) > 800
    assert all(
        len(n.split()) <= 2 and m.type in priors.types for n, m in zip(names, priors.moves, strict=True)
    )
    assert {m.damage_class for m in priors.moves} == {"physical", "special", "status"}
    assert {m.type for m in priors.moves} == set(priors.types)  # every type can get a signature move
    assert len(priors.abilities) == len(set(priors.abilities)) > 250
    assert all(len(a.split()) <= 2 for a in priors.abilities)
    assert {"Pikachu", "Bulbasaur"} <= priors.species_names and len(priors.species_names) == 1025


def test_no_prose_shipped():
    """Only names and figures: the one multi-word sentence is the source note."""

    def strings(node):
        if isinstance(node, dict):
            yield from (s for v in node.values() for s in strings(v))
        elif isinstance(node, list):
            yield from (s for v in node for s in strings(v))
        elif isinstance(node, str):
            yield node

    data = json.loads(PRIORS_PATH.read_text(encoding="utf-8"))
    long = {s for s in strings(data) if len(s.split()) > 3}
    assert long == {data["source"]}


def test_builder_reproduces_committed_file(tmp_path, monkeypatch, pokeapi_csvs):
    spec = importlib.util.spec_from_file_location("derive_priors", BUILDER)
    builder = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, builder)  # dataclasses resolve annotations through it
    spec.loader.exec_module(builder)
    out = builder.cli(["--csv_dir", str(pokeapi_csvs), "--out", str(tmp_path / "priors.json")])
    assert out.read_bytes() == PRIORS_PATH.read_bytes()
    assert derive_priors(pokeapi_csvs) == load_priors()


def test_missing_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="PokeAPI"):
        derive_priors(tmp_path)
    with pytest.raises(FileNotFoundError, match="derive_priors"):
        load_priors(tmp_path / "nope.json")
