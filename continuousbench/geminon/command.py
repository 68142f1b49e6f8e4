"""``continuousbench build geminon`` == ``python builders/geminon.py``: one dataclass, one ``main``.

    continuousbench build geminon --size small --quarter 2026q1 --seed 0
    python builders/geminon.py --config builders/configs/geminon-small.yaml

Precedence: defaults < ``--config`` YAML < command line; unknown keys are an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from continuousbench.geminon.build import GeminonBuildArguments, build_release


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser(
        GeminonBuildArguments,
        prog="continuousbench build geminon",
        description="Build a Geminon release (world, corpus, QA, support counts) as a dataset folder.",
    )


def main(args: GeminonBuildArguments) -> Path:
    return build_release(args)


def cli(argv: Sequence[str] | None = None) -> Path:
    from continuousbench.commands import run

    return run(
        lambda: main(*make_parser().parse(argv)),
        report=print,
        resume_hint="finished stages are kept in the root's .work folder; rerun the same command to resume",
    )
