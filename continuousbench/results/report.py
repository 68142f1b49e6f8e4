"""``continuousbench report RUN [RUN ...]``: harness runs side by side, with intervals and seed spread.

Each run's test accuracies are shown with their Wilson 95% interval. Runs whose records differ only by
the harness seed (same release, base model and revision, tuning, steps, candidate corpus and recipe
hash) form a group, shown as mean ± sd over its seeds under its runs. ``--plot`` draws grouped bars
with the runs' intervals; ``--support_plot`` draws accuracy by support count with error bars (paper
Fig. 5): sd over seeds for a group, the interval for a single run. A run given as ``NAME=FOLDER`` is
shown as NAME. ``--mauve ROW=FILE`` adds a MAUVE column (``continuousbench mauve --output`` files; a run
trained on the file's reference corpus gets the reference's disjoint halves, the ceiling), ``--compare``
prints paired comparisons (``compare --json`` outputs) under the table, and ``--findings`` checks the
paper's four findings on the rows ``--finding_rows`` names (:mod:`continuousbench.results.findings`).
The recipe column names each run's harness recipe (its canonical name, or ``non-canonical <digest>``);
LLM-match columns are labelled with their judge, and the table says when its rows were judged by
different judges or by one whose calibration was overridden (such verdicts are not comparable).
Report files are never written into a run folder, and an existing file is replaced only with
``--overwrite``; ``continuousbench study`` runs this command as its ``report`` job.

    continuousbench report runs/syn-seed0 runs/syn-seed1 runs/dp-eps10 --support_plot support.png
    continuousbench report syn=runs/syn dp=runs/dp-eps10 --mauve syn=mauve/syn.json --compare syn-vs-dp.json
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import command, listed, wide_console
from continuousbench.errors import UserError
from continuousbench.files import atomic_write, check_output_files, write_json
from continuousbench.release.layout import QA_PARTS
from continuousbench.results.heldout import heldout_rows, print_heldout
from continuousbench.results.probes import print_probes, read_probes
from continuousbench.scoring.judge import label as judge_label
from continuousbench.scoring.judge import same_judge
from continuousbench.scoring.match import SCORES
from continuousbench.stats import mean_sd

SHORT = {"exact_match": "EM", "contains": "contains", "llm_match": "LLM", "mcq": "MCQ", "mcq_acc": "MCQ acc"}
PARTS = (*QA_PARTS, "classification")  # the parts a table shows (a classification run has its own one)
# The table's and the plot's columns: MCQ's unnormalised pick (lm-eval's acc) stays in --json, not on screen.
SHOWN = tuple(m for m in SCORES if m != "mcq_acc")
__all__ = ["comparison_rows", "format_cell", "load_run", "plot_comparison", "print_table", "seed_groups"]


def load_run(path: str | Path) -> dict:
    """A run's validated ``results.json`` (the results schema is imported here, not with the module, so
    that ``report --help`` does not load pydantic)."""
    from continuousbench.results.record import load

    return load(path)


def comparison_rows(runs: dict[str, dict]) -> list[dict]:
    """One flat row per run: name, release, model, tuning, steps, corpus, kind (DP data / DP model /
    non-private...), epsilon (requested, with the achieved value when it differs), seed, and per
    ``<part>/<matcher>`` its accuracy, ``<part>/<matcher>/ci95`` (None in records older than schema 1)
    and ``/count``."""
    from continuousbench.results.canonical import recipe_label
    from continuousbench.results.labels import epsilon_label, kind_label
    from continuousbench.results.record import benchmark

    rows = []
    for name, r in runs.items():
        row = {
            "run": name,
            "release": benchmark(r)[0],
            "model": r["base_model"],
            "tuning": r["tuning"],
            "steps": r["steps"],
            "corpus": corpus_name(r["corpus"]),
            "kind": kind_label(r),
            "epsilon": epsilon_label(r),
            "seed": r.get("seed"),
            "recipe": recipe_label(r),
            "judge": judge_label(r.get("judge")) if "llm_match" in r.get("matchers", ()) else None,
        }
        for part in PARTS:
            metrics = r["metrics"].get(part, {}).get("metrics", {})
            for m in SCORES:
                if m in metrics:
                    row[f"{part}/{m}"] = metrics[m]["accuracy"]
                    row[f"{part}/{m}/ci95"] = metrics[m].get("ci95")
                    row[f"{part}/{m}/count"] = metrics[m].get("count")
            nll = r["metrics"].get(part, {}).get("answer_nll")
            if nll:  # schema 4: the true answer's mean loss per token
                row[f"{part}/answer_nll"], row[f"{part}/answer_nll/ci95"] = nll["mean"], nll["ci95"]
        rows.append(row)
    return rows


def corpus_name(corpus: dict) -> str:
    """The corpus as a reader knows it: a local file's or folder's name (``syn-eps10``, ``mine.jsonl``;
    the release's own corpus: the release folder's), else the source as given (a Hub id)."""
    source = str(corpus.get("source") or corpus.get("path") or "?")
    local = Path(str(corpus.get("path") or "")).is_absolute()  # the harness resolves local paths
    return Path(source.rstrip("/")).name if local else source


def group_key(record: dict) -> tuple:
    """What must be equal for two runs to differ only by seed."""
    from continuousbench.results.canonical import recipe_digest
    from continuousbench.results.record import benchmark

    corpus = record["corpus"]
    model = (record["base_model"], record.get("base_model_revision"), record["tuning"])
    identity = corpus["fingerprint"] or corpus.get("path") or corpus["source"]  # a DP model: no fingerprint
    budget = (record.get("model_privacy") or {}).get("epsilon")  # a DP model's: not in the recipe's digest
    return (
        *benchmark(record),
        *model,
        record["steps"],
        identity,
        recipe_digest(record),
        budget and f"{budget:.2g}",
    )


def _accuracy(record: dict, part: str, matcher: str) -> float | None:
    return record["metrics"].get(part, {}).get("metrics", {}).get(matcher, {}).get("accuracy")


def _label(names: list[str]) -> str:
    prefix = os.path.commonprefix(names).rstrip("-_ .")
    return prefix or names[0]


def _bucket_spread(records: list[dict], part: str, matcher: str) -> list[dict]:
    """Per support bucket: mean support, and mean and sd over the runs of the bucket's accuracy."""
    by_range: dict[tuple, list[dict]] = {}
    for r in records:
        for b in r["metrics"].get(part, {}).get("buckets", []):
            if b["n"] and b.get(matcher):
                by_range.setdefault((b["low"], b["high"]), []).append(b)
    spread = []
    for (low, high), buckets in by_range.items():
        mean, sd = mean_sd([b[matcher]["accuracy"] for b in buckets])
        support, _ = mean_sd([b["mean_support"] for b in buckets])
        spread.append(
            {"low": low, "high": high, "mean_support": support, "mean": mean, "sd": sd, "runs": len(buckets)}
        )
    return spread


