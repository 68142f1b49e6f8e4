"""The one answer cache, around any backend (:class:`Cached`, made by
:func:`continuousbench.llm.make_generator` when given ``cache_dir``).

A backend that reports answers as they arrive (``answer(prompts, indices, sampling, keep)``: the endpoint)
has each one kept at once, so an interrupted call loses nothing it paid for; another backend (a local
``transformers`` model) is asked for the prompts the cache lacks in one ``generate`` call, kept when it
returns. An answer cut at its token budget (:data:`continuousbench.llm.CUT`) is kept as truncated: a rerun
with the same budget is not asked again, a larger budget is a new key.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from continuousbench.llm import CUT, Cut, TextGenerator


class ResponseCache:
    """Answers already paid for, on disk: a killed stage resumes without asking the backend again.

    SQLite (one file, safe across processes); keys are sha256 of (the backend's identity - an endpoint's
    URL without credentials, model and api, and what the caller adds, such as the served weights' sha256 -,
    prompt, sampling, n-th repeat of that prompt in the call), so
    sampling the same prompt 1,000 times caches 1,000 answers, and two servers that call their models by
    one name never answer for each other.
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


# What the cache holds for an answer cut at its budget (twice): never an answer, but a rerun with the
# same budget would be cut again, so it is not asked again (a larger --max_new_tokens is a new key).
TRUNCATED = "\x00truncated"


Keep = Callable[[list[tuple[int, str]]], None]  # (prompt index, answer) pairs, as they arrive


def cache_keys(identity: dict[str, Any], prompts: Sequence[str], sampling: dict[str, Any]) -> list[str]:
    """One key per prompt; the n-th repeat of a prompt in one call is its own sample."""
    seen: dict[str, int] = {}
    keys = []
    for prompt in prompts:
        seen[prompt] = seen.get(prompt, -1) + 1
        keys.append(ResponseCache.key(**identity, prompt=prompt, sampling=sampling, repeat=seen[prompt]))
    return keys


class Cached:
    """``backend`` behind the answer cache in ``cache_dir``: cached answers (and truncations) are not asked
    again; ``stats`` (the backend's own counter when it has one) counts ``cached`` hits. Every other
    attribute is the backend's (``check``, ``close``, ``structured_output``, ``fingerprint``...).

    ``identity`` adds what the backend cannot know to the keys: which weights the server answers with
    (synthesis from an adapter served under a fixed name keys on the adapter's sha256, so a retrained
    adapter never gets the old one's answers)."""

    def __init__(self, backend: TextGenerator, cache_dir: Path | str, identity: dict[str, Any] | None = None):
        self.backend, self.name = backend, backend.name
        self.cache = ResponseCache(cache_dir)
        stats = getattr(backend, "stats", None)
        self.stats: Counter = stats if isinstance(stats, Counter) else Counter()
        own = getattr(backend, "cache_identity", None) or {"backend": backend.name}
        self._identity = {**own, **(identity or {})}

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "backend":  # not set yet (a copy being built): no recursion
            raise AttributeError(attribute)
        return getattr(self.backend, attribute)

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        keys = cache_keys(self._identity, prompts, sampling)
        answers = self.cache.get_many(keys)
        self.stats["cached"] += len(answers)
        self.stats["dropped_truncated"] += sum(a == TRUNCATED for a in answers.values())
        todo = [i for i, k in enumerate(keys) if k not in answers]

        def keep(done: list[tuple[int, str]]) -> None:
            items = [(keys[i], TRUNCATED if isinstance(text, Cut) else text) for i, text in done]
            answers.update(items)
            self.cache.put_many(items)

        if todo and hasattr(self.backend, "answer"):
            self.backend.answer(prompts, todo, sampling, keep)
        elif todo:
            keep(list(zip(todo, self.backend.generate([prompts[i] for i in todo], **sampling), strict=True)))
        return [CUT if answers[k] == TRUNCATED else answers[k] for k in keys]
