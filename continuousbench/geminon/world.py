"""The Geminon world index (paper App. G.1): evolution lines, types, stats, moves, abilities, names.

Each concern (types, stats, abilities, ...) draws from its own ``SeedSequence`` child, so changing
one (say, the namer) never shifts another: same seed, same stats, whatever the names.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from continuousbench.geminon.moves import describe_move
from continuousbench.geminon.names import Namer, OfflineNamer, line_violation
from continuousbench.geminon.priors import Move, Priors, RatioStats, load_priors
from continuousbench.geminon.schema import STATS, Geminon
from continuousbench.geminon.sizes import SizeSpec

log = logging.getLogger(__name__)

CONCERNS = ("types", "stats", "abilities", "moves", "shuffle", "sensitive", "names")
# Probability that a stage without a secondary type gains one, by line length (paper G.1.1).
TYPE2_INTRODUCE: dict[int, tuple[float, ...]] = {3: (0.2, 0.4, 0.8), 2: (0.2, 0.8), 1: (0.5,)}
TYPE2_KEEP = 0.8
SIZE_ATTRIBUTES = ("height", "weight")
SCALED = (*STATS, *SIZE_ATTRIBUTES)  # attributes later stages derive from stage 1 by a ratio
RATIO_CAP = {"2/1": 1.6, "3/1": 2.0}  # upper clip of the ratio mean
SIGMA_CLIP = (0.05, 0.1)
MEAN_FLOOR = 0.05
NAME_RETRIES = 20


@dataclass
class _Line:
    """A line before naming: per-stage attribute dicts (stage order)."""

    stages: list[dict] = field(default_factory=list)


def ratio_grid(stats: RatioStats, cap: float) -> np.ndarray:
    """The restricted ratio grid: [mu - sigma, mu + sigma] rounded outward to 0.01, step 0.1."""
    sigma = float(np.clip(stats.std, *SIGMA_CLIP))
    mu = float(np.clip(stats.mean, MEAN_FLOOR, cap))
    # Work in hundredths so float error cannot add or drop a grid point.
    lo = int(np.floor(round((mu - sigma) * 100, 6)))
    hi = int(np.ceil(round((mu + sigma) * 100, 6)))
    return np.arange(lo, hi + 1, 10) / 100


def ratio_grids(priors: Priors) -> dict[str, dict[str, np.ndarray]]:
    """``{"2/1": {attribute: grid}, "3/1": {...}}`` for the attributes scaled from stage 1."""
    return {r: {a: ratio_grid(priors.ratios[r][a], cap) for a in SCALED} for r, cap in RATIO_CAP.items()}


def _stage1_distribution(priors: Priors, attribute: str) -> tuple[np.ndarray, np.ndarray]:
    """Grid ``range(min, max)`` and its probabilities: discrete Gaussian, or exponential for sizes."""
    s = priors.stage1[attribute]
    grid = np.arange(s.min, s.max)
    logp = -grid / s.mean if attribute in SIZE_ATTRIBUTES else -((grid - s.mean) ** 2) / (2 * s.std**2)
    p = np.exp(logp - logp.max())  # shift before exp: the weight grid reaches exp(-18)
    return grid, p / p.sum()


def _type2s(rng: np.random.Generator, types: tuple[str, ...], type1: str, n: int) -> list[str | None]:
    out: list[str | None] = []
    prev: str | None = None
    for stage in range(n):
        if prev is None:
            prev = (
                rng.choice([t for t in types if t != type1])
                if rng.random() < TYPE2_INTRODUCE[n][stage]
                else None
            )
        elif rng.random() >= TYPE2_KEEP:
            prev = rng.choice([t for t in types if t not in (type1, prev)])
        out.append(None if prev is None else str(prev))
    return out


def _stats(rng: np.random.Generator, priors: Priors, grids, n: int) -> list[dict]:
    first = {}
    for a in SCALED:
        grid, p = _stage1_distribution(priors, a)
        first[a] = int(rng.choice(grid, p=p))
    rows = [first]
    for stage in range(2, n + 1):
        ratio = grids[f"{stage}/1"]  # stage 3 scales stage 1 directly, so variance does not compound
        rows.append({a: max(1, int(np.rint(first[a] * rng.choice(ratio[a])))) for a in SCALED})
    for row in rows:
        row["base_stat_total"] = sum(row[s] for s in STATS)
    return rows


def _sample_lines(spec: SizeSpec, priors: Priors, rngs: dict[str, np.random.Generator]) -> list[_Line]:
    grids = ratio_grids(priors)
    by_type: dict[str, list[Move]] = {}
    for move in priors.moves:
        by_type.setdefault(move.type, []).append(move)
    lines = []
    for n in sorted(spec.lines, reverse=True):
        for _ in range(spec.lines[n]):
            type1 = str(rngs["types"].choice(priors.types))
            type2s = _type2s(rngs["types"], priors.types, type1, n)
            line = _Line()
            for stage, (type2, stats) in enumerate(
                zip(type2s, _stats(rngs["stats"], priors, grids, n), strict=True)
            ):
                pool = by_type[type1] + (by_type[type2] if type2 else [])
                move = pool[int(rngs["moves"].integers(len(pool)))]
                ability = priors.abilities[int(rngs["abilities"].integers(len(priors.abilities)))]
                line.stages.append(
                    {
                        "stage": stage + 1,
                        "type1": type1,
                        "type2": type2,
                        **stats,
                        "ability": ability,
                        "move": {"name": move.name, "short_description": describe_move(move)},
                    }
                )
            lines.append(line)
    return lines


def _name_line(
    namer: Namer, line: _Line, taken: set[str], tuples: set[tuple[str, ...]], real: frozenset[str]
):
    """The namer's answer for ``line``, re-asked until it meets the world-wide rules."""
    for _ in range(NAME_RETRIES):
        named = namer.name_line(line.stages, set(taken), tuples)
        problem = line_violation(named, len(line.stages), taken, tuples, real)
        if problem is None:
            return named
        log.warning("namer broke a world rule (%s); asking again", problem)
    raise RuntimeError(
        f"namer gave no valid names for a line in {NAME_RETRIES} tries; last problem: {problem}"
    )