def seed_groups(runs: dict[str, dict]) -> list[dict]:
    """Runs grouped by :func:`group_key`, in order of first appearance, with mean and sd over seeds of
    every accuracy (``metrics``) and of every support bucket (``buckets``)."""
    grouped: dict[tuple, list[str]] = {}
    for name, record in runs.items():
        grouped.setdefault(group_key(record), []).append(name)
    groups = []
    for names in grouped.values():
        records = [runs[n] for n in names]
        metrics = {}
        for part in PARTS:
            for m in SCORES:
                values = [_accuracy(r, part, m) for r in records]
                kept = [v for v in values if v is not None]
                if kept:
                    mean, sd = mean_sd(kept)
                    metrics[f"{part}/{m}"] = {"mean": mean, "sd": sd, "runs": len(kept)}
        buckets = {part: {m: _bucket_spread(records, part, m) for m in SCORES} for part in PARTS}
        groups.append(
            {
                "label": _label(names),
                "runs": names,
                "seeds": [r.get("seed") for r in records],
                "metrics": metrics,
                "buckets": buckets,
            }
        )
    return groups


def judge_warning(records: dict[str, dict]) -> str | None:
    """One line when the LLM-match columns are not comparable across rows: different judges, or a judge
    whose calibration failed and was overridden; None when they are (or nothing was judged)."""
    judged = {name: r.get("judge") for name, r in records.items() if "llm_match" in r.get("matchers", ())}
    if not judged:
        return None
    problems = []
    first = next(iter(judged.values()))
    if len(judged) > 1 and not all(same_judge(first, j) for j in judged.values()):
        shown = "; ".join(f"{name}: {judge_label(j)}" for name, j in judged.items())
        problems.append(f"DIFFERENT JUDGES ({shown}): their LLM columns are not comparable")
    overridden = [name for name, j in judged.items() if ((j or {}).get("calibration") or {}).get("override")]
    if overridden:
        problems.append(
            f"CALIBRATION OVERRIDDEN for {', '.join(overridden)}: their LLM verdicts are not trusted"
        )
    return "; ".join(problems) or None


