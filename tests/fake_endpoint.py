"""A local OpenAI-compatible HTTP server for tests and benchmarks (no model: a Python function answers).

    with FakeOpenAIServer(reply=lambda body: "42", latency=0.05) as server:
        make_generator(f"endpoint:{server.url}#fake").generate(["What is six times seven?"])

It speaks just enough of the API (``GET /models``, ``POST /chat/completions``, ``POST /completions``)
for :class:`continuousbench.llm.endpoint.EndpointGenerator`, answers each request on its own thread (so
latency overlaps as on a real server), and can fail on purpose: the first ``fail_first`` requests
get ``fail_status``, ``garbage=True`` returns bodies that are not the API's JSON, ``finish(body)`` names
each answer's finish_reason ("length": cut at its budget), ``drip`` sends the body one byte every
``drip`` seconds (a stalled server), ``refuse_forms`` answers ``refuse_status`` (HTTP 500, naming the
response_format, as llama-cpp-python does to ``json_schema``; vLLM answers 400) to those response_format
types, ``models`` is what ``GET /models`` lists and ``served_as`` the ``model`` field of each answer;
``query_key`` is a key the server wants in the URL (``?key=...``, as Gemini's API takes it), and ``paths``
records each request's path and query. A request with ``"stream": true`` gets server-sent events, one
per word of the answer; with ``step`` seconds of computing per word and ``serial=True`` the server
computes one answer at a time, as ``transformers serve`` does: a streamed answer whose client has gone is
cancelled at its next word (``cancelled`` counts them), a non-streamed one is computed to its end;
``streams=False`` answers JSON even to a request for a stream (a server that ignores ``stream``).
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def prompt_of(body: dict[str, Any]) -> str:
    """The prompt text of a chat or completions request body."""
    if "messages" in body:
        return "\n".join(m.get("content", "") for m in body["messages"])
    return body.get("prompt", "")


def echo(body: dict[str, Any]) -> str:
    return f"echo: {prompt_of(body)[-60:]}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default 5 drops bursts of connections (the client retries after 1 s)

    def handle_error(self, request, client_address) -> None:
        """A client that hung up (a call that stopped shuts its connections) is not the server's error;
        anything else is printed as before."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    """Context manager running the server on 127.0.0.1 (a free port); ``url`` ends in ``/v1``."""

    def __init__(
        self,
        reply: Callable[[dict[str, Any]], str] = echo,
        *,
        latency: float = 0.0,
        fail_first: int = 0,
        fail_status: int = 503,
        garbage: bool = False,
        api_key: str | None = None,
        finish: Callable[[dict[str, Any]], str] = lambda body: "stop",
        drip: float = 0.0,
        refuse_forms: tuple[str, ...] = (),
        models: tuple[str, ...] = ("fake",),
        refuse_status: int = 500,
        served_as: str | None = None,
        query_key: str | None = None,
        step: float = 0.0,
        serial: bool = False,
        streams: bool = True,
    ):
        self.step, self.cancelled, self.streams = step, 0, streams
        self._compute = threading.Lock() if serial else contextlib.nullcontext()
        self.query_key, self.paths = query_key, []
        self.refuse_status, self.served_as = refuse_status, served_as
        self.finish, self.drip, self.refuse_forms, self.models = finish, drip, refuse_forms, models
        self.fail_after: int | None = None  # set by a test: the requests after this many fail (server down)
        self.reply, self.latency, self.garbage = reply, latency, garbage
        self.fail_first, self.fail_status, self.api_key = fail_first, fail_status, api_key
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        from urllib.parse import parse_qs, urlsplit

        with self._lock:
            self.paths.append(path)
            self.requests.append(body)
            self.headers.append(headers)
            failing = len(self.requests) <= self.fail_first
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "invalid API key"}}
        path, query = urlsplit(path).path, parse_qs(urlsplit(path).query)
        if self.query_key is not None and query.get("key") != [self.query_key]:
            return 401, {"error": {"message": "API key not valid"}}
        if path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
        time.sleep(self.latency)
        if failing or (self.fail_after is not None and len(self.requests) > self.fail_after):
            return self.fail_status, {"error": {"message": "try again"}}
        if (body.get("response_format") or {}).get("type") in self.refuse_forms:
            return self.refuse_status, {"error": {"message": "response_format not supported"}}
        if self.garbage:
            return 200, "<html>not the API</html>"
        text = self.reply(body)
        if path.endswith("/chat/completions"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": self.finish(body)}
        elif path.endswith("/completions"):
            choice = {"index": 0, "text": text, "finish_reason": self.finish(body)}
        else:
            return 404, {"error": {"message": f"no route {path}"}}
        served = self.served_as or body.get("model")
        return 200, {"object": "chat.completion", "model": served, "choices": [choice]}

    @staticmethod
    def events(payload: dict[str, Any]) -> list[str]:
        """The answer as server-sent events: one chunk per word, then the finish reason, then [DONE]."""
        choice = payload["choices"][0]
        chat = "message" in choice
        text = choice["message"]["content"] if chat else choice["text"]
        words = [w + " " for w in text.split(" ")] if text else []
        words[-1:] = [words[-1][:-1]] if words else []

        def chunk(piece: str, finish: str | None) -> str:
            part = {"delta": {"content": piece}} if chat else {"text": piece}
            event = {
                "object": "chunk",
                "model": payload["model"],
                "choices": [{"index": 0, **part, "finish_reason": finish}],
            }
            return f"data: {json.dumps(event)}\n\n"

        return [chunk(w, None) for w in words] + [chunk("", choice["finish_reason"]), "data: [DONE]\n\n"]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, payload: Any) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not server.drip:
                    self.wfile.write(data)
                for byte in data if server.drip else b"":
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return
                    time.sleep(server.drip)

            def _headers(self) -> dict[str, str]:
                return {k.lower(): v for k, v in self.headers.items()}

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                self._send(*server._answer(self.path, {}, self._headers()))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload = server._answer(self.path, body, self._headers())
                if status != 200 or not isinstance(payload, dict):
                    return self._send(status, payload)
                events = server.events(payload)
                stream = body.get("stream") and server.streams
                with server._compute:
                    if not stream or server.drip:  # computed to its end, then sent
                        time.sleep(server.step * (len(events) - 2))
                        return self._send(status, "".join(events) if stream else payload)
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for event in events:
                        time.sleep(server.step if event.startswith('data: {"object"') else 0.0)
                        try:
                            self.wfile.write(event.encode())
                            self.wfile.flush()
                        except OSError:  # the client has gone: the generation is cancelled
                            server.cancelled += 1
                            return None
                return None

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        return Handler
