"""``build news --quarter``: only articles published in the quarter reach the release."""

from __future__ import annotations

import json

import pytest
from datatrove.pipeline.filters.base_filter import BaseFilter

from continuousbench.errors import UserError
from continuousbench.news import dedup
from continuousbench.news.article_filter import ArticleFilter
from continuousbench.news.build import NewsBuildArguments, main, window
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.models import ModelArguments
from continuousbench.news.shards import read_rows
from continuousbench.release.ids import ReleaseId

Q4 = ReleaseId.parse("news-tiny-2026q4")
TEXT = "The Elmsworth Harbour Bridge reopened to traffic after two years of repairs, officials said. " * 4


def test_window_is_the_quarter_or_a_part_of_it():
    assert window(Q4, None, None) == ("2026-10-01", "2026-12-31")
    assert window(ReleaseId.parse("news-tiny-2028q1"), None, None) == ("2028-01-01", "2028-03-31")
    assert window(ReleaseId.parse("news-tiny-2026q2"), None, None) == ("2026-04-01", "2026-06-30")
    assert window(Q4, "2026-11-01", None) == ("2026-11-01", "2026-12-31")
    with pytest.raises(UserError, match=r"--start 2026-01-01 is outside --quarter 2026q4 \(2026-10-01 to"):
        window(Q4, "2026-01-01", None)
    with pytest.raises(UserError, match="--end 2027-01-01 is outside"):
        window(Q4, None, "2027-01-01")
    with pytest.raises(UserError, match="swap them"):
        window(Q4, "2026-12-01", "2026-11-01")


class Stop(Exception):
    """Raised in place of the dedup stage: this test needs the extract stage only."""


def test_quarter_drops_articles_published_outside_it(tmp_path, monkeypatch):
    days = {
        "old": "2019-05-01",
        "first": "2026-10-01",
        "inside": "2026-11-15T08:30:00+00:00",
        "last": "2026-12-31",
        "next": "2027-01-01",
        "undated": None,
    }
    rows = [{"url": f"https://x.com/{k}", "text": f"{k}. {TEXT}", "date": d} for k, d in days.items()]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def stop(*args, **kwargs):
        raise Stop

    monkeypatch.setattr(dedup, "main", stop)
    args = NewsBuildArguments(articles=[str(source)], size="tiny", quarter="2026q4", out=str(tmp_path))
    with pytest.raises(Stop):
        main(args, ModelArguments(llm="offline:news"), ExecutorArguments())
    (work,) = (tmp_path / ".work").glob("news-tiny-2026q4-*")
    extracted = work / "extract"
    kept = read_rows(extracted).to_pylist()
    assert sorted(r["url"].rsplit("/", 1)[1] for r in kept) == ["first", "inside", "last"]
    assert {r["date"] for r in kept} == {"2026-10-01", "2026-11-15", "2026-12-31"}
    stats = json.loads((extracted / "stats.json").read_text())
    assert stats["dropped_out_of_window"] == 2 and stats["dropped_no_date"] == 1
    assert stats["input"] == 6 and stats["output"] == 3


def test_article_filter_is_a_datatrove_filter():
    assert issubclass(ArticleFilter, BaseFilter) and "run" not in vars(ArticleFilter)  # BaseFilter's loop
