"""The memorisation probes of a study beside its runs: one row per probed model, from the files of
``continuousbench memorization --output`` (``report --memorization NAME=FILE``)."""

from __future__ import annotations

from pathlib import Path

from continuousbench.errors import UserError

FIGURES = (("exact_suffix_rate", "exact suffix"), ("rouge_l", "ROUGE-L"))


def read_probes(items: list[str]) -> dict[str, dict]:
    """``NAME=FILE`` items -> each file's figures; one line for a missing or foreign file."""
    from continuousbench.files import read_json

    probes = {}
    for item in items:
        name, _, file = item.partition("=")
        data = read_json(file) if name and Path(file).is_file() else None
        if not isinstance(data, dict) or "train_minus_heldout" not in data:
            raise UserError(
                f"--memorization {item}: give NAME=FILE, a file from `continuousbench memorization`"
            )
        probes[name] = data
    return probes


def _cell(figure: dict) -> str:
    value, ci = figure.get("value", figure.get("difference")), figure.get("ci95")
    if value is None:
        return "-"
    return f"{value:.3f}" + (f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci and "difference" in figure else "")


def print_probes(probes: dict[str, dict], console) -> None:
    """Training vs held-out documents per probed model, and the paired difference with its interval."""
    from rich.table import Table

    table = Table(
        title="Verbatim memorisation: greedy suffixes of training vs held-out documents",
        caption="difference: train minus held-out over style-matched pairs, paired 95% interval",
    )
    table.add_column("model")
    for _, label in FIGURES:
        for split in ("train", "held-out", "difference"):
            table.add_column(f"{label} {split}", justify="right")
    table.add_column("pairs", justify="right")
    for name, data in probes.items():
        cells = []
        for key, _ in FIGURES:
            diff = data["train_minus_heldout"][key]
            cells += [_cell(data["train"][key]), _cell(data["heldout"][key]), _cell(diff)]
        table.add_row(name, *cells, str(data["train_minus_heldout"]["pairs"]))
    console.print(table)
