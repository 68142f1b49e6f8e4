"""`build news` with a real model behind a real server: the LLM stages run, bound their answers, count
what they drop, and a rerun resumes from the answer cache without asking the server again."""

from __future__ import annotations

import pytest
from newspages import TINY_CLUSTERING

from continuousbench.llm.endpoint import EndpointGenerator
from continuousbench.news.build import NewsBuildArguments, main
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.models import ModelArguments

pytestmark = pytest.mark.real_llm


def test_build_news_against_a_real_model(warc_dir, real_llm_endpoint, tmp_path, monkeypatch, capsys):
    args = NewsBuildArguments(
        warc=[str(warc_dir / "*.warc*")],
        size="tiny",
        out=str(tmp_path),
        min_support=2,
        top_clusters=2,
        **TINY_CLUSTERING,
    )
    model = ModelArguments(llm=real_llm_endpoint, max_new_tokens=64, max_in_flight=2, request_timeout=240)
    try:
        main(args, model, ExecutorArguments(tasks=1))
        first = None
    except ValueError as err:  # a 135M model rarely states a fact in three reports: refused in one line
        first = str(err)
        assert "\n" not in first and ("news facts" in first or "news qa" in first), first
    cache = list((tmp_path).rglob("llm-cache.sqlite3"))
    assert cache, "no answer was cached"
    asked = []
    real_one = EndpointGenerator._one
    monkeypatch.setattr(EndpointGenerator, "_one", lambda self, *a: asked.append(a) or real_one(self, *a))
    try:
        main(args, model, ExecutorArguments(tasks=1))
        again = None
    except ValueError as err:
        again = str(err)
    assert again == first and asked == []  # resumed from the cache: nothing paid twice
