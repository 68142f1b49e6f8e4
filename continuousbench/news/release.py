"""Assemble a NEWS release from the stage outputs: corpus, ``qa_public``, ``support_counts`` (App. H).

The corpus is every subsampled article (clustered or not), split into ``train`` and a small seeded
``validation``. Support is counted over ``corpus/train`` only, since that is what a participant trains
on: an article of the validation split never counts. Questions are split by cluster, so no event has
questions in both ``validation`` and ``test``. The canonical evaluation (paper §2.2) is recorded in the
manifest and the card: LLM-match on ``qa_public/test`` questions with support >= 200, strata 400/600/800.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.errors import UserError
from continuousbench.news.articles import ARTICLE_COLUMNS

EVALUATION = {
    "part": "qa_public",
    "split": "test",
    "primary_metric": "llm_match",
    "selection_metric": "contains",
    "min_support": 200,
    "strata": [400, 600, 800],
}
QA_COLUMNS = (
    "id",
    "question",
    "answer",
    "aliases",
    "support_count",
    "cluster",
    "verbatim_count",
    "closed_book_answer",
)


def split_corpus(rows: list[dict], fraction: float, seed: int) -> dict[str, list[dict]]:
    """Shuffle the articles (by id first, so the input order does not matter) and hold out ``fraction``."""
    rows = sorted(rows, key=lambda r: r["id"])
    order = np.random.default_rng(seed).permutation(len(rows))
    n_val = max(1, round(fraction * len(rows))) if len(rows) > 1 else 0
    shuffled = [rows[i] for i in order]
    return {"train": shuffled[n_val:], "validation": shuffled[:n_val]}


def split_questions(rows: list[dict], fraction: float, seed: int) -> dict[str, list[dict]]:
    """Whole clusters to ``validation`` until it holds ``fraction`` of the questions, the rest to ``test``;
    with a single cluster its questions are split instead, so that both splits have rows."""
    rows = sorted(rows, key=lambda r: (r["cluster"], r["id"]))
    clusters = sorted({r["cluster"] for r in rows})
    if len(rows) < 2:
        raise UserError(
            f"only {len(rows)} question(s) survived the pipeline; a release needs validation and test "
            "questions: see the stats.json of each stage for where they were dropped"
        )
    target = max(1, round(fraction * len(rows)))
    if len(clusters) == 1:
        return {"validation": rows[:target], "test": rows[target:]}
    held: set[int] = set()
    for c in np.random.default_rng(seed).permutation(clusters).tolist():
        if sum(r["cluster"] in held for r in rows) >= target or len(held) == len(clusters) - 1:
            break
        held.add(c)
    return {
        "validation": [r for r in rows if r["cluster"] in held],
        "test": [r for r in rows if r["cluster"] not in held],
    }


def assemble(
    articles: list[dict], questions: list[dict], *, corpus_validation: float, qa_validation: float, seed: int
) -> dict[str, dict[str, list[dict]]]:
    """Release parts as row lists: ``corpus``, ``qa_public`` and ``support_counts``."""
    rng = np.random.SeedSequence(seed).spawn(2)
    corpus = split_corpus(
        [{c: a.get(c) for c in ARTICLE_COLUMNS} for a in articles],
        corpus_validation,
        int(rng[0].generate_state(1)[0]),
    )
    train = {r["id"] for r in corpus["train"]}
    counted = []
    for q in questions:
        ids = sorted(i for i in q["supporting_ids"] if i in train)
        counted.append({**q, "supporting_ids": ids, "support_count": len(ids)})
    qa = split_questions(counted, qa_validation, int(rng[1].generate_state(1)[0]))
    support = [
        {
            "id": q["id"],
            "support_count": q["support_count"],
            "article_ids": q["supporting_ids"],
            "candidates": q.get("candidates", 0),
            "split": split,
        }
        for split in ("validation", "test")
        for q in qa[split]
    ]
    public = {
        s: [{c: ([] if c == "aliases" else q.get(c)) for c in QA_COLUMNS} for q in rows]
        for s, rows in qa.items()
    }
    return {"corpus": corpus, "qa_public": public, "support_counts": {"train": support}}


def datasets(parts: dict[str, dict[str, list[dict]]]):
    """The parts as ``datasets.Dataset`` objects with fixed features (same data, same bytes)."""
    from datasets import Dataset, Features, List, Value

    string, integer = Value("string"), Value("int64")
    features = {
        "corpus": Features({c: string for c in ARTICLE_COLUMNS}),
        "qa_public": Features(
            {
                "id": string,
                "question": string,
                "answer": string,
                "aliases": List(string),
                "support_count": integer,
                "cluster": integer,
                "verbatim_count": integer,
                "closed_book_answer": string,
            }
        ),
        "support_counts": Features(
            {
                "id": string,
                "support_count": integer,
                "article_ids": List(string),
                "candidates": integer,
                "split": string,
            }
        ),
    }
    return {
        config: {
            split: Dataset.from_dict(
                {k: [r[k] for r in rows] for k in features[config]}, features=features[config]
            )
            for split, rows in splits.items()
        }
        for config, splits in parts.items()
    }


def write(
    release_id: str,
    parts: dict,
    *,
    root: Path | None,
    seed: int,
    generator: dict[str, Any],
    overwrite: bool,
    min_support: int = 200,
    notes: Sequence[str] = (),
) -> Path:
    from continuousbench.release.write import write_release

    evaluation = {**EVALUATION, "min_support": min_support}
    notes = [
        "Each `corpus` row is one news article. `qa_public` questions come from clusters of articles "
        "about one event; `support_count` is the number of `corpus/train` articles with which a reader "
        "model answers the question correctly although it cannot without them (`support_counts` lists "
        "them). Questions of one event are all in `validation` or all in `test`. A rebuild is byte for "
        "byte the same given the same WARC files and the same model answers (a deterministic model, or "
        "the stages' answer caches).",
        *notes,
    ]
    return write_release(
        release_id,
        datasets(parts),
        root=root,
        seed=seed,
        generator=generator,
        overwrite=overwrite,
        card_notes="\n\n".join(notes),
        evaluation=evaluation,
    )
