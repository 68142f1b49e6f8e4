"""``continuousbench publish <what> ...``: put a finished artefact on the Hugging Face Hub."""

from __future__ import annotations

from collections.abc import Sequence

from continuousbench.commands import dispatch

COMMANDS = {"release": "continuousbench.release.publish"}


def cli(argv: Sequence[str] | None = None):
    return dispatch(COMMANDS, argv, prog="continuousbench publish")
