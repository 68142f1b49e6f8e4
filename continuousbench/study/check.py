"""Every job of a study checked before anything runs: its command line through its command's own parser
(a typo such as ``stepz: 50`` is refused naming the job, not found by the job after the build), and the
release it reads found."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from continuousbench.errors import UserError
from continuousbench.study.graph import Job


def parser_of(argv: Sequence[str]):
    """The parser of the command ``argv`` starts with (``build geminon``: a group, then its command) and
    the arguments it reads."""
    import importlib

    from continuousbench.cli import COMMANDS

    table, rest = COMMANDS, list(argv)
    while True:
        target, _ = table[rest[0]]
        rest = rest[1:]
        if isinstance(target, str):
            return importlib.import_module(target.partition(":")[0]).make_parser(), rest
        table = target


def check_jobs(jobs: Sequence[Job], source: str) -> None:
    """Parse each job's arguments as its command will; the first mistake is one line naming the job and
    ``source`` (the study file).

    Parsing only: what a job reads from an earlier job (a generator, a corpus) need not exist yet. A
    recipe's ``env:`` is applied by the parser, so the environment is put back after each job."""
    from continuousbench.commands import one_line

    for job in jobs:
        parser, rest = parser_of(job.argv)
        saved = dict(os.environ)
        try:
            parser.parse(rest)
        except (ValueError, OSError) as err:  # UserError, FileNotFoundError: the parser's one line
            line = (one_line(err) or str(err)).removesuffix("; see `--help`")
            raise UserError(f"{source}: job {job.name}: {line}; fix its options in the study file") from None
        finally:
            os.environ.clear()
            os.environ.update(saved)


def check_release(release: str | None, source: str) -> str | None:
    """``release`` (a study's ``release:``) found: a release folder, or an id under the releases root or
    in ``$CONTINUOUSBENCH_HUB_REPO``; else one line saying how to make it. Returns its folder, or None when
    the Hub will give it."""
    from continuousbench.release.layout import HUB_REPO_ENV
    from continuousbench.release.load import resolve_release

    if release is None:
        return None
    if os.environ.get(HUB_REPO_ENV) and not Path(release).expanduser().exists() and "/" not in release:
        from continuousbench.release.ids import ReleaseId

        try:
            ReleaseId.parse(release)
        except ValueError as err:
            raise UserError(f"{source}: release {release!r} is neither a folder nor an id ({err})") from None
        return None  # downloaded by the first job that reads it
    try:
        return str(resolve_release(release))
    except (ValueError, OSError) as err:
        raise UserError(f"{source}: {err}; fix the study file's release") from None
