"""Release commands: ``continuousbench verify RELEASE``."""

from __future__ import annotations

from dataclasses import dataclass, field

from continuousbench.commands import command
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


def _verified(manifest: dict) -> None:
    print(f"{manifest['id']}: {len(manifest['files'])} files verified")


_, verify_cli = command(
    VerifyArguments, "continuousbench verify", __doc__, verify_main, report=_verified, resume_hint=None
)
