"""Load the base checkpoint (a local folder or a Hub model id) and wrap it for LoRA, a soft prompt or full
fine-tuning. Loading itself is :mod:`continuousbench.loader`'s (one dtype rule, one error path); this module
only adds what training needs on top.

LoRA follows paper App. I.1: rank 128 on the seven attention and MLP projections of every layer,
dropout 0 and scale 1 (peft's scale is ``lora_alpha / r``, so ``lora_alpha`` defaults to the rank).
"""

from __future__ import annotations

import logging

from continuousbench.errors import UserError
from continuousbench.loader import load_causal_lm, load_tokenizer, resolve_dtype

logger = logging.getLogger(__name__)

LORA_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
TUNINGS: tuple[str, ...] = ("lora", "full", "prompt")


def lora_targets(model, placement: str = "all") -> list[str] | str:
    """PEFT ``target_modules`` for ``placement`` (attention, mlp or all) in ``model``'s naming scheme."""
    from continuousbench.training.adapters import resolve_lora_targets

    return resolve_lora_targets(model, placement)[1]


def load_model_and_tokenizer(
    model: str,
    *,
    tuning: str = "lora",
    lora_rank: int = 128,
    lora_alpha: int | None = None,
    dtype=None,
    attn_implementation: str | None = None,
    lora_placement: str = "all",
    prompt=None,
):
    """(model, tokenizer) ready to train: pad token set, LoRA adapters attached when ``tuning="lora"``
    (on ``lora_placement``), a soft prompt (a :class:`~.adapters.PromptSpec`) when ``tuning="prompt"``.

    ``dtype`` is a torch dtype, a name ("bfloat16", "float32"), or None for the loader's default
    (:func:`continuousbench.loader.default_dtype`).
    """
    if tuning not in TUNINGS:
        raise UserError(f"unknown tuning {tuning!r}: use {' or '.join(TUNINGS)}")
    if lora_rank < 1:
        raise UserError(f"LoRA rank must be positive, got {lora_rank}")
    tokenizer = load_tokenizer(model)
    kwargs = {"dtype": resolve_dtype(dtype)}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    net = load_causal_lm(model, **kwargs)
    if tokenizer.pad_token is None:
        # Padding is only ever masked out (left padding at generation, padded last block in training),
        # so reusing EOS is safe and avoids resizing the embeddings.
        tokenizer.pad_token = tokenizer.eos_token
    net.config.pad_token_id = tokenizer.pad_token_id
    if tuning == "full":
        return net, tokenizer
    if tuning == "prompt":
        from continuousbench.training.adapters import PromptSpec, add_soft_prompt

        return add_soft_prompt(net, prompt or PromptSpec()), tokenizer
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=lora_rank,
        lora_alpha=lora_alpha if lora_alpha is not None else lora_rank,
        lora_dropout=0.0,
        target_modules=lora_targets(net, lora_placement),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(net, config), tokenizer
