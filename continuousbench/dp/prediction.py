"""Private prediction (Amin et al. 2024): each synthetic record is decoded token by token from a batch of
private prompts, every token a DP choice.

* **Batches.** Every private record joins batch ``j`` (of ``N``, one per synthetic record) with
  probability ``s / n`` or none with the rest, independently of the others and from the secret stream
  (:func:`assign_batches`): the batches are disjoint, each record is in at most one, and adding or
  removing a record changes exactly one batch (the accounting's parallel composition).
* **Prompts.** A batch's rows are its records, each inside the same public template, plus (for the
  sparse vector test) one public row, the template without a record. They are encoded once and their
  KV cache is extended by the one shared token of every step (:class:`BatchDecoder`), as ``generate``
  does, instead of recomputing the prompts at every token.
* **One token.** Each private row's logits are clipped (shifted so the largest is ``c``, then floored
  at ``-c``), summed and divided by ``s``; the token is drawn from ``softmax(sum / tau)``, the
  exponential mechanism (:func:`choose_tokens`), over a public candidate set: the tokenizer's tokens
  but its special ones other than end-of-text. With the sparse vector test, the token is first
  offered to the public row: when the L1 distance between the batch's mean next-token distribution
  and the public one, plus ``Laplace(2 sigma)``, stays below the threshold plus ``Laplace(sigma)``
  (redrawn after each private token), the token is drawn from the public distribution and costs
  nothing. A batch stops at its end-of-text token, at ``max_new_tokens`` or after its budget of
  private tokens.

All of this randomness (batches, noise, token draws) comes from :class:`~.randomness.SecretStreams`,
never from a published seed. :mod:`continuousbench.dp.prediction_accounting` accounts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from continuousbench.errors import UserError


def check_batches(n: int, batches: int, batch_size: int) -> None:
    """One line when ``batches`` batches of ``batch_size`` expected records need more than ``n``."""
    if batches * batch_size > n:
        raise UserError(
            f"--num_samples {batches} x --batch_size {batch_size} = {batches * batch_size} private prompts, "
            f"but the corpus has {n} records and each may be in one batch only: lower --num_samples to "
            f"{n // batch_size} or --batch_size to {max(1, n // batches)}"
        )


def assign_batches(n: int, batches: int, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Disjoint batches of the records ``0..n-1``: each joins batch ``j`` with probability ``s / n``
    (expected size ``s``) or none, independently, drawn by ``rng`` (the secret stream)."""
    check_batches(n, batches, batch_size)
    weights = np.full(batches + 1, batch_size / n)
    weights[-1] = 1.0 - batches * batch_size / n
    owner = rng.choice(batches + 1, size=n, p=np.clip(weights, 0.0, 1.0))
    return [np.flatnonzero(owner == j) for j in range(batches)]


@dataclass(frozen=True)
class Mechanism:
    """One token's mechanism: ``s`` (the public divisor), ``c``, ``tau`` and the sparse vector test
    (``svt_threshold`` None: off)."""

    batch_size: int
    clip: float
    temperature: float
    svt_threshold: float | None = None
    svt_noise: float = 0.2


def clip_logits(logits, clip: float):
    """Shift each row so its largest logit is ``clip`` (softmax does not change), then floor at
    ``-clip``: every value in ``[-clip, clip]``, and a row already spanning at most ``2 clip`` keeps
    its distribution."""
    return (logits - logits.amax(dim=-1, keepdim=True) + clip).clamp(min=-clip)


def floor_share(vocab: int, clip: float, temperature: float) -> float:
    """Most of a token's probability the clip floor can hold: ``V e^(-2c/tau) / (1 + V e^(-2c/tau))``
    when every batch member agrees on one token. Floored tokens are drawn about uniformly from the
    vocabulary: text noise that grows with ``V`` and ``tau / c``."""
    import math

    tail = vocab * math.exp(-2 * clip / temperature)
    return tail / (1 + tail)


