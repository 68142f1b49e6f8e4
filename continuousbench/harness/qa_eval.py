"""Few-shot greedy QA on a release split, scored by ``continuousbench.scoring.match`` (paper §2.2, App. I.3).

Decoding is greedy with at most ``max_new_tokens`` (256) new tokens and stops at the first newline:
matching cuts the answer there anyway, so this scores exactly like generating 256 tokens and
truncating (``tests/harness/test_qa_eval.py`` checks it) at a fraction of the cost. Under several
processes each answers its share of the questions and all get every answer
(:func:`continuousbench.processes.share_out`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from continuousbench.errors import UserError
from continuousbench.llm.local import greedy_answers
from continuousbench.scoring.match import DEFAULT_MATCHERS, SUPPORT_BUCKETS, score
from continuousbench.scoring.prompts import qa_prompt

# Bucket edges for accuracy vs support count: roughly log-spaced, covering singletons to the
# thousands (the paper's thresholds 200/400/600/800 are edges too).


def references(qa) -> list[list[str]]:
    """[answer] + aliases per question (aliases may be absent from a split)."""
    aliases = qa["aliases"] if "aliases" in qa.column_names else [[] for _ in range(len(qa))]
    return [[str(a), *[str(x) for x in al or []]] for a, al in zip(qa["answer"], aliases, strict=True)]


@contextlib.contextmanager
def weights_precision(model) -> Iterator[str]:
    """Decode in the precision of the model's weights (``--dtype``), never under mixed-precision autocast.

    Training with ``--bf16 true`` makes accelerate wrap the model's ``forward`` in bf16 autocast, on the
    very object that is then scored; answers would depend on whether the run trained in bf16 (3 of 156
    changed in one run). The wrappers are set aside while decoding and put back after, so every run,
    DP or not, decodes the same way. Yields the dtype decoding runs in (recorded in results.json).
    """
    wrapped = [m for m in model.modules() if "_original_forward" in m.__dict__]
    saved = [m.__dict__.get("forward") for m in wrapped]
    for m in wrapped:
        m.forward = m.__dict__["_original_forward"]
    try:
        yield str(next(model.parameters()).dtype).removeprefix("torch.")
    finally:
        for m, forward in zip(wrapped, saved, strict=True):
            if forward is None:
                del m.forward
            else:
                m.forward = forward


def generate_answers(
    model,
    tokenizer,
    questions: Sequence[str],
    *,
    track: str = "geminon",
    batch_size: int = 32,
    max_new_tokens: int = 256,
) -> list[str]:
    """Greedy answers, in the order of ``questions`` (:func:`~continuousbench.llm.local.greedy_answers`).

    The few-shot block every prompt shares is run once a batch (``reuse_prefix``): a QA prompt is ~90%
    that block, and the answers are the same as without (on the demo's evaluations: every validation
    and test answer of the base model and of trained evaluators, full and LoRA; ``tests/harness``
    checks it) for a third of the CPU time (docs/performance.md). Under several processes, every
    process must call this (each answers its share)."""
    prompts = [qa_prompt(q, track) for q in questions]
    with weights_precision(model):
        return greedy_answers(
            model, tokenizer, prompts, batch_size=batch_size, max_new_tokens=max_new_tokens, reuse_prefix=True
        )


def evaluate_qa(
    model,
    tokenizer,
    qa,
    *,
    track: str = "geminon",
    batch_size: int = 32,
    max_new_tokens: int = 256,
    matchers: Sequence[str] = DEFAULT_MATCHERS,
    judge=None,
    buckets: Sequence[int] | None = SUPPORT_BUCKETS,
) -> tuple[dict, list[str]]:
    """Answer every question of ``qa`` (a release QA split) and score it; return (report, predictions).

    The report is :func:`score_answers`'s.
    """
    if len(qa) == 0:
        raise UserError("the QA split is empty: nothing to evaluate")
    predictions = generate_answers(
        model, tokenizer, qa["question"], track=track, batch_size=batch_size, max_new_tokens=max_new_tokens
    )
    return score_answers(qa, predictions, matchers=matchers, judge=judge, buckets=buckets), predictions


def score_answers(
    qa,
    predictions: Sequence[str],
    *,
    matchers: Sequence[str] = DEFAULT_MATCHERS,
    judge=None,
    buckets: Sequence[int] | None = SUPPORT_BUCKETS,
    ranked: dict | None = None,
) -> dict:
    """:func:`continuousbench.scoring.score`'s report (overall, by support threshold, by bucket, per
    example) of ``predictions`` against ``qa``; ``judge`` adds ``llm_match``, ``ranked`` the ranked-choice
    outcomes (:mod:`.ranked`)."""
    matchers = tuple(matchers) + (("llm_match",) if judge is not None and "llm_match" not in matchers else ())
    return score(
        predictions,
        references(qa),
        questions=list(qa["question"]),
        support_counts=[int(c) for c in qa["support_count"]],
        matchers=matchers,
        judge=judge,
        buckets=buckets,
        ranked=ranked,
    )


def subsample(qa, limit: int | None, seed: int, option: str = "--qa_eval_limit"):
    """At most ``limit`` questions, a seeded sample in the split's order (the same at every evaluation)."""
    if limit is not None and limit < 1:
        raise UserError(f"{option} must be positive, got {limit}")
    if limit is None or limit >= len(qa):
        return qa
    import numpy as np

    rows = np.random.default_rng(seed).choice(len(qa), size=limit, replace=False)
    return qa.select(sorted(int(r) for r in rows))


def selection_eval(tokenizer, qa, *, track: str, batch_size: int, max_new_tokens: int):
    """``eval_fn(model)`` for checkpoint selection: validation ``qa_contains`` (and ``qa_exact_match``)."""

    def eval_fn(model) -> dict[str, float]:
        report, _ = evaluate_qa(
            model,
            tokenizer,
            qa,
            track=track,
            batch_size=batch_size,
            max_new_tokens=max_new_tokens,
            buckets=None,
        )
        return {f"qa_{name}": m["accuracy"] for name, m in report["metrics"].items()}

    return eval_fn
