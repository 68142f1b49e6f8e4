"""Closed-book screening when a release is built (FictionalQA's blind and informed answer attempts).

Every question is put to each screening model *blind* (the harness's few-shot prompt, no document), and
to the first model *informed* (the same prompt with the question's shortest supporting training
document just before the question). A question some model answers blind is dropped and counted: it does
not need the corpus, and the unsolvable gate, which asks the same models the same way, then re-checks a
property the build established instead of discovering it at the end. A question the informed model
cannot answer even with its document is kept but flagged ``ill_posed``; the flag means something only
for a model that reads a document in context (the manifest records its informed accuracy: the tiny
demo base, a 1M-parameter model, answers about 2% informed, so at tiny nearly every question is flagged).

Correct is the more lenient of exact match and contains against the answer and its aliases, as the gate
scores. Models: ``--closed_book_models``; by default the shipped demo base at ``tiny`` (the one model
that works offline) and the paper's base model (Gemma 3 1B) at ``small`` and ``medium``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.errors import UserError
from continuousbench.loader import load_model

log = logging.getLogger(__name__)

DEMO_BASE = "demo-base"  # the base model shipped with the package (continuousbench/demo/base)
DEFAULT_MODELS: dict[str, tuple[str, ...]] = {
    "tiny": (DEMO_BASE,),
    "small": ("google/gemma-3-1b-pt",),
    "medium": ("google/gemma-3-1b-pt",),
}
MAX_NEW_TOKENS = 32  # the unsolvable gate's answer length
BATCH_SIZE = 32
CHUNK = 1024  # prompts per progress step (a multiple of the batch size: the same batches as one call)
NONE = "none"  # --closed_book_models none: no screening (the release then says so)


def screening_models(given: Sequence[str] | None, size: str) -> tuple[str, ...]:
    """The models a build screens with: ``given``, else the size's default; ``["none"]``: none."""
    if not given:
        return DEFAULT_MODELS.get(size, DEFAULT_MODELS["small"])
    if NONE in given:
        if len(given) > 1:
            raise UserError("--closed_book_models none screens with no model: give it alone")
        return ()
    return tuple(dict.fromkeys(given))


def check_available(models: Sequence[str]) -> None:
    """Refuse, before any work, a screening model that cannot be loaded here: a missing folder, or a Hub id
    that is not in the local cache while the Hub is offline (``HF_HUB_OFFLINE``)."""
    from huggingface_hub import constants, try_to_load_from_cache

    for spec in models:
        path = Path(model_path(spec)).expanduser()
        if spec.startswith((".", "/", "~")) or path.exists():
            if not (path / "config.json").is_file():
                raise UserError(f"--closed_book_models {spec}: no model (config.json) there; fix the path")
        elif constants.HF_HUB_OFFLINE and not isinstance(try_to_load_from_cache(spec, "config.json"), str):
            raise UserError(
                f"--closed_book_models {spec} is not in the Hugging Face cache and the Hub is offline: "
                f"download it first, or pass a local model folder ({DEMO_BASE}: the demo's base model, a "
                f"CPU rehearsal; {NONE}: no screening)"
            )


def model_path(spec: str) -> str:
    """Where ``spec`` is loaded from: the demo base's folder for its alias, else ``spec`` itself."""
    if spec == DEMO_BASE:
        return str(Path(__file__).resolve().parents[1] / "demo" / "base")
    return spec


def model_key(spec: str) -> str:
    """How a screening model is recorded in a release: its alias or Hub id, a local folder by its name
    (``.../name``: a release's bytes do not depend on where a model lay on the builder's disk)."""
    if spec == DEMO_BASE:
        return spec
    path = Path(spec).expanduser()
    if spec.startswith((".", "/", "~")) or path.exists():
        return f".../{path.resolve().name}"
    return spec


def loadable(key: str) -> bool:
    """Whether a recorded key names a model by itself (an alias or a Hub id, not a folder's name)."""
    return not key.startswith(".../")


