"""Reading WARC files for ``news extract``: which files, their records, and each page's text.

* :func:`warc_files` expands ``--warc`` and refuses, in one line, what cannot be a WARC file (a folder, a
  glob matching nothing, an empty file, a ``.gz`` name over plain bytes, any other file);
* :class:`WarcPages` reads records with fastwarc over :class:`GzipMembers` (Python's zlib, which reports a
  truncated file instead of ending silently) and yields one document per HTML response;
* :func:`decode_page` turns a page's bytes into text trusting the bytes over a wrong declared charset.
"""

from __future__ import annotations

import codecs
import glob
import re
import zlib
from collections.abc import Sequence
from pathlib import Path

from datatrove.data import Document, DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.utils.logging import logger

from continuousbench.errors import UserError
from continuousbench.news.articles import article_id

HTML_TYPES = ("text/html", "application/xhtml+xml")
GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 1 << 16  # read to check a file: a WARC's first record header is far shorter


# -- which files --------------------------------------------------------------------------------------


def warc_files(patterns: Sequence[str], option: str = "--warc") -> list[str]:
    """The WARC files that ``patterns`` (files or globs) name, sorted; each checked by :func:`check_warc`."""
    files: set[Path] = set()
    for pattern in patterns:
        path = Path(str(pattern)).expanduser()
        if path.is_dir():
            raise UserError(
                f"{option} {pattern} is a folder; pass its WARC files, e.g. {option} '{path}/*.warc.gz'"
            )
        found = [path] if path.is_file() else [Path(p) for p in glob.glob(str(path)) if Path(p).is_file()]
        if not found:
            what = "matches no file" if glob.has_magic(str(path)) else "does not exist"
            raise UserError(f"{option} {pattern} {what}; pass WARC files (.warc, .warc.gz) or a glob of them")
        files.update(found)
    for path in files:
        check_warc(path, option)
    return [str(p) for p in sorted(files)]


def check_warc(path: Path, option: str = "--warc") -> None:
    """Refuse a file that cannot be read as a WARC before any task starts: each task would otherwise log
    it as damaged and the run would end with nothing extracted from it."""
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    if not head:
        raise UserError(f"{option} {path} is empty (0 bytes); remove it, or download it again")
    if path.name.endswith(".gz") and not head.startswith(GZIP_MAGIC):
        fix = "rename it without .gz" if head.startswith(b"WARC/") else "pass WARC files (.warc, .warc.gz)"
        raise UserError(f"{option} {path} is named .gz but is not gzip-compressed; {fix}")
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 64)
        except zlib.error as err:
            raise UserError(f"{option} {path} is damaged gzip data ({err}); download it again") from None
    if not head.startswith(b"WARC/"):
        raise UserError(
            f"{option} {path} is not a WARC file (it starts with {head[:12]!r}, not b'WARC/'); pass WARC "
            "files, or extracted articles (JSONL, parquet) with --articles"
        )


# -- records --------------------------------------------------------------------------------------------


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
            gzipped = raw.read(2) == GZIP_MAGIC  # the bytes decide, not the name (checked up front)
            raw.seek(0)
            stream = GzipMembers(raw) if gzipped else raw
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
        html = decode_page(body, record.http_charset)
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


# -- page text ------------------------------------------------------------------------------------------

# UTF-32 first: its little-endian mark begins with UTF-16's.
BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([a-z0-9._:-]+)""", re.IGNORECASE)
# Browsers read these labels as windows-1252 (the WHATWG encoding standard): pages declaring ISO-8859-1
# are in practice full of windows-1252 quotes and dashes, which ISO-8859-1 turns into control characters.
WINDOWS_1252 = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "cp819"}


def declared_charsets(body: bytes, http_charset: str | None) -> list[str]:
    """The charsets a page declares: its HTTP header's, then its ``<meta>`` one (first 4 KiB)."""
    found = [http_charset] if http_charset else []
    meta = META_CHARSET.search(body[:4096])
    if meta:
        found.append(meta.group(1).decode("ascii"))
    labels = [c.strip().strip("\"'").lower() for c in found]
    return ["cp1252" if c in WINDOWS_1252 else c for c in labels if c]


def decode_page(body: bytes, http_charset: str | None) -> str:
    """The page as text, the bytes trusted over what the page declares.

    In order: a byte-order mark; UTF-8 when the bytes are valid UTF-8 (text in an 8-bit charset almost
    never is: its accented letters would have to pair up into UTF-8 sequences), so a UTF-8 page declared
    ISO-8859-1 is not turned into mojibake; the declared charsets that decode the bytes; last,
    charset-normalizer's guess from the bytes (a page declared UTF-8 that is not), windows-1252 when it
    reads the bytes as cleanly as the guess: on a few accented letters the guess is often a near
    relative (cp1250 turns "naïve" into "naďve"), and windows-1252 is the common mislabelled charset.
    """
    for mark, encoding in BOMS:
        if body.startswith(mark):
            return body.decode(encoding, errors="replace")
    for encoding in ("utf-8", *declared_charsets(body, http_charset)):
        try:
            return body.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    from charset_normalizer import from_bytes

    guess, western = from_bytes(body).best(), from_bytes(body, cp_isolation=["cp1252"]).best()
    if western is not None and (guess is None or western.chaos <= guess.chaos):
        guess = western  # as likely as its best guess (cp1250 and cp1252 read English alike): the usual one
    return str(guess) if guess is not None else body.decode("utf-8", errors="replace")
