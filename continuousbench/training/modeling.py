"""Load the base checkpoint (a local folder or a Hub model id) and wrap it for LoRA or full fine-tuning.

LoRA follows paper App. I.1: rank 128 on the seven attention and MLP projections of every layer,
dropout 0 and scale 1 (peft's scale is ``lora_alpha / r``, so ``lora_alpha`` defaults to the rank).
"""

from __future__ import annotations

import logging
from pathlib import Path

from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

LORA_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
TUNINGS: tuple[str, ...] = ("lora", "full", "prompt")
# Files of which a model folder needs one for AutoTokenizer (fast, SentencePiece, BPE or WordPiece).
TOKENIZER_FILES: tuple[str, ...] = (
    "tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model"
)


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
            raise UserError(f"unknown dtype {dtype!r}: use bfloat16, float16, float32 or auto") from None
    return dtype


def lora_targets(model, placement: str = "all") -> list[str] | str:
    """PEFT ``target_modules`` for ``placement`` (attention, mlp or all) in ``model``'s naming scheme."""
    from continuousbench.training.adapters import resolve_lora_targets

    return resolve_lora_targets(model, placement)[1]


def _damaged_file(folder: Path) -> Path | None:
    """The first ``.safetensors`` file in ``folder`` whose header cannot be read."""
    from safetensors import safe_open

    for file in sorted(folder.glob("*.safetensors")):
        try:
            with safe_open(str(file), framework="pt"):
                pass
        except Exception:  # noqa: BLE001 - any failure to open is what we are looking for
            return file
    return None


def load_tokenizer(model: str, option: str = "--model"):
    """The tokenizer saved with the model; one line naming ``option`` when there is none."""
    from transformers import AutoTokenizer

    folder = Path(model).expanduser()
    if folder.is_dir() and not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise FileNotFoundError(
            f"{option} {model} has no tokenizer (none of {', '.join(TOKENIZER_FILES)}); save the base "
            f"model's tokenizer there with tokenizer.save_pretrained({str(folder)!r})"
        )
    try:
        return AutoTokenizer.from_pretrained(model)
    except OSError as err:  # missing folder, unknown id, offline without a cache: all OSErrors
        raise FileNotFoundError(
            f"cannot load model {model!r} ({option}): pass a local model folder or a Hub id available "
            f"offline ({' '.join(str(err).split())[:200]})"
        ) from None
    except (ValueError, TypeError, KeyError) as err:
        raise UserError(
            f"the tokenizer files of {option} {model} cannot be loaded ({type(err).__name__}: "
            f"{' '.join(str(err).split())[:160]}); save the base model's tokenizer there again"
        ) from None


def load_causal_lm(model: str, **kwargs):
    """The causal LM at ``model``; one line naming ``--model`` or the damaged file when it is not one."""
    from transformers import AutoConfig, AutoModelForCausalLM

    folder = Path(model).expanduser()
    try:
        net, info = AutoModelForCausalLM.from_pretrained(model, output_loading_info=True, **kwargs)
    except OSError as err:
        raise FileNotFoundError(
            f"cannot load model {model!r}: pass a local model folder or a Hub id available offline "
            f"({' '.join(str(err).split())[:200]})"
        ) from None
    except ValueError as err:
        if "Unrecognized configuration class" not in str(err):
            raise
        kind = AutoConfig.from_pretrained(model).model_type
        raise UserError(
            f"--model {model} is a {kind} model, not a causal language model; pass a decoder-only "
            "checkpoint such as Gemma 3 or Llama"
        ) from None
    except Exception as err:
        damaged = _damaged_file(folder) if folder.is_dir() else None
        if damaged is None:
            raise
        raise UserError(
            f"--model file {damaged} is damaged ({' '.join(str(err).split())[:120]}); save or copy the "
            "model again"
        ) from None
    missing = sorted(info["missing_keys"])
    if missing:  # e.g. an encoder (BERT) checkpoint: its LM head would be random
        raise UserError(
            f"--model {model} is not a causal language model checkpoint: {len(missing)} weights of "
            f"{type(net).__name__} are missing from it (e.g. {missing[0]}) and would start random; pass "
            "a decoder-only checkpoint such as Gemma 3 or Llama"
        )
    return net


