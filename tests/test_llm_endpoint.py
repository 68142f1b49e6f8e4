"""The endpoint backend against a real HTTP server on 127.0.0.1: concurrency, retries, cache, errors."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from fake_endpoint import prompt_of

from continuousbench.llm import GenerationError, make_generator
from continuousbench.llm.cache import Cached
from continuousbench.llm.endpoint import EndpointGenerator


def test_answers_come_back_in_prompt_order(fake_openai_server):
    server = fake_openai_server(reply=lambda body: prompt_of(body).upper(), latency=0.01)
    gen = make_generator(f"endpoint:{server.url}#fake", max_in_flight=8)
    prompts = [f"prompt {i}" for i in range(40)]
    assert gen.generate(prompts, max_new_tokens=5) == [p.upper() for p in prompts]
    assert {r["model"] for r in server.requests} == {"fake"} and server.requests[0]["max_tokens"] == 5


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
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
    dead = EndpointGenerator("http://127.0.0.1:9/v1", "fake", retries=1, backoff=0.0, request_timeout=2.0)
    with pytest.raises(GenerationError, match="does not answer") as err:
        dead.check()
    assert "\n" not in str(err.value) and "check the URL" in str(err.value)


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


def test_server_errors_show_the_servers_own_message(fake_openai_server):
    server = fake_openai_server(fail_first=5, fail_status=500)
    with pytest.raises(GenerationError, match=r"after 2 tries \(HTTP 500: try again\)"):
        EndpointGenerator(server.url, "fake", retries=2, backoff=0.0).generate(["x"])


def test_truncated_answers_get_a_larger_budget_then_are_dropped_uncached(fake_openai_server, tmp_path):
    server = fake_openai_server(finish=lambda body: "length" if body["max_tokens"] < 20 else "stop")
    gen = Cached(EndpointGenerator(server.url, "fake"), tmp_path)
    assert gen.generate(["a"], max_new_tokens=10, schema={}) == ["echo: a"]  # asked again with 20 tokens
    assert [r["max_tokens"] for r in server.requests] == [10, 20]
    assert gen.generate(["b"], max_new_tokens=10) == ["echo: b"]  # free text (no schema) may stop anywhere
    cut = fake_openai_server(finish=lambda body: "length")
    gen = Cached(EndpointGenerator(cut.url, "fake"), tmp_path / "cut")
    assert gen.generate(["a", "b"], max_new_tokens=10, schema={}) == ["", ""]
    assert gen.stats["dropped_truncated"] == 2 and "truncated 2" in gen.progress(2, 2, 0)
    again = Cached(EndpointGenerator(cut.url, "fake"), tmp_path / "cut")
    assert again.generate(["a"], max_new_tokens=10, schema={}) == [""] and len(cut.requests) == 4  # once
    assert again.stats["dropped_truncated"] == 1
    assert again.generate(["a"], max_new_tokens=40, schema={}) == [""] and len(cut.requests) == 6  # new key


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_a_stalled_answer_is_abandoned_at_the_request_timeout(fake_openai_server):
    server = fake_openai_server(drip=0.2)  # ~200 bytes, one every 0.2 s: 40 s in all
    gen = EndpointGenerator(server.url, "fake", retries=1, request_timeout=1.0)
    start = time.perf_counter()
    with pytest.raises(GenerationError, match="stalled"):
        gen.generate(["x"])
    assert time.perf_counter() - start < 5


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_structured_output_form_is_chosen_per_server(fake_openai_server):
    schema = {"type": "array", "items": {"type": "string"}}
    openai_like = fake_openai_server()
    EndpointGenerator(openai_like.url, "fake").generate(["x"], schema=schema)
    assert openai_like.requests[-1]["response_format"]["type"] == "json_schema"
    llama_cpp = fake_openai_server(refuse_forms=("json_schema",))
    gen = EndpointGenerator(llama_cpp.url, "fake", retries=1)
    assert gen.generate(["x", "y"], schema=schema) == ["echo: x", "echo: y"]
    assert llama_cpp.requests[-1]["response_format"] == {"type": "json_object", "schema": schema}
    neither = fake_openai_server(refuse_forms=("json_schema", "json_object"))
    gen = EndpointGenerator(neither.url, "fake", retries=1, max_in_flight=1)
    assert gen.generate(["x", "y"], schema=schema) == ["echo: x", "echo: y"]  # plain text, parsed later
    assert "response_format" not in neither.requests[-1] and len(neither.requests) == 4


def test_the_model_must_be_one_the_server_serves(fake_openai_server):
    server = fake_openai_server(models=("qwen", "llama"))
    with pytest.raises(GenerationError, match="does not serve model 'fake'; it serves qwen, llama"):
        EndpointGenerator(server.url, "fake").check()
    EndpointGenerator(server.url, "qwen").check()
    EndpointGenerator(server.url, "qwen").check()  # one probe per process and endpoint
    assert len(server.requests) == 2


def test_progress_lines_say_done_in_flight_and_dropped(fake_openai_server, capsys):
    server = fake_openai_server(latency=0.3, finish=lambda body: "length")
    gen = EndpointGenerator(server.url, "fake", max_in_flight=2, progress_every=0.0)
    assert gen.generate([f"p{i}" for i in range(4)], schema={}) == [""] * 4
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("endpoint:fake: ") for line in lines)
    assert any("in flight" in line and "/4 answers" in line for line in lines)
    assert gen.progress(4, 4, 0) == "endpoint:fake: 4/4 answers, 0 in flight, dropped: truncated 4"


def test_the_judge_asks_once_through_the_one_retry_layer(fake_openai_server, tmp_path, no_backoff):
    from continuousbench.news.models import ModelArguments, judge

    server = fake_openai_server(fail_first=100, fail_status=503)
    with pytest.raises(GenerationError, match="judge 'endpoint:.*' did not answer"):
        judge(f"endpoint:{server.url}#fake", tmp_path, ModelArguments(max_in_flight=1))  # calibration asks
    tries = Counter(prompt_of(r) for r in server.requests)
    assert max(tries.values()) == 4  # 4 tries of a prompt, not 3 judge tries x 4
    assert not any(tmp_path.iterdir())  # nothing answered, nothing cached: the one cache opens at an answer


SCHEMA = {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize("busy", [503, 429, 500])
def test_a_busy_server_keeps_structured_output(fake_openai_server, busy):
    server = fake_openai_server(fail_first=2, fail_status=busy)  # "try again": names no schema
    gen = EndpointGenerator(server.url, "fake", max_in_flight=1, backoff=0.0)
    assert gen.generate(["a", "b", "c"], schema=SCHEMA) == ["echo: a", "echo: b", "echo: c"]
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema"] * 5
    assert gen.structured_output == "json_schema" and gen.stats["retried_http_" + str(busy)] == 2


def test_a_refusal_moves_to_the_next_form_once_per_endpoint(fake_openai_server):
    vllm_like = fake_openai_server(refuse_forms=("json_schema",), refuse_status=400)
    gen = EndpointGenerator(vllm_like.url, "fake", max_in_flight=1, retries=1)
    assert gen.generate(["a", "b"], schema=SCHEMA) == ["echo: a", "echo: b"]
    assert [r["response_format"]["type"] for r in vllm_like.requests] == ["json_schema"] + ["json_object"] * 2
    again = EndpointGenerator(vllm_like.url, "fake", retries=1)  # the same endpoint: settled, not asked again
    assert again.generate(["c"], schema=SCHEMA) == ["echo: c"] and again.structured_output == "json_object"
    assert vllm_like.requests[-1]["response_format"]["type"] == "json_object" and len(vllm_like.requests) == 4


def test_a_client_error_after_the_form_is_settled_is_an_error_not_a_downgrade(fake_openai_server):
    server = fake_openai_server(reply=lambda body: "ok")
    gen = EndpointGenerator(server.url, "fake", retries=2, backoff=0.0)
    gen.generate(["a"], schema=SCHEMA)
    server.fail_after, server.fail_status = 1, 400  # e.g. a prompt longer than the model's context
    with pytest.raises(GenerationError, match="HTTP 400"):
        gen.generate(["b"], schema=SCHEMA)
    assert gen.structured_output == "json_schema" and len(server.requests) == 2


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_an_abandoned_answer_is_cancelled_not_queued_behind(fake_openai_server):
    """A one-at-a-time server that would keep computing an abandoned answer: the closed stream stops it,
    so the resend is computed at once (before: it queued behind the abandoned one and timed out too)."""
    lengths, shown = iter([40, 10, 4, 4]), []  # the first answer runs long (40 words: 2 s), the others not

    def reply(body):
        shown.append(gen.progress(0, 3, 1))  # what the progress line says while the server computes
        return " ".join(["word"] * next(lengths))

    server = fake_openai_server(reply=reply, step=0.05, serial=True)
    gen = EndpointGenerator(server.url, "fake", max_in_flight=1, retries=2, backoff=0.0, request_timeout=1.0)
    assert gen.generate(["slow", "a", "b"]) == [" ".join(["word"] * n) for n in (10, 4, 4)]
    assert all(r["stream"] for r in server.requests) and server.cancelled == 1
    assert gen.stats["retried_timeout"] == 1 and len(server.requests) == 4
    assert shown[1] == "endpoint:fake: 0/3 answers, 1 in flight, retrying 1 (timeout), dropped: none"
    assert "retrying" not in shown[2]


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_no_resend_to_a_server_still_computing_what_it_cannot_cancel(fake_openai_server):
    """A one-at-a-time server that ignores ``stream`` keeps computing the abandoned answer: the resend
    waits for a one-token probe to come back (the server is free), then gets the whole timeout."""
    lengths = iter([4, 40, 10])  # "a" answers quickly (the client learns the server does not stream),
    # "slow" first runs long (2 s) and is abandoned; its resend needs 0.5 s

    def reply(body):
        return "OK" if body["max_tokens"] == 1 else " ".join(["word"] * next(lengths))

    server = fake_openai_server(reply=reply, step=0.05, serial=True, streams=False)
    gen = EndpointGenerator(server.url, "fake", max_in_flight=1, retries=2, backoff=0.0, request_timeout=1.0)
    assert gen.generate(["a", "slow"]) == [" ".join(["word"] * n) for n in (4, 10)]
    assert gen.streams is False and gen.stats["probed_busy_server"] == 1
    assert [r["max_tokens"] for r in server.requests] == [256, 256, 1, 256]  # the probe before the resend


def test_the_first_failure_stops_the_call_at_once(fake_openai_server):
    """One request refused (HTTP 400, not retried) while the others wait on a server that does not answer
    them: the call fails within seconds instead of waiting out their timeouts and retries; the next call
    runs on a fresh client."""
    import threading

    hang = threading.Event()

    def reply(body) -> str:
        return "late" if hang.wait(120) else ""

    server = fake_openai_server(fail_first=1, fail_status=400, reply=reply)
    gen = EndpointGenerator(server.url, "fake", max_in_flight=4, request_timeout=60, retries=4, backoff=0.0)
    start = time.monotonic()
    with pytest.raises(GenerationError, match=r"refused the request \(HTTP 400"):
        gen.generate([f"p{i}" for i in range(8)])
    assert time.monotonic() - start < 5
    assert len(server.requests) <= 4  # at most the four in flight: the queued ones were never sent
    hang.set()
    assert gen.generate(["again"]) == ["late"]


def test_ctrl_c_returns_within_seconds_from_a_server_that_never_answers(fake_openai_server):
    """SIGINT to a process whose requests all wait on a silent server (600 s timeouts, 4 tries each): it
    exits within 5 s, the reads blocked on the server woken by their sockets' shutdown."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    server = fake_openai_server(latency=3600)
    script = (
        "from continuousbench.llm import make_generator\n"
        f"gen = make_generator('completions:{server.url}#fake', max_in_flight=4, request_timeout=600)\n"
        "gen.generate(['p'] * 16)\n"
    )
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(server.requests) < 4 and time.monotonic() < deadline:  # four requests in flight
            time.sleep(0.05)
        assert len(server.requests) == 4 and proc.poll() is None
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        elapsed = time.monotonic() - start
    finally:
        proc.kill()
    assert elapsed < 5, f"Ctrl-C took {elapsed:.1f} s"
    assert proc.returncode != 0 and "KeyboardInterrupt" in stderr
