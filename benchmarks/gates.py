"""Time the fresh gate's corpus overlap at the size of a `small` release, and the contamination scores.

Usage:
    python benchmarks/gates.py                 # two tiny worlds, each corpus repeated 100x (~172k documents)
    python benchmarks/gates.py --repeat 10

Builds two tiny Geminon worlds (2026q1, 2026q2) in a temporary root, then times
``gates.corpus_overlap`` of one world's corpus (repeated ``--repeat`` times, about the 200k documents of a
`small` release at 100) against the other's, with the peak resident memory of the process.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100)
    args = parser.parse_args()
    from continuousbench.diagnostics.ngrams import corpus_overlap
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.release.load import load_release

    with tempfile.TemporaryDirectory() as root:
        texts = [
            list(
                load_release(
                    build_release(GeminonBuildArguments(quarter=q, out=root), progress=False),
                    "corpus",
                    "train",
                )["text"]
            )
            * args.repeat
            for q in ("2026q1", "2026q2")
        ]
    started = time.perf_counter()
    overlap, distinct, _ = corpus_overlap(texts[0], [texts[1]])
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"corpus_overlap, 2 x {len(texts[0]):,} documents: {seconds:.1f} s, {distinct:,} distinct 13-grams, "
        f"overlap {overlap:.4f}, peak RSS {peak:.2f} GiB"
    )


if __name__ == "__main__":
    main()