def load_trained(
    folder: str | Path, option: str, *, merge: bool = True, with_model: bool = True, dtype=None
):
    """(model, tokenizer) of a folder a trainer wrote: a LoRA adapter (``adapter_config.json``) is loaded
    on its base model, merged into it unless ``merge=False`` (the audit switches the adapter off to score
    the base model); a soft prompt stays a PEFT model; a full model is loaded as it is. ``dtype``: as
    :func:`load_model_and_tokenizer`'s (None: the base model's own for an adapter, which peft keeps;
    float32 for a full model on CPU). The one place trained folders are loaded."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"{option} {folder} does not exist: pass a folder from train-generator")
    tokenizer = load_tokenizer(str(path), option=option)
    if not with_model:
        return None, tokenizer
    kwargs = {} if dtype is None else {"dtype": _resolve_dtype(dtype)}
    if not (path / "adapter_config.json").is_file():
        return load_causal_lm(str(path), **kwargs), tokenizer
    from peft import AutoPeftModelForCausalLM

    try:
        model = AutoPeftModelForCausalLM.from_pretrained(str(path), **kwargs)
    except OSError as err:  # the adapter's base model moved or is not available offline
        raise FileNotFoundError(
            f"{option} {folder} is a LoRA adapter whose base model cannot be loaded "
            f"({' '.join(str(err).split())[:160]}); restore the base model named in its adapter_config.json"
        ) from None
    if model.active_peft_config.is_prompt_learning:  # a soft prompt cannot be merged: PEFT prepends it
        return model, tokenizer
    return (model.merge_and_unload() if merge else model), tokenizer


RUN_RESULTS, RUN_MODEL = "results.json", "model"  # what `evaluate` leaves in a run folder (harness/outputs)


def load_for_inference(source: str, option: str = "--model", *, dtype=None):
    """(model in eval mode, tokenizer with a pad token, what was loaded) from any of the three things a
    user names as "a model": an ``evaluate`` run folder (its selected ``model/``), a trained folder (a
    LoRA generator, merged into its base; a full model) or a model id. The loader of the commands that
    score a model (memorization, contamination, the gates), so none merges adapters or picks a dtype by
    hand. Not yet of the ``transformers:`` text-generation backend (``llm/local.py``, a layer below
    ``training``), which loads its model itself."""
    path, dtype = Path(source).expanduser(), _resolve_dtype(dtype)  # bf16 on a GPU that has it, else fp32
    kind = "model"
    if (path / RUN_RESULTS).is_file():
        if not (path / RUN_MODEL).is_dir():
            raise UserError(
                f"{option} {source} is an evaluate run without a trained model (--steps 0 keeps none); "
                "pass its base model instead"
            )
        path, kind = path / RUN_MODEL, "evaluate run"
    elif (path / "adapter_config.json").is_file():
        kind = "LoRA adapter"
    if path.is_dir():
        model, tokenizer = load_trained(path, option, dtype=dtype)
    else:
        tokenizer = load_tokenizer(source, option=option)
        model = load_causal_lm(source, dtype=dtype)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    return model, tokenizer, {"given": source, "kind": kind, "dtype": str(model.dtype).removeprefix("torch.")}


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

    ``dtype`` is a torch dtype, a name ("bfloat16", "float32"), or None for :func:`default_dtype`.
    """
    if tuning not in TUNINGS:
        raise UserError(f"unknown tuning {tuning!r}: use {' or '.join(TUNINGS)}")
    if lora_rank < 1:
        raise UserError(f"LoRA rank must be positive, got {lora_rank}")
    tokenizer = load_tokenizer(model)
    kwargs = {"dtype": _resolve_dtype(dtype)}
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