def format_cell(row: dict, col: str) -> str:
    """``"41.2 [36.5, 46.2]"``: a row's accuracy in percent with its interval, "-" when absent."""
    value, ci = row.get(col), row.get(f"{col}/ci95")
    if value is None:
        return "-"
    return f"{100 * value:.1f}" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


# The settings columns: header, row key.
META = (
    ("model", "model"),
    ("tuning", "tuning"),
    ("steps", "steps"),
    ("corpus", "corpus"),
    ("kind", "kind"),
    ("ε", "epsilon"),
    ("seed", "seed"),
    ("recipe", "recipe"),
)


def _meta_cell(row: dict, key: str) -> str:
    if key == "model":
        return row["model"].rstrip("/").rsplit("/", 1)[-1]
    return "-" if key == "judge" and not row["judge"] else str(row[key])


def print_table(
    rows: list[dict], groups: list[dict] | None = None, console=None, warning: str | None = None
) -> None:
    """Runs with their intervals; under each group of seeds, a row with mean ± sd over them; ``warning``
    (:func:`judge_warning`) under the table. On a console too narrow for it (``COLUMNS``), the settings
    every row shares are said once in the title and the intervals wrap under their accuracies."""
    console = console or wide_console(240)
    table = _table(rows, groups, warning)
    if console.measure(table, options=console.options.update_width(10_000)).maximum > console.width:
        meta = [*META, ("judge", "judge")]
        shared = {h: k for h, k in meta if len({_meta_cell(r, k) for r in rows if k in r}) == 1}
        table = _table(rows, groups, warning, shared)
    console.print(table)


