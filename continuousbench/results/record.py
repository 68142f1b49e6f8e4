"""A run's results record (``results.json``): read it from a run folder, or build it from the harness's
raw results. Its schema is :mod:`continuousbench.results.schema`."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

from continuousbench.errors import UserError
from continuousbench.results.privacy_statement import corpus_privacy
from continuousbench.results.schema import SCHEMA, SCHEMA_VERSION, check
from continuousbench.scoring.match import INTERVAL

# The files of a run folder that the results layer reads (the harness writes them).
RESULTS = "results.json"
PREDICTIONS = "predictions.parquet"

logger = logging.getLogger(__name__)

SELECTION_RULE = (
    "highest validation qa_public contains accuracy; among equal scores the earliest step "
    "(Trainer replaces the best checkpoint only when a later one is strictly better)"
)


def load(path: str | Path) -> dict:
    """The record in a run folder (or a results JSON file), unvalidated; errors are one line."""
    path = Path(path).expanduser()
    file = path / "results.json" if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(
            f"{path} has no results.json: is it a finished `continuousbench evaluate` run?"
        )
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{file} is not valid JSON ({err.msg}); rerun the evaluation") from None
    if not isinstance(record, dict):
        raise UserError(f"{file} is not the results.json of a `continuousbench evaluate` run")
    return record


# ---------------------------------------------------------------------------------------------------
# Building the record (called by harness/run.py once the metrics are in)


def benchmark(record: dict) -> tuple[str, str | None]:
    """(what a run was scored on, its digest): the release's id and manifest hash, or for a classification
    run ``<dataset> (classification)`` and the test set's sha256. Runs compare only on equal pairs."""
    if record.get("task") == "classification":
        return f"{record['dataset']['name']} (classification)", record["dataset"]["test_sha256"]
    return record["release"]["id"], record["release"].get("manifest_sha256")


def selection(selected: dict, history: list[dict]) -> dict:
    """``selected`` plus the rule and every validated step that scored the same (ties made visible)."""
    best = selected.get("validation_contains")
    tied = [
        int(h["step"])
        for h in history
        if best is not None and h.get("contains") is not None and math.isclose(h["contains"], best)
    ]
    if len(tied) > 1:
        logger.warning(
            "validation tie: steps %s all score %.4f; %s is selected (%s)",
            tied,
            best,
            selected["name"],
            SELECTION_RULE,
        )
    rule = SELECTION_RULE if selected.get("step") else "no training: the base model is scored"
    return {**selected, "rule": rule, "tied_steps": tied}


def _generation(source: str | Path) -> dict | None:
    file = Path(str(source)).expanduser() / "synthesis.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None


def complete(results: dict, *, model=None) -> dict:
    """Turn the harness's raw results into a schema-4 record, validate it and return it.

    Adds the schema and its version, the base model's Hub revision (None for a local folder), the
    corpus's privacy statement (unless the harness read it) and synthesis settings, the interval
    method, and the checkpoint-selection rule with its ties.
    """
    config = getattr(getattr(model, "config", None), "_commit_hash", None)
    source = results["corpus"]["source"]
    if "privacy" not in results["corpus"]:  # the harness reads the statement before training
        results = {**results, "corpus": {**results["corpus"], "privacy": corpus_privacy(source)}}
    record = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        **results,
        "base_model_revision": config if isinstance(config, str) else None,
        "corpus": {**results["corpus"], "generation": _generation(source)},
        "selected_checkpoint": selection(results["selected_checkpoint"], results["validation_history"]),
        "statistics": dict(INTERVAL),
    }
    return check(json.loads(json.dumps(record, default=str)), "the run's results.json")
