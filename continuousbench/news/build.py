"""``continuousbench build news``: every NEWS stage, in order, into a release ``news-<size>-<quarter>``.

    continuousbench build news --warc 'cc-news/2026/0[1-3]/*.warc.gz' --size small --quarter 2026q1 \\
        --llm endpoint:http://localhost:8000/v1#gemma-3-27b-it --tasks 16 --workers 2

Only articles published in the quarter are kept (``--start``/``--end`` may narrow it): the extract stage
drops the others, and those with no publication date, counting each (``dropped_out_of_window``,
``dropped_no_date``); see docs/news.md.

Each stage writes its own folder under ``<root>/.work/<release-id>-<hash of settings>/`` (or
``--work``), the convention of every release build (:meth:`continuousbench.stages.WorkDir.for_settings`):
a finished stage is skipped, an unfinished one resumed, so a killed build continues where it stopped
and the endpoint's answer cache means no prompt is paid for twice; other settings get a folder of their
own, and the finished stages of the first are kept. The stage folders stay after the
release is written (their ``stats.json`` say what each stage dropped and why); remove them by hand.
Every random choice is seeded from (seed, year, quarter): the same inputs and model answers give a
byte-identical release.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.embeddings.encoders import DEFAULT_ENCODER
from continuousbench.errors import UserError
from continuousbench.news.articles import parse_day
from continuousbench.news.dedup import CANDIDATE_KINDS
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.models import ModelArguments
from continuousbench.news.subsample import SIZES
from continuousbench.release.ids import ReleaseId

log = logging.getLogger(__name__)
STAGES = ("extract", "dedup", "subsample", "cluster", "facts", "qa", "filter", "support")
SEED_KEYS = ("subsample", "cluster", "facts", "release")
LOCAL = ("warc", "articles", "out", "work", "overwrite")  # machine-specific: not in the release's provenance


@dataclass
class NewsBuildArguments:
    warc: list[str] | None = field(default=None, metadata={"help": "CC-News WARC files or globs."})
    articles: list[str] | None = field(
        default=None, metadata={"help": "Already-extracted articles (JSONL/parquet) instead of --warc."}
    )
    size: str = field(
        default="small",
        metadata={"help": "tiny, small (200k), medium (600k) or large (all).", "choices": list(SIZES)},
    )
    quarter: str = field(default="2026q1", metadata={"help": "Release quarter, YYYYqN."})
    seed: int = field(default=0, metadata=bounds("[0, 9.2e18]", "Seed of every random choice."))
    out: str | None = field(default=None, metadata={"help": "Root folder (default $CONTINUOUSBENCH_HOME)."})
    work: str | None = field(
        default=None, metadata={"help": "Stage folders (default <out>/.work/<id>-<hash of the settings>)."}
    )
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing release."})
    start: str | None = field(
        default=None, metadata={"help": "First publication day kept (YYYY-MM-DD; default: the quarter's)."}
    )
    end: str | None = field(
        default=None, metadata={"help": "Last publication day kept (YYYY-MM-DD; default: the quarter's)."}
    )
    count: int | None = field(default=None, metadata=bounds("[1, inf)", "Articles kept (overrides --size)."))
    candidates: str = field(
        default="sampled",
        metadata={"help": "Dedup candidates (see news dedup).", "choices": list(CANDIDATE_KINDS)},
    )
    encoder: str = field(default=DEFAULT_ENCODER, metadata={"help": "st:<model folder or id>, or tfidf."})
    min_cluster_size: int = field(default=25, metadata=bounds("[2, inf)", "Smallest cluster kept."))
    min_similarity: float = field(default=0.55, metadata=bounds("[-1, 1]", "Cosine of a kNN graph edge."))
    top_clusters: int = field(default=500, metadata=bounds("[1, inf)", "Largest clusters sent for facts."))
    max_questions: int = field(default=12, metadata=bounds("[1, inf)", "Questions kept per cluster."))
    reader: str | None = field(
        default=None, metadata={"help": "Open-book model of news support (default --llm)."}
    )
    neighbours: int = field(default=2, metadata=bounds("[0, 5]", "Nearest clusters read for support."))
    max_candidates: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Articles read per question.")
    )
    min_support: int = field(default=200, metadata=bounds("[0, inf)", "Canonical evaluation: least support."))
    corpus_validation: float = field(default=0.01, metadata=bounds("(0, 1)", "Share of articles held out."))
    qa_validation: float = field(default=0.2, metadata=bounds("(0, 1)", "Share of questions for validation."))
    avoid_repo: str | None = field(
        default=None,
        metadata={
            "help": "Also drop questions of earlier releases tagged in this Hub dataset repo or local git "
            "repository (those under --out are always dropped)."
        },
    )


def window(rid: ReleaseId, start: str | None, end: str | None) -> tuple[str, str]:
    """The publication days a release keeps: its quarter, or the part of it ``--start``/``--end`` name
    (a quarterly release holds only that quarter's news, so a day outside it is refused)."""
    first, last = rid.days
    days = {
        "--start": parse_day(start, "--start") if start else first,
        "--end": parse_day(end, "--end") if end else last,
    }
    for option, day in days.items():
        if not first <= day <= last:
            raise UserError(
                f"{option} {day} is outside --quarter {rid.period} ({first} to {last}); "
                "give a day inside the quarter, or the quarter the articles belong to"
            )
    if days["--start"] > days["--end"]:
        raise UserError(f"--start {days['--start']} is after --end {days['--end']}; swap them")
    return days["--start"].isoformat(), days["--end"].isoformat()


def _stages(args: NewsBuildArguments, model: ModelArguments, ex: ExecutorArguments, seeds: dict[str, int]):
    """(name, run(earlier folders, the stage's output options) -> folder, or a note while queued) of every
    stage; the options are its output folder and whether to resume an unfinished run there."""
    from continuousbench.news import cluster, dedup, extract, facts, qa, subsample, support
    from continuousbench.news import filter as filtering

    reader = replace(model, llm=args.reader or model.llm, judge=model.judge or model.llm)

    def run_extract(f: dict, stage: dict) -> Path | str:
        found = extract.ExtractArguments(
            warc=args.warc, articles=args.articles, start=args.start, end=args.end, **stage
        )
        return extract.main(found, ex)

    def run_dedup(f: dict, stage: dict) -> Path | str:
        found = dedup.DedupArguments(input=f["extract"], candidates=args.candidates, **stage)
        return dedup.main(found, ex)

    def run_subsample(f: dict, stage: dict) -> Path:
        found = subsample.SubsampleArguments(
            input=f["dedup"], size=args.size, count=args.count, seed=seeds["subsample"], **stage
        )
        return subsample.main(found)

    def run_cluster(f: dict, stage: dict) -> Path:
        found = cluster.ClusterArguments(
            input=f["subsample"],
            encoder=args.encoder,
            seed=seeds["cluster"],
            min_cluster_size=args.min_cluster_size,
            min_similarity=args.min_similarity,
            **stage,
        )
        return cluster.main(found)

    def run_facts(f: dict, stage: dict) -> Path:
        found = facts.FactsArguments(
            input=f["cluster"], top_clusters=args.top_clusters, seed=seeds["facts"], **stage
        )
        return facts.main(found, model)

    def run_qa(f: dict, stage: dict) -> Path:
        found = qa.QAArguments(
            facts=f["facts"], articles=f["cluster"], max_questions=args.max_questions, **stage
        )
        return qa.main(found, model)

    def run_filter(f: dict, stage: dict) -> Path:
        found = filtering.FilterArguments(input=f["qa"], **stage)
        return filtering.main(found, model)

    def run_support(f: dict, stage: dict) -> Path:
        found = support.SupportArguments(
            input=f["filter"],
            articles=f["cluster"],
            neighbours=args.neighbours,
            max_candidates=args.max_candidates,
            **stage,
        )
        return support.main(found, reader)

    runs = (run_extract, run_dedup, run_subsample, run_cluster, run_facts, run_qa, run_filter, run_support)
    return list(zip(STAGES, runs, strict=True))


def main(args: NewsBuildArguments, model: ModelArguments, ex: ExecutorArguments) -> Path | str:
    """Build the release and return its folder (or a note while Slurm jobs are queued)."""
    from continuousbench.news.models import check
    from continuousbench.release.ids import release_id
    from continuousbench.release.layout import default_root
    from continuousbench.release.write import check_replaceable, release_lock

    rid = release_id("news", args.size, args.quarter)
    if bool(args.warc) == bool(args.articles):
        raise UserError("pass exactly one of --warc <files> or --articles <files>")
    start, end = window(rid, args.start, args.end)
    args = replace(args, start=start, end=end)  # recorded so: a work folder of another window is refused
    root = Path(args.out).expanduser() if args.out else default_root()
    check_replaceable(rid, root / str(rid), args.overwrite)
    check(model, judge=True)
    if args.reader:
        check(ModelArguments(llm=args.reader))
    with release_lock(rid, root):  # one build of a release at a time: a second refuses, naming the pid
        return _build(args, model, ex, rid, root)


def _build(
    args: NewsBuildArguments, model: ModelArguments, ex: ExecutorArguments, rid: ReleaseId, root: Path
) -> Path | str:
    import json

    from continuousbench.news import release
    from continuousbench.news.shards import STATS, finished, input_files, read_rows, unfinished
    from continuousbench.release.ids import stage_seeds
    from continuousbench.release.layout import WORK
    from continuousbench.stages import WorkDir

    # Finished stages are reused only for the same settings: others get their own folder (under --work,
    # a folder the user named, they are refused in one line). How many requests go out at once, how
    # long one may take and how many may be unusable change no answer: a rerun may change them.
    how = ("max_in_flight", "request_timeout", "max_dropped")
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "work", "overwrite")} | {
        k: v for k, v in asdict(model).items() if k not in how
    }
    if args.work:
        work = WorkDir(Path(args.work).expanduser(), settings).path
    else:
        work = WorkDir.for_settings(root / WORK, str(rid), settings).path
    seeds = stage_seeds(args.seed, rid, SEED_KEYS, bits=32)
    folders: dict[str, str] = {}
    for name, run in _stages(args, model, ex, seeds):
        folder = work / name
        if finished(folder, name):
            log.info("%s: finished before, kept (%s)", name, folder)
        else:
            log.info("%s: running into %s", name, folder)
            result = run(folders, {"output": str(folder), "resume": unfinished(str(folder), name)})
            if isinstance(result, str):  # queued on Slurm
                return result
        folders[name] = str(folder)
    stats = {name: json.loads((Path(folders[name]) / STATS).read_text()) for name in STAGES}
    supported = read_rows(folders["support"]).to_pylist()
    questions, avoided = without_earlier(supported, rid, root, args.avoid_repo)
    parts = release.assemble(
        read_rows(folders["cluster"]).to_pylist(),
        questions,
        corpus_validation=args.corpus_validation,
        qa_validation=args.qa_validation,
        seed=seeds["release"],
    )
    sources = sorted({p.name for p in input_files(args.warc or args.articles)})
    generator = {
        "builder": "continuousbench.news.build",
        "inputs": sources,
        "llm": model.llm,
        "judge": model.judge or model.llm,
        "reader": args.reader or model.llm,
        "settings": {k: v for k, v in vars(args).items() if k not in LOCAL},
        "seeds": seeds,
        "stages": stats,
        "avoided": avoided,
    }
    return release.write(
        str(rid),
        parts,
        root=root,
        seed=args.seed,
        generator=generator,
        overwrite=args.overwrite,
        min_support=args.min_support,
    )


