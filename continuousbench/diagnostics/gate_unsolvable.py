"""The unsolvable gate: each named model answers the release's test questions closed-book (the harness's
greedy QA decoding and matching); the 95% Wilson upper bound of its accuracy must stay under
``--max_accuracy``. An upper bound, not the point estimate: 0 right of 20 questions proves little."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from continuousbench.diagnostics.gate_report import Check, Gate
from continuousbench.errors import UserError

MAX_ACCURACY = 0.05  # closed-book Wilson upper bound
NO_MODEL = (
    "the unsolvable gate needs a closed-book model and the release records none (NEWS, or a Geminon build "
    "with --closed_book_models none): pass --models <id|folder>, or leave the gate out (release: "
    "--skip_gates unsolvable; gate: --gates learnable fresh)"
)


def closed_book_questions(release: str | Path, **kw: Any):
    """The release's test questions, public and singleton (NEWS has public only), as one dataset."""
    from datasets import concatenate_datasets

    from continuousbench.release.layout import configs
    from continuousbench.release.load import load_release, read_manifest, resolve_release

    track = read_manifest(resolve_release(release, **kw))["track"]
    parts = [
        load_release(release, part, "test", verify=False, **kw)
        for part in configs(track)
        if part.startswith("qa_")
    ]
    common = [c for c in parts[0].column_names if all(c in p.column_names for p in parts)]
    return concatenate_datasets([p.select_columns(common) for p in parts])


def closed_book(model: str, qa, track: str, *, batch_size: int, max_new_tokens: int) -> dict[str, Any]:
    """A model's closed-book answers, asked and scored as the build screened them
    (:mod:`continuousbench.geminon.closed_book`: the few-shot prompt, greedy, correct when exact match or
    contains), with their count correct and its Wilson interval."""
    from continuousbench.geminon.closed_book import is_correct, model_path
    from continuousbench.llm.local import greedy_answers
    from continuousbench.loader import load_model
    from continuousbench.scoring.prompts import qa_prompt
    from continuousbench.stats import wilson_interval

    net, tokenizer, _ = load_model(model_path(model), "--models")
    prompts = [qa_prompt(q, track) for q in qa["question"]]
    answers = greedy_answers(
        net, tokenizer, prompts, batch_size=batch_size, max_new_tokens=max_new_tokens, reuse_prefix=True
    )
    aliases = qa["aliases"] if "aliases" in qa.column_names else [[]] * len(qa)
    right = sum(is_correct(p, [a, *al]) for p, a, al in zip(answers, qa["answer"], aliases, strict=True))
    low, high = wilson_interval(right, len(qa))
    return {"correct": right, "questions": len(qa), "accuracy": right / len(qa), "wilson_95": [low, high]}


def screened_models(release: str | Path, **kw: Any) -> list[str]:
    """The models the build screened the questions with (its manifest), when they can be loaded by name."""
    from continuousbench.geminon.closed_book import loadable
    from continuousbench.release.load import read_manifest, resolve_release

    recorded = read_manifest(resolve_release(release, **kw))["generator"].get("closed_book") or {}
    models = recorded.get("models") or []
    unnamed = [m for m in models if not loadable(m)]
    if unnamed:
        raise UserError(
            f"the release was screened with local model folder {unnamed[0]}; pass it again with "
            "--models <folder>"
        )
    return models


def unsolvable_gate(
    release: str | Path,
    models: Sequence[str],
    *,
    max_accuracy: float = MAX_ACCURACY,
    batch_size: int = 32,
    max_new_tokens: int = 32,
    **kw: Any,
) -> Gate:
    """Closed-book accuracy of every model in ``models`` (none given: those that screened the release at
    build time, whose re-check it then is): its Wilson upper bound under ``max_accuracy``."""
    from continuousbench.release.load import read_manifest, resolve_release

    models = list(models) or screened_models(release, **kw)
    if not models:
        raise UserError(NO_MODEL)
    track = read_manifest(resolve_release(release, **kw))["track"]
    qa = closed_book_questions(release, **kw)
    gate = Gate("unsolvable", details={"models": {}})
    for model in models:
        result = closed_book(model, qa, track, batch_size=batch_size, max_new_tokens=max_new_tokens)
        gate.details["models"][model] = result
        upper = result["wilson_95"][1]
        what = (
            f"closed-book accuracy of {model}: {result['correct']} of {result['questions']} correct, "
            "95% Wilson upper bound"
        )
        gate.checks.append(Check(what, upper, max_accuracy, upper < max_accuracy))
    return gate
