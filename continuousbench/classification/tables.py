"""The App. F tables of a saturation study, in markdown, in the paper's shapes: the summary (Tables 16,
21), the prompting grid (17, 22), per-seed variance (18, 23), per-class accuracy (19, 24), fine-tuning
results (20, 25) and the four regimes with their intervals (26). Entries are percentages; "a / b" is
exact match / contains, as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from continuousbench.results.schema import CLASSIFICATION
from continuousbench.stats import mean_sd


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _both(metrics: dict) -> str:
    return f"{_pct(metrics['exact_match']['accuracy'])} / {_pct(metrics['contains']['accuracy'])}"


def _table(header: Sequence[str], rows: list[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def summary_table(summary: dict) -> str:
    best, tuned = summary.get("best_prompted"), summary.get("fine_tuned")
    if not best or not tuned:
        return "(needs the no-training and real regimes)"
    ratio = "-" if summary.get("ratio") is None else f"{summary['ratio']:.2f}"
    row = [
        summary["model"],
        f"{_pct(best['accuracy'])} ({best['condition_name']})",
        _pct(tuned["accuracy"]),
        f"{summary['gap']:.1f}",
        ratio,
    ]
    return _table(["Model", "Best prompted", "Fine-tuned", "Gap (pts)", "Prompted / FT"], [row])


def grid_table(grid: list[dict]) -> str:
    """Per template: 0-shot, then each k's mean over seeds (exact / contains)."""
    shots = sorted({c["shots"] for c in grid})
    rows = []
    for template in dict.fromkeys(c["template"] for c in grid):
        cells = [template]
        for k in shots:
            runs = [c["metrics"] for c in grid if c["template"] == template and c["shots"] == k]
            means = {m: mean_sd([r[m]["accuracy"] for r in runs])[0] for m in ("exact_match", "contains")}
            cells.append(f"{_pct(means['exact_match'])} / {_pct(means['contains'])}" if runs else "-")
        rows.append(cells)
    header = ["Template", *[f"{k}-shot" + (" (mean)" if k else "") for k in shots]]
    return _table(header, rows)


def seed_table(grid: list[dict]) -> str:
    """Few-shot exact match by seed, with mean ± sd over seeds."""
    seeds = sorted({c["seed"] for c in grid if c["seed"] is not None})
    rows = []
    for template in dict.fromkeys(c["template"] for c in grid):
        for k in sorted({c["shots"] for c in grid if c["shots"]}):
            by_seed = {
                c["seed"]: c["metrics"]["exact_match"]["accuracy"]
                for c in grid
                if c["template"] == template and c["shots"] == k
            }
            mean, sd = mean_sd(list(by_seed.values()))
            spread = f"{_pct(mean)} ± {100 * (sd or 0):.1f}"
            rows.append([template, k, *(_pct(by_seed.get(s)) for s in seeds), spread])
    return _table(["Template", "k", *(f"Seed {s}" for s in seeds), "Mean ± sd"], rows)


def class_table(grid: list[dict], names: Sequence[str]) -> str:
    """Per class, over every condition pooled (each test text counted once per condition)."""
    rows, macro = [], {"exact_match": [], "contains": []}
    for name in names:
        blocks = [c["by_class"][name] for c in grid if name in c["by_class"]]
        n = sum(b["n"] for b in blocks)
        cells = [name, n]
        for m in ("exact_match", "contains"):
            right = sum(b["n"] * (b[m]["accuracy"] or 0) for b in blocks)
            macro[m].append(right / n if n else None)
        cells.append(f"{_pct(macro['exact_match'][-1])} / {_pct(macro['contains'][-1])}")
        rows.append(cells)
    average = {m: mean_sd([v for v in vs if v is not None])[0] for m, vs in macro.items()}
    rows.append(["*Macro avg*", "", f"{_pct(average['exact_match'])} / {_pct(average['contains'])}"])
    return _table(["Class", "N (texts x conditions)", "Accuracy"], rows)


def fine_tuning_table(done: dict[str, dict]) -> str:
    rows = []
    for name in ("real", "syn", "dp-syn"):
        record = done.get(name)
        if record is None:
            continue
        trained, settings = record["harness_args"]["trained"], record["recipe"]["settings"]
        lora = f"LoRA (r={trained.get('lora_r')}, α={trained.get('lora_alpha')})"
        tuning = "Full FT" if trained["tuning"] == "full" else lora
        eps = (record["corpus"].get("privacy") or {}).get("epsilon")
        dp = f"DP-synth (ε={eps:.3g})" if eps else "DP-synth"
        data = {"real": "Real", "syn": "Non-DP synth", "dp-syn": dp}
        batch = f"{settings['batch_size']} × {settings['gradient_accumulation']}"
        hyper = f"lr={settings['learning_rate']:g}, bs={batch}"
        validation = record["harness_args"]["validation"]["exact_match"]["accuracy"]
        test = record["metrics"][CLASSIFICATION]["metrics"]["exact_match"]["accuracy"]
        rows.append(
            [
                record["base_model"],
                tuning,
                data[name],
                hyper,
                _pct(validation),
                _pct(test),
                f"{trained['train_seconds']:.0f}",
            ]
        )
    return _table(["Model", "Tuning", "Train data", "Hyperparams", "Val acc", "Test acc", "Train (s)"], rows)


def regime_table(summary: dict) -> str:
    def cell(r: dict) -> str:
        low, high = r["ci95"] or (None, None)
        return f"{_pct(r['accuracy'])} [{_pct(low)}, {_pct(high)}]"

    regimes = summary["regimes"]
    return _table([r["label"] for r in regimes], [[cell(r) for r in regimes]])


def markdown(summary: dict, grid: list[dict], done: dict[str, dict]) -> str:
    """Every table with its caption, as one markdown document."""
    name, n = summary["dataset"]["name"], summary["dataset"]["sizes"]["test"]
    parts = [
        f"# Saturation on {name} ({n} test texts, {summary['model']})\n",
        "## Summary (Tables 16, 21): best prompted is the maximum over the grid, by test exact match\n",
        summary_table(summary),
        "\n## Regimes (Table 26, Fig. 8): test exact match, Wilson 95% interval\n",
        regime_table(summary),
    ]
    if grid:
        parts += [
            "\n## Prompting grid (Tables 17, 22): exact / contains; few-shot: mean over seeds\n",
            grid_table(grid),
            "\n## Few-shot exact match by seed (Tables 18, 23)\n",
            seed_table(grid),
            "\n## Per-class accuracy, every condition pooled (Tables 19, 24): exact / contains\n",
            class_table(grid, summary["dataset"]["classes"]),
        ]
    tuned = fine_tuning_table(done)
    if tuned.count("\n") > 1:
        parts += ["\n## Fine-tuning (Tables 20, 25)\n", tuned]
    unparseable = {r: rec["metrics"][CLASSIFICATION]["unparseable"] for r, rec in done.items()}
    shown = "; ".join(f"{r}: {u['exact_match']} / {u['contains']}" for r, u in unparseable.items())
    parts.append(f"\nUnparseable replies (exact / contains, counted wrong): {shown}.\n")
    return "\n".join(parts)
