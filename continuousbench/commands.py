"""The one error path of a command (a stand-in with the foundation's signature until it lands on main).

``run(work)`` calls ``work()``; a known error (bad input, a missing or existing file) becomes one line
``error: ...`` on stderr and exit status 2, never a traceback. ``report(result)`` prints the result.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
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


def dispatch(commands: dict[str, str], argv: Sequence[str] | None, *, prog: str):
    """Run ``commands[argv[0]]``'s ``cli(argv[1:])`` (a command group such as ``publish``)."""
    import importlib

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: {prog} {{{','.join(commands)}}} ...")
        raise SystemExit(0 if argv else 2)
    if argv[0] not in commands:
        print(
            f"error: unknown command {prog} {argv[0]!r}; use one of: {', '.join(commands)}", file=sys.stderr
        )
        raise SystemExit(2)
    return importlib.import_module(commands[argv[0]]).cli(argv[1:])