def aggregate(clipped, owner, groups: int, batch_size: int):
    """Per batch: the sum of its rows of ``clipped`` divided by ``batch_size`` (public, not the actual
    size, so one record more or less moves every score by at most ``clip / s``)."""
    import torch

    total = torch.zeros(groups, clipped.shape[-1], dtype=clipped.dtype, device=clipped.device)
    return total.index_add_(0, owner, clipped) / batch_size


def svt_distance(private_logits, owner, public_logits, batch_size: int):
    """Per batch: L1 distance between the sum of its rows' next-token distributions divided by
    ``batch_size`` and the public row's distribution (sensitivity ``1 / s``)."""
    mean = aggregate(private_logits.softmax(-1), owner, public_logits.shape[0], batch_size)
    return (mean - public_logits.softmax(-1)).abs().sum(-1)


def laplace(shape, scale: float, generator, device):
    """``Laplace(0, scale)`` draws from ``generator`` (inverse CDF of uniforms in (-1/2, 1/2))."""
    import torch

    u = torch.rand(shape, generator=generator, device=device, dtype=torch.float64) - 0.5
    return -scale * u.sign() * torch.log1p(-2 * u.abs())


def sample(logits, generator):
    """One token per row of ``logits`` (``softmax`` probabilities), drawn by ``generator``."""
    import torch

    return torch.multinomial(logits.softmax(-1), 1, generator=generator)[:, 0]


def choose_tokens(
    private_logits, owner, groups: int, mech: Mechanism, generator, public_logits=None, thresholds=None
):
    """The next token of each of ``groups`` batches: (tokens, private mask, the test's noisy thresholds).

    ``private_logits`` holds one row per private prompt, ``owner`` its batch. With the sparse vector
    test on, ``public_logits`` holds one row per batch and ``thresholds`` the current noisy thresholds,
    redrawn where a token went private.
    """
    import torch

    scores = aggregate(clip_logits(private_logits, mech.clip), owner, groups, mech.batch_size)
    private_tokens = sample(scores / mech.temperature, generator)
    if mech.svt_threshold is None:
        return private_tokens, torch.ones(groups, dtype=torch.bool, device=scores.device), None
    device = scores.device
    distance = svt_distance(private_logits, owner, public_logits, mech.batch_size)
    private = distance + laplace(groups, 2 * mech.svt_noise, generator, device) >= thresholds
    public_tokens = sample(public_logits, generator)
    fresh = mech.svt_threshold + laplace(groups, mech.svt_noise, generator, device)
    tokens = torch.where(private, private_tokens, public_tokens)
    return tokens, private, torch.where(private, fresh, thresholds)


@dataclass
class Generated:
    """One batch's record: its tokens, how many were private and public, and why it stopped."""

    tokens: list[int]
    private: int = 0
    public: int = 0
    stop: str = "length"  # eos, stop (the template's stop text), length or budget


STOP_WINDOW = 16  # tokens decoded to look for the stop text (it is a few tokens long)


