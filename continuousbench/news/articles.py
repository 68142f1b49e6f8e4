"""The article row every stage passes on, and the small normalisations every source goes through."""

from __future__ import annotations

import hashlib
import re
from datetime import date, datetime
from urllib.parse import urlsplit

from continuousbench.errors import UserError

# The columns of an article row (issue 13, paper App. H.1); stages add columns and keep unknown ones.
ARTICLE_COLUMNS: tuple[str, ...] = (
    "id",
    "url",
    "hostname",
    "title",
    "date",
    "crawl_date",
    "language",
    "text",
)

_SPACES = re.compile(r"[^\S\n]+")  # runs of whitespace other than newlines
_BLANK_LINES = re.compile(r"\n\s*\n+|\s*\n\s*")


def article_schema():
    """Arrow schema of an article row: every column a string (``date`` may be null)."""
    import pyarrow as pa

    return pa.schema([(name, pa.string()) for name in ARTICLE_COLUMNS])


def normalize_text(text: str) -> str:
    """Collapse runs of spaces and blank lines: one space inside a line, one newline between paragraphs."""
    return _BLANK_LINES.sub("\n", _SPACES.sub(" ", text)).strip()


def text_sha256(text: str) -> str:
    """SHA-256 of the normalised text: equal hashes are exact duplicates."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def article_id(*parts: str) -> str:
    """A stable 16-hex id from the record's identity (WARC record id, or url + text for extracted input)."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def hostname(url: str) -> str:
    """``https://www.example.com/a`` -> ``www.example.com`` ('' when the url has none)."""
    return (urlsplit(url).hostname or "") if url else ""


def iso_day(value: str | date | datetime | None) -> str | None:
    """The ``YYYY-MM-DD`` day of an ISO 8601 date or timestamp; None when absent or unreadable."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    try:
        return date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return None


def parse_day(value: str, option: str) -> date:
    """A ``YYYY-MM-DD`` command-line date, or one line naming the option."""
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise UserError(
            f"{option} {value!r} is not a date; write it as YYYY-MM-DD, e.g. 2026-01-01"
        ) from None
