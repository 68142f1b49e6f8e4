"""LLM-match: a judge model decides whether a response carries the reference answer (paper §2.2, App. I.3).

Numeric references never reach the judge: a response matches when one of its numbers is within
0.01 % relative error of the reference (``|r - g| / mean(|r|, |g|)``), the same rule the prompt states.
Verdicts are cached in SQLite (atomic, safe to interrupt), keyed by the sha256 of the question, the
ground truth shown, the response, the judge model and the prompt text, so editing the prompt or
changing the model never reuses stale verdicts. A verdict that is not ``0`` or ``1`` is returned as
None, counted in ``stats["unparseable"]`` and not cached, so a rerun asks again.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from continuousbench.llm import GenerationError, TextGenerator
from continuousbench.scoring import as_number, normalize, number_tokens

JUDGE_PROMPT = """You are grading a short answer in an automated evaluation. Decide whether the RESPONSE \
gives the same answer as the REFERENCE for the QUESTION below. Do not judge whether the reference is true.

Rules:
- The response matches if it states everything the reference states. Different wording, synonyms and \
reordering are fine.
- Extra detail is fine, and so is a more specific answer (e.g. "Labrador" for "dog"), as long as nothing \
in the reference is missing or contradicted.
- Numbers match only if they differ by less than 0.01% relative error, |response - reference| divided by \
the mean of the two.
- A refusal, an empty response or a different answer does not match.

QUESTION: {question}
REFERENCE: {reference}
RESPONSE: {response}

Reply with a single character: 1 if the response matches the reference, 0 if it does not."""

_VERDICT = re.compile(r"^[\s\"'*`]*([01])[\s\"'*`.]*$")
NUMERIC_TOLERANCE = Decimal("0.0001")  # 0.01 % relative error


def parse_verdict(text: str) -> bool | None:
    """``"1"`` -> True, ``"0"`` -> False (quotes, markdown stars and a final period tolerated), else None."""
    found = _VERDICT.match(text)
    return None if found is None else found.group(1) == "1"


def numbers_close(a: Decimal, b: Decimal) -> bool:
    """Relative error |a - b| / mean(|a|, |b|) below 0.01 %; two zeros are equal."""
    scale = (abs(a) + abs(b)) / 2
    return a == b if scale == 0 else abs(a - b) / scale < NUMERIC_TOLERANCE


def numeric_match(response: str, reference: str) -> bool | None:
    """The relative-error rule when ``reference`` is a number, else None (the judge must decide)."""
    ref = as_number(normalize(reference))
    if ref is None:
        return None
    return any(numbers_close(tok, ref) for tok in number_tokens(response))


def _shown_reference(references: Sequence[str]) -> str:
    """The ground truth as the judge sees it: the answer, plus aliases when there are any."""
    first, *aliases = references
    return first if not aliases else f"{first} (equivalent forms: {'; '.join(aliases)})"


class Judge:
    """LLM-match with a text generator as judge; ``match(questions, references, responses)``."""

    def __init__(
        self,
        generator: TextGenerator,
        cache_dir: Path | None,
        model_name: str,
        retries: int = 3,
        backoff: float = 1.0,
        batch_size: int = 64,
    ):
        if retries < 1:
            raise ValueError(f"retries must be at least 1, got {retries}")
        self.generator, self.model_name, self.retries = generator, model_name, retries
        self.backoff, self.batch_size = backoff, batch_size
        self.stats = {"numeric": 0, "cached": 0, "judged": 0, "unparseable": 0}
        self._db: sqlite3.Connection | None = None
        if cache_dir is not None:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(Path(cache_dir) / "judge-cache.sqlite")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, verdict TEXT NOT NULL)"
            )

    def _key(self, question: str, reference: str, response: str) -> str:
        blob = json.dumps([question, reference, response, self.model_name, JUDGE_PROMPT], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def _cached(self, key: str) -> str | None:
        if self._db is None:
            return None
        row = self._db.execute("SELECT verdict FROM verdicts WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _ask(self, prompts: list[str]) -> list[str]:
        """One batch through the generator, retried with exponential backoff, then one clear error."""
        last: Exception | None = None
        for attempt in range(self.retries):
            try:
                texts = self.generator.generate(prompts, temperature=0.0, max_new_tokens=4)
                if len(texts) != len(prompts):
                    raise GenerationError(f"got {len(texts)} verdicts for {len(prompts)} prompts")
                return list(texts)
            except Exception as err:  # endpoint errors, timeouts, malformed batches: all retried alike
                last = err
                if attempt + 1 < self.retries:
                    time.sleep(self.backoff * 2**attempt)
        raise GenerationError(
            f"judge {self.model_name!r} did not answer after {self.retries} tries "
            f"({type(last).__name__}: {last}); check the judge endpoint or model"
        )

    def match(
        self, questions: Sequence[str], references: Sequence[Sequence[str]], responses: Sequence[str]
    ) -> list[bool | None]:
        """One verdict per response: True/False, or None when the judge's reply was unparseable."""
        verdicts: list[bool | None] = [None] * len(responses)
        pending: list[tuple[int, str, str]] = []  # (row, cache key, prompt)
        for i, (question, refs, response) in enumerate(zip(questions, references, responses, strict=True)):
            numeric = numeric_match(response, refs[0])
            if numeric is not None:
                verdicts[i] = numeric
                self.stats["numeric"] += 1
                continue
            shown, answer = _shown_reference(refs), response.split("\n", 1)[0].strip()
            key = self._key(question, shown, answer)
            cached = self._cached(key)
            if cached is not None:
                verdicts[i] = parse_verdict(cached)
                self.stats["cached"] += 1
                continue
            pending.append((i, key, JUDGE_PROMPT.format(question=question, reference=shown, response=answer)))
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start : start + self.batch_size]
            texts = self._ask([prompt for _, _, prompt in batch])
            self.stats["judged"] += len(batch)
            rows = []
            for (i, key, _), text in zip(batch, texts, strict=True):
                verdicts[i] = parse_verdict(text)
                if verdicts[i] is None:
                    self.stats["unparseable"] += 1
                else:
                    rows.append((key, text.strip()))
            if self._db is not None:
                with self._db:  # one transaction per batch: an interrupted run keeps finished batches
                    self._db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?)", rows)
        return verdicts