def is_correct(prediction: str, references: Sequence[str]) -> bool:
    """The gate's rule: the more lenient of exact match and contains."""
    from continuousbench.scoring.match import contains, exact_match

    return exact_match(prediction, references) or contains(prediction, references)


def answer_all(model, tokenizer, prompts: Sequence[str], advance: Callable[[int], Any]) -> list[str]:
    """Greedy answers to ``prompts`` (in order), in length-sorted chunks so progress can be shown; the
    batches are those of one :func:`~continuousbench.llm.local.greedy_answers` call over all of them,
    the few-shot prefix they share run once a chunk."""
    from continuousbench.llm.local import greedy_answers, in_length_order

    def answer(chunk: list[str]) -> list[str]:
        texts = greedy_answers(
            model, tokenizer, chunk, batch_size=BATCH_SIZE, max_new_tokens=MAX_NEW_TOKENS, reuse_prefix=True
        )
        advance(len(chunk))
        return texts

    return in_length_order(prompts, answer, CHUNK)


def supporting_documents(matrix, columns: Sequence[Sequence[int]], lengths: np.ndarray) -> list[int]:
    """Per question, the shortest training document (fewest characters, then first) stating every
    feature its answer needs (``columns`` of the document x feature ``matrix``); -1 when none does."""
    chosen = []
    for needed in columns:
        together = matrix[:, [needed[0]]]
        for column in needed[1:]:
            together = together.multiply(matrix[:, [column]])
        rows = together.tocoo().row
        chosen.append(int(rows[np.lexsort((rows, lengths[rows]))[0]]) if len(rows) else -1)
    return chosen


def screen(
    questions: list[dict],
    documents: Sequence[str | None],
    models: Sequence[str],
    advance: Callable[[int], Any],
) -> tuple[list[dict], dict[str, Any]]:
    """Each question's attempts: ``blind_answers`` (one per model), ``informed_answer`` (the first
    model, its document in context; None without a document) and ``blind_correct``/``informed_correct``.
    Returns (attempts in question order, the models' figures)."""
    from continuousbench.scoring.prompts import informed_prompt, qa_prompt

    references = [[q["answer"], *q.get("aliases", [])] for q in questions]
    blind: list[list[str]] = [[] for _ in questions]
    informed: list[str | None] = [None] * len(questions)
    figures: dict[str, Any] = {}
    for position, spec in enumerate(models):
        model, tokenizer, _ = load_model(model_path(spec), "--closed_book_models")
        answers = answer_all(model, tokenizer, [qa_prompt(q["question"]) for q in questions], advance)
        for row, text in zip(blind, answers, strict=True):
            row.append(text)
        right = sum(is_correct(a, r) for a, r in zip(answers, references, strict=True))
        figures[model_key(spec)] = {"blind_correct": right}
        if position == 0:
            asked = [i for i, d in enumerate(documents) if d is not None]
            prompts = [informed_prompt(questions[i]["question"], documents[i]) for i in asked]
            for i, text in zip(asked, answer_all(model, tokenizer, prompts, advance), strict=True):
                informed[i] = text
            right = sum(is_correct(informed[i], references[i]) for i in asked)
            figures[model_key(spec)].update(informed_correct=right, informed_asked=len(asked))
        del model
    attempts = [
        {
            "blind_answers": b,
            "informed_answer": i,
            "blind_correct": any(is_correct(a, r) for a in b),
            "ill_posed": i is None or not is_correct(i, r),
        }
        for b, i, r in zip(blind, informed, references, strict=True)
    ]
    return attempts, figures


def screening_answers(track: str, size: str, models: Sequence[str]) -> tuple[str | None, int]:
    """(the first screening model's path, the closed-book answers a Geminon build asks: every question, 13
    an entity, blind with each model and informed with the first); NEWS screens on its endpoint."""
    if track != "geminon":
        return (model_path(models[0]), 0) if models else (None, 0)
    chosen = screening_models(list(models), size)
    if not chosen:
        return None, 0
    from continuousbench.geminon.sizes import get_size

    return model_path(chosen[0]), (len(chosen) + 1) * 13 * get_size(size).n_entities
