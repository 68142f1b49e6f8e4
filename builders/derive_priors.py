"""Derive the Geminon priors (figures and names only) from a PokeAPI CSV folder.

Usage:
    python builders/derive_priors.py                      # default input, writes the package data
    python builders/derive_priors.py --csv-dir /path/to/pokeapi/data/v2/csv --out priors.json

The output (`continuousbench/geminon/data/priors.json` by default) is deterministic and committed;
the CSV files themselves never enter the project.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_CSV_DIR = "/work/shared/reference/pokeapi"


def make_parser(subparsers=None) -> argparse.ArgumentParser:
    kwargs = {"description": "Derive Geminon priors from PokeAPI CSVs."}
    parser = (
        subparsers.add_parser("derive-priors", **kwargs) if subparsers else argparse.ArgumentParser(**kwargs)
    )
    parser.add_argument("--csv-dir", default=DEFAULT_CSV_DIR, help="PokeAPI data/v2/csv folder")
    parser.add_argument("--out", default=None, help="output JSON (default: the package data file)")
    return parser


def main(csv_dir: str = DEFAULT_CSV_DIR, out: str | None = None) -> Path:
    from continuousbench.geminon.priors import PRIORS_PATH, derive_priors, write_priors

    priors = derive_priors(csv_dir)
    path = write_priors(priors, out or PRIORS_PATH)
    print(f"wrote {path}: {priors.counts}, {len(priors.moves)} moves, {len(priors.abilities)} abilities")
    return path


if __name__ == "__main__":
    args = make_parser().parse_args()
    main(args.csv_dir, args.out)
