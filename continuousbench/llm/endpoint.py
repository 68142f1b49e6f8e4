"""The OpenAI-compatible backend: plain HTTP with a bounded number of requests in flight, retries and an
on-disk answer cache (``endpoint:`` and ``completions:`` specs of :func:`continuousbench.llm.make_generator`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuousbench.llm import GenerationError

API_KEY_ENV = ("CONTINUOUSBENCH_API_KEY", "HF_TOKEN")


class ResponseCache:
    """Answers already paid for, on disk: a killed stage resumes without asking the endpoint again.

    SQLite (one file, safe across processes); keys are sha256 of (model, api, prompt, sampling, n-th
    repeat of that prompt in the call), so sampling the same prompt 1,000 times caches 1,000 answers.
    """

    def __init__(self, folder: Path | str):
        self.path = Path(folder).expanduser() / "llm-cache.sqlite3"
        self._db = None  # opened at the first answer: a run that never got one leaves no cache file
        self._lock = threading.Lock()

    def _open(self, create: bool):
        import sqlite3

        with self._lock:
            if self._db is None and (create or self.path.is_file()):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
                db.commit()
                self._db = db
        return self._db

    @staticmethod
    def key(**parts: Any) -> str:
        blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        db = self._open(create=False)
        if db is None:
            return found
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):  # SQLite's variable limit
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(f"SELECT key, text FROM answers WHERE key IN ({marks})", chunk)
            found.update(rows.fetchall())
        return found

    def put_many(self, items: Sequence[tuple[str, str]]) -> None:
        if items:
            db = self._open(create=True)
            db.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?)", items)
            db.commit()


_RETRIABLE = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class EndpointGenerator:
    """Any OpenAI-compatible server (vLLM, TGI, Gemini's compatible API), called with plain HTTP.

    ``api="chat"`` posts to ``/chat/completions`` (instruction models: facts, judges, rewrites);
    ``api="completions"`` to ``/completions`` (a base model or LoRA adapter continuing raw text: synthesis).
    Up to ``max_in_flight`` requests run at once; each is retried with exponential backoff on
    connection errors, 429 and 5xx; answers are cached on disk under ``cache_dir`` when given. Uses
    ``httpx`` directly rather than ``huggingface_hub.InferenceClient``: an endpoint is not the Hub, so
    it must work with ``HF_HUB_OFFLINE=1``. The key comes from ``$CONTINUOUSBENCH_API_KEY`` (or
    ``$HF_TOKEN``), is sent only as a header and never appears in a message, log or file.
    """

    base_url: str
    model: str | None = None
    api: str = "chat"
    max_in_flight: int = 8
    retries: int = 4
    backoff: float = 1.0
    timeout: float = 120.0
    cache_dir: Path | str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        import httpx

        if self.api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' or 'completions', got {self.api!r}")
        if self.max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {self.max_in_flight}")
        self.base_url = self.base_url.rstrip("/")
        self.name = self.name or f"endpoint:{self.model or self.base_url}"
        api_key = next((os.environ[k] for k in API_KEY_ENV if os.environ.get(k)), None)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        limits = httpx.Limits(
            max_connections=self.max_in_flight, max_keepalive_connections=self.max_in_flight
        )
        self._client = httpx.Client(headers=headers, timeout=self.timeout, limits=limits, trust_env=False)
        self._cache = ResponseCache(self.cache_dir) if self.cache_dir is not None else None

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
        return {k: v for k, v in body.items() if v is not None}

    def _fail(self, what: str) -> GenerationError:
        return GenerationError(
            f"endpoint {self.base_url} {what}; check the URL, that the server is up and serves "
            f"{self.model or 'a model'}, and the API key in ${API_KEY_ENV[0]}"
        )

    def _one(self, prompt: str, sampling: dict[str, Any]) -> str:
        import httpx

        url = f"{self.base_url}/{'chat/completions' if self.api == 'chat' else 'completions'}"
        body, last = self._payload(prompt, sampling), "no answer"
        for attempt in range(self.retries):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self._client.post(url, json=body)
            except httpx.HTTPError as err:  # refused, reset, timed out: all retried
                last = type(err).__name__
                continue
            if response.status_code in _RETRIABLE:
                last = f"HTTP {response.status_code}"
                continue
            if response.status_code >= 400:
                detail = " ".join(response.text.split())[:160]
                raise self._fail(f"refused the request (HTTP {response.status_code}: {detail})")
            try:
                choice = response.json()["choices"][0]
                text = choice["message"]["content"] if self.api == "chat" else choice["text"]
            except (ValueError, KeyError, IndexError, TypeError):
                last = "a malformed response"
                continue
            return text or ""
        raise self._fail(f"did not answer after {self.retries} tries ({last})")

    def _keys(self, prompts: Sequence[str], sampling: dict[str, Any]) -> list[str]:
        """Cache keys; the n-th repeat of a prompt in one call is its own sample."""
        seen: dict[str, int] = {}
        keys = []
        model = self.model or self.base_url
        for prompt in prompts:
            seen[prompt] = seen.get(prompt, -1) + 1
            keys.append(ResponseCache.key(model=model, api=self.api, prompt=prompt, sampling=sampling,
                                          repeat=seen[prompt]))  # fmt: skip
        return keys

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        """One answer per prompt, in order; cached answers are not requested again.

        With a ``seed``, request ``i`` is sent seed + i, so repeated prompts give different samples.
        Finished answers are cached as they arrive, so an interrupted call loses nothing it paid for.
        """
        from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

        keys = self._keys(prompts, sampling)
        answers = self._cache.get_many(keys) if self._cache else {}
        todo = [i for i, k in enumerate(keys) if k not in answers]
        seed = sampling.get("seed")
        with ThreadPoolExecutor(self.max_in_flight) as pool:
            futures = {
                pool.submit(
                    self._one, prompts[i], sampling if seed is None else sampling | {"seed": seed + i}
                ): i
                for i in todo
            }
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, timeout=1.0, return_when=FIRST_EXCEPTION)
                    finished = [(keys[futures[f]], f.result()) for f in done if f.exception() is None]
                    answers.update(finished)
                    if self._cache:
                        self._cache.put_many(finished)
                    for f in done:
                        if f.exception() is not None:
                            raise f.exception()
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
        return [answers[k] for k in keys]

    def check(self) -> None:
        """Fail in one line now if the endpoint does not answer (before hours of other work)."""
        import httpx

        try:
            response = self._client.get(f"{self.base_url}/models", timeout=min(self.timeout, 10.0))
        except httpx.HTTPError as err:
            raise self._fail(f"does not answer ({type(err).__name__})") from None
        if response.status_code in (401, 403):
            raise self._fail(f"rejected the API key (HTTP {response.status_code})")
        if response.status_code >= 400:  # some servers lack /models: one tiny request decides
            self._one("Say OK.", {"max_new_tokens": 1})
