"""The ``continuousbench`` program: a table of commands, each the ``cli`` of one module.

Every command module parses its own arguments with :class:`continuousbench.commands.CommandParser`
and runs through :func:`continuousbench.commands.run`, so ``continuousbench evaluate ...`` and
``accelerate launch recipes/evaluate.py ...`` are the same parser and the same ``main``. A value that
is itself a table is a command group (``continuousbench build geminon``). Nothing is imported until a
command is chosen, so ``continuousbench --help`` is instant.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Union

# name -> ("module" or "module:function", help) or (a nested table, help)
Table = Mapping[str, tuple[Union[str, "Table"], str]]

COMMANDS: Table = {
    "build": (
        {
            "geminon": ("continuousbench.geminon.command", "Build a Geminon release (track I)."),
            "news": ("continuousbench.news.build", "Build a NEWS release (track II) from CC-News WARC."),
        },
        "Build a release (world or news, corpus, QA, support counts) as a dataset folder.",
    ),
    "news": (
        {
            "extract": ("continuousbench.news.extract", "WARC files -> English articles (trafilatura)."),
            "dedup": ("continuousbench.news.dedup", "Drop exact and near duplicates (containment >= 0.8)."),
            "subsample": ("continuousbench.news.subsample", "Seeded sample: 200k, 600k or all articles."),
            "cluster": ("continuousbench.news.cluster", "Cluster articles into events (kNN + Leiden)."),
            "facts": ("continuousbench.news.facts", "Facts stated in >= 3 reports of the largest clusters."),
            "qa": ("continuousbench.news.qa", "Short-answer questions, answers verbatim in >= 3 articles."),
            "filter": ("continuousbench.news.filter", "Drop closed-book answerable or ambiguous questions."),
            "support": ("continuousbench.news.support", "Count the articles that support each question."),
        },
        "The NEWS pipeline, one stage at a time (build news runs them all).",
    ),
    "verify": ("continuousbench.release.commands:verify_cli", "Check a release against its checksums."),
    "train-generator": ("continuousbench.dp.train", "Train a (DP) generator on a corpus."),
    "synthesize": ("continuousbench.dp.synthesize", "Sample a synthetic corpus from a generator."),
    "pe": ("continuousbench.dp.pe_command", "Private Evolution: a DP corpus from API calls and noisy votes."),
    "private-prediction": (
        "continuousbench.dp.prediction_command",
        "Private prediction: a DP corpus decoded token by token from batches of private prompts.",
    ),
    "evaluate": ("continuousbench.harness.run", "Continue pretraining on a corpus, then score QA."),
    "mauve": (
        "continuousbench.diagnostics.mauve",
        "MAUVE of a corpus against a release corpus (needs the [mauve] extra).",
    ),
    "audit": ("continuousbench.diagnostics.audit", "Empirical lower bound on a generator recipe's epsilon."),
    "leakage": (
        "continuousbench.diagnostics.leakage",
        "Sensitive singleton facts a corpus repeats verbatim.",
    ),
    "release": (
        "continuousbench.study.quarterly",
        "A quarter's releases: build every track, gate, report, publish only when every gate passes.",
    ),
    "gate": (
        "continuousbench.diagnostics.gates",
        "Release gates: unsolvable without the corpus, learnable, fresh against earlier releases.",
    ),
    "contamination": (
        "continuousbench.diagnostics.contamination",
        "Has a model seen a release's corpus? Min-K%++ and Min-K% against an unseen control.",
    ),
    "proxies": (
        "continuousbench.diagnostics.proxies",
        "Rank correlations between QA and proxy metrics (MAUVE, loss, FID, leakage) over a study.",
    ),
    "memorization": (
        "continuousbench.diagnostics.memorization",
        "Verbatim memorisation: training vs held-out documents continued greedily.",
    ),
    "saturation": (
        "continuousbench.classification.saturation",
        "A classification benchmark's four regimes (paper Fig. 8, App. F): is it saturated?",
    ),
    "report": ("continuousbench.results.report", "Runs side by side: intervals, mean ± sd over seeds."),
    "compare": ("continuousbench.results.compare", "Paired difference of two runs, McNemar p."),
    "submit": ("continuousbench.results.submit", "Add a run's results record to a results dataset."),
    "leaderboard": ("continuousbench.leaderboard.export", "A results dataset's ranking as a static page."),
    "publish": (
        {"release": ("continuousbench.release.publish", "Upload a release as a tagged Hub revision.")},
        "Publish to the Hugging Face Hub.",
    ),
    "metric": (
        {
            "install": ("continuousbench.scoring.metric:install_cli", "Install the metric for offline use."),
            "push": ("continuousbench.scoring.metric:push_cli", "Publish the metric module to a Space."),
        },
        "The `evaluate` metric continuousbench/qa_match.",
    ),
    "study": ("continuousbench.study.command", "A study file's jobs on local processes, Slurm or Ray."),
    "demo": ("continuousbench.demo.demo", "The whole study in miniature, on CPU, offline."),
}


def dispatch(table: Table, argv: Sequence[str] | None, prog: str) -> Any:
    """Run ``<prog> <command> ...`` from ``table``; help, version and unknown names in one place."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        width = max(map(len, table))
        lines = [f"usage: {prog} <command> [options]   ({prog} <command> --help for its options)", ""]
        lines += [f"  {name:<{width}}  {help}" for name, (_, help) in table.items()]
        print("\n".join(lines))
        if not args:
            print(f"error: no command given; choose one of {', '.join(table)}", file=sys.stderr)
            raise SystemExit(2)
        return None
    if args[0] == "--version":
        from continuousbench import __version__

        print(f"continuousbench {__version__}")
        return None
    name, rest = args[0], args[1:]
    if name not in table:
        choices = ", ".join(table)
        print(f"error: unknown command {name!r} for {prog}; choose one of {choices}", file=sys.stderr)
        raise SystemExit(2)
    target, _ = table[name]
    if not isinstance(target, str):
        return dispatch(target, rest, f"{prog} {name}")
    module, _, function = target.partition(":")
    from continuousbench.news.offline import register

    register()  # offline:news for every command that takes a model spec (--judge, --llm, --realizer)
    return getattr(importlib.import_module(module), function or "cli")(rest)


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point (``[project.scripts]``).

    A Ctrl-C before a command's own error path takes over (while its libraries are still being imported,
    the first second or so) is one line too: nothing was written yet.
    """
    try:
        dispatch(COMMANDS, argv, "continuousbench")
    except KeyboardInterrupt:
        print("interrupted: nothing was written", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":  # pragma: no cover
    main()
