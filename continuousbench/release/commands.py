"""Release commands: ``continuousbench verify RELEASE``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from continuousbench.errors import UserError


@dataclass
class VerifyArguments:
    release: str = field(
        default="",
        metadata={"help": "Release id (under $CONTINUOUSBENCH_HOME) or folder.", "positional": True},
    )


def verify_main(args: VerifyArguments) -> dict:
    from continuousbench.release.load import verify_release

    if not args.release:
        raise UserError("no release given: continuousbench verify <release id or folder>")
    return verify_release(args.release)


def verify_cli(argv: Sequence[str] | None = None) -> dict:
    from continuousbench.commands import CommandParser, run

    parser = CommandParser([VerifyArguments], prog="continuousbench verify", description=__doc__)
    return run(
        lambda: verify_main(*parser.parse(argv)),
        report=lambda manifest: print(f"{manifest['id']}: {len(manifest['files'])} files verified"),
        resume_hint=None,
    )
