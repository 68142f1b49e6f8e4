"""Load the base checkpoint (a local folder or a Hub model id) and wrap it for LoRA or full fine-tuning.

LoRA follows paper App. I.1: rank 128 on the seven attention and MLP projections of every layer,
dropout 0 and scale 1 (peft's scale is ``lora_alpha / r``, so ``lora_alpha`` defaults to the rank).
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

LORA_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
TUNINGS: tuple[str, ...] = ("lora", "full")


def default_dtype():
    """bf16 where the accelerator supports it (Table 29: bf16 parameters), float32 elsewhere (CPU)."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def _resolve_dtype(dtype):
    import torch

    if dtype is None or dtype == "auto":
        return default_dtype()
    if isinstance(dtype, str):
        try:
            return {
                "bfloat16": torch.bfloat16,
                "bf16": torch.bfloat16,
                "float16": torch.float16,
                "fp16": torch.float16,
                "float32": torch.float32,
                "fp32": torch.float32,
            }[dtype]
        except KeyError:
            raise ValueError(f"unknown dtype {dtype!r}: use bfloat16, float16, float32 or auto") from None
    return dtype


def lora_targets(model) -> list[str] | str:
    """The seven projections; restricted to the language model in multimodal checkpoints (Gemma 3 4B+),
    whose vision tower also has ``q_proj``/``k_proj``/``v_proj`` that continued pretraining must not touch."""
    names = [name for name, _ in model.named_modules()]
    if any(".language_model." in f".{n}." for n in names) and any("vision" in n for n in names):
        return rf".*language_model.*\.({'|'.join(LORA_TARGETS)})"
    present = {n.rsplit(".", 1)[-1] for n in names}
    missing = [t for t in LORA_TARGETS if t not in present]
    if missing:
        raise ValueError(
            f"model {type(model).__name__} has no {', '.join(missing)} modules for LoRA; use --tuning full"
        )
    return list(LORA_TARGETS)


def load_model_and_tokenizer(
    model: str,
    *,
    tuning: str = "lora",
    lora_rank: int = 128,
    lora_alpha: int | None = None,
    dtype=None,
    attn_implementation: str | None = None,
):
    """(model, tokenizer) ready to train: pad token set, LoRA adapters attached when ``tuning="lora"``.

    ``dtype`` is a torch dtype, a name ("bfloat16", "float32"), or None for :func:`default_dtype`.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if tuning not in TUNINGS:
        raise ValueError(f"unknown tuning {tuning!r}: use {' or '.join(TUNINGS)}")
    if lora_rank < 1:
        raise ValueError(f"LoRA rank must be positive, got {lora_rank}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
        kwargs = {"dtype": _resolve_dtype(dtype)}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        net = AutoModelForCausalLM.from_pretrained(model, **kwargs)
    except OSError as err:  # missing folder, unknown id, offline without a cache: all OSErrors
        raise FileNotFoundError(
            f"cannot load model {model!r}: pass a local model folder or a Hub id available offline ({err})"
        ) from None
    if tokenizer.pad_token is None:
        # Padding is only ever masked out (left padding at generation, padded last block in training),
        # so reusing EOS is safe and avoids resizing the embeddings.
        tokenizer.pad_token = tokenizer.eos_token
    net.config.pad_token_id = tokenizer.pad_token_id
    if tuning == "full":
        return net, tokenizer
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=lora_rank,
        lora_alpha=lora_alpha if lora_alpha is not None else lora_rank,
        lora_dropout=0.0,
        target_modules=lora_targets(net),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(net, config), tokenizer
