"""Real news pages (``tests/news/pages``, see its SOURCES.md) with their reference article text, and the
WARC records that carry them."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

PAGES = Path(__file__).parent / "pages"
CRAWL_DATE = "2019-11-21T12:00:00Z"  # after every page's publication (the pages are from 2018-2019)


def real_pages(folder: Path = PAGES) -> list[dict]:
    """Each page: ``id``, ``url``, ``html`` (bytes, UTF-8 as fetched) and ``reference`` (its article text);
    ``folder`` holds ``ground-truth.json`` and the pages, beside it or in its ``html`` folder (the
    extraction benchmark's larger set)."""
    truth = json.loads((folder / "ground-truth.json").read_text())
    html = folder / "html" if (folder / "html").is_dir() else folder
    return [
        {
            "id": key,
            "url": row["url"],
            "html": gzip.decompress((html / f"{key}.html.gz").read_bytes()),
            "reference": row["articleBody"],
        }
        for key, row in sorted(truth.items())
    ]


def record(page: dict, body: bytes | None = None, charset: str = "utf-8") -> dict:
    """A WARC response record of ``page`` (``body`` instead of its bytes; ``charset`` declared in HTTP)."""
    return {
        "url": page["url"],
        "body": page["html"] if body is None else body,
        "content_type": f"text/html; charset={charset}",
        "crawl_date": CRAWL_DATE,
    }


def first_sentence(text: str) -> str:
    """The reference's first sentence of at least eight words: one the extracted text must contain."""
    for paragraph in text.split("\n"):
        for sentence in paragraph.split(". "):
            if len(sentence.split()) >= 8:
                return sentence.strip()
    raise ValueError("no sentence of eight words")


def mislabelled(page: dict, encoding: str, declared: str) -> dict:
    """A record of ``page`` encoded in ``encoding`` (characters it lacks as HTML references) but declared
    ``declared`` in both its HTTP header and its ``<meta>``: a server's wrong label."""
    text = re.sub(r"charset=([\"']?)utf-8", rf"charset=\g<1>{declared}", page["html"].decode(), flags=re.I)
    return record(page, text.encode(encoding, "xmlcharrefreplace"), charset=declared)
