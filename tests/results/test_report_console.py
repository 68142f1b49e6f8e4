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
