"""The world index follows App. G.1: line counts, type rule, stat sampling, ids, names, determinism."""

from __future__ import annotations

import os
from collections import Counter, defaultdict

import numpy as np
import pytest

from continuousbench.geminon.moves import describe_move
from continuousbench.geminon.names import OfflineNamer
from continuousbench.geminon.priors import load_priors
from continuousbench.geminon.schema import STATS
from continuousbench.geminon.sizes import SIZES, SizeSpec
from continuousbench.geminon.world import SCALED, _stage1_distribution, build_world, ratio_grids

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_world")

COLUMNS = [s.replace(" ", "_") for s in STATS]
SCALED_COLUMNS = [a.replace(" ", "_") for a in SCALED]
N_SEEDS = 8  # pooled worlds for the frequency checks: 800 lines of each kind


@pytest.fixture(scope="module")
def world():
    return build_world(SIZES["small"], seed=0)


@pytest.fixture(scope="module")
def worlds():
    return [build_world(SIZES["small"], seed=s) for s in range(N_SEEDS)]


def by_line(world):
    lines = defaultdict(list)
    for g in world:
        lines[g.line].append(g)
    return list(lines.values())


def assert_close(observed: float, p: float, n: int, z: float = 4.0):
    # Binomial standard error; 4 sigma keeps a correct sampler's false-failure rate below 1e-4.
    assert abs(observed - p) <= z * np.sqrt(p * (1 - p) / n), (observed, p, n)


def test_line_counts_and_sensitive_subset(world):
    lines = by_line(world)
    assert len(world) == 600
    assert Counter(len(line) for line in lines) == {3: 100, 2: 100, 1: 100}
    sensitive = [line for line in lines if line[0].subset == "sensitive"]
    assert Counter(len(line) for line in sensitive) == {3: 20, 2: 20, 1: 20}
    assert sum(g.subset == "sensitive" for g in world) == 120
    assert all(len({g.subset for g in line}) == 1 for line in lines)


def test_ids_contiguous_and_lines_adjacent(world):
    assert [g.idx for g in world] == list(range(10000, 10600))
    lines = by_line(world)
    assert [line[0].line for line in lines] == list(range(300))
    for line in lines:
        assert [g.stage for g in line] == list(range(1, len(line) + 1))
        assert all(g.evolution_line == tuple(m.name for m in line) for g in line)
    assert [g.line for g in world] == sorted(g.line for g in world)
    # lines are shuffled: kinds are interleaved, not 3-stage first
    assert len({len(line) for line in lines[:30]}) == 3


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_type_rule_frequencies(worlds):
    lines = [line for w in worlds for line in by_line(w)]
    types = set(load_priors().types)
    expected = {3: (0.2, 0.2 + 0.8 * 0.4, 0.52 + 0.48 * 0.8), 2: (0.2, 0.2 + 0.8 * 0.8), 1: (0.5,)}
    kept = changed = 0
    for n, probs in expected.items():
        kind = [line for line in lines if len(line) == n]
        for stage, p in enumerate(probs):
            share = np.mean([line[stage].type2 is not None for line in kind])
            assert_close(share, p, len(kind))
    for line in lines:
        assert len({g.type1 for g in line}) == 1 and line[0].type1 in types
        for prev, cur in zip(line, line[1:], strict=False):
            assert cur.type2 != cur.type1
            if prev.type2 is not None:
                assert cur.type2 is not None
                kept += cur.type2 == prev.type2
                changed += cur.type2 != prev.type2
    assert_close(kept / (kept + changed), 0.8, kept + changed)
    assert {line[0].type1 for line in lines} == types


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_stats(world, worlds):
    priors = load_priors()
    grids = ratio_grids(priors)
    for line in by_line(world):
        first = line[0]
        for g in line:
            assert g.base_stat_total == sum(getattr(g, c) for c in COLUMNS)
            assert g.height >= 1 and g.weight >= 1
        for attribute, column in zip(SCALED, SCALED_COLUMNS, strict=True):
            s = priors.stage1[attribute]
            assert s.min <= getattr(first, column) < s.max
            for g in line[1:]:
                grid = grids[f"{g.stage}/1"][attribute]
                allowed = {max(1, int(np.rint(getattr(first, column) * r))) for r in grid}
                assert getattr(g, column) in allowed, (attribute, g.stage, getattr(g, column), allowed)


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
@pytest.mark.parametrize("attribute", ["hp", "speed", "height", "weight"])
def test_stage1_distribution_mean(worlds, attribute):
    """Pooled stage-1 draws match the discrete Gaussian / exponential they come from."""
    grid, p = _stage1_distribution(load_priors(), attribute)
    mean, std = float(grid @ p), float(np.sqrt(((grid - grid @ p) ** 2) @ p))
    values = [getattr(g, attribute.replace(" ", "_")) for w in worlds for g in w if g.stage == 1]
    assert abs(np.mean(values) - mean) <= 4 * std / np.sqrt(len(values))