class BatchDecoder:
    """Decodes groups of batches with one forward pass per token over all their rows.

    ``kv_cache=False`` recomputes every prompt at every token (the benchmark's baseline).
    """

    def __init__(
        self,
        model,
        tokenizer,
        mech: Mechanism,
        *,
        max_new_tokens: int,
        private_tokens: int,
        stop: str | None = None,
        kv_cache: bool = True,
    ):
        self.model, self.tokenizer, self.mech = model, tokenizer, mech
        self.max_new_tokens, self.private_tokens, self.kv_cache = max_new_tokens, private_tokens, kv_cache
        self.stop = stop
        ids = getattr(model.generation_config, "eos_token_id", None) or tokenizer.eos_token_id
        self.eos = set(ids if isinstance(ids, list) else [ids])
        self.candidates = None  # the token ids a record may contain (public): see _candidates

    def _candidates(self, width: int, device):
        """Every id of the tokenizer but its special tokens (end-of-text aside), and none of the padding
        rows some models' output layers have beyond the tokenizer: the exponential mechanism's public
        candidate set, so no record holds a <pad> or <bos> drawn from the clip floor."""
        import torch

        special = set(self.tokenizer.all_special_ids) - self.eos
        ids = [i for i in range(min(width, len(self.tokenizer))) if i not in special]
        return torch.tensor(ids, device=device)

    def decode(self, batches: Sequence[Sequence[str]], public_prompt: str, generator) -> list[Generated]:
        """One :class:`Generated` per batch of private prompts, in order."""
        import torch

        device = self.model.device
        with_public = self.mech.svt_threshold is not None  # the test's public row ends each batch
        rows = [p for batch in batches for p in (*batch, *[public_prompt] * with_public)]
        sizes = torch.tensor([len(batch) + with_public for batch in batches])
        row_batch = torch.repeat_interleave(torch.arange(len(batches)), sizes).to(device)
        public_row = torch.zeros(len(rows), dtype=torch.bool)
        if with_public:
            public_row[sizes.cumsum(0) - 1] = True
        public_row = public_row.to(device)
        owner = row_batch[~public_row]
        self.tokenizer.padding_side = "left"
        enc = self.tokenizer(rows, return_tensors="pt", padding=True, add_special_tokens=True).to(device)
        step_ids, mask = enc["input_ids"], enc["attention_mask"]
        out, active = [Generated([]) for _ in batches], [True] * len(batches)
        thresholds = None
        if self.mech.svt_threshold is not None:
            noise = laplace(len(batches), self.mech.svt_noise, generator, device)
            thresholds = self.mech.svt_threshold + noise
        cache = None
        with torch.no_grad():
            for _ in range(self.max_new_tokens):
                logits, cache = self._forward(step_ids, mask, cache)
                if self.candidates is None:
                    self.candidates = self._candidates(logits.shape[-1], device)
                logits = logits[:, self.candidates]
                public = logits[public_row] if with_public else None
                chosen, private, thresholds = choose_tokens(
                    logits[~public_row], owner, len(batches), self.mech, generator, public, thresholds
                )
                tokens = self.candidates[chosen]
                self._record(out, tokens.tolist(), private.tolist(), active)
                if not any(active):
                    break
                new = tokens[row_batch][:, None]  # every row of a batch takes its batch's token
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
                step_ids = new if self.kv_cache else torch.cat([step_ids, new], dim=1)
        return out

    def _forward(self, step_ids, mask, cache):
        """Last-position logits (float32) of every row, and the cache to extend (None without one)."""
        positions = (mask.long().cumsum(-1) - 1).clamp(min=0)[:, -step_ids.shape[1] :]
        result = self.model(
            input_ids=step_ids,
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=self.kv_cache,
            logits_to_keep=1,
        )
        return result.logits[:, -1].float(), (result.past_key_values if self.kv_cache else None)

    def _record(self, out: list[Generated], tokens: list[int], private: list[bool], active: list[bool]):
        """Append each active batch's token; close a batch at its end-of-text token, the template's stop
        text, its budget of private tokens, or ``max_new_tokens``."""
        for b, (token, was_private) in enumerate(zip(tokens, private, strict=True)):
            if not active[b]:
                continue
            record = out[b]
            record.private += was_private
            record.public += not was_private
            if token in self.eos:
                record.stop, active[b] = "eos", False
                continue
            record.tokens.append(token)
            if self.stop and self.stop in self.tokenizer.decode(record.tokens[-STOP_WINDOW:]):
                record.stop, active[b] = "stop", False
            elif record.private >= self.private_tokens:
                record.stop, active[b] = "budget", False
            elif len(record.tokens) >= self.max_new_tokens:
                record.stop, active[b] = "length", False
