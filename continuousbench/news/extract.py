"""``continuousbench news extract``: WARC files (or already-extracted articles) -> English article rows.

    continuousbench news extract --warc 'crawl/CC-NEWS-*.warc.gz' --output work/extract \\
        --start 2026-01-01 --end 2026-03-31 --tasks 8 --workers 2

A datatrove pipeline of our own steps: :class:`WarcPages` (fastwarc over Python's gzip, which reports a
truncated file instead of ending silently) -> :class:`ArticleExtractor` (trafilatura 2.x with metadata,
in datatrove's extractor sandbox so a page that hangs is killed after ``--timeout`` seconds) ->
:class:`ArticleFilter` (whitespace, length, py3langid language, publication window) -> parquet.
datatrove's own WARC reader and Trafilatura step do not fit: the extractor returns text only (no
title or dates) and its extra pins trafilatura < 1.12; the reader needs libmagic and cchardet.
"""

from __future__ import annotations

import zlib
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

HTML_TYPES = ("text/html", "application/xhtml+xml")


class WarcPages(PipelineStep):
    """Each task reads its share of the WARC files and yields one document per HTML response."""

    name = "WARC pages (fastwarc)"
    type = "📖 - READER"

    def __init__(self, paths: Sequence[str], max_page_bytes: int = 2_000_000):
        super().__init__()
        self.paths, self.max_page_bytes = list(paths), max_page_bytes

    def _records(self, path: str):
        from fastwarc.warc import ArchiveIterator

        with open(path, "rb") as raw:
            stream = GzipMembers(raw) if path.endswith(".gz") else raw
            yield from ArchiveIterator(stream, parse_http=True, fsspec_args=False, stream_detect=False)

    def _page(self, record) -> Document | None:
        from fastwarc.warc import WarcRecordType

        if record.record_type != WarcRecordType.response:
            self.stat_update("skipped_not_response")
            return None
        self.stat_update("records")
        content_type = (record.http_content_type or "").split(";")[0].strip().lower()
        if content_type not in HTML_TYPES:
            self.stat_update("dropped_non_html")
            return None
        status = record.http_headers.status_code if record.http_headers is not None else 0
        if status != 200:
            self.stat_update("dropped_http_status")
            return None
        body = record.reader.read(self.max_page_bytes + 1)
        if len(body) > self.max_page_bytes:
            self.stat_update("dropped_too_large")
            return None
        if len(body) < record.content_length:
            self.stat_update("dropped_truncated_record")
            return None
        html = _decode(body, record.http_charset)
        headers = record.headers
        return Document(
            text=html,
            id=article_id(headers.get("WARC-Record-ID") or headers.get("WARC-Target-URI") or ""),
            metadata={"url": headers.get("WARC-Target-URI") or "", "crawl_date": headers.get("WARC-Date")},
        )

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for path in self.paths[rank::world_size]:
            try:
                for record in self._records(path):
                    with self.track_time():
                        try:
                            page = self._page(record)
                        except (EOFError, OSError):  # the cut falls inside this record's payload
                            self.stat_update("dropped_truncated_record")
                            raise
                    if page is not None:
                        yield page
            except (EOFError, OSError) as err:  # a cut or damaged file: keep what was read, say which
                self.stat_update("truncated_files")
                logger.warning(f"{path} is truncated or damaged ({err}); kept the records before the damage")


class GzipMembers:
    """A multi-member gzip stream (one member per WARC record) that hands over every byte decoded before
    a cut, then raises EOFError. Hand-written because ``gzip.GzipFile`` raises at a cut member and drops
    what it had decoded in that read, and fastwarc's own reader ends a cut file silently."""

    CHUNK = 1 << 16

    def __init__(self, raw):
        self.raw, self.buffer, self.inflate = raw, bytearray(), zlib.decompressobj(wbits=31)
        self.pending = False  # inside a member whose end has not been seen
        self.position = 0  # decompressed bytes handed out (fastwarc asks for it)

    def _fill(self) -> bool:
        data = self.raw.read(self.CHUNK)
        if not data:
            if self.pending:
                raise EOFError("compressed file ended inside a record")
            return False
        while data:
            try:
                self.buffer += self.inflate.decompress(data)
            except zlib.error as err:  # not gzip, or damaged: the same as a cut, for the reader
                raise EOFError(f"damaged gzip data ({err})") from None
            self.pending = not self.inflate.eof
            data = self.inflate.unused_data if self.inflate.eof else b""
            if self.inflate.eof:
                self.inflate = zlib.decompressobj(wbits=31)
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            while (size < 0 or len(self.buffer) < size) and self._fill():
                pass
        except EOFError:
            if not self.buffer:
                raise
            self.pending = False  # hand over what was decoded now; the next read reports the cut
            self.raw = _Cut()
        size = len(self.buffer) if size < 0 else min(size, len(self.buffer))
        out = bytes(self.buffer[:size])
        del self.buffer[:size]
        self.position += size
        return out

    def tell(self) -> int:
        return self.position