def _table(rows: list[dict], groups: list[dict] | None, warning: str | None, shared: dict | None = None):
    """The rich table of :func:`print_table`; ``shared`` (header -> row key): settings columns said once in
    the title instead, with the accuracy columns allowed to wrap (a narrow console)."""
    from rich.markup import escape
    from rich.table import Table

    shared = shared or {}
    releases = ", ".join(sorted({r["release"] for r in rows}))
    said = ", ".join(f"{h} {_meta_cell(rows[0], k)}" for h, k in shared.items() if h != "judge" or rows[0][k])
    table = Table(
        title=f"ContinuousBench test accuracy (%) on {releases}" + (f"; every run: {said}" if said else ""),
        caption="\\[low, high]: Wilson 95% interval over questions; mean ± sd: over runs that differ only "
        "by seed",
    )
    judged = any(r.get("judge") for r in rows)
    meta = [(h, k) for h, k in (*META, *([("judge", "judge")] if judged else ())) if h not in shared]
    if judged:
        table.caption += "; LLM: LLM match by the judge named"
    if warning:
        table.caption += f"\n{escape(warning)}"
    table.add_column("run", no_wrap=True)  # a seed group's label spans it
    for header, _ in meta:
        table.add_column(header)
    cols = [c for c in (f"{p}/{m}" for p in PARTS for m in SHOWN) if any(c in r for r in rows)]
    for col in cols:
        part, m = col.split("/")
        table.add_column(f"{part.removeprefix('qa_')} {SHORT[m]}", justify="right", no_wrap=not shared)
    mauve = any(r.get("mauve") is not None for r in rows)
    if mauve:
        table.add_column("MAUVE", justify="right")
        table.caption += "; MAUVE: mean ± sd over draws, vs the real corpus"
    by_name = {r["run"]: r for r in rows}
    for group in groups or [{"runs": [r["run"]], "metrics": {}} for r in rows]:
        for name in group["runs"]:
            r = by_name[name]
            extra = [_mauve_cell(r)] if mauve else []
            cells = [_meta_cell(r, k) for _, k in meta]
            table.add_row(r["run"], *cells, *(format_cell(r, c) for c in cols), *extra)
        if len(group["runs"]) > 1:
            stats = [group["metrics"].get(c) for c in cols]
            cells = [
                "-" if s is None else f"{100 * s['mean']:.1f} ± {100 * (s['sd'] or 0):.1f}" for s in stats
            ]
            label = f"{group['label']}: mean ± sd, {len(group['runs'])} seeds"
            extra = [""] if mauve else []
            table.add_row(f"[bold]{escape(label)}", *[""] * len(meta), *cells, *extra, end_section=True)
    return table


def _mauve_cell(row: dict) -> str:
    return "-" if row.get("mauve") is None else f"{row['mauve']:.3f} ± {row['mauve_std']:.3f}"


def plot_comparison(rows: list[dict], path: Path) -> Path:
    """Grouped bars: one group per run, one bar per part x matcher, with the run's Wilson intervals."""
    from continuousbench.results.plots import grouped_bars

    cols = [c for c in (f"{p}/{m}" for p in PARTS for m in SHOWN) if any(c in r for r in rows)]
    bars = {}
    for col in cols:
        part, m = col.split("/")
        values = []
        for r in rows:
            acc, ci = r.get(col), r.get(f"{col}/ci95")
            values.append(None if acc is None else (acc, *(ci or (acc, acc))))
        bars[f"{part} {SHORT[m]}"] = values
    caption = "error bars: Wilson 95% interval over questions"
    return grouped_bars(path, [r["run"] for r in rows], bars, caption=caption)


def plot_support(groups: list[dict], runs: dict[str, dict], path: Path, matcher: str) -> Path:
    """Accuracy by support count, one line per group and part: sd over seeds, or one run's interval."""
    from continuousbench.results.plots import Series, accuracy_by_support, bucket_series
    from continuousbench.results.record import benchmark

    series = []
    for group in groups:
        for part in PARTS:
            label = f"{group['label']} {part.removeprefix('qa_')}"
            if len(group["runs"]) == 1:
                record = runs[group["runs"][0]]
                s = bucket_series(label, record["metrics"].get(part, {}).get("buckets", []), matcher)
            else:
                points = [b for b in group["buckets"][part][matcher] if b["mean"] is not None]
                sd = [b["sd"] or 0.0 for b in points]
                s = (
                    Series(
                        f"{label} ({len(group['runs'])} seeds)",
                        [b["mean_support"] for b in points],
                        [b["mean"] for b in points],
                        [b["mean"] - d for b, d in zip(points, sd, strict=True)],
                        [b["mean"] + d for b, d in zip(points, sd, strict=True)],
                    )
                    if points
                    else None
                )
            if s is not None:
                series.append(s)
    caption = "error bars: ± sd over seeds (runs differing only by seed), else a run's Wilson 95% interval"
    releases = ", ".join(sorted({benchmark(r)[0] for r in runs.values()}))
    return accuracy_by_support(path, series, f"{matcher} by support count on {releases}", caption=caption)


