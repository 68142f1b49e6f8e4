"""``news extract``: real WARC files (warcio) through fastwarc, trafilatura and py3langid."""

from __future__ import annotations

import json
from datetime import date, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from newspages import EVENTS, OUTLETS

from continuousbench.news.articles import ARTICLE_COLUMNS
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.extract import ExtractArguments, cli, main
from continuousbench.news.shards import read_rows

BOILERPLATE = ("cookies", "Comment number", "All rights reserved", "Related stories", "newsletter", "Search")


def test_articles_have_every_field_and_no_boilerplate(extracted):
    rows = read_rows(extracted).to_pylist()
    late = [r for r in rows if r["url"].endswith("-late")]  # from the cut file: those before the cut
    assert 1 <= len(late) < 6
    assert len(rows) == 8 * len(EVENTS) + 1 + len(late)  # reports + a syndicated copy + the cut file's
    hosts = {h for h, _ in OUTLETS}
    for row in rows:
        assert list(row) == list(ARTICLE_COLUMNS)
        assert row["language"] == "en" and row["hostname"] in hosts
        assert row["url"].startswith(f"https://{row['hostname']}/")
        assert row["url"].split("/")[3:6] == row["date"].split("-")  # the url's day is the page's date
        date.fromisoformat(row["date"])
        datetime.fromisoformat(row["crawl_date"].replace("Z", "+00:00"))
        assert row["title"] and row["title"] in row["text"]
        assert not any(b in row["text"] for b in BOILERPLATE), row["text"]
        assert "  " not in row["text"] and "\n\n" not in row["text"]
    assert len({r["id"] for r in rows}) == len(rows)
    assert any("Mara Quintel" in r["text"] for r in rows)


def test_skipped_records_are_counted(extracted):
    stats = json.loads((extracted / "stats.json").read_text())
    assert stats["dropped_non_html"] == 1
    assert stats["dropped_non_english"] == 1
    assert stats["dropped_no_text"] == 1
    assert stats["dropped_http_status"] == 1
    assert stats["truncated_files"] == 1
    assert stats["output"] == len(read_rows(extracted))
    dropped = sum(v for k, v in stats.items() if k.startswith("dropped_"))
    assert stats["input"] == stats["output"] + dropped


def test_publication_window(warc_dir, tmp_path):
    args = ExtractArguments(output=str(tmp_path), warc=[str(warc_dir / "a.warc.gz")], start="2026-01-13",
                            end="2026-01-31", timeout=0)  # fmt: skip
    out = main(args, ExecutorArguments())
    rows = read_rows(out).to_pylist()
    assert rows and all("2026-01-13" <= r["date"] <= "2026-01-31" for r in rows)
    assert json.loads((out / "stats.json").read_text())["dropped_out_of_window"] > 0


def test_extracted_articles_keep_their_columns(tmp_path):
    text = "The Elmsworth Harbour Bridge reopened to traffic on January 12, 2026. " * 5
    german = "Die Stadt hat neue Pläne für den Hafen vorgestellt. " * 5
    rows = [
        {"url": "https://www.dailyharbor.com/a", "text": "  " + text + "\n\n\n", "date": "2026-01-12",
         "section": "city"},
        {"url": "https://www.zeitung.de/b", "text": german,
         "date": "2026-01-12", "section": "welt"},
        {"url": "https://www.dailyharbor.com/c", "text": "", "date": None, "section": "empty"},
    ]  # fmt: skip
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = main(ExtractArguments(output=str(tmp_path / "out"), articles=[str(tmp_path / "in.jsonl")]),
               ExecutorArguments())  # fmt: skip
    (row,) = read_rows(out).to_pylist()
    assert row["section"] == "city" and row["hostname"] == "www.dailyharbor.com"
    assert row["text"] == text.strip() and len(row["id"]) == 16 and row["language"] == "en"
    stats = json.loads((out / "stats.json").read_text())
    assert stats["dropped_non_english"] == 1 and stats["dropped_no_text"] == 1


def test_bad_input_is_one_line(tmp_path, capsys, warc_dir):
    with pytest.raises(SystemExit) as exit_info:
        cli(["--warc", str(tmp_path / "nothing-*.warc.gz"), "--output", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --warc") and "\n" not in err
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "bad.parquet")
    with pytest.raises(SystemExit):
        cli(["--articles", str(tmp_path / "bad.parquet"), "--output", str(tmp_path / "o")])
    assert "no 'url' column" in capsys.readouterr().err


def test_finished_output_is_kept_until_replaced(extracted, warc_dir, capsys):
    before = sorted(p.name for p in (extracted / "data").iterdir())
    with pytest.raises(SystemExit):
        cli(["--warc", str(warc_dir / "b.warc"), "--output", str(extracted)])
    assert "--overwrite" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a failing rerun leaves the published output in place
        cli(["--warc", str(warc_dir / "b.warc"), "--output", str(extracted), "--overwrite",
             "--start", "2026-02-30"])  # fmt: skip
    assert "--start" in capsys.readouterr().err
    assert sorted(p.name for p in (extracted / "data").iterdir()) == before


def test_a_page_that_hangs_or_fails_is_dropped_and_counted(monkeypatch):
    import time

    from datatrove.data import Document

    from continuousbench.news import extract

    def slow_or_broken(html: str, url: str, max_day):
        if url.endswith("slow"):
            time.sleep(30)
        if url.endswith("broken"):
            raise ValueError("lxml could not parse it")
        return {"title": "T", "date": "2026-01-12", "hostname": None, "text": f"T\nBody of {url}."}

    monkeypatch.setattr(extract, "extract_page", slow_or_broken)  # the sandbox process is forked after this
    docs = [Document(text="<html></html>", id=str(i), metadata={"url": f"https://x.com/{name}"})
            for i, name in enumerate(("a", "slow", "b", "broken", "c"))]  # fmt: skip
    step = extract.ArticleExtractor(timeout=1.0)
    start = time.perf_counter()
    kept = list(step.run(iter(docs)))
    assert [d.metadata["url"][-1] for d in kept] == ["a", "b", "c"] and time.perf_counter() - start < 20
    assert kept[0].metadata["hostname"] == "x.com" and kept[0].text == "T\nBody of https://x.com/a."
    assert step.stats["dropped_extraction_timeout"].total == 1
    assert step.stats["dropped_extraction_error"].total == 1
