"""The endpoint layer and `synthesize --backend completions:` against a real model behind a real server."""

from __future__ import annotations

import pytest

from continuousbench.llm import GenerationError, make_generator

pytestmark = pytest.mark.real_llm


def test_real_answers_are_cached_and_cut_answers_are_dropped_uncached(real_llm_endpoint, tmp_path):
    gen = make_generator(real_llm_endpoint, cache_dir=tmp_path)
    gen.check()
    schema = {"type": "array", "items": {"type": "string"}}
    first = gen.generate(["Name two colours as a JSON list of strings."], max_new_tokens=48, schema=schema)
    assert first[0].strip() and gen.stats["answered"] == 1  # transformers serve ignores response_format
    again = gen.generate(["Name two colours as a JSON list of strings."], max_new_tokens=48, schema=schema)
    assert again == first
    assert gen.stats["cached"] == 1
    cut = gen.generate(["Write a long story about a dragon."], max_new_tokens=2, schema={})  # 2, 4: cut
    assert cut == [""] and gen.stats["dropped_truncated"] == 1
    assert gen.generate(["Write a long story about a dragon."], max_new_tokens=2, schema={}) == [""]
    assert gen.stats["dropped_truncated"] == 2 and gen.stats["answered"] == 1  # not asked again
    gen.close()


def test_a_model_the_server_cannot_load_is_one_line_with_its_message(real_llm_endpoint):
    url = real_llm_endpoint.split(":", 1)[1].split("#")[0]
    gen = make_generator(f"endpoint:{url}#no-such/model", retries=1)
    with pytest.raises(GenerationError) as err:
        gen.check()
    assert "\n" not in str(err.value) and url in str(err.value) and "HTTP" in str(err.value)


def test_synthesize_through_a_completions_endpoint(real_llm_server, tmp_path, invoke):
    import pyarrow.parquet as pq

    _, url, model = real_llm_server
    args = [
        "synthesize",
        "--generator",
        model,
        "--backend",
        f"completions:{url}#{model}",
        "--num_samples",
        "3",
        "--max_new_tokens",
        "12",
        "--temperature",
        "0.8",
        "--seed",
        "1",
        "--output_dir",
        tmp_path / "s",
    ]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    texts = pq.read_table(next((tmp_path / "s").rglob("*.parquet"))).column("text").to_pylist()
    assert 1 <= len(texts) <= 3 and all(t.strip() for t in texts)  # (the server may ignore the seed)
