"""Build a Geminon release (world, corpus, QA, support counts) as a Hugging Face dataset folder.

Usage:
    python builders/geminon.py --config builders/configs/geminon-small.yaml
    python builders/geminon.py --config builders/configs/geminon-tiny.yaml --seed 1 --out /tmp/cb --overwrite

Precedence: defaults < YAML < command line; unknown keys are an error. The same build as
``continuousbench build geminon --size small --quarter 2026q1 --seed 0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class GeminonBuildArguments:
    size: str = field(default="tiny", metadata={"help": "tiny, small or medium"})
    quarter: str = field(default="2026q1", metadata={"help": "release quarter, YYYYqN"})
    seed: int = field(default=0, metadata={"help": "seed of every random choice"})
    out: str | None = field(default=None, metadata={"help": "root folder (default $CONTINUOUSBENCH_HOME)"})
    overwrite: bool = field(default=False, metadata={"help": "replace an existing release"})
    namer: str = field(default="offline", metadata={"help": "offline, or a text-generation spec"})
    realizer: str = field(default="template", metadata={"help": "template, or a text-generation spec"})
    oversample: float | None = field(
        default=None,
        metadata={"help": "cap each candidate pool at this multiple of its target (default: paper)"},
    )
    rounds: int = field(default=100, metadata={"help": "coverage-aware sampling rounds"})
    sensitive_candidates: int = field(default=100, metadata={"help": "wiki drafts per sensitive entity"})
    audit: bool | None = field(
        default=None,
        metadata={"help": "check every document against its provenance (default: LLM realizers)"},
    )


def make_parser(subparsers=None):
    from trl import TrlParser

    if subparsers is not None:
        return subparsers.add_parser(
            "geminon", help="Build a Geminon release", dataclass_types=GeminonBuildArguments
        )
    return TrlParser(GeminonBuildArguments)


def main(args: GeminonBuildArguments) -> Path:
    from continuousbench.geminon.build import build_release

    return build_release(
        size=args.size,
        quarter=args.quarter,
        seed=args.seed,
        root=Path(args.out) if args.out else None,
        overwrite=args.overwrite,
        namer=args.namer,
        realizer=args.realizer,
        oversample=args.oversample,
        rounds=args.rounds,
        sensitive_candidates=args.sensitive_candidates,
        audit=args.audit,
    )


if __name__ == "__main__":
    try:
        (build_args,) = make_parser().parse_args_and_config()
        print(main(build_args))
    except (ValueError, FileExistsError, FileNotFoundError) as err:
        raise SystemExit(f"error: {err}") from None
