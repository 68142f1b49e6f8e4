"""Build a Geminon release: world -> candidates + selection -> render -> QA + support counts -> write.

The long stages (world, selection, render) write their output to a work folder
``<root>/.work/<release-id>-<hash of the settings>/`` as they finish (render in chunks), so an
interrupted build picks up where it stopped, and a build with other settings starts over in a folder of
its own; the folder is removed once the release is written. Every random choice
comes from one ``SeedSequence`` keyed by the seed and the quarter, so each quarter is a fresh world and
the same seed and quarter give a byte-identical release.
"""

from __future__ import annotations

import logging
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import numpy as np

import continuousbench
from continuousbench.files import check_writable_dir
from continuousbench.geminon import corpus as C
from continuousbench.geminon import qa as Q
from continuousbench.geminon.realizers.base import Draft, make_realizer
from continuousbench.geminon.sampling import Selection, coverage_sample, incidence_matrix
from continuousbench.geminon.schema import Geminon, mention, parse_mention
from continuousbench.geminon.sizes import STYLES, SizeSpec, get_size
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import HOME_ENV, default_root, release_dir
from continuousbench.release.write import check_replaceable
from continuousbench.stages import StageProgress, WorkDir

log = logging.getLogger(__name__)

ROUNDS = 100  # sampling rounds: batches of ~1% of each style's target between coverage updates
RENDER_CHUNK = 20_000  # documents per resumable render part
SEED_KEYS = ("world", "drafts", "sensitive", "sampling", "shuffle", "qa_public", "qa_singleton")
_QUARTER = re.compile(r"\d{4}q[1-4]")


def release_id(size: str, quarter: str) -> ReleaseId:
    """``geminon-<size>-<quarter>``; ValueError with the fix for a bad size or quarter."""
    get_size(size)
    if not _QUARTER.fullmatch(str(quarter)):
        raise ValueError(f"bad quarter {quarter!r}: write it as YYYYqN with N in 1-4, e.g. 2026q1")
    return ReleaseId.parse(f"geminon-{size}-{quarter}")


def stage_seeds(seed: int, rid: ReleaseId) -> dict[str, int]:
    """One independent integer seed per stage, from (seed, year, quarter)."""
    children = np.random.SeedSequence([seed, rid.year, rid.quarter]).spawn(len(SEED_KEYS))
    return {
        k: int(c.generate_state(1, dtype=np.uint64)[0] >> 1) for k, c in zip(SEED_KEYS, children, strict=True)
    }


