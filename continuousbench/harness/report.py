"""``continuousbench report RUN [RUN ...] [--plot out.png]``: compare harness runs side by side.

Reads each run folder's ``results.json``, prints a rich table of test accuracy (qa_public and
qa_singleton; exact match / contains / LLM match when judged) and writes a grouped bar chart.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from continuousbench.harness.outputs import atomic_write
from continuousbench.harness.results import load as load_run

PARTS = ("qa_public", "qa_singleton")
MATCHERS = ("exact_match", "contains", "llm_match")
SHORT = {"exact_match": "EM", "contains": "contains", "llm_match": "LLM"}


def comparison_rows(runs: dict[str, dict]) -> list[dict]:
    """One flat row per run: name, release, model, tuning, steps, and ``<part>/<matcher>`` accuracies."""
    rows = []
    for name, r in runs.items():
        row = {
            "run": name,
            "release": r["release"]["id"],
            "model": r["base_model"],
            "tuning": r["tuning"],
            "steps": r["steps"],
            "corpus": r["corpus"]["fingerprint"][:8],
        }
        for part in PARTS:
            metrics = r["metrics"].get(part, {}).get("metrics", {})
            for m in MATCHERS:
                if m in metrics:
                    row[f"{part}/{m}"] = metrics[m]["accuracy"]
        rows.append(row)
    return rows


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def print_table(rows: list[dict], console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    releases = ", ".join(sorted({r["release"] for r in rows}))
    table = Table(title=f"ContinuousBench test accuracy (%) on {releases}")
    for col in ("run", "model", "tuning", "steps", "corpus"):
        table.add_column(col)
    metric_cols = [c for c in (f"{p}/{m}" for p in PARTS for m in MATCHERS) if any(c in r for r in rows)]
    for col in metric_cols:
        part, m = col.split("/")
        table.add_column(f"{part.removeprefix('qa_')} {SHORT[m]}", justify="right")
    for r in rows:
        table.add_row(
            r["run"],
            r["model"].rstrip("/").rsplit("/", 1)[-1],
            *(str(r[c]) for c in ("tuning", "steps", "corpus")),
            *(_pct(r.get(c)) for c in metric_cols),
        )
    if console is None:
        console = Console()
        if not console.is_terminal:  # pipes and logs: do not squeeze the table into 80 columns
            console = Console(width=160)
    console.print(table)


def plot_comparison(rows: list[dict], path: Path) -> Path:
    """Grouped bars: one group per run, one bar per part x matcher."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cols = [c for c in (f"{p}/{m}" for p in PARTS for m in MATCHERS) if any(c in r for r in rows)]
    x = np.arange(len(rows))
    width = 0.8 / max(len(cols), 1)
    fig, ax = plt.subplots(figsize=(max(5, 1.5 * len(rows) + 2), 4), dpi=100)
    for i, col in enumerate(cols):
        values = [100 * (r.get(col) or 0.0) for r in rows]
        part, m = col.split("/")
        ax.bar(x + (i - (len(cols) - 1) / 2) * width, values, width, label=f"{part} {SHORT[m]}")
    ax.set_xticks(x, [r["run"] for r in rows], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", metadata={"Software": None}))
    plt.close(fig)
    return path


def cli(argv: Sequence[str] | None = None) -> list[dict]:
    """Parse ``argv``, print the table, write the plot; return the rows. Bad input exits 2 with one line."""
    import sys

    parser = argparse.ArgumentParser(prog="continuousbench report", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="Run folders (or their results.json).")
    parser.add_argument("--plot", type=Path, default=None, help="Write a comparison PNG here.")
    parser.add_argument("--json", type=Path, default=None, help="Write the rows as JSON here.")
    args = parser.parse_args(None if argv is None else list(argv))
    try:
        runs = {}
        for path in args.runs:
            name = Path(path).name if Path(path).is_dir() else Path(path).parent.name
            if name in runs:  # two folders with the same name in different places
                name = str(path)
            runs[name] = load_run(path)
        rows = comparison_rows(runs)
    except (ValueError, FileNotFoundError, KeyError) as err:
        print(
            f"error: {err if not isinstance(err, KeyError) else f'results.json lacks {err}'}", file=sys.stderr
        )
        raise SystemExit(2) from None
    print_table(rows)
    if args.plot:
        plot_comparison(rows, args.plot)
    if args.json:
        text = json.dumps(rows, indent=2)
        atomic_write(args.json, lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))
    return rows
