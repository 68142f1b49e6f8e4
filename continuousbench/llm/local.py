"""Local generation with ``transformers``: batched, left-padded, optionally stopping at the first line
break (the harness's QA answers), and the ``transformers:`` backend of
:func:`continuousbench.llm.make_generator`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_NEWLINE_IDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tokenizer -> (size, ids)


def _decode_each(tokenizer, ids: range) -> list[str]:
    """Every id decoded on its own: one call into the Rust backend when there is one (Gemma 3: 262k
    entries in well under a second), else one Python call per id."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return backend.decode_batch([[i] for i in ids], skip_special_tokens=False)
    return [tokenizer.decode([i]) for i in ids]


def newline_token_ids(tokenizer) -> list[int]:
    """Ids of every vocabulary entry whose decoded text contains a line break (stop tokens).

    Computed once per tokenizer (and again only if tokens are added): a validation pass calls
    generation many times, and decoding a 262k vocabulary each time cost seconds per call
    (``benchmarks/harness.py`` measures it).
    """
    size = len(tokenizer)
    cached = _NEWLINE_IDS.get(tokenizer)
    if cached is None or cached[0] != size:
        texts = _decode_each(tokenizer, range(size))
        cached = (size, [i for i, text in enumerate(texts) if "\n" in text])
        _NEWLINE_IDS[tokenizer] = cached
    return cached[1]


class _StopOnTokens:
    """Stopping criterion: a row is done once its last token is one of ``ids``."""

    def __init__(self, ids: list[int]):
        import torch

        self.ids = torch.tensor(ids, dtype=torch.long)

    def __call__(self, input_ids, scores, **kwargs):  # one bool per row
        import torch

        return torch.isin(input_ids[:, -1], self.ids.to(input_ids.device))


def common_prefix(rows: Sequence[Sequence[int]]) -> int:
    """How many leading token ids every row shares, leaving each row at least one token of its own."""
    shortest = min(len(r) for r in rows) - 1
    for n in range(max(shortest, 0)):
        if any(r[n] != rows[0][n] for r in rows):
            return n
    return max(shortest, 0)


class PrefixCache:
    """The keys and values of the token prefix every prompt shares (the few-shot block of a QA prompt),
    computed once: each batch then runs only its own tokens, laid out as ``prefix, padding, own tokens``
    with the padding masked. Positions come from the attention mask, so every token has the position it
    has when the whole prompt is left-padded, and the answers are the same (up to float rounding)."""

    MIN_TOKENS = 16  # below this, the copies cost more than the prefill they save

    def __init__(self, model, ids: list[int]):
        import torch
        from transformers import DynamicCache

        self.ids = ids
        self.cache = DynamicCache(config=model.config)
        with torch.no_grad():
            model(
                input_ids=torch.tensor([ids], device=model.device), past_key_values=self.cache, use_cache=True
            )

    def inputs(self, rows: list[list[int]], pad: int, device) -> dict:
        """``generate``'s inputs for ``rows`` (each prompt's ids after the prefix), with the cache."""
        import torch

        width = max(len(r) for r in rows)
        ids = [self.ids + [pad] * (width - len(r)) + r for r in rows]
        mask = [[1] * len(self.ids) + [0] * (width - len(r)) + [1] * len(r) for r in rows]
        return {
            "input_ids": torch.tensor(ids, device=device),
            "attention_mask": torch.tensor(mask, device=device),
            "past_key_values": self.repeated(len(rows)),
        }

    def repeated(self, rows: int):
        """A copy of the cache for a batch of ``rows`` (generation extends the cache it is given)."""
        import copy

        cache = copy.deepcopy(self.cache)
        cache.batch_repeat_interleave(rows)
        return cache