def build_world(
    spec: SizeSpec,
    seed: int,
    *,
    namer: Namer | None = None,
    priors: Priors | None = None,
    forbidden_names: Collection[str] = (),
) -> list[Geminon]:
    """The world index for ``spec``: entities in id order (10000, 10001, ...), lines adjacent."""
    for n, k in spec.sensitive_lines.items():
        if k > spec.lines.get(n, 0):
            raise ValueError(f"size {spec.name!r} asks for {k} sensitive {n}-stage lines but has fewer lines")
    priors = priors or load_priors()
    children = np.random.SeedSequence(seed).spawn(len(CONCERNS))
    rngs = {c: np.random.default_rng(s) for c, s in zip(CONCERNS, children, strict=True)}
    namer = namer or OfflineNamer(int(children[CONCERNS.index("names")].generate_state(1)[0]))

    lines = _sample_lines(spec, priors, rngs)
    lines = [lines[i] for i in rngs["shuffle"].permutation(len(lines))]
    sensitive: set[int] = set()
    for n, k in sorted(spec.sensitive_lines.items()):
        of_kind = [i for i, line in enumerate(lines) if len(line.stages) == n]
        sensitive.update(int(i) for i in rngs["sensitive"].choice(of_kind, size=k, replace=False))

    real = frozenset(n.lower() for n in priors.species_names)
    taken = set(forbidden_names)
    tuples: set[tuple[str, ...]] = set()
    world: list[Geminon] = []
    for index, line in enumerate(lines):
        named = _name_line(namer, line, taken, tuples, real)
        taken.update(n for n, _ in named)
        if len(named) > 1:  # single-stage lines are exempt from the tuple rule (paper G.1.4)
            tuples.add(tuple(c for _, c in named))
        evolution_line = tuple(n for n, _ in named)
        for row, (name, classification) in zip(line.stages, named, strict=True):
            world.append(
                Geminon(
                    idx=10000 + len(world),
                    name=name,
                    classification=classification,
                    evolution_line=evolution_line,
                    move_name=row["move"]["name"],
                    move_description=row["move"]["short_description"],
                    line=index,
                    subset="sensitive" if index in sensitive else "public",
                    **{k.replace(" ", "_"): v for k, v in row.items() if k != "move"},
                )
            )
    return world
