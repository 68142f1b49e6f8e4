"""The three prompt templates of the prompted classifier (paper App. F: direct, reasoning, structured),
their few-shot demonstrations, and the reading of a reply as a label.

Our own wording. Every template states the task and the classes (with their descriptions, e.g.
OpenReview's "6: marginally above threshold"), shows ``k`` demonstrations from the training split, then
the text to classify:

* ``direct``: the reply is the label itself, on the first line;
* ``reasoning``: a sentence or two of reasoning first, then a line ``Answer: <label>``;
* ``structured``: a JSON object ``{"label": "<label>"}``.

A reply is read twice, as the paper's tables report (exact / contains):

* **exact**: the answer field (the first line; the text after the last ``Answer:``; the JSON ``label``)
  is exactly one class name under the harness's exact match (normalised, numbers by value:
  :func:`continuousbench.scoring.match.exact_match`);
* **contains**: exactly one class name occurs in the answer field, or, when there is none (no
  ``Answer:`` line, no JSON), in the whole reply. A reply naming two classes names none.

A reply read as no class is *unparseable*: it counts as wrong, and the counts are reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from continuousbench.errors import UserError

TEMPLATES = ("direct", "reasoning", "structured")
INSTRUCTIONS = {
    "direct": "Reply with the class name only.",
    "reasoning": "First explain your judgement in one or two sentences, then give the class on a last line "
    "of the form 'Answer: <class>'.",
    "structured": 'Reply with a JSON object of the form {"label": "<class>"} and nothing else.',
}
# What each template's demonstration shows after the text, and what the model continues after.
_CUES = {"direct": "Class:", "reasoning": "Reasoning:", "structured": "JSON:"}
_ANSWER = re.compile(r"answer\s*:\s*(.*)", re.IGNORECASE)
_LABEL_FIELD = re.compile(r'"label"\s*:\s*"([^"]*)"', re.IGNORECASE)


@dataclass(frozen=True)
class TaskText:
    """What a prompt says about the task: the texts' kind, the classes and their descriptions."""

    noun: str  # "movie review"
    question: str  # "the sentiment of the review"
    names: tuple[str, ...]
    descriptions: tuple[str, ...] | None = None  # one per class, or None

    def classes(self) -> str:
        if self.descriptions is None:
            return ", ".join(self.names)
        return "; ".join(f"{n} ({d})" for n, d in zip(self.names, self.descriptions, strict=True))


def _cut(text: str, max_chars: int) -> str:
    """One line of at most ``max_chars`` characters: a long review would crowd out the demonstrations."""
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[:max_chars].rsplit(" ", 1)[0] + " ..."


def demonstration(template: str, text: str, name: str, max_chars: int) -> str:
    """One solved example in the template's format."""
    answer = {
        "direct": f"Class: {name}",
        "reasoning": f"Reasoning: the text as a whole points to this class.\nAnswer: {name}",
        "structured": f'JSON: {{"label": "{name}"}}',
    }[template]
    return f"Text: {_cut(text, max_chars)}\n{answer}\n\n"


def prompt(
    template: str, task: TaskText, text: str, shots: Sequence[tuple[str, int]] = (), max_chars: int = 1500
) -> str:
    """The whole prompt for ``text``; ``shots`` are (text, label id) demonstrations."""
    if template not in TEMPLATES:
        raise UserError(f"unknown template {template!r}: use {', '.join(TEMPLATES)}")
    header = (
        f"Classify each {task.noun} below by {task.question}. The classes are: {task.classes()}. "
        f"{INSTRUCTIONS[template]}\n\n"
    )
    demos = "".join(demonstration(template, t, task.names[y], max_chars) for t, y in shots)
    return f"{header}{demos}Text: {_cut(text, max_chars)}\n{_CUES[template]}"


def answer_field(template: str, reply: str) -> str | None:
    """Where the template puts its answer in ``reply``; None when the reply has no such field."""
    if template == "direct":
        return reply.strip().split("\n", 1)[0]
    if template == "reasoning":
        found = _ANSWER.findall(reply)
        return found[-1].split("\n", 1)[0] if found else None
    from continuousbench.llm.parse import json_objects

    objects, _ = json_objects(reply)
    for obj in objects:
        if isinstance(obj.get("label"), (str, int)):
            return str(obj["label"])
    found = _LABEL_FIELD.search(reply)  # a JSON cut short by the token budget still names its label
    return found.group(1) if found else None


def _named(region: str, names: Sequence[str]) -> int | None:
    """The one class whose name occurs in ``region`` (numbers as number tokens), or None."""
    from continuousbench.scoring.match import contains

    hits = [i for i, n in enumerate(names) if contains(region, n) or _word(region, n)]
    return hits[0] if len(hits) == 1 else None


def _word(region: str, name: str) -> bool:
    """``name`` as a word of ``region``, case-insensitive (the match rules cut a region at its first
    sentence end or comma; a class named in the middle of a reasoning reply still counts)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", region, re.IGNORECASE) is not None


def read_reply(template: str, reply: str, names: Sequence[str]) -> tuple[int | None, int | None]:
    """(exact, contains): the class the reply names under each rule, or None (unparseable)."""
    from continuousbench.scoring.match import exact_match

    field = answer_field(template, reply)
    exact = None
    if field is not None:
        matches = [i for i, n in enumerate(names) if exact_match(field, n)]
        exact = matches[0] if len(matches) == 1 else None
    named = _named(field, names) if field is not None else None
    if named is None and (field is None or not field.strip()):
        named = _named(reply, names)
    return exact, named
