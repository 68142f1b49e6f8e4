"""What a DP run may publish about its training: the one list of the keys of ``privacy.json`` (generators,
DP corpora, Private Evolution) and of ``results.json`` ``model_privacy`` (a DP evaluator).

Every key is classified here before any writer may write it: the guarantee and how it was accounted,
the run's configuration, and statistics of non-private data (validation loss on held-out records).
Nothing computed on the private training records without noise (a training loss, batch sizes, the
corpus fingerprint) is on the list, so a writer that adds one fails its tests instead of leaking it
(``tests/dp/test_published.py`` walks the published folders for such values).
"""

from __future__ import annotations

from typing import Any

GUARANTEE = {
    "private",
    "epsilon",
    "delta",
    "noise_multiplier",
    "sampling_probability",
    "expected_batch_size",
    "steps",
    "dataset_size",
    "sampling",
    "physical_batch",
    "truncation_analysis",
    "truncation_probability",
    "clip_norm",
    "event_json",
    "iterations",
    "private_runs",
    "mechanisms",
    "unit",
    "unit_description",
    "adjacency",
    "accountant",
    "epsilon_per_run",
    "steps_per_run",
    "runs_accounted",
    "lr_sweep_accounted",
    "statement",
    "kind",
    # private prediction (dp/prediction_accounting.py)
    "rho",
    "rho_em",
    "rho_svt",
    "private_tokens",
    "logit_clip",
    "temperature",
    "svt_threshold",
    "svt_noise",
    "batches",
}
CONFIGURATION = {
    "dp_sgd",
    "learning_rate",
    "target_epsilon",
    "sampling_plan",
    "secure_noise",
    "max_tokens_per_record",
    "tokenizer",
    "versions",
    "checkpoint_selection",
    "corpus_documents",
    "replay_documents",
    "tuning",
    "trained",  # what was trained (LoRA placement, soft prompt, every weight)
    "clipping",  # the per-record clipping algorithm (per_sample, ghost, bookkeeping)
    "class_balance",  # a --per_class corpus: where its class balance came from (uniform, stated, public, DP)
}
PUBLISHED_KEYS = frozenset(GUARANTEE | CONFIGURATION | {"validation", "selection"})
# ``validation``: selection on held-out records, which the guarantee does not cover (stated as such);
# ``selection``: a sweep's grid, its rule and each run's validation loss (held-out records too)
VALIDATION_KEYS = frozenset({"private", "note", "loss", "history", "learning_rates", "best_step"})


def publishable(record: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """``record`` with only the keys a DP run may publish. ``strict`` (a record this package writes): an
    unclassified key is a bug and raises; otherwise (a file written by an older version, copied on)
    unclassified keys are dropped."""
    unknown = sorted(set(record) - PUBLISHED_KEYS)
    validation = record.get("validation")
    if isinstance(validation, dict):
        unknown += [f"validation.{k}" for k in sorted(set(validation) - VALIDATION_KEYS)]
    if strict and unknown:
        raise RuntimeError(f"unclassified privacy key(s) {', '.join(unknown)}: classify them in {__name__}")
    kept = {k: v for k, v in record.items() if k in PUBLISHED_KEYS}
    if isinstance(validation, dict):
        kept["validation"] = {k: v for k, v in validation.items() if k in VALIDATION_KEYS}
    return kept
