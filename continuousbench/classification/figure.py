"""Fig. 8: the four regimes of a classification benchmark beside a ContinuousBench release's, each with
its 95% interval, so that the band a saturated benchmark leaves (a few points) shows next to the range a
release spans.

The release's regimes come from ``--beside``: a ``report --json`` file (the demo's
``report/results.json``), whose rows are picked by role (default: the demo's and the paper's row names,
:data:`DEMO_ROWS`; ``--beside_rows ROLE=ROW`` changes them), or ``ROLE=RUN`` items naming four
``evaluate`` run folders. Roles: ``none`` (no training), ``dp_syn``, ``syn``, ``real``.
"""

from __future__ import annotations

from pathlib import Path

from continuousbench.errors import UserError

ROLES = {"none": "no-training", "dp_syn": "dp-syn", "syn": "syn", "real": "real"}
DEMO_ROWS = {"none": "no-training", "dp_syn": "dp-syn-eps10", "syn": "syn", "real": "train-on-real"}
LABELS = {
    "no-training": "no training",
    "dp-syn": "DP-synth",
    "syn": "non-private synth",
    "real": "train on real",
}


def _pairs(items: list[str], option: str) -> dict[str, str]:
    pairs = dict(item.split("=", 1) for item in items if "=" in item)
    if len(pairs) != len(items) or set(pairs) - set(ROLES):
        raise UserError(f"{option} takes ROLE=VALUE items with ROLE one of {', '.join(ROLES)}; got {items}")
    return pairs


def release_regimes(items: list[str], rows: list[str], metric: str) -> dict | None:
    """The release's four regimes for Fig. 8 (None when ``items`` is empty)."""
    if not items:
        return None
    part, _, matcher = metric.partition("/")
    if len(items) == 1 and items[0].endswith(".json"):
        from continuousbench.files import read_json

        report = read_json(Path(items[0]).expanduser())
        by_name = {r["run"]: r for r in report.get("runs", [])}
        chosen = {**DEMO_ROWS, **_pairs(rows, "--beside_rows")}
        missing = [row for row in chosen.values() if row not in by_name]
        if missing:
            raise UserError(
                f"--beside {items[0]} has no row {missing[0]} (rows: {', '.join(by_name)}); "
                "name the rows with --beside_rows ROLE=ROW"
            )
        picked = {role: by_name[row] for role, row in chosen.items()}
        values = {role: (r.get(metric), r.get(f"{metric}/ci95")) for role, r in picked.items()}
        release = next(iter(picked.values()))["release"]
    else:
        from continuousbench.results.record import benchmark, load

        records = {role: load(folder) for role, folder in _pairs(items, "--beside").items()}
        values = {}
        for role, r in records.items():
            m = r["metrics"].get(part, {}).get("metrics", {}).get(matcher) or {}
            values[role] = (m.get("accuracy"), m.get("ci95"))
        release = benchmark(next(iter(records.values())))[0]
    regimes = [
        {"regime": ROLES[role], "label": LABELS[ROLES[role]], "accuracy": acc, "ci95": ci}
        for role in ROLES
        if role in values
        for acc, ci in [values[role]]
    ]
    return {"source": items, "release": release, "metric": metric, "regimes": regimes}


def fig8(path: Path, summary: dict) -> Path:
    """One panel for the dataset's regimes, one for the release's when given."""
    from continuousbench.results.plots import regime_panels

    def points(regimes: list[dict]) -> list:
        return [
            (r["label"], r["accuracy"], *(r["ci95"] or (r["accuracy"], r["accuracy"])))
            for r in regimes
            if r["accuracy"] is not None
        ]

    span = summary.get("span")
    name = f"{summary['dataset']['name']}\nclassification exact match"
    panels = {name + (f" (span {span:.1f} pts)" if span is not None else ""): points(summary["regimes"])}
    beside = summary.get("beside")
    if beside:
        accs = [r["accuracy"] for r in beside["regimes"] if r["accuracy"] is not None]
        wide = f" (span {100 * (max(accs) - min(accs)):.1f} pts)" if len(accs) > 1 else ""
        panels[f"{beside['release']}\n{beside['metric']}{wide}"] = points(beside["regimes"])
    caption = "error bars: Wilson 95% interval over test items; classification: exact match"
    return regime_panels(path, panels, title="Four training regimes (paper Fig. 8)", caption=caption)
