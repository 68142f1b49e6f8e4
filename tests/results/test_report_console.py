"""``report`` on a console: the table fits ``COLUMNS`` and names each corpus by its name."""

from __future__ import annotations

import json

import pytest

from continuousbench.results.report import corpus_name


@pytest.mark.parametrize(
    ("corpus", "name"),
    [
        ({"source": "runs/syn-eps10/", "path": "/home/u/runs/syn-eps10"}, "syn-eps10"),
        ({"source": "mine.jsonl", "path": "/home/u/mine.jsonl"}, "mine.jsonl"),
        ({"source": "my-org/synthetic-news", "path": "my-org/synthetic-news"}, "my-org/synthetic-news"),
    ],
)
def test_corpus_names(corpus, name):
    assert corpus_name(corpus) == name


def test_the_table_fits_columns_and_names_the_corpus(invoke, finished_run, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = invoke(["report", str(finished_run)])
    assert result.exit_code == 0, result.output
    widest = max(map(len, result.stdout.splitlines()))
    assert widest <= 100, result.stdout  # it was ~155 whatever COLUMNS said
    record = json.loads((finished_run / "results.json").read_text())
    assert corpus_name(record["corpus"]) in result.stdout
    assert record["corpus"]["fingerprint"][:8] not in result.stdout


def _row(run: str, corpus: str, kind: str) -> dict:
    row = {
        "run": run,
        "release": "geminon-tiny-2026q1",
        "model": "/m/demo/base",
        "tuning": "full",
        "steps": 2,
        "corpus": corpus,
        "kind": kind,
        "epsilon": "8",
        "seed": 0,
        "recipe": "geminon-tiny-demo",
        "judge": None,
    }
    scores = ("exact_match", "contains", "mcq")
    for key in (f"{part}/{m}" for part in ("qa_public", "qa_singleton") for m in scores):
        row[key], row[f"{key}/ci95"] = 0.5, [0.188, 0.812]
    return row


def test_six_score_columns_on_120_columns_keep_every_row_readable():
    """EM, contains and MCQ of both parts (the ranked-choice columns) on 120 columns: the settings every
    row shares go to the title and the intervals wrap; the settings columns had collapsed to nothing
    (``┃┃┃┃``), the run names to ``m…``."""
    from rich.console import Console

    from continuousbench.results.report import print_table

    console = Console(width=120, record=True)
    rows = [_row("mine", "mine", "DP data"), _row("real", "release", "non-private data")]
    print_table(rows, console=console)
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 120
    assert "┃┃" not in text and "││" not in text
    for shown in ("mine ", "real ", "DP data", "every run: model base, tuning full, steps 2, ε 8, seed 0"):
        assert shown in text, shown
    wide = Console(width=240, record=True)
    print_table([_row("mine", "mine", "DP data")], console=wide)
    text = wide.export_text()
    assert "every run" not in text and "geminon-tiny-demo │" in text
