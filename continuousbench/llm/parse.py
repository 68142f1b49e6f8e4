"""Reading JSON from model answers: the one tolerant parser every LLM stage uses.

Models wrap JSON in markdown fences, put prose around it, leave trailing commas, or break one item (vllm
#15236 reports unreliable structured output; servers without structured output do all of these).
Trailing commas are removed first (outside strings); then :func:`json_objects`
takes the first JSON list of objects it can decode (a list of plain values such as a cited "[1]" in the
prose is skipped), else the objects it can decode one by one, and counts what it had to drop, as
datatrove steps do.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from continuousbench.llm import Cut

_DECODER = json.JSONDecoder()
_TRAILING_COMMA = re.compile(r",\s*[\]}]")


def without_trailing_commas(text: str) -> str:
    """``text`` less each comma that directly precedes a closing ``]`` or ``}`` outside a JSON string."""
    if not _TRAILING_COMMA.search(text):
        return text
    out: list[str] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch == "," and _TRAILING_COMMA.match(text, i):
            continue
        out.append(ch)
    return "".join(out)


def json_objects(text: str) -> tuple[list[dict], Counter]:
    """The objects of the model's JSON list, and ``dropped_*`` counts of what could not be read."""
    stats: Counter = Counter()
    if isinstance(text, Cut):  # cut at its token budget: a larger budget would have answered
        stats["dropped_truncated"] += 1
        return [], stats
    if not text or not text.strip():
        stats["dropped_empty_response"] += 1
        return [], stats
    text = without_trailing_commas(text)
    decoded: list | None = None
    first_list: list | None = None  # a list without objects ("[1]" citing a report): the last resort
    loose: list = []
    i = 0
    while i < len(text):
        if text[i] not in "[{":
            i += 1
            continue
        try:
            value, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        if isinstance(value, list) and any(isinstance(v, dict) for v in value):
            decoded = value
            break
        if isinstance(value, list):
            first_list = value if first_list is None else first_list
        else:
            loose.append(value)  # an object outside any list: keep it, look for more
        i = end
    items = decoded if decoded is not None else loose or first_list or []
    if decoded is None and not loose and first_list is None:
        stats["dropped_malformed_output"] += 1
        return [], stats
    objects = [item for item in items if isinstance(item, dict)]
    stats["dropped_not_an_object"] += len(items) - len(objects)
    return objects, +stats
