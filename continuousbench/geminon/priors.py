"""Reference priors for the Geminon world (paper App. G.1.2-G.1.3), derived once from PokeAPI CSVs.

``derive_priors(csv_dir)`` reads the CSV tables and keeps figures and names only: per-attribute
stage-1 statistics, stage-2/1 and stage-3/1 ratio statistics, the 18 type names, the move pool with
structured facts, the ability pool and the real species names (forbidden as Geminon names).
``load_priors()`` reads the committed package data ``data/priors.json``; nothing else ships.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from continuousbench.files import write_text
from continuousbench.geminon.schema import STATS

# The nine attributes of App. G.1.2 (height in decimetres and weight in hectograms, PokeAPI's units).
ATTRIBUTES: tuple[str, ...] = (*STATS, "base_stat_total", "height", "weight")
RATIOS: tuple[str, ...] = ("2/1", "3/1")
MAX_SPECIES_ID = 998  # the paper's "998 reference Pokémon"
ENGLISH = 9
N_TYPES = 18  # ids 1-18; 19 (stellar) and 10001+ (unknown, shadow) are not canonical
MAX_MOVE_ID = 10000  # ids above are shadow moves
PRIORS_PATH = Path(__file__).with_name("data") / "priors.json"


@dataclass(frozen=True)
class AttributeStats:
    """Stage-1 statistics of one attribute; the sampling grid is ``range(min, max)``."""

    mean: float
    std: float
    min: int
    max: int


@dataclass(frozen=True)
class RatioStats:
    """Mean and standard deviation of ``value(stage k) / value(stage 1)`` over reference pairs."""

    mean: float
    std: float


@dataclass(frozen=True)
class Move:
    """Structured facts of one reference move (no prose): power/accuracy are None when not applicable."""

    name: str
    type: str
    damage_class: str  # "physical", "special" or "status"
    power: int | None
    accuracy: int | None
    pp: int | None
    priority: int


@dataclass(frozen=True)
class Priors:
    stage1: dict[str, AttributeStats]  # attribute -> stage-1 statistics
    ratios: dict[str, dict[str, RatioStats]]  # "2/1" | "3/1" -> attribute -> ratio statistics
    types: tuple[str, ...]  # the 18 English type names, in PokeAPI id order
    moves: tuple[Move, ...]
    abilities: tuple[str, ...]
    species_names: frozenset[str]  # real English species names (all generations)
    counts: dict[str, int]  # "stage1", "pairs_2_1", "pairs_3_1"
    units: dict[str, str]
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "stage1": {a: asdict(s) for a, s in self.stage1.items()},
            "ratios": {r: {a: asdict(s) for a, s in per.items()} for r, per in self.ratios.items()},
            "types": list(self.types),
            "moves": [asdict(m) for m in self.moves],
            "abilities": list(self.abilities),
            "species_names": sorted(self.species_names),
            "counts": self.counts,
            "units": self.units,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Priors:
        return cls(
            stage1={a: AttributeStats(**s) for a, s in data["stage1"].items()},
            ratios={r: {a: RatioStats(**s) for a, s in per.items()} for r, per in data["ratios"].items()},
            types=tuple(data["types"]),
            moves=tuple(Move(**m) for m in data["moves"]),
            abilities=tuple(data["abilities"]),
            species_names=frozenset(data["species_names"]),
            counts=data["counts"],
            units=data["units"],
            source=data["source"],
        )


def _int_or_none(value: Any) -> int | None:
    return None if value != value or value is None else int(value)  # NaN != NaN


def _english(df, key: str) -> dict[int, str]:
    rows = df[df["local_language_id"] == ENGLISH]
    return dict(zip(rows[key].astype(int), rows["name"].astype(str), strict=True))


def _short(name: str) -> bool:
    return len(name.split()) <= 2


def _stage_table(csv_dir: Path):
    """One row per reference species (id <= 998, default form): stage and the nine attributes."""
    import pandas as pd

    species = pd.read_csv(csv_dir / "pokemon_species.csv")
    species = species[species["id"] <= MAX_SPECIES_ID].set_index("id")
    parent = species["evolves_from_species_id"].dropna().astype(int).to_dict()

    def root_and_stage(sid: int) -> tuple[int, int]:
        stage = 1
        while sid in parent:  # babies have no parent, so they count as stage 1
            sid, stage = parent[sid], stage + 1
        return sid, stage

    pokemon = pd.read_csv(csv_dir / "pokemon.csv")
    pokemon = pokemon[(pokemon["is_default"] == 1) & (pokemon["species_id"] <= MAX_SPECIES_ID)]
    stats = pd.read_csv(csv_dir / "pokemon_stats.csv").pivot(index="pokemon_id", columns="stat_id")[
        "base_stat"
    ]
    stats = stats[[1, 2, 3, 4, 5, 6]].set_axis(list(STATS), axis=1)  # stat ids 1-6 in STATS order
    table = pokemon.set_index("id")[["species_id", "height", "weight"]].join(stats, how="inner")
    table["base_stat_total"] = table[list(STATS)].sum(axis=1)
    table = table.set_index("species_id")
    table[["root", "stage"]] = [root_and_stage(int(s)) for s in table.index]
    return table


def _describe(values) -> AttributeStats:
    # Sample standard deviation (ddof=1), which reproduces the reference figures in SOURCES.md.
    return AttributeStats(
        float(values.mean()), float(values.std(ddof=1)), int(values.min()), int(values.max())
    )


def derive_priors(csv_dir: str | os.PathLike) -> Priors:
    """Derive the priors from a PokeAPI ``data/v2/csv`` folder (see ``builders/derive_priors.py``)."""
    import pandas as pd

    csv_dir = Path(csv_dir)
    if not (csv_dir / "pokemon_species.csv").is_file():
        raise FileNotFoundError(f"{csv_dir} has no pokemon_species.csv: pass a PokeAPI data/v2/csv folder")
    table = _stage_table(csv_dir)
    first = table[table["stage"] == 1]
    stage1 = {a: _describe(first[a]) for a in ATTRIBUTES}
    ratios: dict[str, dict[str, RatioStats]] = {}
    counts = {"stage1": len(first)}
    for key, stage in (("2/1", 2), ("3/1", 3)):
        later = table[(table["stage"] == stage) & table["root"].isin(first.index)]
        base = first.loc[later["root"]].set_axis(later.index)
        per = {a: later[a] / base[a] for a in ATTRIBUTES}
        ratios[key] = {a: RatioStats(float(r.mean()), float(r.std(ddof=1))) for a, r in per.items()}
        counts[f"pairs_{key.replace('/', '_')}"] = len(later)

    type_names = _english(pd.read_csv(csv_dir / "type_names.csv"), "type_id")
    types = tuple(type_names[i] for i in range(1, N_TYPES + 1))
    classes = pd.read_csv(csv_dir / "move_damage_classes.csv").set_index("id")["identifier"].to_dict()
    move_names = _english(pd.read_csv(csv_dir / "move_names.csv"), "move_id")
    moves: dict[str, Move] = {}
    for row in pd.read_csv(csv_dir / "moves.csv").sort_values("id").itertuples():
        name = move_names.get(int(row.id))
        if row.id >= MAX_MOVE_ID or not name or not _short(name) or not 1 <= row.type_id <= N_TYPES:
            continue
        moves.setdefault(
            name,
            Move(
                name=name,
                type=type_names[int(row.type_id)],
                damage_class=classes[int(row.damage_class_id)],
                power=_int_or_none(row.power),
                accuracy=_int_or_none(row.accuracy),
                pp=_int_or_none(row.pp),
                priority=int(row.priority),
            ),
        )
    abilities = pd.read_csv(csv_dir / "abilities.csv")
    main_series = set(abilities.loc[abilities["is_main_series"] == 1, "id"].astype(int))
    ability_names = _english(pd.read_csv(csv_dir / "ability_names.csv"), "ability_id")
    pool = sorted({n for i, n in ability_names.items() if i in main_series and _short(n)})
    species_names = frozenset(
        _english(pd.read_csv(csv_dir / "pokemon_species_names.csv"), "pokemon_species_id").values()
    )
    return Priors(
        stage1=stage1,
        ratios=ratios,
        types=types,
        moves=tuple(sorted(moves.values(), key=lambda m: m.name)),
        abilities=tuple(pool),
        species_names=species_names,
        counts=counts,
        units={"height": "decimetre", "weight": "hectogram"},
        source="PokeAPI/pokeapi data/v2/csv (BSD-3-Clause); figures and names only",
    )


def write_priors(priors: Priors, path: str | os.PathLike = PRIORS_PATH) -> Path:
    """Write ``priors`` as deterministic JSON (sorted keys), atomically."""
    text = json.dumps(priors.to_json(), sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    return write_text(path, text)  # indent 1, not files.dumps: the committed file keeps its layout


@cache
def _load(path: str) -> Priors:
    return Priors.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def load_priors(path: str | os.PathLike | None = None) -> Priors:
    """The committed priors (package data), or those at ``path``."""
    path = Path(path) if path is not None else PRIORS_PATH
    if not path.is_file():
        raise FileNotFoundError(f"no priors at {path}: run `python builders/derive_priors.py` to create them")
    return _load(str(path.resolve()))
