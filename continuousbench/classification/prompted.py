"""The prompted classifier: the base model answers every test text under each condition of the grid
(template x shots x seed, paper App. F), greedily, with the harness's decoding; each reply is read as a
label (:func:`.prompts.read_reply`) and scored exact / contains, overall and per class.

A condition with 0 shots has no seed (the prompt is the same for any); one with ``k`` shots draws its
``k`` demonstrations from the training split with its seed, the same ones for every test text. Decoding
stops at the first line for ``direct``; ``reasoning`` and ``structured`` get ``max_new_tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from continuousbench.classification.prompts import prompt, read_reply

DIRECT_TOKENS = 16  # a class name, on one line


@dataclass(frozen=True)
class Condition:
    template: str
    shots: int
    seed: int | None  # None: 0 shots

    @property
    def name(self) -> str:
        seed = "" if self.seed is None else f" seed {self.seed}"
        return f"{self.template} {self.shots}-shot{seed}"

    def as_dict(self) -> dict:
        return {"template": self.template, "shots": self.shots, "seed": self.seed}


def grid(templates: Sequence[str], shots: Sequence[int], seeds: Sequence[int]) -> list[Condition]:
    """Every condition, in table order: per template, 0-shot first, then each k with each seed."""
    return [
        Condition(t, k, None if k == 0 else s)
        for t in templates
        for k in sorted(set(shots))
        for s in ([None] if k == 0 else seeds)
    ]


def demonstrations(train, k: int, seed: int | None) -> list[tuple[str, int]]:
    """``k`` (text, label) examples of the training split, drawn with ``seed``."""
    if k == 0:
        return []
    import numpy as np

    rows = np.random.default_rng(seed).choice(len(train), size=min(k, len(train)), replace=False)
    return [(train[int(i)]["text"], int(train[int(i)]["label"])) for i in rows]


def score(labels: Sequence[int], read: Sequence[tuple[int | None, int | None]], names: Sequence[str]) -> dict:
    """The results record's part (``n``, ``metrics``: exact_match and contains with Wilson 95% intervals,
    ``by_class``, ``unparseable``: replies read as no class, counted wrong) and ``per_example``."""
    from continuousbench.scoring.match import by_group

    per_example = {
        "exact_match": [e == y for (e, _), y in zip(read, labels, strict=True)],
        "contains": [c == y for (_, c), y in zip(read, labels, strict=True)],
    }
    overall = by_group(per_example, ["all"] * len(labels), ["all"])["all"]
    unparseable = {
        "exact_match": sum(e is None for e, _ in read),
        "contains": sum(c is None for _, c in read),
    }
    return {
        "n": overall.pop("n"),
        "metrics": overall,
        "by_class": by_group(per_example, [names[y] for y in labels], names),
        "unparseable": unparseable,
        "per_example": per_example,
    }


def answer(model, tokenizer, prompts: list[str], template: str, *, batch_size: int, max_new_tokens: int):
    """Greedy replies in the order of ``prompts`` (batched by length, in the weights' precision)."""
    from continuousbench.harness.qa_eval import weights_precision
    from continuousbench.llm.local import generate_batched, in_length_order

    direct = template == "direct"

    def reply(batch: list[str]) -> list[str]:
        new = DIRECT_TOKENS if direct else max_new_tokens
        return generate_batched(
            model, tokenizer, batch, batch_size=batch_size, stop_at_newline=direct, max_new_tokens=new
        )

    with weights_precision(model):
        return in_length_order(prompts, reply)


def run_condition(
    model, tokenizer, task, condition: Condition, *, batch_size: int, max_new_tokens: int, max_chars: int
) -> tuple[dict, dict]:
    """(the condition's scores, its per-text rows: reply and the labels read) on the test split."""
    shots = demonstrations(task.train, condition.shots, condition.seed)
    texts, labels = task.test["text"], [int(y) for y in task.test["label"]]
    prompts = [prompt(condition.template, task.text, t, shots, max_chars) for t in texts]
    replies = answer(
        model, tokenizer, prompts, condition.template, batch_size=batch_size, max_new_tokens=max_new_tokens
    )
    read = [read_reply(condition.template, r, task.names) for r in replies]
    rows = {"reply": replies, "exact_label": [e for e, _ in read], "contains_label": [c for _, c in read]}
    return {**condition.as_dict(), "condition": condition.name, **score(labels, read, task.names)}, rows


def best(conditions: list[dict], rule: str = "exact_match") -> dict:
    """The condition with the highest test accuracy under ``rule`` (the paper's "best prompted": the
    maximum over the grid, an optimistic figure for the no-training regime); ties: the first in order."""
    return max(conditions, key=lambda c: c["metrics"][rule]["accuracy"] or 0.0)
