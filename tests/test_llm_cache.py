"""The one answer cache around any paid-for backend (a local model here; the endpoint in
tests/test_llm_endpoint.py)."""

from __future__ import annotations

from continuousbench.llm import CUT, OfflineGenerator, make_generator
from continuousbench.llm.cache import Cached


def test_a_local_model_is_asked_only_for_what_the_cache_lacks(tiny_model_dir, tmp_path):
    gen = make_generator(f"transformers:{tiny_model_dir}", cache_dir=tmp_path)
    assert isinstance(gen, Cached) and gen.name == f"transformers:{tiny_model_dir}"
    asked: list[list[str]] = []
    generate = gen.backend.generate
    gen.backend.generate = lambda prompts, **s: asked.append(list(prompts)) or generate(prompts, **s)
    first = gen.generate(["a b", "c d"], max_new_tokens=3)
    again = make_generator(f"transformers:{tiny_model_dir}", cache_dir=tmp_path)
    assert again.generate(["a b", "c d"], max_new_tokens=3) == first and again.stats["cached"] == 2
    gen.generate(["c d", "e f"], max_new_tokens=3)
    assert asked == [["a b", "c d"], ["e f"]]  # the cached prompt was not asked again


def test_a_cut_answer_is_kept_as_truncated_and_offline_functions_are_not_cached(tmp_path, monkeypatch):
    from continuousbench import llm

    calls: list[str] = []
    monkeypatch.setitem(llm.OFFLINE, "cut", lambda prompt, **s: calls.append(prompt) or CUT)
    assert isinstance(make_generator("offline:cut", cache_dir=tmp_path), OfflineGenerator)  # computed, free
    cached = Cached(make_generator("offline:cut"), tmp_path)
    assert cached.generate(["x"]) == [""] and isinstance(cached.generate(["x"])[0], type(CUT))
    assert calls == ["x"] and cached.stats["dropped_truncated"] == 1  # the second answer came from the cache