@dataclass
class ReportArguments:
    runs: list[str] = listed("Run folders (or their results.json).", positional=True)
    plot: str | None = field(default=None, metadata={"help": "Write grouped bars (PNG) here."})
    support_plot: str | None = field(
        default=None, metadata={"help": "Write accuracy by support count with error bars (PNG) here."}
    )
    matcher: str = field(
        default="exact_match", metadata={"help": "Matcher of --support_plot.", "choices": list(SCORES)}
    )
    json: str | None = field(default=None, metadata={"help": "Write runs and seed groups as JSON here."})
    mauve: list[str] = listed("ROW=FILE: the row's MAUVE from a `continuousbench mauve --output` file.")
    compare: list[str] = listed("`continuousbench compare --json` outputs to print.")
    findings: str | None = field(
        default=None, metadata={"help": "Check the paper's four findings; write them as JSON here."}
    )
    finding_rows: list[str] = listed("ROLE=ROW for --findings: none, real, syn, dp_syn, dp_syn_mauve.")
    memorization: list[str] = listed(
        "NAME=FILE: a `continuousbench memorization --output` file, shown below."
    )
    overwrite: bool = field(default=False, metadata={"help": "Replace existing output files."})


def check_one_release_per_id(records: dict[str, dict]) -> None:
    """Refuse runs on two different releases that carry the same id (a rebuilt or edited release): one
    table would put their numbers side by side as if they were comparable."""
    from continuousbench.results.record import benchmark

    seen: dict[str, tuple[str, str | None]] = {}
    for name, record in records.items():
        rid, digest = benchmark(record)
        first = seen.setdefault(rid, (name, digest))
        if digest and first[1] and digest != first[1]:
            raise UserError(
                f"{first[0]} and {name} ran on two different releases both named {rid} (manifest "
                f"{first[1][:12]} vs {digest[:12]}); report runs of one release build at a time"
            )


def _named(items: list[str]) -> list[tuple[str | None, Path]]:
    """``NAME=FOLDER`` or ``FOLDER`` items (a path that exists as given is a path, ``=`` and all)."""
    named = []
    for item in items:
        name, sep, path = item.partition("=")
        plain = not sep or not name or Path(item).expanduser().exists()
        named.append((None, Path(item).expanduser()) if plain else (name, Path(path).expanduser()))
    return named


def add_mauve(rows: list[dict], records: dict[str, dict], items: list[str]) -> None:
    """Each ``ROW=FILE`` row gets the file's MAUVE (``mauve``, ``mauve_std``): its candidate's score, or,
    for a run trained on the file's reference corpus itself, the reference's disjoint halves."""
    from continuousbench.files import read_json

    by_name = {r["run"]: r for r in rows}
    for row in rows:
        row["mauve"] = row["mauve_std"] = None
    for item in items:
        name, _, file = item.partition("=")
        if name not in by_name or not Path(file).is_file():
            raise UserError(
                f"--mauve {item}: give ROW=FILE, a row of this report and a file from "
                "`continuousbench mauve --output`"
            )
        scores = read_json(file)
        corpus = records[name]["corpus"]
        trained_on = Path(str(corpus.get("path") or corpus["source"])).resolve()
        on_reference = trained_on == Path(scores["reference"]).resolve()
        score = scores.get("reference_disjoint") if on_reference else scores["candidate_vs_reference"]
        if score is None:
            raise UserError(
                f"--mauve {item}: {name} trained on the reference corpus, but {file} has no "
                "disjoint halves of it; write it with --with_reference true"
            )
        by_name[name]["mauve"], by_name[name]["mauve_std"] = score["mean"], score["std"]


