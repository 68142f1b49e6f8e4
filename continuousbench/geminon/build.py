"""Build a Geminon release: world -> candidates + selection -> render -> QA + support counts -> write.

The long stages (world, selection, render) write their output to a work folder
``<root>/.work/<release-id>-<hash of the settings>/`` as they finish (render in chunks; an LLM
realizer's drafts unit by unit, in ``drafts.jsonl``), so an interrupted build picks up where it stopped,
and a build with other settings starts over in a folder of its own; ``--resume`` insists on continuing
and refuses other settings. The folder is removed once the release is written. Every random choice
comes from one ``SeedSequence`` keyed by the seed and the quarter, so each quarter is a fresh world and
the same seed and quarter give a byte-identical release.
"""

from __future__ import annotations

import logging
import shutil
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import continuousbench
from continuousbench.commands import bounds
from continuousbench.errors import UserError
from continuousbench.files import check_writable_dir
from continuousbench.geminon import closed_book as CB
from continuousbench.geminon import corpus as C
from continuousbench.geminon import heldout as H
from continuousbench.geminon import qa as Q
from continuousbench.geminon.realizers import make_realizer
from continuousbench.geminon.realizers.checkpoint import CheckpointedRealizer
from continuousbench.geminon.schema import Geminon
from continuousbench.geminon.selection import Rows, drafts_of, selection_stage
from continuousbench.geminon.sizes import SizeSpec, get_size
from continuousbench.llm import TextGenerator
from continuousbench.release import ids
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import HOME_ENV, WORK, default_root, release_dir
from continuousbench.release.write import check_replaceable, release_lock
from continuousbench.scoring.mcq import attach_options
from continuousbench.stages import StageProgress, WorkDir

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

ROUNDS = 100  # sampling rounds: batches of ~1% of each style's target between coverage updates
RENDER_CHUNK = 20_000  # documents per resumable render part
DRAFTS = "drafts.jsonl"  # an LLM realizer's finished drafting units (realizers/checkpoint.py)
SCREENED = "closed_book.json"  # the closed-book stage's attempts (closed_book.py)
QA_PARTS = ("qa_public", "qa_singleton")
ATTEMPT_COLUMNS = ("blind_answers", "informed_answer", "ill_posed")  # what each QA row records of it
SEED_KEYS = ("world", "drafts", "sensitive", "sampling", "shuffle", "qa_public", "qa_singleton")