def build_release(
    size: str = "tiny",
    quarter: str = "2026q1",
    seed: int = 0,
    root: Path | None = None,
    overwrite: bool = False,
    namer: str = "offline",
    realizer: str = "template",
    progress: bool = True,
    *,
    oversample: float | None = C.OVERSAMPLE,
    rounds: int = ROUNDS,
    sensitive_candidates: int = C.SENSITIVE_CANDIDATES,
    audit: bool | None = None,
    timings: dict[str, float] | None = None,
) -> Path:
    """Build ``geminon-<size>-<quarter>`` under ``root`` and return its folder.

    Candidate pools have the paper's sizes unless ``oversample`` caps each public style's pool at that
    multiple of its target (see :mod:`continuousbench.geminon.corpus`). ``audit`` checks every rendered
    document against its provenance and drops failures (default: on for LLM realizers; the template
    realizer is grounded by construction and tested). ``timings``, when given, receives wall seconds
    per stage.
    """
    spec = get_size(size)
    rid = release_id(size, quarter)
    if (oversample is not None and oversample < 1) or rounds < 1 or sensitive_candidates < 1:
        raise ValueError(
            "oversample must be >= 1 (or None for the paper's pools); rounds, sensitive_candidates >= 1"
        )
    root = check_writable_dir(Path(root) if root else default_root(), "--out" if root else f"${HOME_ENV}")
    check_replaceable(rid, release_dir(rid, root), overwrite)
    settings = {
        "release": str(rid),
        "seed": seed,
        "namer": namer,
        "realizer": realizer,
        "oversample": oversample,
        "rounds": rounds,
        "sensitive_candidates": sensitive_candidates,
        "package_version": continuousbench.__version__,
    }
    text_maker = make_realizer(realizer)  # a bad spec fails here, before any work
    _check_generators(namer, realizer)  # and so does an endpoint that does not answer
    work = WorkDir.for_settings(root / ".work", str(rid), settings)
    seeds = stage_seeds(seed, rid)
    timings = {} if timings is None else timings
    stages = StageProgress(progress, timings)
    with stages.progress:
        world = _world_stage(work, stages, spec, seeds["world"], namer)
        selection = _selection_stage(
            work, stages, spec, world, text_maker, seeds, oversample, rounds, sensitive_candidates
        )
        texts = _render_stage(work, stages, world, text_maker, selection)
        with stages.stage("qa"):
            audit = realizer != "template" if audit is None else audit
            parts, report = assemble(spec, rid, world, selection, texts, seeds, audit=audit)
        generator = {
            "builder": "continuousbench.geminon.build",
            "namer": namer,
            "realizer": realizer,
            "seeds": seeds,
            **work.read_json("selection.json"),
            **report,
        }
        with stages.stage("write"):
            from continuousbench.release.write import write_release

            path = write_release(
                rid,
                _datasets(parts),
                root=root,
                seed=seed,
                generator=generator,
                overwrite=overwrite,
                card_notes=NOTES,
            )
    shutil.rmtree(work.path)
    _remove_if_empty(work.path.parent)
    return path


NOTES = (
    "Corpus `style` is the realizer style (wiki, journal, evolution, comparison); the one article of each "
    "sensitive entity is a `wiki` row with `subset` = `sensitive` and always sits in `train`. "
    "`mentions` lists the `idx:feature` facts each document states; `support_count` counts `corpus.train` "
    "documents stating every feature an answer needs."
)


def _check_generators(*specs: str) -> None:
    """Text-generation specs are well-formed, and their endpoints answer, before any work is done."""
    from continuousbench.llm import make_generator

    for spec in specs:
        if spec not in ("offline", "template") and not spec.startswith("transformers:"):
            generator = make_generator(spec)
            if hasattr(generator, "check"):
                generator.check()


def _remove_if_empty(path: Path) -> None:
    with suppress(OSError):
        path.rmdir()


# -- stages ------------------------------------------------------------------------------------------


def _world_stage(
    work: WorkDir, stages: StageProgress, spec: SizeSpec, seed: int, namer: str
) -> list[Geminon]:
    if work.file("world.json").exists():
        return [Geminon.from_record(r) for r in work.read_json("world.json")]
    from continuousbench.geminon.names import make_namer
    from continuousbench.geminon.world import build_world

    with stages.stage("world"):
        # The offline namer is the world's own default, seeded from the world's seed tree.
        world = build_world(spec, seed, namer=None if namer == "offline" else make_namer(namer, seed))
    work.write_json("world.json", [g.to_record() for g in world])
    return world


