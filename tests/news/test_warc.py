"""WARC input: a page's text from its bytes when its declared charset is wrong (real WARC runs of it are in
test_extract.py; refused files are rows of tests/test_bad_input.py)."""

from __future__ import annotations

import codecs

import pytest

from continuousbench.news.warc import declared_charsets, decode_page

TEXT = "Café owners said the “naïve” plan — costing 5 € — would fail."
UTF8_META = b'<html><head><meta charset="utf-8"></head><body><p>'


@pytest.mark.parametrize(
    "body, http_charset",
    [
        pytest.param(TEXT.encode("utf-8"), "ISO-8859-1", id="utf8-declared-latin1"),
        pytest.param(TEXT.encode("utf-8"), "windows-1251", id="utf8-declared-cyrillic"),
        pytest.param(TEXT.encode("cp1252"), "utf-8", id="cp1252-declared-utf8"),
        pytest.param(TEXT.encode("cp1252"), "ISO-8859-1", id="cp1252-declared-latin1"),
        pytest.param(TEXT.encode("cp1252"), None, id="cp1252-undeclared"),
        pytest.param(UTF8_META + TEXT.encode("cp1252"), None, id="cp1252-meta-says-utf8"),
        pytest.param(codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-8", id="utf16-bom"),
    ],
)
def test_the_bytes_decide_over_a_wrong_declaration(body, http_charset):
    text = decode_page(body, http_charset)
    assert TEXT in text
    assert not any(mark in text for mark in ("Ã", "â€", "\ufffd", "\x93"))


def test_declarations_read_latin1_as_windows_1252():
    body = b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
    assert declared_charsets(body, "UTF-8") == ["utf-8", "cp1252"]
    assert decode_page(b"<p>\x93quoted\x94</p>", "iso-8859-1") == "<p>“quoted”</p>"  # not C1 controls


def test_a_cyrillic_page_declared_utf8_is_not_read_as_windows_1252():
    text = "Московские власти объявили о новых планах по развитию городского транспорта."
    assert decode_page(text.encode("cp1251"), "utf-8") == text


def test_a_gzipped_warc_named_without_gz_is_read(tmp_path):
    """The bytes decide whether a file is gzip-compressed, not its name."""
    from newspages import write_warc
    from realpages import real_pages, record

    from continuousbench.news.warc import WarcPages, warc_files

    page = real_pages()[0]
    write_warc(tmp_path / "crawl.warc", [record(page)])  # gzip members, no .gz
    (path,) = warc_files([str(tmp_path / "*.warc")])
    (doc,) = WarcPages([path]).run()
    assert doc.metadata["url"] == page["url"] and doc.text == page["html"].decode()
