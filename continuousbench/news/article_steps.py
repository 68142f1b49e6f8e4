"""The extract stage's own datatrove steps: trafilatura over WARC pages, and already-extracted articles.

Kept apart from the command (news/extract.py) so its ``--help`` does not import datatrove.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from continuousbench.news.articles import ARTICLE_COLUMNS, article_id, hostname, iso_day, normalize_text


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
    return {
        "title": found.title or "",
        "date": day,
        "date_source": source,
        "hostname": found.hostname,
        "text": found.text,
    }


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

        # Imported here, before the sandbox forks: its warm-up (whose timeout drops a page, and again for the
        # next page's fresh process) then finds trafilatura loaded instead of importing it under the clock
        guarded_extract("<html></html>", "", None)
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