def _selection_stage(
    work: WorkDir,
    stages: StageProgress,
    spec: SizeSpec,
    world: list[Geminon],
    realizer,
    seeds: dict[str, int],
    oversample: float | None,
    rounds: int,
    sensitive_candidates: int,
) -> dict[str, list]:
    """Draft candidate pools, select by coverage; rows of the chosen drafts (sensitive first)."""
    if work.file("selection.json").exists():
        return work.read_table("selection.parquet")
    by_idx = {g.idx: g for g in world}
    index = C.PairIndex(world)
    draft_rng = np.random.default_rng(seeds["drafts"])
    pools: dict[str, C.Pool] = {}
    plans: dict[str, C.PoolPlan] = {}
    for style in STYLES:
        units = C.public_units(world, style)
        plans[style] = plan = C.plan_pool(style, len(units), spec.mix.get(style, 0), oversample)
        with stages.stage(f"candidates {style}", total=len(units), note=f" ({plan.candidates:,})") as advance:
            pools[style] = C.draft_pool(
                realizer, style, units, plan.per_unit, by_idx, index, draft_rng, lambda _u: advance()
            )
    with stages.stage("sensitive articles"):
        sensitive, sensitive_stats = C.sensitive_articles(
            realizer, world, np.random.default_rng(seeds["sensitive"]), sensitive_candidates
        )
    with stages.stage("selection", total=rounds) as advance:
        selection = coverage_sample(
            {s: incidence_matrix(p.indptr, p.pairs, index.n_pairs) for s, p in pools.items()},
            {s: p.target for s, p in plans.items()},
            np.random.default_rng(seeds["sampling"]),
            rounds=rounds,
            counts=_counts(sensitive, index),
            on_round=lambda _r: advance(),
        )
    drafts = [(d, "sensitive") for d in sensitive]
    drafts += [(pools[s].draft(int(r), index), "public") for s in STYLES for r in selection.indices[s]]
    rows = _selection_rows(drafts)
    work.write_table("selection.parquet", rows)
    work.write_json(
        "selection.json", _selection_report(plans, pools, selection, sensitive_stats, oversample, rounds)
    )
    return rows


def _counts(drafts: Sequence[Draft], index: C.PairIndex) -> np.ndarray:
    counts = np.zeros(index.n_pairs, dtype=np.int64)
    for d in drafts:
        for m in set(d.mentions):
            counts[index.ids[m]] += 1
    return counts


def _selection_rows(drafts: Sequence[tuple[Draft, str]]) -> dict[str, list]:
    return {
        "style": [d.style for d, _ in drafts],
        "subset": [s for _, s in drafts],
        "subjects": [list(d.subjects) for d, _ in drafts],
        "mentions": [[mention(i, f) for i, f in d.mentions] for d, _ in drafts],
        "seed": [d.seed for d, _ in drafts],
        "text": [d.text for d, _ in drafts],
    }


