"""The Geminon LLM realizer and namer with a real model behind a real server."""

from __future__ import annotations

import pytest
from test_llm_realizer import A
from test_names import REAL, STAGES

from continuousbench.geminon.names import LLMNamer, line_violation
from continuousbench.geminon.realizers import make_realizer
from continuousbench.llm.endpoint import EndpointGenerator

pytestmark = pytest.mark.real_llm


def test_realizer_drafts_a_few_documents_and_caches_the_answers(real_llm_endpoint, tmp_path, monkeypatch):
    realizer = make_realizer(real_llm_endpoint, cache_dir=tmp_path, articles_per_call=2, max_new_tokens=200)
    drafts = realizer.draft("wiki", [A], seed=3, n=2)
    asked = sum(realizer.stats.values())
    assert asked > 0  # drafts kept or dropped, each counted by reason: never a traceback
    assert all(d.text and d.subjects == (A.idx,) for d in drafts)
    calls = []
    real_one = EndpointGenerator._one
    monkeypatch.setattr(EndpointGenerator, "_one", lambda self, *a: calls.append(a) or real_one(self, *a))
    again = make_realizer(real_llm_endpoint, cache_dir=tmp_path, articles_per_call=2, max_new_tokens=200)
    assert [d.text for d in again.draft("wiki", [A], seed=3, n=2)] == [d.text for d in drafts]
    assert calls == []  # every answer came from the cache


def test_namer_names_a_line_or_falls_back_and_says_so(real_llm_endpoint, tmp_path):
    from continuousbench.llm import make_generator

    namer = LLMNamer(make_generator(real_llm_endpoint, cache_dir=tmp_path), max_retries=2, real_names=REAL)
    named = namer.name_line(STAGES, set(), set())
    assert line_violation(named, 3, set(), set(), REAL) is None
    assert namer.stats["queries"] >= 1 and namer.stats["queries"] + namer.stats["fallback_offline"] >= 1
