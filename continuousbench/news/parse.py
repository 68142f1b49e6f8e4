"""Reading model answers: JSON lists of objects (the one parser, :mod:`continuousbench.llm.parse`),
their text fields, and the verbatim rule.
"""

from __future__ import annotations

import re
import unicodedata

from continuousbench.llm.parse import json_objects

__all__ = ["fold", "json_objects", "text_field", "verbatim_pattern"]
_SPACE = re.compile(r"\s+")


def text_field(item: dict, key: str) -> str:
    """A string field of a model's object, whitespace collapsed ('' when missing or not text)."""
    value = item.get(key)
    return _SPACE.sub(" ", value).strip() if isinstance(value, str) else ""


def fold(text: str) -> str:
    """NFC, case-folded, whitespace collapsed: the form in which the verbatim rule compares strings."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).casefold().strip()


def verbatim_pattern(answer: str) -> re.Pattern:
    """The answer as a whole-word match inside a folded text."""
    return re.compile(rf"(?<!\w){re.escape(fold(answer))}(?!\w)")
