"""``continuousbench build geminon`` == ``python builders/geminon.py``: one dataclass, one ``main``.

    continuousbench build geminon --size small --quarter 2026q1 --seed 0
    python builders/geminon.py --config builders/configs/geminon-small.yaml

Precedence: defaults < ``--config`` YAML < command line; unknown keys are an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds


@dataclass
class GeminonBuildArguments:
    size: str = field(default="tiny", metadata={"help": "tiny, small or medium."})
    quarter: str = field(default="2026q1", metadata={"help": "Release quarter, YYYYqN."})
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of every random choice."))
    out: str | None = field(default=None, metadata={"help": "Root folder (default $CONTINUOUSBENCH_HOME)."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing release."})
    namer: str = field(default="offline", metadata={"help": "offline, or a text-generation spec for names."})
    realizer: str = field(
        default="template", metadata={"help": "template, or a text-generation spec for prose."}
    )
    oversample: float | None = field(
        default=None,
        metadata=bounds(
            "[1, inf)", "Cap each candidate pool at this multiple of its target (default: the paper)."
        ),
    )
    rounds: int = field(default=100, metadata=bounds("[1, inf)", "Coverage-aware sampling rounds."))
    sensitive_candidates: int = field(
        default=100, metadata=bounds("[1, inf)", "Wiki drafts per sensitive entity.")
    )
    audit: bool | None = field(
        default=None,
        metadata={"help": "Check every document against its provenance (default: LLM realizers)."},
    )


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser(
        GeminonBuildArguments,
        prog="continuousbench build geminon",
        description="Build a Geminon release (world, corpus, QA, support counts) as a dataset folder.",
    )


def main(args: GeminonBuildArguments) -> Path:
    from continuousbench.geminon.build import build_release

    return build_release(
        size=args.size,
        quarter=args.quarter,
        seed=args.seed,
        root=Path(args.out).expanduser() if args.out else None,
        overwrite=args.overwrite,
        namer=args.namer,
        realizer=args.realizer,
        oversample=args.oversample,
        rounds=args.rounds,
        sensitive_candidates=args.sensitive_candidates,
        audit=args.audit,
    )


def cli(argv: Sequence[str] | None = None) -> Path:
    from continuousbench.commands import run

    return run(
        lambda: main(*make_parser().parse(argv)),
        report=print,
        resume_hint="finished stages are kept in the root's .work folder; rerun the same command to resume",
    )