def generate_batched(
    model,
    tokenizer,
    prompts: Sequence[str],
    *,
    max_new_tokens: int = 256,
    batch_size: int = 32,
    stop_at_newline: bool = False,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = None,
    reuse_prefix: bool = False,
) -> list[str]:
    """Generate continuations for ``prompts`` with an already-loaded causal LM.

    Left padding keeps every prompt's last token adjacent to its first new token. With
    ``stop_at_newline`` a sequence stops at its first line break and the text is cut there: greedy
    decoding makes this identical to generating ``max_new_tokens`` and truncating, at a fraction of
    the cost. ``reuse_prefix``: the token prefix all prompts share is run once (:class:`PrefixCache`;
    a few-shot QA prompt is 90% prefix, and its prefill most of the cost of a short answer).
    """
    import torch
    from transformers import StoppingCriteriaList

    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    stopping = (
        StoppingCriteriaList([_StopOnTokens(newline_token_ids(tokenizer))]) if stop_at_newline else None
    )
    prefix = None
    if reuse_prefix and prompts:
        encoded = tokenizer(list(prompts), add_special_tokens=True)["input_ids"]
        shared = common_prefix(encoded)
        if shared >= PrefixCache.MIN_TOKENS:
            prefix = PrefixCache(model, encoded[0][:shared])
    was_training = model.training
    model.eval()
    texts: list[str] = []
    try:
        for start in range(0, len(prompts), batch_size):
            batch = list(prompts[start : start + batch_size])
            if prefix is None:
                enc = tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=True).to(
                    model.device
                )
            else:
                rows = [ids[len(prefix.ids) :] for ids in encoded[start : start + batch_size]]
                enc = prefix.inputs(rows, tokenizer.pad_token_id, model.device)
            if seed is not None:
                torch.manual_seed(seed + start)
            with torch.no_grad():
                out = model.generate(
                    **enc,
                    max_new_tokens=max_new_tokens,
                    do_sample=do_sample,
                    temperature=temperature if do_sample else None,
                    top_k=top_k if do_sample else None,
                    top_p=top_p if do_sample else None,
                    stopping_criteria=stopping,
                    pad_token_id=tokenizer.pad_token_id,
                    use_cache=True,
                )
            new = out[:, enc["input_ids"].shape[1] :]
            for row in tokenizer.batch_decode(new, skip_special_tokens=True):
                texts.append(row.split("\n", 1)[0] if stop_at_newline else row)
    finally:
        model.train(was_training)
    return texts


def greedy_answers(
    model,
    tokenizer,
    prompts: Sequence[str],
    *,
    batch_size: int = 32,
    max_new_tokens: int = 256,
    reuse_prefix: bool = False,
) -> list[str]:
    """Greedy one-line answers to ``prompts``, in their order, batched by length to save padding: the
    harness's QA decoding, and the closed-book attempts a release build makes, so that a gate re-checks
    the build with the same code. Under several processes each answers its share and all get every
    answer (every process must call this)."""
    from continuousbench.processes import share_out

    def answer(share: list[str]) -> list[str]:
        return generate_batched(
            model,
            tokenizer,
            share,
            max_new_tokens=max_new_tokens,
            batch_size=batch_size,
            stop_at_newline=True,
            reuse_prefix=reuse_prefix,
        )

    return [text.strip() for text in in_length_order(prompts, lambda sorted_: share_out(sorted_, answer))]


def in_length_order(
    prompts: Sequence[str], answer: Callable[[list[str]], list[str]], chunk: int | None = None
) -> list[str]:
    """``answer`` called on ``prompts`` sorted by length (then position: similar lengths share batches,
    so little padding), ``chunk`` at a time if given; its replies returned in the order of ``prompts``."""
    order = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), i))
    step = chunk or max(len(order), 1)
    replies = [""] * len(prompts)
    for start in range(0, len(order), step):
        part = order[start : start + step]
        for i, reply in zip(part, answer([prompts[i] for i in part]), strict=True):
            replies[i] = reply
    return replies


@dataclass
class TransformersGenerator:
    """A local causal LM (a model id, a model or adapter folder, an ``evaluate`` run), loaded once by the
    one loader (:func:`continuousbench.loader.load_model`: its dtype and device)."""

    model_path: str
    batch_size: int = 16
    name: str = ""

    def __post_init__(self) -> None:
        from continuousbench.loader import load_model

        self.name = self.name or f"transformers:{self.model_path}"
        self.model, self.tokenizer, _ = load_model(self.model_path, "transformers:")

    def generate(self, prompts: Sequence[str], **sampling: Any) -> list[str]:
        temperature = sampling.get("temperature", 0.0)
        return generate_batched(
            self.model,
            self.tokenizer,
            prompts,
            max_new_tokens=sampling.get("max_new_tokens", 256),
            batch_size=self.batch_size,
            stop_at_newline=sampling.get("stop_at_newline", False),
            do_sample=temperature > 0,
            temperature=temperature or 1.0,
            top_k=sampling.get("top_k"),
            top_p=sampling.get("top_p"),
            seed=sampling.get("seed"),
        )
