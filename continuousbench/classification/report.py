"""What a saturation study writes at the end: ``saturation.json`` (the summary and the regime table),
``tables.md`` (the App. F tables) and ``fig8.png`` (Fig. 8), from the regimes' records.

Summary (Tables 16, 21, 26): ``best_prompted`` is the best condition of the grid by test exact match
(its accuracy, 95% interval and condition); ``fine_tuned`` the classifier trained on the real split;
``gap`` = fine-tuned - best prompted in points, ``ratio`` = best prompted / fine-tuned. ``span`` is the
band the four regimes occupy (max - min, points): the paper's measure of saturation (2.8 points on IMDB
with Gemma 3 4B against 86.5 on Geminon).
"""

from __future__ import annotations

from pathlib import Path

import continuousbench
from continuousbench.classification.figure import LABELS
from continuousbench.files import read_json, write_json, write_text
from continuousbench.results.schema import CLASSIFICATION

RULE = "exact_match"  # the paper's tables report exact match


def _figure(record: dict, rule: str = RULE) -> dict:
    m = record["metrics"][CLASSIFICATION]["metrics"][rule]
    return {"accuracy": m["accuracy"], "ci95": m["ci95"], "n": m["count"]}


def summarise(out: Path, task, done: dict[str, dict], epsilon: float) -> dict:
    """``saturation.json``'s content from the regimes' records."""
    regimes = [
        {
            "regime": name,
            "label": LABELS[name],
            **_figure(record),
            "run": f"runs/{name}",
            "corpus_epsilon": ((record["corpus"].get("privacy") or {}).get("epsilon")),
        }
        for name, record in done.items()
    ]
    summary: dict = {"dataset": task.describe(), "metric": RULE, "regimes": regimes}
    if "no-training" in done:
        grid = read_json(out / "prompted" / "grid.json")
        top = done["no-training"]["selected_checkpoint"]["name"]
        best = next(c for c in grid if c["condition"] == top)
        summary["best_prompted"] = {
            **_figure(done["no-training"]),
            "condition": {k: best[k] for k in ("template", "shots", "seed")},
            "condition_name": top,
            "contains": done["no-training"]["metrics"][CLASSIFICATION]["metrics"]["contains"]["accuracy"],
        }
    if "real" in done:
        summary["fine_tuned"] = {**_figure(done["real"]), "tuning": done["real"]["tuning"]}
    if "best_prompted" in summary and "fine_tuned" in summary:
        prompted, tuned = summary["best_prompted"]["accuracy"], summary["fine_tuned"]["accuracy"]
        summary["gap"] = 100 * (tuned - prompted)
        summary["ratio"] = prompted / tuned if tuned else None
    accuracies = [r["accuracy"] for r in regimes if r["accuracy"] is not None]
    summary["span"] = 100 * (max(accuracies) - min(accuracies)) if len(accuracies) > 1 else None
    summary["dp_epsilon"] = epsilon
    return summary


def write(out: Path, args, task, done: dict[str, dict]) -> dict:
    """Write the three outputs; return the summary."""
    from continuousbench.classification import figure, tables

    summary = summarise(out, task, done, args.epsilon)
    summary["model"], summary["generator_model"] = args.model, args.generator_model or args.model
    summary["beside"] = figure.release_regimes(args.beside, args.beside_rows, args.beside_metric)
    grid = read_json(out / "prompted" / "grid.json") if "no-training" in done else []
    summary["grid"] = grid
    summary["package_version"] = continuousbench.__version__
    write_text(out / "tables.md", tables.markdown(summary, grid, done))
    figure.fig8(out / "fig8.png", summary)
    summary["tables"], summary["figure"] = "tables.md", "fig8.png"
    write_json(out / "saturation.json", summary)
    return summary


def summary_line(summary: dict) -> str:
    """What the command prints: the four regimes and the verdict's numbers."""
    shown = ", ".join(f"{r['label']} {100 * r['accuracy']:.1f}" for r in summary["regimes"])
    ratio = "n/a" if summary.get("ratio") is None else f"{summary['ratio']:.2f}"
    gap = f"; gap {summary['gap']:.1f} pts, ratio {ratio}" if "gap" in summary else ""
    span = f"; span {summary['span']:.1f} pts" if summary.get("span") is not None else ""
    return f"{summary['dataset']['name']}: {shown} (% {RULE}){gap}{span}"
