"""Seconds (wall and CPU) of each regime of a saturation study on the committed fixture, on CPU.

    .venv/bin/python benchmarks/saturation.py            # the demo's --saturation settings
    .venv/bin/python benchmarks/saturation.py --quick    # the test's settings (tests/classification)

The demo's shipped base model is every model (docs/saturation.md: a smoke test of the machinery). Each
regime runs in this process, one after the other, in a fresh folder; the table says what each cost, and
the last row the whole study (the summary, tables and Fig. 8 included).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the test's settings")
    args = parser.parse_args(argv)

    import torch
    from rich.console import Console
    from rich.table import Table

    from continuousbench.classification import regimes, report, saturation
    from continuousbench.demo.demo import SATURATION, SHIPPED_BASE, quiet

    quiet()
    torch.set_num_threads(1)
    options = ["--dataset", "fixture", *(saturation.SMOKE if args.quick else SATURATION[2:])]
    with tempfile.TemporaryDirectory() as tmp:
        argv = [*options, "--model", str(SHIPPED_BASE), "--output_dir", str(Path(tmp) / "sat")]
        (sat,) = saturation.make_parser().parse(argv)
        rows, start = [], (time.perf_counter(), time.process_time())
        task = saturation.load(sat)
        out = saturation._open(sat)
        done = {}
        for regime in saturation.REGIMES:
            wall, cpu = time.perf_counter(), time.process_time()
            done[regime] = regimes.run(regime, sat, task, out)
            rows.append((regime, time.perf_counter() - wall, time.process_time() - cpu))
        summary = report.write(out, sat, task, done)
        rows.append(("whole study", time.perf_counter() - start[0], time.process_time() - start[1]))
    table = Table(
        title=f"saturation on the fixture ({'test' if args.quick else 'demo --saturation'} settings; "
        f"load {os.getloadavg()[0]:.1f})"
    )
    for col in ("stage", "wall s", "CPU s"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    for name, wall, cpu in rows:
        table.add_row(name, f"{wall:.1f}", f"{cpu:.1f}")
    Console().print(table)
    print(report.summary_line(summary))


if __name__ == "__main__":
    main()
