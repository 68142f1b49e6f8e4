"""Which drafts become the corpus: candidate pools per public style, then coverage-aware selection (G.2).

``public_units -> plan_pool -> draft_pool -> coverage_sample`` lives here once: a release build
(:func:`selection_stage`, resumable, with the sensitive articles counted first) and the demo's
pretraining world (:func:`select_public` alone) both call it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from continuousbench import files
from continuousbench.geminon import corpus as C
from continuousbench.geminon.realizers.base import STYLES, Draft, Realizer
from continuousbench.geminon.sampling import Selection, coverage_sample, incidence_matrix
from continuousbench.geminon.schema import Geminon, mention, parse_mention
from continuousbench.stages import StageProgress, WorkDir

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass
class Selected:
    """The chosen public candidates (style by style, in selection order) and how they were chosen."""

    plans: dict[str, C.PoolPlan]
    pools: dict[str, C.Pool]
    selection: Selection
    index: C.PairIndex

    @cached_property
    def drafts(self) -> list[Draft]:
        """The chosen candidates as ``Draft`` objects (a release build reads them as columns instead)."""
        return [self.pools[s].draft(int(r), self.index) for s in STYLES for r in self.selection.indices[s]]

    def columns(self) -> pa.Table:
        """The chosen candidates as the rows of ``selection.parquet`` (an arrow table, see :func:`_rows`),
        gathered from the pools' arrays without a ``Draft`` per row."""
        import pyarrow as pa

        names = pa.array([mention(*self.index.pair(p)) for p in range(self.index.n_pairs)], pa.string())
        tables = []
        for style in STYLES:
            pool, rows = self.pools[style], np.asarray(self.selection.indices[style], dtype=np.int64)
            starts, stops = pool.indptr[rows], pool.indptr[rows + 1]
            offsets = np.zeros(len(rows) + 1, dtype=np.int32)
            np.cumsum(stops - starts, out=offsets[1:])
            # positions in pool.pairs of every selected row's pairs, row after row
            at = np.repeat(starts - offsets[:-1], stops - starts) + np.arange(offsets[-1])
            units = pa.array([list(u) for u in pool.units], row_schema().field("subjects").type)
            texts = [pool.texts[r] for r in rows] if pool.texts is not None else [None] * len(rows)
            tables.append(
                pa.table(
                    {
                        "style": pa.array([style] * len(rows), pa.string()),
                        "subset": pa.array(["public"] * len(rows), pa.string()),
                        "subjects": units.take(pool.unit_of[rows]),
                        "mentions": pa.ListArray.from_arrays(pa.array(offsets), names.take(pool.pairs[at])),
                        "seed": pa.array(pool.seeds[rows], pa.int64()),
                        "text": pa.array(texts, pa.string()),
                    },
                    schema=row_schema(),
                )
            )
        return pa.concat_tables(tables)


def select_public(
    world: Sequence[Geminon],
    mix: Mapping[str, int],
    realizer: Realizer,
    *,
    draft_rng: np.random.Generator,
    sample_rng: np.random.Generator,
    oversample: float | None,
    rounds: int,
    already: Sequence[Draft] = (),
    stages: StageProgress | None = None,
) -> Selected:
    """Draft every public style's candidate pool, then select ``mix[style]`` documents by coverage.

    ``already`` are documents the corpus holds anyway (a release's sensitive articles): they count
    towards coverage before the first draw. The two generators may be one object: pools draw first.
    """
    by_idx = {g.idx: g for g in world}
    index = C.PairIndex(world)
    pools: dict[str, C.Pool] = {}
    plans: dict[str, C.PoolPlan] = {}
    for style in STYLES:
        units = C.public_units(world, style)
        plans[style] = plan = C.plan_pool(style, len(units), mix.get(style, 0), oversample)
        with _stage(stages, f"candidates {style}", len(units), f" ({plan.candidates:,})") as advance:
            pools[style] = C.draft_pool(
                realizer, style, units, plan.per_unit, by_idx, index, draft_rng, advance
            )
    with _stage(stages, "selection", rounds) as advance:
        selection = coverage_sample(
            {s: incidence_matrix(p.indptr, p.pairs, index.n_pairs) for s, p in pools.items()},
            {s: p.target for s, p in plans.items()},
            sample_rng,
            rounds=rounds,
            counts=_counts(already, index) if already else None,
            on_round=lambda _r: advance(),
        )
    return Selected(plans=plans, pools=pools, selection=selection, index=index)


def _stage(stages: StageProgress | None, name: str, total: int, note: str = ""):
    return nullcontext(lambda n=1: None) if stages is None else stages.stage(name, total=total, note=note)


