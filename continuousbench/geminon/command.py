"""``continuousbench build geminon`` == ``python builders/geminon.py``: one dataclass, one ``main``.

    continuousbench build geminon --size small --quarter 2026q1 --seed 0
    python builders/geminon.py --config builders/configs/geminon-small.yaml

Precedence: defaults < ``--config`` YAML < command line; unknown keys are an error.
"""

from __future__ import annotations

from pathlib import Path

from continuousbench.commands import command
from continuousbench.geminon.build import GeminonBuildArguments, build_release


def main(args: GeminonBuildArguments) -> Path:
    return build_release(args)


make_parser, cli = command(
    GeminonBuildArguments,
    "continuousbench build geminon",
    "Build a Geminon release (world, corpus, QA, support counts) as a dataset folder.",
    main,
    report=print,
    resume_hint="finished stages (and an LLM realizer's finished entities) are kept in the root's .work "
    "folder; rerun the same command with --resume to continue",
)
