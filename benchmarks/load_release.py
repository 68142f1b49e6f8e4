"""What verified loading costs: ``load_release`` (checksums, then Arrow keyed by sha256) vs ``load_dataset``.

    .venv/bin/python benchmarks/load_release.py                  # builds the tiny release in a temp root
    .venv/bin/python benchmarks/load_release.py --size small     # builds small first (~1 min)
    .venv/bin/python benchmarks/load_release.py --release <folder>

Each loader gets a fresh datasets cache; the cold load (first, converting parquet) and the warm load
(cache present) are timed, alternating the two loaders over ``--repeats`` rounds. ``load_release`` always
hashes every file of the release, so its warm time is the price of verification.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--release", default=None, help="An existing release folder (no build).")
    parser.add_argument("--part", default="corpus")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import datasets

    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="cb-load-bench-") as tmp:
        _run(args, Path(tmp))


def _run(args: argparse.Namespace, scratch: Path) -> None:
    import datasets
    from datasets import load_dataset

    from continuousbench.release import load_release

    if args.release:
        folder = Path(args.release).expanduser()
    else:
        from continuousbench.geminon.build import GeminonBuildArguments, build_release

        build = GeminonBuildArguments(size=args.size, out=str(scratch / "root"), closed_book_models=["none"])
        folder = build_release(build, progress=False)
    loaders = {
        "load_release": lambda: load_release(folder, args.part),
        "load_dataset": lambda: load_dataset(str(folder), args.part),
    }
    times: dict[str, dict[str, list[float]]] = {name: {"cold": [], "warm": []} for name in loaders}
    for round_ in range(args.repeats):
        for name, load in loaders.items():  # alternate: the machine is shared, its load drifts
            datasets.config.HF_DATASETS_CACHE = str(scratch / f"cache-{name}-{round_}")
            times[name]["cold"].append(_timed(load))
            times[name]["warm"].append(_timed(load))
    size = sum(p.stat().st_size for p in (folder / "data" / args.part).glob("*.parquet"))
    print(f"{folder.name} part {args.part}: {size / 2**20:.1f} MiB of parquet, {args.repeats} rounds")
    for name, t in times.items():
        cold, warm = statistics.median(t["cold"]), statistics.median(t["warm"])
        print(f"{name:>13}: cold {cold:.3f} s, warm {warm:.3f} s (medians)")


if __name__ == "__main__":
    main()
