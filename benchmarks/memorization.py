"""Documents per second of the verbatim memorisation probe (`continuousbench memorization`), and how its
time grows with --docs: CPU, the demo's 1M-parameter base model, the tiny Geminon release.

    .venv/bin/python benchmarks/memorization.py                 # --docs 16 32 64, batch 16
    .venv/bin/python benchmarks/memorization.py --docs 8 16     # quicker

Each row is one whole command (model loading, release checks, drawing, decoding, scoring, writing), so
the fixed cost shows as the gap between total and decoding time; CPU seconds (all threads) stay
comparable on a machine other work loads. The tiny release has 65 held-out documents of at least 64
tokens: --docs above that probes all of them (the row says how many).
"""

from __future__ import annotations

import argparse
import tempfile
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    import torch
    from rich.console import Console
    from rich.table import Table

    from continuousbench.demo.demo import SHIPPED_BASE
    from continuousbench.diagnostics import memorization, verbatim
    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    torch.set_num_threads(args.threads)
    decoding = {"seconds": 0.0}
    original = verbatim.decode_greedy

    def timed(*a, **kw):
        start = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            decoding["seconds"] += time.perf_counter() - start

    memorization.decode_greedy = timed
    title = f"memorization on CPU ({args.threads} threads), demo base model, batch {args.batch_size}"
    table = Table(title=title)
    columns = (
        "--docs",
        "documents probed",
        "total s",
        "decoding s",
        "docs / s total",
        "docs / s decoding",
        "CPU s",
        "docs / CPU s",
    )  # CPU time of all threads: comparable on a loaded machine
    for col in columns:
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        release = build_release(GeminonBuildArguments(size="tiny", out=tmp))
        for docs in args.docs:
            decoding["seconds"] = 0.0
            start, cpu = time.perf_counter(), time.process_time()
            result = memorization.main(
                memorization.MemorizationArguments(
                    model=str(SHIPPED_BASE),
                    release=str(release),
                    output=f"{tmp}/m{docs}.json",
                    docs=docs,
                    batch_size=args.batch_size,
                )
            )
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            probed = result["train"]["n"] + result["heldout"]["n"]
            table.add_row(
                str(docs),
                str(probed),
                f"{total:.1f}",
                f"{decoding['seconds']:.1f}",
                f"{probed / total:.1f}",
                f"{probed / decoding['seconds']:.1f}",
                f"{cpu:.1f}",
                f"{probed / cpu:.1f}",
            )
    Console().print(table)


if __name__ == "__main__":
    main()
