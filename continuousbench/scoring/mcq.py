"""Ranked-choice (multiple-choice) questions: the options of each QA question, and the model's pick.

Exact match is 0 for every DP corpus at small scale, so it cannot tell "knows nothing" from "almost
knows". FictionalQA's ranked-choice accuracy gives the graded signal: the model ranks the true answer
against ``k - 1`` distractors by likelihood; chance is ``1 / k``.

Distractors are other values of the same attribute in the release (another Geminon's HP for an HP
question). NEWS questions have no attribute: their distractors are other answers of the same type
(number, date, person, place, organisation, other: :func:`answer_type`, read from the answer and the
question's wording) and, where the release has enough of them, of the same written form (``"$9 a"`` for
"$4 billion": :func:`answer_form`), so the form does not give the answer away; a model-free pick (the
longest, the shortest, the odd form out: :func:`model_free_accuracy`) scores at chance. They are drawn with a
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
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

K = 4  # options per question, the true answer included
TYPES = ("number", "date", "person", "place", "organisation", "other")

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DATE = re.compile(
    rf"^(?:(?:{_WEEKDAY}),? )?(?:{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?"
    rf"|\d{{1,2}} {_MONTH}(?: \d{{4}})?|{_MONTH} \d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|(?:1[89]|20)\d{{2}}"
    rf"|{_WEEKDAY})$"
)
_NUMBER = re.compile(r"^[^\w]?\d[\d,.]*\s?(?:%|[a-z]+(?: [a-z]+)?)?$")
_ORGANISATION = re.compile(
    r"\b(?:inc|corp|corporation|ltd|llc|plc|company|co|group|party|ministry|department|university|council|"
    r"agency|association|committee|union|bank|fc|club|commission|court|parliament|government|police|"
    r"institute|foundation|network|news|airlines?|league)\b\.?"
)
# What a question's wording asks for, the cue a model-free reader would use (first match wins).
_ASKS = (
    (re.compile(r"\b(?:when|date|day|year|month)\b"), "date"),
    (re.compile(r"\b(?:how many|how much|number|amount|share|percent|price|cost|total)\b"), "number"),
    (re.compile(r"\b(?:company|organi[sz]ation|agency|party|group|team|firm)\b"), "organisation"),
    (re.compile(r"\b(?:who|whom|whose|person)\b"), "person"),
    (re.compile(r"\b(?:where|city|country|town|place)\b"), "place"),
)
NAMED = ("organisation", "person", "place")  # types a name's form does not tell apart: the question does


def asked_type(question: str, among: Sequence[str] = TYPES) -> str | None:
    """The answer type (of ``among``) a question's wording asks for, or None when it does not say."""
    q = " ".join(str(question).lower().split())
    return next((kind for pattern, kind in _ASKS if kind in among and pattern.search(q)), None)


def answer_type(question: str, answer: str) -> str:
    """One of :data:`TYPES` for a question's answer, model-free: the answer's own form first (a date or a
    number reads as one whatever the question), then an organisation's name words, then what the
    question asks for (who: a person, where: a place)."""
    a = " ".join(str(answer).lower().split())
    if _DATE.match(a):
        return "date"
    if _NUMBER.match(a):
        return "number"
    if _ORGANISATION.search(a):
        return "organisation"
    return asked_type(question, NAMED) or "other"


def answer_form(answer: str) -> str:
    """How an answer is written, its content left out: digit runs become 9, lower-case words a,
    capitalised words A (``"$4.5 billion"`` -> ``"$9 a"``, ``"Joe Biden"`` -> ``"A A"``)."""
    form = re.sub(r"\d[\d,.]*", "9", str(answer).strip())
    form = re.sub(r"[A-Z][\w'-]*", "A", form)
    return re.sub(r"[a-z][\w'-]*", "a", form)


def question_kind(row: Mapping) -> str:
    """What makes two answers interchangeable: the attribute (Geminon), else the answer's type."""
    attribute = row.get("attribute")
    if attribute:
        return str(attribute)
    return answer_type(row["question"], row["answer"])


def _rng(seed: int, question_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def derive_options(rows: Sequence[Mapping], *, seed: int, k: int = K) -> dict[str, list[str]]:
    """Question id -> its options (the answer and up to ``k - 1`` distractors, in a seeded order).

    ``rows`` are every QA question of the release (all parts and splits: the pool of values); an
    attribute with fewer than ``k - 1`` other values gives fewer options (recorded, never padded).
    """
    values: dict[tuple, set[str]] = defaultdict(set)
    for row in rows:
        kind = question_kind(row)
        values[(kind,)].add(str(row["answer"]))
        if not row.get("attribute"):  # NEWS: answers of the same form too, where there are enough
            values[(kind, answer_form(row["answer"]))].add(str(row["answer"]))
    # each pool sorted once, with its values' casefolds (a release has ~8k questions on ~100-value pools)
    pools = {key: [(v, v.casefold()) for v in sorted(vs)] for key, vs in values.items()}
    options: dict[str, list[str]] = {}
    for row in rows:
        answer = str(row["answer"])
        same = {answer.casefold(), *(str(a).casefold() for a in row.get("aliases") or [])}
        kind = question_kind(row)
        others = [v for v, folded in pools.get((kind, answer_form(answer)), []) if folded not in same]
        if row.get("attribute") or len(others) < k - 1:
            others = [v for v, folded in pools[(kind,)] if folded not in same]
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


def model_free_accuracy(rows: Sequence[Mapping], options: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Accuracy of picks that never use the question's facts: the longest option, the shortest, the odd
    form out (the option whose :func:`answer_form` the fewest others share) and the asked type (the
    first option of the type the question's wording asks for: :func:`asked_type`); the first of equals.
    Each should score near chance (1 / options) when the distractors are of the answer's type and form;
    far above it, the options give the answer away."""

    def of_asked_type(question: str, opts: Sequence[str]) -> int:
        wanted = asked_type(question)
        return next((i for i, o in enumerate(opts) if answer_type(question, o) == wanted), 0)

    pickers = {
        "longest": lambda opts: max(range(len(opts)), key=lambda i: (len(opts[i]), -i)),
        "shortest": lambda opts: min(range(len(opts)), key=lambda i: (len(opts[i]), i)),
        "odd_form": lambda opts: min(
            range(len(opts)), key=lambda i: (Counter(map(answer_form, opts))[answer_form(opts[i])], i)
        ),
    }
    scored = [(options[str(r["id"])], str(r["answer"]), str(r["question"])) for r in rows]
    scored = [s for s in scored if len(s[0]) > 1]
    if not scored:
        return {name: float("nan") for name in [*pickers, "asked_type", "chance"]}
    out = {name: sum(o[f(o)] == a for o, a, _ in scored) / len(scored) for name, f in pickers.items()}
    out["asked_type"] = sum(o[of_asked_type(q, o)] == a for o, a, q in scored) / len(scored)
    return {**out, "chance": sum(1 / len(o) for o, _, _ in scored) / len(scored)}
