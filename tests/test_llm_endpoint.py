"""The endpoint backend against a real HTTP server on 127.0.0.1: concurrency, retries, cache, errors."""

from __future__ import annotations

import time

import pytest

from continuousbench.fake_endpoint import prompt_of
from continuousbench.llm import GenerationError, make_generator
from continuousbench.llm.endpoint import EndpointGenerator


def test_answers_come_back_in_prompt_order(fake_openai_server):
    server = fake_openai_server(reply=lambda body: prompt_of(body).upper(), latency=0.01)
    gen = make_generator(f"endpoint:{server.url}#fake", max_in_flight=8)
    prompts = [f"prompt {i}" for i in range(40)]
    assert gen.generate(prompts, max_new_tokens=5) == [p.upper() for p in prompts]
    assert {r["model"] for r in server.requests} == {"fake"} and server.requests[0]["max_tokens"] == 5


def test_requests_overlap_up_to_max_in_flight(fake_openai_server):
    server = fake_openai_server(latency=0.05)
    prompts = [f"p{i}" for i in range(32)]
    timings = {}
    for in_flight in (1, 16):
        gen = EndpointGenerator(server.url, "fake", max_in_flight=in_flight)
        start = time.perf_counter()
        gen.generate(prompts)
        timings[in_flight] = time.perf_counter() - start
    assert timings[1] >= 32 * 0.05
    assert timings[16] < timings[1] / 4  # 2 rounds of 50 ms instead of 32


def test_transient_failures_are_retried(fake_openai_server):
    server = fake_openai_server(fail_first=2, fail_status=503)
    gen = EndpointGenerator(server.url, "fake", max_in_flight=1, retries=3, backoff=0.0)
    assert gen.generate(["hello"]) == ["echo: hello"]
    assert len(server.requests) == 3


def test_client_errors_are_not_retried_and_name_the_status(fake_openai_server, monkeypatch):
    monkeypatch.setenv("CONTINUOUSBENCH_API_KEY", "sk-secret-value")
    server = fake_openai_server(api_key="another-key")
    gen = EndpointGenerator(server.url, "fake", retries=4, backoff=0.0)
    with pytest.raises(GenerationError, match="HTTP 401") as err:
        gen.generate(["hello"])
    assert len(server.requests) == 1 and "sk-secret-value" not in str(err.value)
    assert server.headers[0]["authorization"] == "Bearer sk-secret-value"  # sent only as a header


def test_malformed_and_dead_endpoints_are_one_line(fake_openai_server):
    garbage = fake_openai_server(garbage=True)
    with pytest.raises(GenerationError, match=r"did not answer after 2 tries \(a malformed response\)"):
        EndpointGenerator(garbage.url, "fake", retries=2, backoff=0.0).generate(["x"])
    dead = EndpointGenerator("http://127.0.0.1:9/v1", "fake", retries=1, backoff=0.0, timeout=2.0)
    with pytest.raises(GenerationError, match="does not answer") as err:
        dead.check()
    assert "\n" not in str(err.value) and "$CONTINUOUSBENCH_API_KEY" in str(err.value)


def test_check_passes_on_a_live_server(fake_openai_server):
    server = fake_openai_server()
    EndpointGenerator(server.url, "fake").check()
    assert server.requests == [{}]  # only GET /models, no generation paid for


def test_cache_resumes_without_paying_twice(fake_openai_server, tmp_path):
    server = fake_openai_server(reply=lambda body: f"{prompt_of(body)}#{body.get('seed')}")
    gen = make_generator(f"completions:{server.url}#fake", cache_dir=tmp_path)
    first = gen.generate(["", "", "a"], temperature=1.0, seed=10)
    assert first == ["#10", "#11", "a#12"]  # repeats of a prompt are distinct samples (seed + index)
    again = make_generator(f"completions:{server.url}#fake", cache_dir=tmp_path)
    assert again.generate(["", "", "a"], temperature=1.0, seed=10) == first
    assert len(server.requests) == 3 and "prompt" in server.requests[0]
    other = again.generate(["a"], temperature=0.5, seed=10)  # other sampling, other key
    assert other == ["a#10"] and len(server.requests) == 4


def test_works_with_the_hub_offline(fake_openai_server, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    server = fake_openai_server()
    assert make_generator(f"endpoint:{server.url}#fake").generate(["ping"]) == ["echo: ping"]


def test_bad_specs_are_refused():
    with pytest.raises(ValueError, match="completions:<url>"):
        make_generator("vllm:http://x")
    with pytest.raises(ValueError, match="max_in_flight"):
        make_generator("endpoint:http://127.0.0.1:9/v1", max_in_flight=0)
