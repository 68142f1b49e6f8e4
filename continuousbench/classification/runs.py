"""A regime's run folder: ``results.json`` (the results record, schema 5: ``task`` classification) and
``predictions.parquet`` (one row per test text), so that ``report``, ``compare`` and ``submit`` read a
saturation study's runs as they read the harness's.

A run is written in a hidden work folder and published whole
(:class:`continuousbench.staged_output.StagedOutput`), so a study killed mid-way never leaves half a run
that a rerun would take as finished.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import continuousbench
from continuousbench.files import write_json
from continuousbench.results.record import PREDICTIONS, RESULTS
from continuousbench.results.schema import CLASSIFICATION, CLASSIFICATION_VERSION, SCHEMA
from continuousbench.staged_output import StagedOutput

COMMAND = "classify"


def finished(folder: Path) -> bool:
    return (folder / RESULTS).is_file()


def corpus_block(source: str, texts: list[str]) -> dict:
    """``corpus``: what the classifier trained on (its statement read from ``privacy.json`` beside it)."""
    from continuousbench.results.privacy_statement import stated_privacy
    from continuousbench.training.data import corpus_fingerprint

    path = Path(source)
    privacy, where = stated_privacy(path) if path.is_dir() else (None, None)
    return {
        "source": source,
        "path": str(path.resolve()) if path.exists() else None,
        "cut": None,
        "documents": len(texts),
        "fingerprint": corpus_fingerprint(texts),
        "replay": None,
        "privacy": privacy,
        "privacy_source": where,
    }


def record(
    *,
    task,
    model: str,
    tuning: str,
    steps: int,
    scores: dict,
    validation: dict | None,
    corpus: dict,
    settings: dict,
    seed: int,
    selected: str,
    rule: str,
    tokens_per_step: int = 0,
) -> dict:
    """The validated results record of one regime."""
    from continuousbench.results import schema
    from continuousbench.scoring.match import INTERVAL

    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()
    part = {k: scores[k] for k in ("n", "metrics", "by_class", "unparseable")}
    contains = validation["metrics"]["contains"]["accuracy"] if validation else None
    data = {
        "schema": SCHEMA,
        "schema_version": CLASSIFICATION_VERSION,
        "task": "classification",
        "release": None,
        "dataset": task.describe(),
        "base_model": model,
        "base_model_revision": None,
        "model": {"given": model},
        "generation": None,
        "tuning": tuning,
        "package_version": continuousbench.__version__,
        "recipe": {
            "given": None,
            "path": None,
            "file_sha256": None,
            "sha256": digest,
            "settings": settings,
            "name": None,
            "canonical": False,
            "why_not_canonical": "a classification run (saturation)",
        },
        "corpus": {**corpus, "generation": _generation(corpus["source"])},
        "seed": seed,
        "steps": steps,
        "tokens_per_step": tokens_per_step,
        "model_args": {"model": model, "tuning": tuning},
        "harness_args": {},
        "training_args": settings,
        "selected_checkpoint": {
            "name": selected,
            "step": steps,
            "validation_contains": contains,
            "rule": rule,
            "tied_steps": [],
        },
        "validation_history": [],
        "statistics": dict(INTERVAL),
        "matchers": ["exact_match", "contains"],
        "metrics": {CLASSIFICATION: part},
    }
    return schema.check(json.loads(json.dumps(data, default=str)), "the classification run's results.json")


def _generation(source: str) -> dict | None:
    file = Path(source) / "synthesis.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None


def predictions(task, scores: dict, rows: dict):
    """One row per test text: the reply, the labels read under each rule, and whether each is right."""
    import pandas as pd

    names = task.names
    label = lambda i: None if i is None else names[i]  # noqa: E731
    return pd.DataFrame(
        {
            "part": CLASSIFICATION,
            "split": "test",
            "id": [str(i) for i in range(len(task.test))],
            "text": list(task.test["text"]),
            "answer": [names[int(y)] for y in task.test["label"]],
            "prediction": rows["reply"],
            "exact_label": [label(i) for i in rows["exact_label"]],
            "contains_label": [label(i) for i in rows["contains_label"]],
            "exact_match": scores["per_example"]["exact_match"],
            "contains": scores["per_example"]["contains"],
            "support_count": 0,
        }
    )


def write_run(folder: Path, results: dict, table, *, overwrite: bool = False) -> Path:
    """Publish ``results.json`` and ``predictions.parquet`` in ``folder`` (staged, then moved in place)."""
    from continuousbench.harness.outputs import write_predictions

    staged = StagedOutput(folder, COMMAND, overwrite=overwrite)
    write_predictions(staged.work / PREDICTIONS, table)
    write_json(staged.work / RESULTS, results)
    return staged.publish([RESULTS, PREDICTIONS])
