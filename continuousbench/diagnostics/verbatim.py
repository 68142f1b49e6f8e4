"""The verbatim probe itself: prompt with a document's first k tokens, decode m greedily, compare.

After Carlini et al. (2022) and FictionalQA §2.1. Each probed document gives three figures:

* ``exact``: the m decoded tokens are the document's next m tokens (the whole suffix reproduced);
* ``common_prefix``: how many of them match before the first difference (a graded "how far it recites");
* ``rouge_l``: ROUGE-L F1 of the decoded text against the true suffix (Google's ``rouge-score``), which
  still moves when a small model reproduces no whole suffix but has the document's words in order.

Every prompt is the same number of tokens (the start token and k document tokens), so a batch needs no
padding and greedy decoding of a batch gives exactly what one document at a time would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Probe:
    """One document cut into the prompt (``prefix``) and what should follow it (``suffix``)."""

    id: str
    split: str  # train | heldout
    style: str
    subset: str
    prefix: list[int]
    suffix: list[int]


def cut(tokenizer, rows: Sequence[dict], split: str, k: int, m: int) -> tuple[list[Probe], int]:
    """The documents of ``rows`` with at least k + m tokens, cut into probes; and how many were shorter."""
    ids = tokenizer([row["text"] for row in rows], add_special_tokens=False)["input_ids"] if rows else []
    probes = [
        Probe(
            row["id"],
            split,
            row.get("style") or "all",
            row.get("subset") or "public",
            tokens[:k],
            tokens[k : k + m],
        )
        for row, tokens in zip(rows, ids, strict=True)
        if len(tokens) >= k + m
    ]
    return probes, len(rows) - len(probes)


def unknown_share(tokenizer, probes: Sequence[Probe]) -> float:
    """Share of the probes whose tokens include the tokenizer's unknown token: a tokenizer that cannot
    encode the release's text makes every figure meaningless."""
    unk = tokenizer.unk_token_id
    if unk is None or not probes:
        return 0.0
    return sum(unk in p.prefix or unk in p.suffix for p in probes) / len(probes)


def start_ids(tokenizer) -> list[int]:
    """What begins a document in training: the tokenizer's own start tokens, else none."""
    return [i for i in tokenizer("", add_special_tokens=True)["input_ids"] if i != tokenizer.eos_token_id]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def decode_greedy(model, tokenizer, probes: Sequence[Probe], m: int, batch_size: int) -> list[list[int]]:
    """The m tokens the model continues each prefix with (greedy; cut at its end-of-text token)."""
    import torch

    start, eos = start_ids(tokenizer), tokenizer.eos_token_id
    device = next(model.parameters()).device
    out: list[list[int]] = []
    for i in range(0, len(probes), batch_size):
        batch = torch.tensor([start + p.prefix for p in probes[i : i + batch_size]], device=device)
        with torch.inference_mode():
            generated = model.generate(
                input_ids=batch,
                attention_mask=torch.ones_like(batch),
                max_new_tokens=m,
                do_sample=False,
                num_beams=1,
                pad_token_id=tokenizer.pad_token_id,
            )
        for row in generated[:, batch.shape[1] :].tolist():
            out.append(row[: row.index(eos)] if eos in row else row)
    return out


def score(tokenizer, probes: Sequence[Probe], continuations: Sequence[list[int]]) -> list[dict]:
    """One row per probe: id, split, style, subset, exact, common_prefix, rouge_l."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"])
    rows = []
    for probe, got in zip(probes, continuations, strict=True):
        target = tokenizer.decode(probe.suffix, skip_special_tokens=True)
        text = tokenizer.decode(got, skip_special_tokens=True)
        rows.append(
            {
                "id": probe.id,
                "split": probe.split,
                "style": probe.style,
                "subset": probe.subset,
                "exact": list(got[: len(probe.suffix)]) == list(probe.suffix),
                "common_prefix": common_prefix(got, probe.suffix),
                "rouge_l": scorer.score(target, text)["rougeL"].fmeasure,
            }
        )
    return rows
