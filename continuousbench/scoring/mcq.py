"""Ranked-choice (multiple-choice) questions: the options of each QA question, and the model's pick.

Exact match is 0 for every DP corpus at small scale, so it cannot tell "knows nothing" from "almost
knows". FictionalQA's ranked-choice accuracy gives the graded signal: the model ranks the true answer
against ``k - 1`` distractors by likelihood; chance is ``1 / k``.

Distractors are other values of the same attribute in the release (another Geminon's HP for an HP
question; for NEWS, answers to questions of the same kind: the question's first word), so every option
is a plausible answer in form and only knowledge of the entity separates them. They are drawn with a
random generator seeded by the release seed and the question id, and the options are shuffled the same
way, so every run of every release sees the same options (a release records them; an older one
derives the very same at load).

The pick follows lm-evaluation-harness's ``acc_norm`` (``lm_eval/api/task.py``, ``process_results`` of a
``multiple_choice`` task: ``argmax(lls / completion_len)`` with ``completion_len`` the characters of each
choice as ``doc_to_choice`` gives it, without the ``" "`` delimiter that the request prepends): the
option with the highest log-likelihood per character, so longer options are not penalised for their
length. Its ``acc`` (the highest log-likelihood, unnormalised) is reported beside it as ``mcq_acc``.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence

K = 4  # options per question, the true answer included


def question_kind(row: Mapping) -> str:
    """What makes two answers interchangeable: the attribute (Geminon), else the question's first word."""
    attribute = row.get("attribute")
    if attribute:
        return str(attribute)
    words = str(row["question"]).split()
    return words[0].lower() if words else ""


def _rng(seed: int, question_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def derive_options(rows: Sequence[Mapping], *, seed: int, k: int = K) -> dict[str, list[str]]:
    """Question id -> its options (the answer and up to ``k - 1`` distractors, in a seeded order).

    ``rows`` are every QA question of the release (all parts and splits: the pool of values); an
    attribute with fewer than ``k - 1`` other values gives fewer options (recorded, never padded).
    """
    values: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        values[question_kind(row)].add(str(row["answer"]))
    # each pool sorted once, with its values' casefolds (a release has ~8k questions on ~100-value pools)
    pools = {kind: [(v, v.casefold()) for v in sorted(vs)] for kind, vs in values.items()}
    options: dict[str, list[str]] = {}
    for row in rows:
        answer = str(row["answer"])
        same = {answer.casefold(), *(str(a).casefold() for a in row.get("aliases") or [])}
        others = [v for v, folded in pools[question_kind(row)] if folded not in same]
        rng = _rng(seed, str(row["id"]))
        chosen = [answer, *rng.sample(others, min(k - 1, len(others)))]
        rng.shuffle(chosen)
        options[str(row["id"])] = chosen
    return options


def attach_options(parts: Mapping[str, Mapping[str, list[dict]]], *, seed: int, k: int = K) -> None:
    """Give every question row of ``parts`` (part -> split -> rows, as a builder holds them) its
    ``options`` column: the release records them (release format 2)."""
    rows = [row for splits in parts.values() for split in splits.values() for row in split]
    options = derive_options(rows, seed=seed, k=k)
    for row in rows:
        row["options"] = options[str(row["id"])]


def pick(logliks: Sequence[float], options: Sequence[str], *, normalise: bool = True) -> int:
    """Index of the option with the highest log-likelihood per character of the option (lm-eval's
    ``acc_norm``; the delimiter before it is not counted) or, ``normalise=False``, the highest
    log-likelihood (its ``acc``); the first of equals, as ``numpy.argmax``."""
    scores = [ll / len(o) if normalise else ll for ll, o in zip(logliks, options, strict=True)]
    return max(range(len(scores)), key=lambda i: (scores[i], -i))
