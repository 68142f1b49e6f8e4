"""The OpenAI-compatible backend (``endpoint:`` and ``completions:`` specs of
:func:`continuousbench.llm.make_generator`): plain HTTP, a bounded number of requests in flight, the one
retry layer (backoff), structured output where the server offers it, truncated answers detected, slow
answers abandoned (their streams closed), progress lines while a batch runs, and a call that stops within
moments of its first failure or of Ctrl-C. The answer cache is the one wrapper of
:mod:`continuousbench.llm.cache`, fed answer by answer through :meth:`EndpointGenerator.answer`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sys
import threading
import time
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from continuousbench.credentials import redact
from continuousbench.errors import UserError
from continuousbench.llm import CUT, GenerationError
from continuousbench.llm.cache import Keep

API_KEY_ENV = ("CONTINUOUSBENCH_API_KEY", "HF_TOKEN")


_RETRIABLE = {408, 409, 425, 429, 500, 502, 503, 504}
# Forms of response_format, tried in this order until the server accepts one: OpenAI's (vLLM, OpenAI,
# transformers serve) and llama.cpp's (json_object with the schema beside it; llama-cpp-python answers
# the OpenAI form with HTTP 500). "none": the server refused both; the tolerant parser reads plain text.
SCHEMA_FORMS = ("json_schema", "json_object")
# A refusal of a form: 400/422 before the endpoint accepted one, or a 500 whose message names the schema
# (llama-cpp-python). Any other status (429, 503, a 500 of a loaded server) is retried with the same form.
_NAMES_THE_SCHEMA = re.compile(r"schema|grammar|response_format|json_object|structured", re.IGNORECASE)
# What the process learnt of each endpoint: the models /models lists (one probe per process, URL and
# model) and the structured-output form it settled on (once per URL without credentials and model).
_PROBED: dict[tuple[str, str | None], list[str]] = {}
_SETTLED: dict[tuple[str, str | None], str] = {}


class Truncated(Exception):
    """The answer stopped at its token budget (finish_reason "length")."""


class Stopped(GenerationError):
    """A request given up because another request of its call failed or the call was interrupted."""


def response_format(form: str, schema: dict) -> dict:
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
    return {"type": "json_object", "schema": schema}


def refuses_form(status: int, raw: bytes) -> bool:
    """Whether an error answer to a request with ``response_format`` refuses that form (not a busy server)."""
    return status in (400, 422) or (status == 500 and bool(_NAMES_THE_SCHEMA.search(server_message(raw))))


def read_answer(raw: bytes, api: str) -> tuple[str, str | None, str | None]:
    """(text, finish_reason, model) of an answer: one JSON body, or the server-sent events of a streamed
    one (every server we name streams when asked; one that ignores ``stream`` answers JSON)."""
    if not raw.lstrip().startswith(b"data:"):
        answer = json.loads(raw)
        choice = answer["choices"][0]
        text = choice["message"]["content"] if api == "chat" else choice["text"]
        return text or "", choice.get("finish_reason"), answer.get("model")
    pieces, finish, model = [], None, None
    for line in raw.decode("utf-8").splitlines():
        data = line.removeprefix("data:").strip()
        if not line.startswith("data:") or data == "[DONE]":
            continue
        event = json.loads(data)
        if "error" in event:  # transformers serve reports a failed generation inside the stream
            raise ValueError(server_message(data.encode()))
        model = event.get("model") or model
        for choice in event.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content") if api == "chat" else choice.get("text")
            pieces.append(piece or "")
            finish = choice.get("finish_reason") or finish
    return "".join(pieces), finish, model


def server_message(raw: bytes) -> str:
    """The server's own error message, on one line and short."""
    try:
        body = json.loads(raw)
        error = body.get("error", body) if isinstance(body, dict) else body
        text = error.get("message", error) if isinstance(error, dict) else error
    except ValueError:
        text = raw.decode("utf-8", "replace")
    return " ".join(str(text).split())[:200] or "(empty body)"


