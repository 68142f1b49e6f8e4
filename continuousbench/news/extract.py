"""``continuousbench news extract``: WARC files (or already-extracted articles) -> English article rows.

    continuousbench news extract --warc 'crawl/CC-NEWS-*.warc.gz' --output work/extract \\
        --start 2026-01-01 --end 2026-03-31 --tasks 8 --workers 2

A datatrove pipeline of our own steps: :class:`WarcPages` (fastwarc over Python's gzip, which reports a
truncated file instead of ending silently) -> :class:`ArticleExtractor` (trafilatura 2.x with metadata and
the rules of news/main_text.py, in datatrove's extractor sandbox so a page that hangs is killed after
``--timeout`` seconds) -> :class:`ArticleFilter` (whitespace, length, py3langid language, publication
window) -> parquet. The steps live in news/article_steps.py: this command's ``--help`` imports no
datatrove (0.68 CPU-s before, 0.20 after).
datatrove's own WARC reader and Trafilatura step do not fit: the extractor returns text only (no
title or dates) and its extra pins trafilatura < 1.12; the reader needs libmagic and cchardet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.articles import ARTICLE_COLUMNS, parse_day
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.stage_arguments import StageArguments


@dataclass
class ExtractArguments(StageArguments):
    warc: list[str] | None = field(default=None, metadata={"help": "WARC files or globs (.warc, .warc.gz)."})
    articles: list[str] | None = field(
        default=None, metadata={"help": "Already-extracted articles instead: JSONL/parquet files or globs."}
    )
    start: str | None = field(default=None, metadata={"help": "First publication day kept (YYYY-MM-DD)."})
    end: str | None = field(default=None, metadata={"help": "Last publication day kept (YYYY-MM-DD)."})
    languages: list[str] = field(default_factory=lambda: ["en"], metadata={"help": "Languages kept."})
    min_chars: int = field(default=200, metadata=bounds("[1, inf)", "Shortest article kept (characters)."))
    max_page_bytes: int = field(
        default=2_000_000, metadata=bounds("[1, inf)", "Larger pages are skipped (trafilatura memory).")
    )
    timeout: float = field(
        default=10.0, metadata=bounds("[0, inf)", "Seconds per page before it is dropped (0: no sandbox).")
    )


def main(args: ExtractArguments, ex: ExecutorArguments) -> Path | str:
    """Run the extraction; returns the output folder (or a note while Slurm jobs are still queued)."""
    from datatrove.pipeline.writers import ParquetWriter

    from continuousbench.news.article_filter import ArticleFilter
    from continuousbench.news.article_steps import ArticleExtractor, ArticleShards, to_row
    from continuousbench.news.executors import Pipeline, pipeline_counts, queued, run_pipelines
    from continuousbench.news.shards import DATA, StageOutput, input_files
    from continuousbench.news.warc import WarcPages, warc_files

    if bool(args.warc) == bool(args.articles):
        raise UserError("pass exactly one of --warc <files> or --articles <files>")
    start = parse_day(args.start, "--start").isoformat() if args.start else None
    end = parse_day(args.end, "--end").isoformat() if args.end else None
    if start and end and start > end:
        raise UserError(f"--start {start} is after --end {end}; swap them")
    paths = warc_files(args.warc) if args.warc else [str(p) for p in input_files(args.articles, "--articles")]
    schema = _schema(paths) if args.articles else None
    config = {k: v for k, v in vars(args).items() if k not in ("overwrite", "resume", "warc", "articles")}
    config |= {"paths": paths, "tasks": ex.tasks}
    out = StageOutput(
        args.output, "extract", config, overwrite=args.overwrite, resume=args.resume, inputs=[args.articles]
    )
    if args.warc:
        steps = [WarcPages(paths, args.max_page_bytes), ArticleExtractor(args.timeout)]
    else:
        steps = [ArticleShards(paths)]
    steps += [
        ArticleFilter(args.languages, args.min_chars, start, end),
        ParquetWriter(
            str(out.path(DATA)),
            output_filename="part-${rank}.parquet",
            adapter=to_row,
            schema=schema,
            max_file_size=-1,
            compression="zstd",
        ),
    ]
    if schema is None:
        from continuousbench.news.articles import article_schema

        steps[-1].schema = article_schema()
    tasks = min(ex.tasks, len(paths))
    logs = out.path("logs")
    redo_changed_inputs(out, paths, tasks, "--warc" if args.warc else "--articles")
    if not run_pipelines([Pipeline("extract", steps, tasks)], ex, logs):
        return queued(args.output)
    counts = pipeline_counts(logs, ["extract"])
    return out.finish(
        counts.pop("records", 0), counts.pop("articles", 0), counts, publish=["logs"], tasks=tasks
    )


INPUTS = "inputs.json"  # in the work folder: each input's sha256 and the stat it was computed at


def redo_changed_inputs(out, paths: list[str], tasks: int, option: str) -> list[str]:
    """Make ``--resume`` extract again every input whose content changed since the run began (a WARC
    downloaded again under the same name): the task reading it loses its completion mark and its shard
    (a rerun that keeps nothing writes none), so the executor runs it again, replacing its counts.
    Returns the changed inputs.

    The first run hashes every input (sha256, about a second per GB, in threads); a resume hashes again
    only the files whose size, modification time or inode changed (a copy, a new download, an edit),
    so resuming a crawl of a terabyte does not read it all. Names and sizes alone would not tell a file
    replaced by another of the same size.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    from datatrove.utils.logging import logger

    from continuousbench.files import sha256_file
    from continuousbench.news.shards import DATA

    before = out.read_json(INPUTS) if out.done(INPUTS) else {}

    def fingerprint(path: str) -> dict:
        st = os.stat(path)
        stat = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}
        known = before.get(path, {})
        same = known.get("stat") == stat and known.get("sha256")
        return {"sha256": known["sha256"] if same else sha256_file(path), "stat": stat}

    with ThreadPoolExecutor(max_workers=4) as pool:
        now = dict(zip(paths, pool.map(fingerprint, paths), strict=True))
    changed = [p for p in paths if p in before and before[p].get("sha256") != now[p]["sha256"]]
    for path in changed:
        rank = paths.index(path) % tasks  # the readers give task r the inputs r, r + tasks, ...
        (out.path("logs/extract/completions") / f"{rank:05d}").unlink(missing_ok=True)
        (out.path(DATA) / f"part-{rank:05d}.parquet").unlink(missing_ok=True)
        logger.warning(f"{option} {path} changed since this run began; task {rank} reads it again")
    out.write_json(INPUTS, now)  # after the marks are gone: an interruption here still redoes them
    return changed


def _schema(paths: Sequence[str]):
    """Writer schema for extracted input: the article columns, then the first shard's other columns."""
    import pyarrow as pa

    from continuousbench.news.articles import article_schema
    from continuousbench.news.shards import read_shard

    first = read_shard(Path(paths[0])).slice(0, 1)
    for needed in ("url", "text"):
        if needed not in first.column_names:
            raise UserError(
                f"--articles {paths[0]} has no {needed!r} column (it has {', '.join(first.column_names)}); "
                "extracted articles need at least url and text"
            )
    fields = list(article_schema())
    fields += [f for f in first.schema if f.name not in ARTICLE_COLUMNS and not pa.types.is_null(f.type)]
    return pa.schema(fields)


make_parser, cli = command(
    (ExtractArguments, ExecutorArguments),
    "continuousbench news extract",
    "Extract English news articles (text + metadata) from WARC files into parquet shards.",
    main,
    report=print,
)
