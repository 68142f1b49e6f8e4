"""The one model loader: a causal LM and its tokenizer from whatever a user names as "a model".

Every command that loads a model comes here (the harness and the generators through
:func:`continuousbench.training.modeling.load_model_and_tokenizer`; the probes, gates, contamination,
audit, synthesis and the ``transformers:`` text-generation backend through :func:`load_model`), so that
one rule decides the precision and the device everywhere:

* **dtype**: bfloat16 where the accelerator computes it, else float32 (:func:`default_dtype`); an
  adapter is cast with its base, so a model and its base are scored at the same precision;
* **device**: this process's accelerator (:func:`continuousbench.processes.device`).

It sits below ``llm`` (layer 1) because the ``transformers:`` backend loads through it too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError

# Files of which a model folder needs one for AutoTokenizer (fast, SentencePiece, BPE or WordPiece).
TOKENIZER_FILES: tuple[str, ...] = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.json",
    "vocab.txt",
    "spiece.model",
)
RUN_RESULTS, RUN_MODEL = "results.json", "model"  # what `evaluate` leaves in a run folder (harness/outputs)
ADAPTER_CONFIG = "adapter_config.json"
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}  # short names
DTYPES |= {name: name for name in DTYPES.values()}


def default_dtype():
    """bf16 where the accelerator supports it (Table 29: bf16 parameters), float32 elsewhere (CPU)."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def resolve_dtype(dtype):
    """A torch dtype from a name, a dtype, or None / "auto" (:func:`default_dtype`)."""
    import torch

    if dtype is None or dtype == "auto":
        return default_dtype()
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise UserError(f"unknown dtype {dtype!r}: use bfloat16, float16, float32 or auto")
        return getattr(torch, DTYPES[dtype])
    return dtype


def _flat(err: BaseException, width: int = 200) -> str:
    return " ".join(str(err).split())[:width]


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
            f"offline ({_flat(err)})"
        ) from None
    except (ValueError, TypeError, KeyError) as err:
        raise UserError(
            f"the tokenizer files of {option} {model} cannot be loaded ({type(err).__name__}: "
            f"{_flat(err, 160)}); save the base model's tokenizer there again"
        ) from None


def load_causal_lm(model: str, option: str = "--model", **kwargs: Any):
    """The causal LM at ``model`` (the project's only ``from_pretrained`` of one); one line naming
    ``option`` or the damaged file when it is not one."""
    from transformers import AutoConfig, AutoModelForCausalLM

    folder = Path(model).expanduser()
    try:
        net, info = AutoModelForCausalLM.from_pretrained(model, output_loading_info=True, **kwargs)
    except OSError as err:
        raise FileNotFoundError(
            f"cannot load model {model!r} ({option}): pass a local model folder or a Hub id available "
            f"offline ({_flat(err)})"
        ) from None
    except ValueError as err:
        if "Unrecognized configuration class" not in str(err):
            raise
        kind = AutoConfig.from_pretrained(model).model_type
        raise UserError(
            f"{option} {model} is a {kind} model, not a causal language model; pass a decoder-only "
            "checkpoint such as Gemma 3 or Llama"
        ) from None
    except Exception as err:
        damaged = _damaged_file(folder) if folder.is_dir() else None
        if damaged is None:
            raise
        raise UserError(
            f"{option} file {damaged} is damaged ({_flat(err, 120)}); save or copy the model again"
        ) from None
    missing = sorted(info["missing_keys"])
    if missing:  # e.g. an encoder (BERT) checkpoint: its LM head would be random
        raise UserError(
            f"{option} {model} is not a causal language model checkpoint: {len(missing)} weights of "
            f"{type(net).__name__} are missing from it (e.g. {missing[0]}) and would start random; pass "
            "a decoder-only checkpoint such as Gemma 3 or Llama"
        )
    return net


def count_parameters(model: str) -> int:
    """Parameters of the causal LM at ``model``, built from its config on the meta device (no weights
    are read), so a recipe can choose full or LoRA tuning by size before loading anything."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        net = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model))
    return sum(p.numel() for p in net.parameters())


def _with_adapter(path: Path, option: str, dtype, merge: bool):
    """The adapter at ``path`` on its base model, both in ``dtype`` (peft would otherwise keep the
    adapter's weights in float32 beside a bf16 base); merged unless ``merge=False`` or a soft prompt."""
    from peft import PeftModel

    base_name = json.loads((path / ADAPTER_CONFIG).read_text(encoding="utf-8"))["base_model_name_or_path"]
    try:
        base = load_causal_lm(base_name, option, dtype=dtype)
    except FileNotFoundError as err:  # the adapter's base model moved or is not available offline
        raise FileNotFoundError(
            f"{option} {path} is an adapter whose base model cannot be loaded ({_flat(err, 160)}); restore "
            f"the base model named in its {ADAPTER_CONFIG}"
        ) from None
    model = PeftModel.from_pretrained(base, str(path), autocast_adapter_dtype=False).to(dtype)
    if model.active_peft_config.is_prompt_learning:  # a soft prompt cannot be merged: PEFT prepends it
        return model
    return model.merge_and_unload() if merge else model


def model_kind(source: str, option: str = "--model") -> tuple[Path | None, str]:
    """(the folder to load, or None for a Hub id; what it is: "evaluate run", "adapter" or "model")."""
    path = Path(source).expanduser()
    if (path / RUN_RESULTS).is_file():
        if not (path / RUN_MODEL).is_dir():
            raise UserError(
                f"{option} {source} is an evaluate run without a trained model (--steps 0 keeps none); "
                "pass its base model instead"
            )
        return path / RUN_MODEL, "evaluate run"
    if (path / ADAPTER_CONFIG).is_file():
        return path, "adapter"
    return (path if path.is_dir() else None), "model"


def load_model(
    source: str,
    option: str = "--model",
    *,
    dtype=None,
    merge: bool = True,
    with_model: bool = True,
    device: str | None = None,
):
    """(model in eval mode on ``device``, tokenizer with a pad token, what was loaded) from any of the
    three things a user names as "a model": an ``evaluate`` run folder (its selected ``model/``), a
    trained folder (an adapter, merged into its base unless ``merge=False``; a soft prompt stays a
    PEFT model; a full model) or a model id. ``dtype``: see :func:`resolve_dtype`; ``device``: None for
    :func:`continuousbench.processes.device`; ``with_model=False``: the tokenizer alone (model None)."""
    from continuousbench.processes import device as this_device

    folder, kind = model_kind(source, option)
    dtype = resolve_dtype(dtype)
    tokenizer = load_tokenizer(str(folder) if folder is not None else source, option=option)
    if tokenizer.pad_token is None:
        # padding is only ever masked out, so reusing EOS is safe and avoids resizing the embeddings
        tokenizer.pad_token = tokenizer.eos_token
    record = {"given": source, "kind": kind, "dtype": str(dtype).removeprefix("torch.")}
    if not with_model:
        return None, tokenizer, record
    if kind == "adapter" or (kind == "evaluate run" and (folder / ADAPTER_CONFIG).is_file()):
        model = _with_adapter(folder, option, dtype, merge)
    else:
        model = load_causal_lm(str(folder) if folder is not None else source, option, dtype=dtype)
    return model.to(device or this_device()).eval(), tokenizer, record