def _selection_report(
    plans, pools, selection: Selection, sensitive_stats, oversample, rounds
) -> dict[str, Any]:
    styles = {}
    for style, plan in plans.items():
        styles[style] = {
            "units": plan.units,
            "per_unit": plan.per_unit,
            "paper_per_unit": C.PAPER_PER_UNIT[style],
            "paper_candidates": plan.paper_candidates,
            **selection.stats[style],
            **dict(sorted(pools[style].dropped.items())),
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


def _drafts(selection: dict[str, list], start: int, stop: int) -> list[Draft]:
    return [
        Draft(
            style=selection["style"][i],
            subjects=tuple(selection["subjects"][i]),
            mentions=tuple(parse_mention(m) for m in selection["mentions"][i]),
            seed=selection["seed"][i],
            text=selection["text"][i],
        )
        for i in range(start, stop)
    ]


def _render_stage(
    work: WorkDir, stages: StageProgress, world: list[Geminon], realizer, selection
) -> list[str]:
    """Texts of the selected drafts, rendered in chunks that each survive an interruption."""
    by_idx = {g.idx: g for g in world}
    n = len(selection["style"])
    texts: list[str] = []
    with stages.stage("render", total=n) as advance:
        for part, start in enumerate(range(0, n, RENDER_CHUNK)):
            stop = min(start + RENDER_CHUNK, n)
            name = f"render/part-{part:05d}.parquet"
            if not work.file(name).exists():
                rendered = realizer.render(_drafts(selection, start, stop), by_idx)
                if len(rendered) != stop - start:
                    raise RuntimeError(f"realizer rendered {len(rendered)} texts for {stop - start} drafts")
                work.write_table(name, {"text": [t if t is not None else "" for t in rendered]})
            texts.extend(work.read_table(name)["text"])
            advance(stop - start)
    return texts


# -- assembly ----------------------------------------------------------------------------------------


def assemble(
    spec: SizeSpec,
    rid: ReleaseId,
    world: list[Geminon],
    selection: dict[str, list],
    texts: list[str],
    seeds: dict[str, int],
    *,
    audit: bool = False,
) -> tuple[dict[str, dict[str, list[dict]]], dict[str, Any]]:
    """Corpus splits, QA splits, support counts and entities as row lists, plus what was dropped."""
    from continuousbench.geminon.realizers.grounding import check_grounding

    by_idx = {g.idx: g for g in world}
    dropped: Counter = Counter()
    sensitive_names = C.NameFinder(g.name for g in world if g.subset == "sensitive")
    docs = []
    for i, text in enumerate(texts):
        style, subset, subjects = selection["style"][i], selection["subset"][i], selection["subjects"][i]
        if not text.strip():
            if subset == "sensitive":
                raise RuntimeError(f"the realizer gave an empty article for sensitive entity {subjects[0]}")
            dropped["dropped_empty_text"] += 1
            continue
        if subset == "public" and sensitive_names.search(text):
            dropped["dropped_names_sensitive_entity"] += 1
            continue
        if audit and check_grounding(text, selection["mentions"][i], by_idx):
            if subset == "sensitive":
                raise RuntimeError(
                    f"the article of sensitive entity {subjects[0]} states facts off its provenance"
                )
            dropped["dropped_ungrounded"] += 1
            continue
        docs.append(C.doc_row(style, subjects, selection["mentions"][i], text, subset))
    corpus = C.corpus_rows(docs, spec, str(rid), np.random.default_rng(seeds["shuffle"]))
    matrix = Q.mention_matrix([d["mentions"] for d in corpus["train"]], world)
    qa = {
        subset: Q.split_by_entity(
            Q.question_rows(matrix, world, subset),
            spec.qa_validation_fraction,
            np.random.default_rng(seeds[key]),
        )
        for subset, key in (("public", "qa_public"), ("sensitive", "qa_singleton"))
    }
    singleton_off = [r["id"] for rows in qa["sensitive"].values() for r in rows if r["support_count"] != 1]
    if singleton_off:
        log.warning("%d singleton questions do not have support 1: %s", len(singleton_off), singleton_off[:5])
    parts = {
        "corpus": corpus,
        "qa_public": qa["public"],
        "qa_singleton": qa["sensitive"],
        "support_counts": {"train": Q.support_rows(matrix, world)},
        "entities": {"train": [g.to_record() for g in world]},
    }
    by_style = Counter(d["style"] if d["subset"] == "public" else "sensitive" for d in docs)
    report = {
        "audited": audit,
        "dropped_after_render": dict(sorted(dropped.items())),
        "documents": dict(sorted(by_style.items())),
        "singleton_support_not_1": len(singleton_off),
    }
    return parts, report


def _datasets(parts: dict[str, dict[str, list[dict]]]):
    from datasets import Dataset, Features, List, Value

    string, integer = Value("string"), Value("int64")
    qa = Features(
        {
            "id": string,
            "question": string,
            "answer": string,
            "aliases": List(string),
            "entity": integer,
            "name": string,
            "attribute": string,
            "support_count": integer,
        }
    )
    features = {
        "corpus": Features(
            {
                "id": string,
                "text": string,
                "style": string,
                "subset": string,
                "entities": List(integer),
                "mentions": List(string),
            }
        ),
        "qa_public": qa,
        "qa_singleton": qa,
        "support_counts": Features(
            {"entity": integer, "name": string, "feature": string, "count": integer, "subset": string}
        ),
        "entities": None,
    }
    return {
        config: {
            split: Dataset.from_dict(
                {k: [r[k] for r in rows] for k in rows[0]} if rows else {}, features=features[config]
            )
            for split, rows in splits.items()
        }
        for config, splits in parts.items()
    }