def main(args: ReportArguments) -> dict:
    """Load the runs, print the table (and comparisons, findings), write the requested files; return
    ``{"runs", "seed_groups"}`` (and ``"findings"``)."""

    from continuousbench.files import read_json
    from continuousbench.results import findings
    from continuousbench.results.compare import print_comparison

    if not args.runs:
        raise UserError("no runs given: continuousbench report RUN [RUN ...]")
    named = _named(args.runs)
    for _, path in named:  # before the output checks: a missing run's parent is no input of this report
        if not path.exists():
            raise UserError(
                f"run {path} does not exist: give a finished run folder (`continuousbench "
                "evaluate --output_dir`) or its results.json"
            )
    run_dirs = [p if p.is_dir() else p.parent for _, p in named]
    outputs = check_output_files(  # before any work; never into a run folder, never over a file silently
        {
            "--plot": args.plot,
            "--support_plot": args.support_plot,
            "--json": args.json,
            "--findings": args.findings,
        },
        overwrite=args.overwrite,
        keep_out=run_dirs,
    )
    if args.findings and not args.compare:
        raise UserError("--findings needs --compare <syn vs dp_syn comparison> and --finding_rows ROLE=ROW")
    records: dict[str, dict] = {}
    folders: dict[str, Path] = {}
    for (given, path), folder in zip(named, run_dirs, strict=True):
        name = given or (folder.name if folder.name not in records else str(path))  # same name twice
        if name in records:
            raise UserError(f"two runs are named {name}; give each its own NAME=FOLDER")
        records[name], folders[name] = load_run(path), folder
        try:  # each record on its own first, so that a malformed one is named
            comparison_rows({name: records[name]}), seed_groups({name: records[name]})
        except (KeyError, TypeError) as err:
            what = f"lacks {err}" if isinstance(err, KeyError) else f"has a field of the wrong type ({err})"
            raise UserError(
                f"{folder / 'results.json'} {what}; is it from `continuousbench evaluate`?"
            ) from None
    check_one_release_per_id(records)
    rows, groups = comparison_rows(records), seed_groups(records)
    probed = read_probes(args.memorization)  # before anything is printed or written
    if args.mauve:
        add_mauve(rows, records, args.mauve)
    roles = findings.parse_roles(args.finding_rows, rows) if args.findings else {}
    console = wide_console(240)
    warning = judge_warning(records)
    print_table(rows, groups, console, warning)
    names = {folder.resolve(): name for name, folder in folders.items()}
    comparisons = []
    for file in args.compare:
        if not Path(file).is_file():
            raise UserError(f"--compare {file} does not exist; pass a `compare --json` output")
        comparisons.append(read_json(file))
        pair = [names.get(Path(comparisons[-1][k]).resolve()) for k in ("run_a", "run_b")]
        print_comparison(comparisons[-1], console, names=None if None in pair else pair)
    if probed:
        print_probes(probed, console)
    held = heldout_rows(records)
    if held:
        print_heldout(held, console, format_cell, SHORT)
    if "--plot" in outputs:
        plot_comparison(rows, outputs["--plot"])
    if "--support_plot" in outputs:
        plot_support(groups, records, outputs["--support_plot"], args.matcher)
    result = {"runs": rows, "seed_groups": groups, "judge_warning": warning}
    if probed:
        result["memorization"] = probed
    if held:
        result["heldout"] = held
    if roles:
        paired = findings.paired_for(comparisons, folders[roles["syn"]], folders[roles["dp_syn"]])
        result["findings"] = findings.check(rows, roles, paired)
        findings.print_findings(result["findings"], console)
        write_json(outputs["--findings"], result["findings"])
    if "--json" in outputs:
        text = json.dumps(result, indent=2)
        atomic_write(outputs["--json"], lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))
    return result


make_parser, cli = command(
    ReportArguments,
    "continuousbench report",
    __doc__.splitlines()[0],
    main,
)