def _counts(drafts: Sequence[Draft], index: C.PairIndex) -> np.ndarray:
    counts = np.zeros(index.n_pairs, dtype=np.int64)
    for d in drafts:
        for m in set(d.mentions):
            counts[index.ids[m]] += 1
    return counts


# -- the release build's resumable stage ---------------------------------------------------------------


def selection_stage(
    work: WorkDir,
    stages: StageProgress,
    mix: Mapping[str, int],
    world: list[Geminon],
    realizer: Realizer,
    seeds: Mapping[str, int],
    oversample: float | None,
    rounds: int,
    sensitive_candidates: int,
) -> Rows:
    """Rows of the release's chosen drafts, sensitive articles first; saved in ``work`` for a resume."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if work.file("selection.json").exists():
        return Rows(pq.read_table(work.file("selection.parquet")))
    with stages.stage("sensitive articles"):
        sensitive, sensitive_stats = C.sensitive_articles(
            realizer, world, np.random.default_rng(seeds["sensitive"]), sensitive_candidates
        )
    chosen = select_public(
        world,
        mix,
        realizer,
        draft_rng=np.random.default_rng(seeds["drafts"]),
        sample_rng=np.random.default_rng(seeds["sampling"]),
        oversample=oversample,
        rounds=rounds,
        already=sensitive,
        stages=stages,
    )
    sensitive_rows = pa.table(_rows([(d, "sensitive") for d in sensitive]), schema=row_schema())
    rows = Rows(pa.concat_tables([sensitive_rows, chosen.columns()]))
    files.atomic_write(work.file("selection.parquet"), lambda tmp: pq.write_table(rows.table, tmp))
    report = _report(chosen, sensitive_stats, oversample, rounds)
    if getattr(realizer, "stats", None):  # what an LLM realizer dropped while parsing, and why
        report["realizer_stats"] = dict(sorted(realizer.stats.items()))
    work.write_json("selection.json", report)
    return rows


class Rows(Mapping):
    """The selection's rows as an arrow table (``table``, what the build reads, without a Python object
    per value), and as a mapping of column name -> list of values for code that wants plain lists."""

    def __init__(self, table: pa.Table):
        self.table = table

    def __getitem__(self, name: str) -> list:
        return self.table.column(name).to_pylist()

    def __iter__(self):
        return iter(self.table.column_names)

    def __len__(self) -> int:
        return self.table.num_columns


@cache
def row_schema() -> pa.Schema:
    """The arrow schema of ``selection.parquet``."""
    import pyarrow as pa

    string = pa.string()
    return pa.schema(
        {
            "style": string,
            "subset": string,
            "subjects": pa.list_(pa.int64()),
            "mentions": pa.list_(string),
            "seed": pa.int64(),
            "text": string,
        }
    )


def _rows(drafts: Sequence[tuple[Draft, str]]) -> dict[str, list]:
    return {
        "style": [d.style for d, _ in drafts],
        "subset": [s for _, s in drafts],
        "subjects": [list(d.subjects) for d, _ in drafts],
        "mentions": [[mention(i, f) for i, f in d.mentions] for d, _ in drafts],
        "seed": [d.seed for d, _ in drafts],
        "text": [d.text for d, _ in drafts],
    }


def drafts_of(rows: Mapping[str, list], start: int, stop: int) -> list[Draft]:
    """The ``Draft`` of rows ``start:stop`` of a selection, for rendering."""
    return [
        Draft(
            style=rows["style"][i],
            subjects=tuple(rows["subjects"][i]),
            mentions=tuple(parse_mention(m) for m in rows["mentions"][i]),
            seed=rows["seed"][i],
            text=rows["text"][i],
        )
        for i in range(start, stop)
    ]


def _report(chosen: Selected, sensitive_stats: dict, oversample: float | None, rounds: int) -> dict[str, Any]:
    styles = {}
    for style, plan in chosen.plans.items():
        styles[style] = {
            "units": plan.units,
            "per_unit": plan.per_unit,
            "paper_per_unit": C.PAPER_PER_UNIT[style],
            "paper_candidates": plan.paper_candidates,
            **chosen.selection.stats[style],
            **dict(sorted(chosen.pools[style].dropped.items())),
        }
    return {
        "sampling": {
            "method": "coverage-aware weighted sampling, score = sum 1/(1+count) (paper G.2)",
            "rounds": rounds,
            "oversample": oversample,  # None: the paper's candidates per unit
            "min_oversample": C.MIN_OVERSAMPLE,
        },
        "pools": styles,
        "sensitive": sensitive_stats,
    }
