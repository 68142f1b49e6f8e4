"""The one error path of a command (a stand-in with the foundation's signature until it lands on main).

``run(work)`` calls ``work()``; a known error (bad input, a missing or existing file) becomes one line
``error: ...`` on stderr and exit status 2, never a traceback. ``report(result)`` prints the result.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
KNOWN = (ValueError, FileNotFoundError, FileExistsError)


def run(
    work: Callable[[], T], *, report: Callable[[T], object] | None = None, resume_hint: str | None = None
) -> T:
    try:
        result = work()
    except KNOWN as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    if report is not None:
        report(result)
    return result