class _Cut:
    def read(self, size: int) -> bytes:
        raise EOFError("compressed file ended inside a record")


def _decode(body: bytes, charset: str | None) -> str:
    """The page as text: the HTTP charset, else UTF-8, else trafilatura's detection."""
    for encoding in (charset, "utf-8"):
        if encoding:
            try:
                return body.decode(encoding)
            except (UnicodeDecodeError, LookupError):
                continue
    from trafilatura.utils import decode_file

    return decode_file(body)


def extract_page(html: str, url: str, max_day: str | None) -> dict | None:
    """Title, publication day, hostname and main text of one page (trafilatura; None when it finds none)."""
    from trafilatura import bare_extraction

    date_params = {"original_date": True, "extensive_search": True}
    if max_day:
        date_params["max_date"] = max_day  # a page cannot be published after it was crawled
    found = bare_extraction(
        html, url=url or None, with_metadata=True, include_comments=False, include_tables=False,
        favor_precision=True, deduplicate=False, date_extraction_params=date_params,
    )  # fmt: skip
    if found is None:
        return None
    return {"title": found.title or "", "date": found.date, "hostname": found.hostname, "text": found.text}


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
                row["date"], row["crawl_date"] = iso_day(row.get("date")), row.get("crawl_date")
                yield Document(text=text, id=str(row.pop("id")), metadata=row)


def to_row(self, doc: Document) -> dict:
    """datatrove writer adapter: the article columns first, then every other column the input had."""
    row = {"id": doc.id, "text": doc.text, **doc.metadata}
    return {name: row.get(name) for name in ARTICLE_COLUMNS} | {
        k: v for k, v in row.items() if k not in ARTICLE_COLUMNS
    }


# -- command ------------------------------------------------------------------------------------------


@dataclass
class ExtractArguments:
    output: str = field(metadata={"help": "Output folder (data/ shards + stats.json)."})
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
    overwrite: bool = field(default=False, metadata={"help": "Replace a finished output."})
    resume: bool = field(default=False, metadata={"help": "Continue an unfinished run."})


def _expand(patterns: Sequence[str], option: str) -> list[str]:
    from continuousbench.news.shards import input_files

    return [str(p) for p in input_files(list(patterns), option)] if patterns else []


def main(args: ExtractArguments, ex: ExecutorArguments, *, resume: bool | None = None) -> Path | str:
    """Run the extraction; returns the output folder (or a note while Slurm jobs are still queued)."""
    from datatrove.pipeline.writers import ParquetWriter

    from continuousbench.news.executors import Pipeline, pipeline_counts, queued, run_pipelines
    from continuousbench.news.shards import DATA, StageOutput

    if bool(args.warc) == bool(args.articles):
        raise UserError("pass exactly one of --warc <files> or --articles <files>")
    start = parse_day(args.start, "--start").isoformat() if args.start else None
    end = parse_day(args.end, "--end").isoformat() if args.end else None
    if start and end and start > end:
        raise UserError(f"--start {start} is after --end {end}; swap them")
    paths = _expand(args.warc or [], "--warc") or _expand(args.articles or [], "--articles")
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
    if not run_pipelines([Pipeline("extract", steps, tasks)], ex, logs):
        return queued(args.output)
    counts = pipeline_counts(logs, ["extract"])
    return out.finish(
        counts.pop("records", 0), counts.pop("articles", 0), counts, publish=["logs"], tasks=tasks
    )


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
    (ExtractArguments, ExecutorArguments), "continuousbench news extract",
    "Extract English news articles (text + metadata) from WARC files into parquet shards.",
    main, report=print,
)