@dataclass
class EndpointGenerator:
    """Any OpenAI-compatible server (vLLM, llama.cpp, transformers serve, TGI), called with plain HTTP.

    ``api="chat"`` posts to ``/chat/completions`` (instruction models: facts, judges, rewrites);
    ``api="completions"`` to ``/completions`` (a base model or LoRA adapter continuing raw text: synthesis).

    Up to ``max_in_flight`` requests run at once (small by default: a server that answers one at a time queues
    the rest, and each queued request waits its turn inside its own ``request_timeout``). Each request is
    retried with exponential backoff on connection errors, 429 and 5xx, ``retries`` times in all: the only
    retry layer. An answer taking longer than ``request_timeout`` in total (a stalled server dripping one byte
    every few seconds) is abandoned (its connection closed) and retried. ``schema=`` (a JSON schema) asks for
    structured output in the form this server accepts, negotiated once per endpoint and process (a refusal
    moves to the next form, a busy server is retried with the same one; ``structured_output`` says which
    form was settled, for the stage's stats.json); such an answer must be whole, so one cut at its token
    budget (``finish_reason: length``) is asked again once with twice the budget, then dropped as
    truncated (the empty :data:`CUT` returned, which the answer cache keeps as truncated, never as an
    answer). Free text may stop at its budget.

    Uses ``httpx`` rather than
    ``huggingface_hub.InferenceClient``: an endpoint is not the Hub, so it must work with
    ``HF_HUB_OFFLINE=1``. The key comes from ``$CONTINUOUSBENCH_API_KEY`` (or ``$HF_TOKEN``), is sent only as
    a header and never appears in a message, log or file; a key in ``base_url`` (``?key=``, ``user:pw@``) is
    sent as given and shown redacted (``endpoint``). ``stats`` counts answers, cache hits and drops by
    reason (the answer cache adds its hits, ``cached``); a progress line goes to stderr every
    ``progress_every`` seconds of a batch.

    A call stops at its first failure or interruption (Ctrl-C) instead of waiting out every request in
    flight (up to ``retries`` x ``request_timeout`` each, plus backoff): queued requests are cancelled,
    a stop event ends every retry loop and backoff wait, the sockets of the requests in flight are shut
    down (a read blocked on a silent server returns at once; closing a client does not wake it), and
    the client is closed and replaced by a fresh one for later calls.
    """

    base_url: str
    model: str | None = None
    api: str = "chat"
    max_in_flight: int = 4
    retries: int = 4
    backoff: float = 1.0
    request_timeout: float = 300.0
    connect_timeout: float = 10.0
    name: str = ""
    progress_every: float = 10.0

    def __post_init__(self) -> None:
        if self.api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' or 'completions', got {self.api!r}")
        if self.max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {self.max_in_flight}")
        if self.request_timeout <= 0:
            raise UserError(f"--request_timeout must be > 0 seconds, got {self.request_timeout}")
        self.base_url = self.base_url.rstrip("/")
        self.endpoint = redact(self.base_url)  # what messages, names, cache keys and records show
        self.name = self.name or f"endpoint:{self.model or self.endpoint}"
        self._clients = [self._new_client()]  # the last one is in use; a stop closes and replaces it
        weakref.finalize(self, lambda clients: clients[-1].close(), self._clients)  # even without close()
        self._sockets: weakref.WeakSet = weakref.WeakSet()  # the connections' sockets (see _halt)
        self._forms: list[str] = list(SCHEMA_FORMS)  # shrinks as the server refuses forms
        self._lock = threading.Lock()
        self._retrying: dict[int, str] = {}  # request (thread id) -> why its last try failed
        self.streams: bool | None = None  # whether the server streamed its last answer (None: none yet)
        self._probing = threading.Lock()
        self.answered_by: str | None = None  # the first answer's ``model`` field (the server's own name)
        self.stats: Counter = Counter()

    def _new_client(self):
        import httpx

        api_key = next((os.environ[k] for k in API_KEY_ENV if os.environ.get(k)), None)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        limits = httpx.Limits(
            max_connections=self.max_in_flight, max_keepalive_connections=self.max_in_flight
        )
        timeout = httpx.Timeout(self.request_timeout, connect=min(self.connect_timeout, self.request_timeout))
        return httpx.Client(headers=headers, timeout=timeout, limits=limits, trust_env=False)

    @property
    def _client(self):
        return self._clients[-1]

    def _tracer(self, stop: threading.Event):
        """httpcore's trace hook for a request of a call: keep each new connection's socket, so that
        :meth:`_halt` can wake it; one connected after the call stopped is shut down at once (it is kept
        before the check, and the stop is set before the sockets are shut: one of the two sees the other)."""

        def trace(event: str, info: dict) -> None:
            if event != "connection.connect_tcp.complete":
                return
            sock = info["return_value"].get_extra_info("socket")
            if sock is not None:
                self._sockets.add(sock)
                if stop.is_set():
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

        return trace

    def _halt(self, stop: threading.Event) -> None:
        """Stop every request of a call now: its stop event for the retry loops, the sockets shut down (a
        thread blocked reading a server that never answers wakes with an error), the client closed and a
        fresh one for whatever comes next."""
        stop.set()
        for sock in list(self._sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._clients.append(self._new_client())
        self._clients.pop(0).close()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> EndpointGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _payload(self, prompt: str, sampling: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": sampling.get("max_new_tokens", 256),
            "temperature": sampling.get("temperature", 0.0),
        }
        for ours, theirs in (("top_p", "top_p"), ("top_k", "top_k"), ("seed", "seed"), ("stop", "stop")):
            if sampling.get(ours) is not None:
                body[theirs] = sampling[ours]
        if sampling.get("stop_at_newline"):
            body["stop"] = ["\n"]
        if self.api == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        body["stream"] = True  # an abandoned request's closed stream stops the server's work on it
        return {k: v for k, v in body.items() if v is not None}

    def _fail(self, what: str) -> GenerationError:
        return GenerationError(f"endpoint {self.endpoint} {what}")

    def _stopped(self) -> Stopped:
        return Stopped(f"endpoint {self.endpoint} stopped: another request of the call failed, or Ctrl-C")

    def _url(self, route: str) -> str:
        """``base_url`` with ``/route`` after its path and before its query (``.../v1/models?key=...``)."""
        import httpx

        url = httpx.URL(self.base_url)
        return str(url.copy_with(path=f"{url.path.rstrip('/')}/{route}"))

    @property
    def _key(self) -> tuple[str, str | None]:
        return self.endpoint, self.model

    def _form(self, schema: dict | None) -> str | None:
        """The response_format form to send: the settled one, else the best one not refused yet."""
        if schema is None:
            return None
        form = _SETTLED.get(self._key) or (self._forms[0] if self._forms else "none")
        return None if form == "none" else form

    @property
    def structured_output(self) -> str | None:
        """The form this endpoint settled on (json_schema, json_object, none), None before any schema."""
        return _SETTLED.get(self._key)

    @property
    def fingerprint(self) -> dict[str, Any]:
        """What identifies the server behind the answers: its URL without credentials, the model asked
        for, what ``/models`` listed and the ``model`` field of the first answer."""
        served = _PROBED.get((self.base_url, self.model))
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "served": served,
            "answered_by": self.answered_by,
        }

    def _wait_until_free(self, url: str, stop: threading.Event) -> None:
        """Before resending to a server that does not stream (so closing the connection did not stop its
        work on the abandoned answer): one request for a single token, which a server answering one
        request at a time answers only once it is done with the abandoned one, so the resend does not
        queue behind it. One probe at a time; its failure or timeout only ends the wait."""
        import httpx

        with self._probing:
            self.stats["probed_busy_server"] += 1
            with contextlib.suppress(httpx.HTTPError, TimeoutError):
                self._post(url, self._payload("OK", {"max_new_tokens": 1}) | {"stream": False}, stop)

    def _retry(self, why: str) -> None:
        """Note that this request's last try failed for ``why`` and is sent again (progress line, stats)."""
        self._retrying[threading.get_ident()] = why
        self.stats[f"retried_{why.replace(' ', '_').lower()}"] += 1

    def _post(self, url: str, body: dict[str, Any], stop: threading.Event) -> tuple[int, bytes]:
        """(status, body) of one POST whose whole answer must arrive within ``request_timeout``: httpx's
        read timeout restarts at every byte, so a server dripping one byte at a time needs this deadline.
        Past it the connection is closed: a server streaming the answer stops generating it (vLLM,
        llama.cpp, transformers serve), so the retry does not queue behind an answer nobody reads."""
        deadline = time.monotonic() + self.request_timeout
        chunks, traced = [], {"trace": self._tracer(stop)}
        with self._client.stream("POST", url, json=body, extensions=traced) as response:
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"answer still arriving after {self.request_timeout:g} s (stalled)")
        return response.status_code, b"".join(chunks)

    def _one(self, prompt: str, sampling: dict[str, Any], stop: threading.Event | None = None) -> str:
        """One answer; raises :class:`Truncated` when it stays cut at its budget, else GenerationError
        (also as soon as ``stop`` is set: the call it belongs to failed or was interrupted)."""
        stop = stop or threading.Event()
        try:
            return self._ask(prompt, sampling, stop)
        except GenerationError:
            stop.set()  # before this worker takes a queued prompt: nothing more is sent
            raise
        finally:
            self._retrying.pop(threading.get_ident(), None)

    def _ask(self, prompt: str, sampling: dict[str, Any], stop: threading.Event) -> str:
        import httpx

        url = self._url("chat/completions" if self.api == "chat" else "completions")
        schema = sampling.get("schema")
        budget, grown = sampling.get("max_new_tokens", 256), False
        attempt, last, why = 0, "no answer", ""
        while attempt < self.retries:
            if stop.is_set():  # another request of the call failed, or the call was interrupted
                raise self._stopped()
            body = self._payload(prompt, sampling | {"max_new_tokens": budget})
            form = self._form(schema)
            if form is not None:
                body["response_format"] = response_format(form, schema)
            if attempt:
                self._retry(why)
                if why == "timeout" and self.streams is False:  # the abandoned answer is still computed
                    self._wait_until_free(url, stop)
                if stop.wait(self.backoff * 2 ** (attempt - 1)):
                    continue  # stopped during the backoff: the check above ends the loop
            attempt += 1
            try:
                status, response = self._post(url, body, stop)
            except (httpx.HTTPError, TimeoutError) as err:  # refused, reset, timed out, stalled: retried
                last = str(err) if isinstance(err, TimeoutError) else type(err).__name__
                why = "timeout" if isinstance(err, (TimeoutError, httpx.TimeoutException)) else "connection"
                continue
            # a refusal of a form not (yet) settled: the next form, not a retry (another request may have
            # settled one meanwhile: then that one)
            if form is not None and _SETTLED.get(self._key) != form and refuses_form(status, response):
                with self._lock:
                    if self._forms and self._forms[0] == form:
                        self._forms.pop(0)
                        if not self._forms:
                            _SETTLED.setdefault(self._key, "none")
                self.stats[f"refused_{form}"] += 1
                attempt -= 1
                continue
            if status in _RETRIABLE:
                last, why = f"HTTP {status}: {server_message(response)}", f"HTTP {status}"
                continue
            if status >= 400:
                raise self._fail(f"refused the request (HTTP {status}: {server_message(response)})")
            try:
                text, finish, served = read_answer(response, self.api)
                self.streams = response.lstrip().startswith(b"data:")
            except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                last, why = "a malformed response", "malformed"
                continue
            if form is not None:
                _SETTLED.setdefault(self._key, form)  # accepted: settled for this endpoint and process
            if self.answered_by is None and isinstance(served, str):
                self.answered_by = served
            if finish == "length" and schema is not None:  # free text may stop anywhere
                if grown:
                    raise Truncated(budget)
                budget, grown = budget * 2, True  # once, with twice the budget
                attempt -= 1
                continue
            return text or ""
        if stop.is_set():  # the last try was cut short by the stop
            raise self._stopped()
        raise self._fail(f"did not answer after {self.retries} tries ({last})")

    @property
    def cache_identity(self) -> dict[str, Any]:
        """What the answer cache keys this backend's answers on (the URL without credentials)."""
        return {"endpoint": self.endpoint, "model": self.model, "api": self.api}

    def progress(self, done: int, total: int, in_flight: int) -> str:
        dropped = ", ".join(
            f"{k.removeprefix('dropped_')} {v}"
            for k, v in self.stats.items()
            if k.startswith("dropped_") and v
        )
        why = Counter(list(self._retrying.values()))
        retrying = ", ".join(f"{n} ({w})" for w, n in why.most_common())
        return (
            f"{self.name}: {done}/{total} answers, {in_flight} in flight, "
            f"{f'retrying {retrying}, ' if retrying else ''}dropped: {dropped or 'none'}"
        )

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        """One answer per prompt, in order (:data:`CUT`, an empty text, for an answer dropped as truncated).
        With a ``seed``, request ``i`` is sent seed + i, so repeated prompts give different samples."""
        answers: dict[int, str] = {}
        self.answer(prompts, range(len(prompts)), sampling, lambda done: answers.update(done))
        return [answers[i] for i in range(len(prompts))]

    def answer(
        self, prompts: Sequence[str], indices: Sequence[int], sampling: dict[str, Any], keep: Keep
    ) -> None:
        """Answer ``prompts[i]`` for each ``i`` of ``indices`` (``max_in_flight`` at a time), handing each
        finished ``(i, text)`` to ``keep`` as it arrives (the answer cache keeps it at once, so an
        interrupted call loses nothing it paid for); the first failure stops the call."""
        from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

        seed = sampling.get("seed")
        shown, total = time.monotonic(), len(prompts)
        stop, pool = threading.Event(), ThreadPoolExecutor(self.max_in_flight)
        seeded = (lambda i: sampling) if seed is None else (lambda i: sampling | {"seed": seed + i})
        futures = {pool.submit(self._one, prompts[i], seeded(i), stop): i for i in indices}
        pending, stopped = set(futures), False
        try:
            while pending:
                done, pending = wait(pending, timeout=1.0, return_when=FIRST_EXCEPTION)
                finished = []
                for f in done:
                    if isinstance(f.exception(), Truncated):
                        self.stats["dropped_truncated"] += 1
                        finished.append((futures[f], CUT))
                    elif f.exception() is None:
                        finished.append((futures[f], f.result()))
                        self.stats["answered"] += 1
                keep(finished)
                failed = [f.exception() for f in done if not isinstance(f.exception(), Truncated | None)]
                real = [e for e in failed if not isinstance(e, Stopped)]
                if real or (failed and not pending):  # the failure itself, not a request it stopped (a
                    raise (real or failed)[0]  # request may stop between the stop and its failure's report)
                if pending and time.monotonic() - shown >= self.progress_every:
                    shown = time.monotonic()
                    running = min(len(pending), self.max_in_flight)
                    print(self.progress(total - len(pending), total, running), file=sys.stderr, flush=True)
        except BaseException:  # the first failure, or Ctrl-C: stop now, not after every retry in flight
            stopped = True
            for future in pending:
                future.cancel()
            self._halt(stop)
            raise
        finally:
            pool.shutdown(wait=not stopped, cancel_futures=True)

    def check(self) -> None:
        """Fail in one line now if the endpoint does not answer or does not serve ``#model`` (before
        hours of other work); once per process and endpoint."""
        import httpx

        if (self.base_url, self.model) in _PROBED:  # the URL as given: another key is probed again
            return
        try:
            response = self._client.get(self._url("models"), timeout=min(self.request_timeout, 10.0))
        except httpx.HTTPError as err:
            raise self._fail(
                f"does not answer ({type(err).__name__}); check the URL and that the server is up"
            ) from None
        if response.status_code in (401, 403):
            raise self._fail(
                f"rejected the API key (HTTP {response.status_code}); set ${API_KEY_ENV[0]} "
                "or give the key the server expects in the URL"
            )
        served = []
        if response.status_code < 400:
            try:
                served = [m["id"] for m in response.json().get("data", [])]
            except (ValueError, KeyError, TypeError, AttributeError):
                served = []
        if served and self.model and self.model not in served:
            raise self._fail(
                f"does not serve model {self.model!r}; it serves {', '.join(served[:5])}: name one after '#'"
            )
        if response.status_code >= 400 or not served:  # no usable /models: one tiny request decides
            with contextlib.suppress(Truncated):  # one token asked: a cut answer is an answer
                self._one("Say OK.", {"max_new_tokens": 1})
        _PROBED[(self.base_url, self.model)] = served