def without_earlier(
    questions: list[dict], rid: ReleaseId, root: Path, repo: str | None
) -> tuple[list[dict], dict]:
    """The questions that no earlier quarter's NEWS release asked (under ``root``, and tagged in ``repo``),
    and the manifest's record of what was avoided and how many were dropped: a repeat is dropped here,
    rather than failing the fresh gate at the end (:mod:`continuousbench.release.registry`)."""
    from continuousbench.release.registry import digest, earlier_keys, normal
    from continuousbench.release.targets import make_target

    found, keys = earlier_keys(rid, root, make_target(repo, "--avoid_repo") if repo else None)
    kept = [q for q in questions if normal(q["question"]) not in keys]
    if len(kept) < len(questions):
        log.info("%d questions repeat an earlier quarter's: dropped", len(questions) - len(kept))
    record = {
        "releases": found,
        "questions": len(keys),
        "sha256": digest(keys),
        "dropped_repeated_question": len(questions) - len(kept),
    }
    return kept, record


make_parser, cli = command(
    (NewsBuildArguments, ModelArguments, ExecutorArguments),
    "continuousbench build news",
    "Build a NEWS release from CC-News WARC files: every stage, resumable, into a dataset.",
    main,
    report=print,
    resume_hint="finished stages are kept in the work folder; rerun the same command to resume",
)
