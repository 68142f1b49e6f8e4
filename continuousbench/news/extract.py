"""``continuousbench news extract``: WARC files (or already-extracted articles) -> English article rows.

    continuousbench news extract --warc 'crawl/CC-NEWS-*.warc.gz' --output work/extract \\
        --start 2026-01-01 --end 2026-03-31 --tasks 8 --workers 2

A datatrove pipeline of our own steps: :class:`WarcPages` (fastwarc over Python's gzip, which reports a
truncated file instead of ending silently) -> :class:`ArticleExtractor` (trafilatura 2.x with metadata and
the rules of news/main_text.py, in datatrove's extractor sandbox so a page that hangs is killed after
``--timeout`` seconds) -> :class:`ArticleFilter` (whitespace, length, py3langid language, publication
window) -> parquet.
datatrove's own WARC reader and Trafilatura step do not fit: the extractor returns text only (no
title or dates) and its extra pins trafilatura < 1.12; the reader needs libmagic and cchardet.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.utils.logging import logger

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.article_filter import ArticleFilter
from continuousbench.news.articles import (
    ARTICLE_COLUMNS,
    article_id,
    hostname,
    iso_day,
    normalize_text,
    parse_day,
)
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.stage_arguments import StageArguments
from continuousbench.news.warc import WarcPages, warc_files


def extract_page(html: str, url: str, max_day: str | None) -> dict | None:
    """Title, publication day, hostname and main text of one page (trafilatura; None when it finds none)."""
    from trafilatura.utils import load_html

    from continuousbench.news.dates import publication_date
    from continuousbench.news.main_text import main_text

    tree = load_html(html)
    if tree is None:
        return None
    day, source = publication_date(tree, url or None, max_day)  # before trafilatura, which prunes the tree
    found = main_text(tree, url or None)
    if found is None:
        return None
    return {"title": found.title or "", "date": day, "date_source": source, "hostname": found.hostname,
            "text": found.text}  # fmt: skip


def guarded_extract(html: str, url: str, max_day: str | None) -> dict | None:
    """:func:`extract_page`, returning its error instead of raising: a page lxml or trafilatura cannot
    handle is dropped and counted, without ending the task (or the sandbox process)."""
    try:
        return extract_page(html, url, max_day)
    except Exception as err:  # noqa: BLE001 - any failure on one page concerns that page only
        return {"error": f"{type(err).__name__}: {err}"}


class ArticleExtractor(PipelineStep):
    """trafilatura 2.x main text and metadata; ``timeout`` > 0 runs it in datatrove's extractor sandbox."""

    name = "trafilatura 2 (text + metadata)"
    type = "🛢 - EXTRAC"

    def __init__(self, timeout: float = 10.0):
        super().__init__()
        self.timeout = timeout

    def _extract_all(self, data: DocumentsPipeline) -> Iterator[tuple[Document, dict | None]]:
        def page(doc: Document) -> tuple:
            return doc.text, doc.metadata["url"], iso_day(doc.metadata.get("crawl_date"))

        if self.timeout <= 0:
            yield from ((doc, guarded_extract(*page(doc))) for doc in data)
            return
        from datatrove.pipeline.extractors.base import ExtractorSandbox

        with ExtractorSandbox(timeout=self.timeout, warmup_text=("<html></html>", "", None)) as sandbox:
            for doc in data:
                try:
                    yield doc, sandbox.process_document(page(doc), guarded_extract)
                except TimeoutError:
                    self.stat_update("dropped_extraction_timeout")
                except EOFError:  # the sandbox process died (memory): the next page gets a fresh one
                    self.stat_update("dropped_extraction_crashed")

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for doc, found in self._extract_all(data):
            with self.track_time():
                if found is not None and "error" in found:
                    self.stat_update("dropped_extraction_error")
                    continue
                text = normalize_text((found or {}).get("text") or "")
                title = normalize_text((found or {}).get("title") or "")
                if not text or text == title:  # trafilatura returns the page heading alone for empty pages
                    self.stat_update("dropped_no_text")
                    continue
                doc.text = text
                if found.get("date_source"):
                    self.stat_update(f"dated_from_{found['date_source']}")
                doc.metadata.update(
                    title=title,
                    date=iso_day(found["date"]),
                    hostname=hostname(doc.metadata["url"]) or found["hostname"] or "",
                )
            yield doc


class ArticleShards(PipelineStep):
    """Already-extracted articles (JSONL or parquet rows with at least ``url`` and ``text``)."""

    name = "extracted articles"
    type = "📖 - READER"

    def __init__(self, paths: Sequence[str]):
        super().__init__()
        self.paths = list(paths)

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        from continuousbench.news.shards import read_shard

        for path in self.paths[rank::world_size]:
            for row in read_shard(Path(path)).to_pylist():
                self.stat_update("records")
                text, url = row.pop("text") or "", row.get("url") or ""
                row["id"] = row.get("id") or article_id(url, text)
                row["hostname"] = row.get("hostname") or hostname(url)
                row["title"] = row.get("title") or ""
                row["date"], row["crawl_date"] = iso_day(row.get("date")), iso_day(row.get("crawl_date"))
                yield Document(text=text, id=str(row.pop("id")), metadata=row)


def to_row(self, doc: Document) -> dict:
    """datatrove writer adapter: the article columns first, then every other column the input had."""
    row = {"id": doc.id, "text": doc.text, **doc.metadata}
    return {name: row.get(name) for name in ARTICLE_COLUMNS} | {
        k: v for k, v in row.items() if k not in ARTICLE_COLUMNS
    }


# -- command ------------------------------------------------------------------------------------------


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


def main(args: ExtractArguments, ex: ExecutorArguments, *, resume: bool | None = None) -> Path | str:
    """Run the extraction; returns the output folder (or a note while Slurm jobs are still queued)."""
    from datatrove.pipeline.writers import ParquetWriter

    from continuousbench.news.executors import Pipeline, pipeline_counts, queued, run_pipelines
    from continuousbench.news.shards import DATA, StageOutput, input_files

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
    out = StageOutput(args.output, "extract", config, overwrite=args.overwrite,
                      resume=args.resume if resume is None else resume, inputs=[args.articles])  # fmt: skip
    if args.warc:
        steps = [WarcPages(paths, args.max_page_bytes), ArticleExtractor(args.timeout)]
    else:
        steps = [ArticleShards(paths)]
    steps += [
        ArticleFilter(args.languages, args.min_chars, start, end),
        ParquetWriter(str(out.path(DATA)), output_filename="part-${rank}.parquet", adapter=to_row,
                      schema=schema, max_file_size=-1, compression="zstd"),
    ]  # fmt: skip
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
