"""Credentials in option values: redacted where the command line is parsed, still sent to the server."""

from __future__ import annotations

import pytest

from continuousbench.credentials import hold, redact, reveal
from continuousbench.llm import GenerationError, make_generator
from continuousbench.news.facts import make_parser

SPEC = "endpoint:https://me:pw-9z@judge.example/v1?key=k3y-a&x=1&api_key=k3y-b#gemini"


def test_redact_cuts_userinfo_and_secret_parameters_and_keeps_the_rest():
    shown = redact(SPEC)
    assert shown == "endpoint:https://REDACTED@judge.example/v1?key=REDACTED&x=1&api_key=REDACTED#gemini"
    assert redact("endpoint:http://127.0.0.1:8000/v1#m") == "endpoint:http://127.0.0.1:8000/v1#m"
    assert redact("max_new_tokens=5") == "max_new_tokens=5" and redact("runs/a") == "runs/a"


def test_the_parser_keeps_only_the_redacted_form_and_requests_use_the_real_one():
    args, model = make_parser().parse(["--input", "in", "--output", "out", "--llm", SPEC, "--judge", SPEC])
    assert model.llm == model.judge == redact(SPEC) and "k3y" not in repr((args, model))
    assert reveal(model.llm) == SPEC and reveal("endpoint:http://x/v1#m") == "endpoint:http://x/v1#m"


def test_a_key_in_the_query_reaches_the_server_after_the_path(fake_openai_server):
    server = fake_openai_server(query_key="k3y-q")
    spec = hold(f"endpoint:{server.url}?key=k3y-q#fake")
    gen = make_generator(spec)
    gen.check()
    assert gen.generate(["hi"]) == ["echo: hi"]
    assert server.paths == ["/v1/models?key=k3y-q", "/v1/chat/completions?key=k3y-q"]
    assert "k3y" not in gen.name + gen.endpoint + gen.progress(1, 1, 0)
    wrong = make_generator(hold(f"endpoint:{server.url}?key=wrong-k3y#fake"), retries=1)
    with pytest.raises(GenerationError, match=r"\?key=REDACTED rejected the API key") as err:
        wrong.check()
    assert "wrong-k3y" not in str(err.value)


def test_user_and_password_in_the_url_are_sent_as_basic_auth(fake_openai_server):
    server = fake_openai_server()
    url = server.url.replace("http://", "http://me:pw-9z@")
    assert make_generator(hold(f"endpoint:{url}#fake")).generate(["hi"]) == ["echo: hi"]
    assert server.headers[0]["authorization"].startswith("Basic ")


def test_the_study_manifest_and_the_resume_hint_show_the_redacted_form():
    from continuousbench.harness.run import resume_hint
    from continuousbench.study.runner import _line

    for line in (_line(["evaluate", "--judge", SPEC]), resume_hint(["--judge", SPEC])):
        assert "k3y" not in line and "pw-9z" not in line and "key=REDACTED" in line


def test_only_model_specs_are_held_a_data_url_is_used_as_given():
    signed = "https://data.example/c.parquet?sig=abc&x=1"
    assert hold(signed) == signed and redact(signed) == "https://data.example/c.parquet?sig=REDACTED&x=1"
