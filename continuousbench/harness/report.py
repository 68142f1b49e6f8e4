"""``continuousbench report RUN [RUN ...] [--plot out.png]``: compare harness runs side by side.

Reads each run folder's ``results.json``, prints a rich table of test accuracy (qa_public and
qa_singleton; exact match / contains / LLM match when judged) and writes a grouped bar chart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.files import atomic_write, check_output_files, read_json
from continuousbench.harness.outputs import RESULTS
from continuousbench.release.layout import QA_PARTS
from continuousbench.scoring import MATCHERS

SHORT = {"exact_match": "EM", "contains": "contains", "llm_match": "LLM"}


def load_run(path: str | Path) -> dict:
    """The results of one run folder (or a results.json path); FileNotFoundError names what is missing."""
    path = Path(path).expanduser()
    file = path / RESULTS if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"{path} has no {RESULTS}: is it a finished `continuousbench evaluate` run?")
    results = read_json(file)
    if not isinstance(results, dict):
        raise ValueError(f"{file} is not the results.json of a `continuousbench evaluate` run")
    return results


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
        for part in QA_PARTS:
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
    metric_cols = [c for c in (f"{p}/{m}" for p in QA_PARTS for m in MATCHERS) if any(c in r for r in rows)]
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

    cols = [c for c in (f"{p}/{m}" for p in QA_PARTS for m in MATCHERS) if any(c in r for r in rows)]
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


@dataclass
class ReportArguments:
    runs: list[str] = field(
        default_factory=list, metadata={"help": "Run folders (or their results.json).", "positional": True}
    )
    plot: str | None = field(default=None, metadata={"help": "Write a comparison PNG here."})
    json: str | None = field(default=None, metadata={"help": "Write the rows as JSON here."})
    overwrite: bool = field(default=False, metadata={"help": "Replace existing --plot / --json files."})


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser(
        [ReportArguments], prog="continuousbench report", description=__doc__.splitlines()[0]
    )


def main(args: ReportArguments) -> list[dict]:
    """Load the runs, print the table, write the plot and JSON; return the rows."""
    if not args.runs:
        raise ValueError("no runs given: continuousbench report RUN [RUN ...]")
    outputs = check_output_files(  # before any work; never into a run folder, never over a file silently
        {"--plot": args.plot, "--json": args.json},
        overwrite=args.overwrite,
        keep_out=[Path(p).expanduser() if Path(p).expanduser().is_dir() else Path(p).expanduser().parent
                  for p in args.runs],
    )  # fmt: skip
    runs = {}
    for path in args.runs:
        name = Path(path).name if Path(path).is_dir() else Path(path).parent.name
        if name in runs:  # two folders with the same name in different places
            name = str(path)
        try:
            runs[name] = load_run(path)
        except KeyError as err:
            raise ValueError(f"{path}: results.json lacks {err}") from None
    try:
        rows = comparison_rows(runs)
    except (KeyError, TypeError) as err:
        what = f"lacks {err}" if isinstance(err, KeyError) else f"has a field of the wrong type ({err})"
        raise ValueError(f"a results.json {what}; is it from `continuousbench evaluate`?") from None
    print_table(rows)
    if "--plot" in outputs:
        plot_comparison(rows, outputs["--plot"])
    if "--json" in outputs:
        text = json.dumps(rows, indent=2)
        atomic_write(outputs["--json"], lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))
    return rows


def cli(argv: Sequence[str] | None = None) -> list[dict]:
    """Parse ``argv`` and run :func:`main`; bad input exits 2 with one line."""
    from continuousbench.commands import run

    return run(lambda: main(*make_parser().parse(argv)))