def test_ratio_grid_rounding():
    grids = ratio_grids(load_priors())
    for per in grids.values():
        for grid in per.values():
            assert 2 <= len(grid) <= 3 and np.allclose(np.diff(grid), 0.1)
    # hp 2/1: mean 1.5659, std 0.44 clipped to 0.1 -> [1.4659, 1.6659] rounded outward -> [1.46, 1.67]
    assert np.allclose(grids["2/1"]["hp"], [1.46, 1.56, 1.66])
    assert np.allclose(grids["3/1"]["hp"], [1.83, 1.93, 2.03])
    # height 2/1: mean 2.44 clipped to 1.6; weight 3/1: mean 47.6 clipped to 2.0
    assert np.allclose(grids["2/1"]["height"], [1.5, 1.6, 1.7])
    assert np.allclose(grids["3/1"]["weight"], [1.9, 2.0, 2.1])


def test_names_and_classifications(world):
    real = {n.lower() for n in load_priors().species_names}
    names = [g.name for g in world]
    assert len({n.lower() for n in names}) == 600
    assert all(n.isalpha() and 6 <= len(n) <= 12 and n.lower() not in real for n in names)
    assert all(g.classification.endswith(" Geminon") for g in world)
    tuples = [tuple(g.classification for g in line) for line in by_line(world) if len(line) > 1]
    assert len(set(tuples)) == len(tuples) == 200
    for line in by_line(world):
        assert len(os.path.commonprefix([g.name.lower() for g in line])) >= 3


def test_moves_and_abilities(world):
    priors = load_priors()
    moves = {m.name: m for m in priors.moves}
    for g in world:
        move = moves[g.move_name]
        assert move.type in {g.type1, g.type2}
        assert g.move_description == describe_move(move)
        assert g.ability in priors.abilities


def test_determinism(world):
    assert build_world(SIZES["small"], seed=0) == world
    other = build_world(SIZES["small"], seed=1)
    assert [g.hp for g in other] != [g.hp for g in world] and other[0].name != world[0].name


def test_namer_does_not_shift_stats(world):
    renamed = build_world(SIZES["small"], seed=0, namer=OfflineNamer(seed=12345))
    assert [g.name for g in renamed] != [g.name for g in world]
    strip = [(g.hp, g.weight, g.type2, g.move_name, g.ability, g.subset) for g in world]
    assert [(g.hp, g.weight, g.type2, g.move_name, g.ability, g.subset) for g in renamed] == strip


def test_forbidden_names_respected(world):
    forbidden = {g.name for g in world[:60]}
    again = build_world(SIZES["small"], seed=0, forbidden_names={n.upper() for n in forbidden})
    assert not forbidden & {g.name for g in again}


def test_world_rules_enforced_on_custom_namer():
    class Stubborn:
        """Returns the same single-stage name twice, then a fresh one."""

        calls = 0

        def name_line(self, stages, forbidden, forbidden_tuples=()):
            self.calls += 1
            return [
                ("Zorblatt" if self.calls <= 2 else f"Zorb{'abcdefgh'[self.calls % 8]}qux", "Pot Geminon")
            ]

    spec = SizeSpec(name="two", lines={1: 2}, sensitive_lines={1: 1})
    namer = Stubborn()
    world = build_world(spec, seed=0, namer=namer)
    assert len({g.name for g in world}) == 2 and namer.calls == 3


def test_bad_spec():
    with pytest.raises(ValueError, match="sensitive"):
        build_world(SizeSpec(name="bad", lines={1: 1}, sensitive_lines={1: 2}), seed=0)
