"""Derive the Geminon priors (figures and names only) from a PokeAPI CSV folder.

Usage:
    python builders/derive_priors.py                      # default input, writes the package data
    python builders/derive_priors.py --csv_dir /path/to/pokeapi/data/v2/csv --out priors.json

The output (`continuousbench/geminon/data/priors.json` by default) is deterministic and committed;
the CSV files themselves never enter the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_CSV_DIR = "/work/shared/reference/pokeapi"


@dataclass
class PriorsArguments:
    csv_dir: str = field(
        default=DEFAULT_CSV_DIR, metadata={"help": "PokeAPI data/v2/csv folder.", "aliases": ["--pokeapi"]}
    )
    out: str | None = field(default=None, metadata={"help": "Output JSON (default: the package data file)."})


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser(
        [PriorsArguments], prog="builders/derive_priors.py", description=__doc__.splitlines()[0]
    )


def main(args: PriorsArguments) -> Path:
    from continuousbench.geminon.priors import PRIORS_PATH, derive_priors, write_priors

    priors = derive_priors(args.csv_dir)
    path = write_priors(priors, args.out or PRIORS_PATH)
    print(f"wrote {path}: {priors.counts}, {len(priors.moves)} moves, {len(priors.abilities)} abilities")
    return path


def cli(argv: Sequence[str] | None = None) -> Path:
    from continuousbench.commands import run

    return run(lambda: main(*make_parser().parse(argv)), resume_hint=None)


if __name__ == "__main__":
    cli()
