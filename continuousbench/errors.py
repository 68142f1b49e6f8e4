"""The one exception type for a user's mistake: the command line prints its message as one line.

Raise :class:`UserError` for bad input, bad settings or a broken environment the user can fix, with a
message that says what is wrong and how to fix it. Anything else is a bug and keeps its traceback.
It subclasses ``ValueError`` so callers that catch ``ValueError`` (argument parsing, tests) keep working.
"""

from __future__ import annotations


class UserError(ValueError):
    """What is wrong and how to fix it, in one line."""


def flatten(text: object) -> str:
    """``text`` on one line: runs of whitespace (newlines included) become one space."""
    return " ".join(str(text).split())
