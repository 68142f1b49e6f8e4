"""``report``'s table of trained-on vs held-out entities (``metrics.<part>.by_heldout``, a release built
with ``--heldout entity``): what a reader needs to tell "learned the fact" from "learned the format"."""

from __future__ import annotations

from collections.abc import Callable

from continuousbench.release.layout import QA_PARTS
from continuousbench.scoring.match import SCORES

GROUPS = (("trained", "trained-on"), ("heldout", "held-out"))


def heldout_rows(records: dict[str, dict]) -> list[dict]:
    """One row per run, part and group that a record splits: run, part, group, n, each matcher's
    accuracy and interval (``<matcher>``, ``<matcher>/ci95``), ``answer_nll`` and its interval."""
    rows = []
    for name, record in records.items():
        for part in QA_PARTS:
            groups = record["metrics"].get(part, {}).get("by_heldout") or {}
            for key, label in GROUPS:
                figures = groups.get(key)
                if figures is None:
                    continue
                row = {"run": name, "part": part, "group": label, "n": figures["n"]}
                for matcher in (m for m in SCORES if figures.get(m)):
                    accuracy = figures[matcher]
                    row[matcher], row[f"{matcher}/ci95"] = accuracy["accuracy"], accuracy["ci95"]
                nll = figures.get("answer_nll") or {}
                row["answer_nll"], row["answer_nll/ci95"] = nll.get("mean"), nll.get("ci95")
                rows.append(row)
    return rows


def print_heldout(rows: list[dict], console, cell: Callable[[dict, str], str], short: dict[str, str]) -> None:
    """The rows as one table: accuracies in % with their Wilson intervals (``cell``, the report's own
    format; ``short``: its matcher names), answer loss in nats."""
    from rich.table import Table

    table = Table(
        title="Trained-on vs held-out entities (release built with --heldout entity)",
        caption="held-out entities: no training document states their facts; alike figures on both "
        "groups mean the format was learned, not the facts; MCQ chance 25%",
    )
    matchers = [m for m in SCORES if any(m in r for r in rows)]
    for column in ("run", "part", "entities", "n", *(short[m] for m in matchers), "answer NLL"):
        table.add_column(column, justify="right" if column not in ("run", "part", "entities") else "left")
    for r in rows:
        nll, ci = r["answer_nll"], r["answer_nll/ci95"]
        loss = "-" if nll is None else f"{nll:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
        cells = [cell(r, m) for m in matchers]
        table.add_row(r["run"], r["part"].removeprefix("qa_"), r["group"], str(r["n"]), *cells, loss)
    console.print(table)
