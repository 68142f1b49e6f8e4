"""Time a Geminon build: wall seconds per stage, total, peak memory, row counts, support-count ranges.

Usage:
    python benchmarks/build_geminon.py                 # small (paper: 200k public documents)
    python benchmarks/build_geminon.py --size tiny     # quick mode, seconds
    python benchmarks/build_geminon.py --size medium   # 1M documents

Builds into a temporary root that is removed afterwards. Peak memory is the process's maximum resident
set size (``getrusage``), imports included. Targets on a 2-core CPU: small < 2 min and < 3 GiB,
medium < 10 min.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time


def make_parser(subparsers=None) -> argparse.ArgumentParser:
    kwargs = {"description": "Benchmark a Geminon release build."}
    parser = (
        subparsers.add_parser("build-geminon", **kwargs) if subparsers else argparse.ArgumentParser(**kwargs)
    )
    parser.add_argument("--size", default="small", choices=("tiny", "small", "medium"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--oversample", type=float, default=None, help="cap pools at this multiple of the target"
    )
    return parser


def _spread(values) -> str:
    import numpy as np

    v = np.asarray(values)
    return f"{v.min()} / {int(np.median(v))} / {v.max()}" if len(v) else "-"


def main(size: str = "small", seed: int = 0, oversample: float | None = None) -> dict:
    from datasets import load_dataset
    from rich.console import Console
    from rich.table import Table

    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="cb-bench-") as root:
        start = time.perf_counter()
        args = GeminonBuildArguments(size=size, seed=seed, out=root, oversample=oversample)
        path = build_release(args, progress=False, timings=timings)
        total = time.perf_counter() - start
        peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux
        manifest = json.loads((path / "release.json").read_text())
        support = {
            part: [
                c
                for s in ("validation", "test")
                for c in load_dataset(str(path), part, split=s)["support_count"]
            ]
            for part in ("qa_public", "qa_singleton")
        }
        by_attribute: dict[str, list[int]] = {}
        for split in ("validation", "test"):
            qa = load_dataset(str(path), "qa_public", split=split)
            for attribute, count in zip(qa["attribute"], qa["support_count"], strict=True):
                by_attribute.setdefault(attribute, []).append(count)

    table = Table(title=f"geminon-{size} build (seed {seed})")
    table.add_column("stage")
    table.add_column("seconds", justify="right")
    for stage, seconds in timings.items():
        table.add_row(stage, f"{seconds:.1f}")
    table.add_row("total", f"{total:.1f}", style="bold")
    table.add_row("peak RSS (GiB)", f"{peak_gib:.2f}", style="bold")
    for config, splits in manifest["rows"].items():
        table.add_row(f"rows {config}", ", ".join(f"{s} {n:,}" for s, n in splits.items()))
    for part, counts in support.items():
        table.add_row(f"support {part} (min/med/max)", _spread(counts))
    for attribute, counts in by_attribute.items():
        table.add_row(f"  qa_public {attribute}", _spread(counts))
    Console().print(table)
    return {"timings": timings, "total": total, "peak_gib": peak_gib, "rows": manifest["rows"]}


if __name__ == "__main__":
    args = make_parser().parse_args()
    main(args.size, args.seed, args.oversample)