@dataclass
class GeminonBuildArguments:
    """What a build takes: ``continuousbench build geminon`` and ``builders/geminon.py`` parse it."""

    size: str = field(default="tiny", metadata={"help": "tiny, small or medium."})
    quarter: str = field(default="2026q1", metadata={"help": "Release quarter, YYYYqN."})
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of every random choice."))
    out: str | None = field(default=None, metadata={"help": "Root folder (default $CONTINUOUSBENCH_HOME)."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing release."})
    namer: str = field(default="offline", metadata={"help": "offline, or a text-generation spec for names."})
    realizer: str = field(
        default="template", metadata={"help": "template, or a text-generation spec for prose."}
    )
    oversample: float | None = field(
        default=None,
        metadata=bounds(
            "[1, inf)", "Cap each candidate pool at this multiple of its target (default: the paper)."
        ),
    )
    rounds: int = field(default=ROUNDS, metadata=bounds("[1, inf)", "Coverage-aware sampling rounds."))
    sensitive_candidates: int = field(
        default=C.SENSITIVE_CANDIDATES, metadata=bounds("[1, inf)", "Wiki drafts per sensitive entity.")
    )
    audit: bool | None = field(
        default=None,
        metadata={"help": "Check every document against its provenance (default: LLM realizers)."},
    )
    resume: bool = field(
        default=False,
        metadata={"help": "Continue an interrupted build; refused when its settings differ from these."},
    )
    heldout: str | None = field(
        default=None,
        metadata={
            "help": "A FictionalQA held-out split: entity, document or style (release id "
            "<id>-heldout-<split>; docs/memorization.md)."
        },
    )
    closed_book_models: list[str] | None = field(
        default=None,
        metadata={
            "help": "Models whose closed-book answers drop questions (default: demo-base at tiny, "
            "google/gemma-3-1b-pt above; none: no screening)."
        },
    )
    avoid_repo: str | None = field(
        default=None,
        metadata={
            "help": "Also avoid the names of earlier releases tagged in this Hub dataset repo or local "
            "git repository (those under --out are always avoided)."
        },
    )


def build_settings(a: GeminonBuildArguments, avoided: Avoided | None = None) -> dict[str, Any]:
    """What a build's output depends on: its work folder is keyed by them and ``--resume`` checks them."""
    return {
        "avoided": (avoided or Avoided()).record(),
        "closed_book_models": [CB.model_key(m) for m in CB.screening_models(a.closed_book_models, a.size)],
        "release": str(release_id(a.size, a.quarter, a.heldout)),
        "seed": a.seed,
        "namer": a.namer,
        "realizer": a.realizer,
        "oversample": a.oversample,
        "rounds": a.rounds,
        "sensitive_candidates": a.sensitive_candidates,
        "package_version": continuousbench.__version__,
    }


@dataclass(frozen=True)
class Avoided:
    """The earlier releases (strictly earlier quarters of Geminon, any size) whose names a build avoids."""

    releases: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()

    @classmethod
    def find(cls, rid: ReleaseId, root: Path, repo: str | None) -> Avoided:
        from continuousbench.release.registry import earlier_keys
        from continuousbench.release.targets import make_target

        ids_found, names = earlier_keys(rid, root, make_target(repo, "--avoid_repo") if repo else None)
        return cls(tuple(ids_found), frozenset(names))

    def record(self) -> dict[str, Any]:
        """What the manifest says: which releases, how many names, and their digest."""
        from continuousbench.release.registry import digest

        return {"releases": list(self.releases), "names": len(self.names), "sha256": digest(self.names)}


def release_id(size: str, quarter: str, heldout: str | None = None) -> ReleaseId:
    """``geminon-<size>-<quarter>[-heldout-<split>]``; UserError with the fix for a bad option."""
    get_size(size)
    return ids.release_id("geminon", size, quarter, heldout)


def stage_seeds(seed: int, rid: ReleaseId) -> dict[str, int]:
    """One independent integer seed per stage, from (seed, year, quarter); a held-out build draws the
    same stage seeds (the same world and documents) and one more for its split."""
    keys = SEED_KEYS + (("heldout",) if rid.heldout else ())
    return ids.stage_seeds(seed, rid, keys, bits=63)


def build_release(
    args: GeminonBuildArguments, *, progress: bool = True, timings: dict[str, float] | None = None
) -> Path:
    """Build ``geminon-<size>-<quarter>`` under ``args.out`` and return its folder.

    Candidate pools have the paper's sizes unless ``args.oversample`` caps each public style's pool at
    that multiple of its target (see :mod:`continuousbench.geminon.corpus`). ``args.audit`` checks every
    rendered document against its provenance and drops failures (default: on for LLM realizers; the
    template realizer is grounded by construction and tested). ``progress`` shows bars; ``timings``,
    when given, receives wall seconds per stage.
    """
    a = args
    spec = get_size(a.size)
    rid = release_id(a.size, a.quarter, a.heldout)
    if (a.oversample is not None and a.oversample < 1) or a.rounds < 1 or a.sensitive_candidates < 1:
        raise UserError(
            "oversample must be >= 1 (or None for the paper's pools); rounds, sensitive_candidates >= 1"
        )
    root = Path(a.out).expanduser() if a.out else default_root()
    root = check_writable_dir(root, "--out" if a.out else f"${HOME_ENV}")
    check_replaceable(rid, release_dir(rid, root), a.overwrite)
    CB.check_available(CB.screening_models(a.closed_book_models, a.size))  # before any work
    avoided = Avoided.find(rid, root, a.avoid_repo)
    with release_lock(rid, root):  # one build of a release at a time: a second refuses, naming the pid
        return _build(a, spec, rid, root, progress, timings, avoided)


def _build(
    a: GeminonBuildArguments,
    spec: SizeSpec,
    rid: ReleaseId,
    root: Path,
    progress: bool,
    timings: dict[str, float] | None,
    avoided: Avoided,
) -> Path:
    work = WorkDir.for_settings(root / WORK, str(rid), build_settings(a, avoided), resume=a.resume)
    # a bad spec or a silent endpoint fails here, before any work; answers are cached as they arrive, so
    # a killed build, run again, does not pay for them twice
    llms = _generators(work.path / "llm-cache", a.namer, a.realizer)
    text_maker = make_realizer(a.realizer, llms.get(a.realizer))
    if a.realizer != "template":  # each finished unit's drafts kept as it finishes (template: cheap)
        text_maker = CheckpointedRealizer(text_maker, work.file(DRAFTS))
    seeds = stage_seeds(a.seed, rid)
    timings = {} if timings is None else timings
    stages = StageProgress(progress, timings)
    with stages.progress:
        world = _world_stage(work, stages, spec, seeds["world"], a.namer, llms.get(a.namer), avoided.names)
        selection = selection_stage(
            work, stages, spec.mix, world, text_maker, seeds, a.oversample, a.rounds, a.sensitive_candidates
        )
        audit = a.realizer != "template" if a.audit is None else a.audit
        docs, dropped = _render_stage(work, stages, world, text_maker, selection, audit)
        del selection
        with stages.stage("qa"):
            parts, report = assemble(spec, rid, world, docs, dropped, seeds, audit=audit)
            del docs  # the corpus splits hold the texts now
        models = CB.screening_models(a.closed_book_models, a.size)
        report["closed_book"] = _closed_book_stage(work, stages, parts, world, models)
        attach_options({k: parts[k] for k in ("qa_public", "qa_singleton")}, seed=a.seed)
        generator = {
            "builder": "continuousbench.geminon.build",
            "namer": a.namer,
            "namer_stats": work.read_json("namer.json") if work.file("namer.json").exists() else {},
            "realizer": a.realizer,
            "avoided": avoided.record(),
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
                seed=a.seed,
                generator=generator,
                overwrite=a.overwrite,
                card_notes=NOTES + (HELDOUT_NOTE.format(**report["heldout"]) if rid.heldout else ""),
            )
    shutil.rmtree(work.path)  # .work itself goes with the lock, once empty
    return path


NOTES = (
    "Corpus `style` is the realizer style (wiki, journal, evolution, comparison); the one article of each "
    "sensitive entity is a `wiki` row with `subset` = `sensitive` and always sits in `train`. "
    "`mentions` lists the `idx:feature` facts each document states; `support_count` counts `corpus.train` "
    "documents stating every feature an answer needs."
)


HELDOUT_NOTE = (
    "\n\nHeld-out split `{split}` (FictionalQA): `corpus.validation` holds exactly the {documents} held-out "
    "documents, none of which is in `corpus.train`; `release.json` (`generator.heldout`) names the held-out "
    "entities or style. Support counts are counted on `corpus.train`, so held-out entities' questions have "
    "support 0."
)


def _generators(cache_dir: Path, *specs: str) -> dict[str, TextGenerator]:
    """spec -> its text generator, built once per distinct LLM spec (the namer and the realizer may share
    one) and checked: a malformed spec or an endpoint that does not answer fails before any work."""
    from continuousbench.llm import make_generator

    built = {}
    for spec in dict.fromkeys(s for s in specs if s not in ("offline", "template")):
        built[spec] = make_generator(spec, cache_dir=cache_dir)
        if hasattr(built[spec], "check"):
            built[spec].check()
    return built


# -- stages ------------------------------------------------------------------------------------------


def _world_stage(
    work: WorkDir,
    stages: StageProgress,
    spec: SizeSpec,
    seed: int,
    namer: str,
    llm: TextGenerator | None,
    forbidden: frozenset[str],
) -> list[Geminon]:
    if work.file("world.json").exists():
        return [Geminon.from_record(r) for r in work.read_json("world.json")]
    from continuousbench.geminon.names import make_namer
    from continuousbench.geminon.world import build_world

    with stages.stage("world"):
        # The offline namer is the world's own default, seeded from the world's seed tree.
        named_by = None if namer == "offline" else make_namer(namer, seed, llm)
        world = build_world(spec, seed, namer=named_by, forbidden_names=forbidden)
    if named_by is not None:  # what the LLM namer was asked, dropped, and how often it fell back offline
        work.write_json("namer.json", dict(named_by.stats))
    work.write_json("world.json", [g.to_record() for g in world])
    return world


def _render_stage(
    work: WorkDir, stages: StageProgress, world: list[Geminon], realizer, selection: Rows, audit: bool
) -> tuple[pa.Table, Counter]:
    """The documents kept of the selected drafts, one arrow table (``text, style, subset, entities,
    mentions``), and what was dropped. Chunks are rendered, each saved to survive an interruption, and
    screened (:func:`_screen`) where they are rendered: in forked processes where the realizer allows it
    (:mod:`~continuousbench.geminon.forked`), so the building process never holds the texts as Python
    objects, only the chunks' columns, joined in order."""
    import pyarrow as pa

    from continuousbench.geminon.forked import ordered_map

    n = len(selection.table)
    chunks = [
        (part, start, min(start + RENDER_CHUNK, n)) for part, start in enumerate(range(0, n, RENDER_CHUNK))
    ]
    sensitive_names = C.NameFinder(g.name for g in world if g.subset == "sensitive")
    state = (work, realizer, {g.idx: g for g in world}, selection.table, sensitive_names, audit)
    tables, dropped = [corpus_schema().empty_table()], Counter()
    with stages.stage("render", total=n) as advance, ordered_map(state, len(chunks), realizer) as ordered:
        for (_, start, stop), (table, drops) in zip(chunks, ordered(_render_part, chunks), strict=True):
            tables.append(table)
            dropped.update(drops)
            advance(stop - start)
    return pa.concat_tables(tables).combine_chunks(), dropped


def _render_part(state: tuple, chunk: tuple[int, int, int]) -> tuple[pa.Table, Counter]:
    """Rows ``chunk[1]:chunk[2]`` of the selection: rendered (or read back, when a resumed build saved
    them), screened, and the kept documents as columns."""
    import pyarrow as pa

    work, realizer, by_idx, selection, sensitive_names, audit = state
    part, start, stop = chunk
    name = f"render/part-{part:05d}.parquet"
    drafts = selection.slice(start, stop - start)
    rows = drafts.select(["subset", "subjects", "mentions"]).to_pydict()
    if work.file(name).exists():
        texts = work.read_table(name)["text"]
    else:
        texts = realizer.render(drafts_of(drafts.to_pydict(), 0, stop - start), by_idx)
        if len(texts) != stop - start:
            raise RuntimeError(f"realizer rendered {len(texts)} texts for {stop - start} drafts")
        texts = [t if t is not None else "" for t in texts]
        work.write_table(name, {"text": texts})
    reasons = [
        _screen(*doc, sensitive_names, by_idx, audit)
        for doc in zip(texts, rows["subset"], rows["subjects"], rows["mentions"], strict=True)
    ]
    keep = pa.array([r is None for r in reasons])
    mentions = [C.unique_mentions(m) for m, r in zip(rows["mentions"], reasons, strict=True) if r is None]
    columns = {
        "text": pa.array(texts, pa.string()).filter(keep),
        "style": drafts["style"].filter(keep),
        "subset": drafts["subset"].filter(keep),
        "entities": drafts["subjects"].filter(keep),
        "mentions": mentions,
    }
    return pa.table(columns, schema=corpus_schema()), Counter(r for r in reasons if r)


def _screen(
    text: str,
    subset: str,
    subjects: list[int],
    mentions: list[str],
    sensitive_names: C.NameFinder,
    by_idx: dict[int, Geminon],
    audit: bool,
) -> str | None:
    """Why a rendered document is dropped, or None; a sensitive entity's article cannot be dropped (its
    singleton questions would have no document): UserError or RuntimeError instead."""
    from continuousbench.geminon.realizers.grounding import check_grounding

    if not text.strip():
        if subset == "sensitive":
            raise UserError(
                f"the realizer gave no usable article for sensitive entity {subjects[0]} (every draft "
                f"was dropped); use a stronger --realizer model or raise "
                f"--sensitive_candidates (answers are cached: a rerun pays only for new ones)"
            )
        return "dropped_empty_text"
    if subset == "public" and sensitive_names.search(text):
        return "dropped_names_sensitive_entity"
    if audit and check_grounding(text, mentions, by_idx):
        if subset == "sensitive":
            raise RuntimeError(
                f"the article of sensitive entity {subjects[0]} states facts off its provenance"
            )
        return "dropped_ungrounded"
    return None


def _closed_book_stage(
    work: WorkDir,
    stages: StageProgress,
    parts: dict[str, dict[str, Any]],
    world: list[Geminon],
    models: tuple[str, ...],
) -> dict[str, Any]:
    """Screen every question closed-book (:mod:`.closed_book`): drop those a model answers, give every
    row its attempts; return the manifest's record. The attempts are kept in the work folder, so a
    resumed build asks no model again."""
    import pyarrow.compute as pc

    rows = [row for part in QA_PARTS for split in parts[part].values() for row in split]
    if not models:
        for row in rows:
            row.update({"blind_answers": [], "informed_answer": None, "ill_posed": None})
        return {"models": [], "note": "not screened: no closed-book model was asked"}
    if not work.file(SCREENED).exists():
        train = parts["corpus"]["train"]
        matrix = Q.mention_matrix(train["mentions"], world)
        position = {g.idx: i for i, g in enumerate(world)}
        by_idx = {g.idx: g for g in world}
        columns = [
            Q.needed_columns(matrix, position[r["entity"]], by_idx[r["entity"]], r["attribute"]) for r in rows
        ]
        lengths = pc.utf8_length(train["text"]).to_numpy(zero_copy_only=False)
        chosen = CB.supporting_documents(matrix, columns, lengths)
        documents = [train["text"][i].as_py() if i >= 0 else None for i in chosen]
        with stages.stage("closed-book", total=len(rows) * (len(models) + 1)) as advance:
            attempts, figures = CB.screen(rows, documents, models, advance)
        work.write_json(SCREENED, {"attempts": attempts, "figures": figures})
    saved = work.read_json(SCREENED)
    attempts = iter(saved["attempts"])
    dropped, ill_posed = Counter(), Counter()
    for part in QA_PARTS:
        for split, split_rows in parts[part].items():
            kept = []
            for row in split_rows:
                attempt = next(attempts)
                if attempt["blind_correct"]:
                    dropped[part] += 1
                    continue
                ill_posed[part] += attempt["ill_posed"]
                kept.append({**row, **{k: attempt[k] for k in ATTEMPT_COLUMNS}})
            parts[part][split] = kept
    return {
        "models": [CB.model_key(m) for m in models],
        "max_new_tokens": CB.MAX_NEW_TOKENS,
        "questions": len(rows),
        "dropped_closed_book": dict(dropped),
        "ill_posed": dict(ill_posed),
        "figures": saved["figures"],
    }


# -- assembly ----------------------------------------------------------------------------------------


def assemble(
    spec: SizeSpec,
    rid: ReleaseId,
    world: list[Geminon],
    docs: pa.Table,
    dropped: Counter,
    seeds: dict[str, int],
    *,
    audit: bool = False,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Corpus splits (arrow tables), QA splits, support counts and entities (row lists), plus what was
    dropped; ``docs`` and ``dropped`` are what :func:`_render_stage` kept and dropped."""
    import pyarrow.compute as pc

    held, heldout = None, None
    if rid.heldout:
        sides = H.qa_sides(world, spec.qa_validation_fraction, seeds["qa_public"])
        rows = docs.drop_columns(["text"]).to_pylist()
        held, heldout = H.held_out(rid.heldout, rows, world, np.random.default_rng(seeds["heldout"]), sides)
    corpus = C.corpus_tables(docs, spec, str(rid), np.random.default_rng(seeds["shuffle"]), held)
    matrix = Q.mention_matrix(corpus["train"]["mentions"], world)
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
    kinds = pc.if_else(pc.equal(docs["subset"], "public"), docs["style"], "sensitive").value_counts()
    by_style = dict(zip(kinds.field("values").to_pylist(), kinds.field("counts").to_pylist(), strict=True))
    report = {
        "audited": audit,
        "dropped_after_render": dict(sorted(dropped.items())),
        "documents": dict(sorted(by_style.items())),
        "singleton_support_not_1": len(singleton_off),
        **({"heldout": heldout} if heldout else {}),
    }
    return parts, report


@cache
def _features() -> dict[str, Any]:
    """The release's ``datasets`` features per config (None: inferred, the entities' records)."""
    from datasets import Features, List, Value

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
            "options": List(string),  # ranked-choice options (release format 2)
            # closed-book screening (format 3): one blind answer per model, the informed answer
            "blind_answers": List(string),
            "informed_answer": string,
            "ill_posed": Value("bool"),
        }
    )
    return {
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


def corpus_schema() -> pa.Schema:
    """The arrow schema of the rendered documents: the corpus's columns before its ``id``."""
    schema = _features()["corpus"].arrow_schema
    return schema.remove(schema.get_field_index("id")).remove_metadata()


def _datasets(parts: dict[str, dict[str, Any]]):
    """``Dataset`` per config and split, from row lists or (the corpus) arrow tables."""
    import pyarrow as pa
    from datasets import Dataset, DatasetInfo
    from datasets.table import InMemoryTable

    def dataset(rows, features, name: str) -> Dataset:
        if isinstance(rows, pa.Table):
            # the table as it is (its buffers, no copy), with a fingerprint: without one, datasets hashes
            # the pickled table (1.5 GiB more and seconds for a medium corpus); the same bytes are written
            arrays = {k: _dense(_one_chunk(rows.column(k))) for k in features.arrow_schema.names}
            table = pa.table(arrays).cast(features.arrow_schema)
            info = DatasetInfo(features=features)
            return Dataset(InMemoryTable(table), info=info, fingerprint=f"geminon-{name}-{len(table)}")
        schema = features.arrow_schema if features else None
        return Dataset.from_dict(columns(rows, schema), features=features)

    def columns(rows: list[dict], schema) -> dict:
        """Arrow arrays of the features' types: datasets then skips encoding every value in Python
        (a tenth of a small build), and writes the same parquet bytes."""
        if schema is None or not rows:
            return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}
        return {k: pa.array([r[k] for r in rows], type=schema.field(k).type) for k in schema.names}

    features = _features()
    return {
        config: {
            split: dataset(rows, features[config], f"{config}-{split}") for split, rows in splits.items()
        }
        for config, splits in parts.items()
    }


def _one_chunk(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()  # combine copies


def _dense(array: pa.Array) -> pa.Array:
    """``array`` without a validity bitmap where nothing is null (a list's values too). datasets cuts a
    parquet file into row groups by the arrays' bytes, so the all-valid bitmaps that ``filter`` and
    ``take`` leave would move the row groups of a large corpus, and the file's bytes with them."""
    import pyarrow as pa

    if array.null_count:
        return array
    if pa.types.is_list(array.type):
        return pa.ListArray.from_arrays(array.offsets, _dense(array.values), type=array.type)
    return pa.Array.from_buffers(array.type, len(array), [None, *array.buffers()[1:]], offset=array.offset)
