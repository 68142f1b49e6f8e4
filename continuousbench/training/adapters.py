"""What a tuning trains: LoRA on named projections of each architecture, or a PEFT soft prompt.

LoRA placement (paper App. F): ``attention``, ``mlp`` or ``all`` ("Full-LoRA", the recommended
default). Module names differ between families, so a placement is resolved against the naming schemes
below; a model that matches none gets one line listing the linear modules it has.

Prompt tuning (paper App. E): a soft prompt of ``num_virtual_tokens`` embeddings prepended to every
record. DP prompt tuning needs a random uniform initialisation in a small range (vocabulary
initialisation does not recover from the noise), so ``random_uniform`` is the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from continuousbench.errors import UserError

LORA_PLACEMENTS: tuple[str, ...] = ("attention", "mlp", "all")
PROMPT_INITS: tuple[str, ...] = ("random_uniform", "vocab")

# Leaf module names per placement, per naming scheme. Llama's names are shared by Gemma 3, Qwen 2/3 and
# Mistral; Phi-3 fuses projections; GPT-NeoX (Pythia) has its own.
NAMING_SCHEMES: dict[str, dict[str, tuple[str, ...]]] = {
    "Llama / Gemma 3 / Qwen 2-3 / Mistral": {
        "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
        "mlp": ("gate_proj", "up_proj", "down_proj"),
    },
    "Phi-3": {"attention": ("qkv_proj", "o_proj"), "mlp": ("gate_up_proj", "down_proj")},
    "GPT-NeoX": {"attention": ("query_key_value", "dense"), "mlp": ("dense_h_to_4h", "dense_4h_to_h")},
}


def placement_modules(scheme: dict[str, tuple[str, ...]], placement: str) -> tuple[str, ...]:
    """The leaf names a placement covers in one naming scheme."""
    if placement not in LORA_PLACEMENTS:
        raise UserError(f"unknown --lora_targets {placement!r}: use {', '.join(LORA_PLACEMENTS)}")
    if placement == "all":
        return scheme["attention"] + scheme["mlp"]
    return scheme[placement]


def resolve_lora_targets(model, placement: str = "all") -> tuple[str, list[str] | str]:
    """(naming scheme, PEFT ``target_modules``) for ``placement`` in ``model``.

    Multimodal checkpoints (Gemma 3 4B+) get a regex restricted to the language model: their vision
    tower also has ``q_proj``/``k_proj``/``v_proj`` that continued pretraining must not touch.
    """
    import torch

    names = [name for name, _ in model.named_modules()]
    linear = {  # projections: a 2-D weight (Linear, GPT-2's Conv1D), not an embedding table
        n.rsplit(".", 1)[-1]
        for n, m in model.named_modules()
        if getattr(getattr(m, "weight", None), "ndim", 0) == 2 and not isinstance(m, torch.nn.Embedding)
    }
    for label, scheme in NAMING_SCHEMES.items():
        if set(scheme["attention"] + scheme["mlp"]) <= linear:
            wanted = placement_modules(scheme, placement)
            if any(".language_model." in f".{n}." for n in names) and any("vision" in n for n in names):
                return label, rf".*language_model.*\.({'|'.join(wanted)})"
            return label, list(wanted)
    placement_modules(NAMING_SCHEMES["Phi-3"], placement)  # an unknown placement is named first
    raise UserError(
        f"model {type(model).__name__} has none of the known projection names "
        f"({'; '.join(NAMING_SCHEMES)}); its projections are {', '.join(sorted(linear)) or 'none'}: "
        "use --tuning full or --tuning prompt"
    )


@dataclass(frozen=True)
class PromptSpec:
    """A soft prompt: its length and initialisation (drawn from the published seed: public)."""

    num_virtual_tokens: int = 20
    init: str = "random_uniform"
    init_range: float = 0.01

    def describe(self) -> str:
        start = (
            f"random uniform in [-{self.init_range:g}, {self.init_range:g}]"
            if self.init == "random_uniform"
            else "embeddings of random vocabulary tokens"
        )
        return (
            f"a soft prompt of {self.num_virtual_tokens} virtual tokens (PEFT prompt tuning, initialised "
            f"{start})"
        )


def add_soft_prompt(net, spec: PromptSpec):
    """``net`` wrapped by PEFT prompt tuning; only the soft prompt is trainable."""
    import torch
    from peft import PromptTuningConfig, PromptTuningInit, get_peft_model

    if spec.init not in PROMPT_INITS:
        raise UserError(f"unknown --prompt_init {spec.init!r}: use {' or '.join(PROMPT_INITS)}")
    init = PromptTuningInit.RANDOM if spec.init == "random_uniform" else PromptTuningInit.SAMPLE_VOCAB
    config = PromptTuningConfig(
        task_type="CAUSAL_LM", num_virtual_tokens=spec.num_virtual_tokens, prompt_tuning_init=init
    )
    model = get_peft_model(net, config)
    if spec.init == "random_uniform":  # PEFT's RANDOM is nn.Embedding's N(0, 1): far too large (App. E)
        with torch.no_grad():
            soft_prompt(model).uniform_(-spec.init_range, spec.init_range)
    return model


def soft_prompt(model):
    """The trainable soft-prompt tensor of a prompt-tuned PEFT model."""
    return model.prompt_encoder[model.active_adapter].embedding.weight


def look_up_per_record(model) -> None:
    """Make the soft prompt's lookup take one row per record, so that per-record gradient hooks (Opacus)
    see each record's gradient.

    PEFT looks the prompt up once and repeats the result over the batch (peft#2043, a speed-up); a hook
    on the embedding then sees a batch of one whose gradient is the whole batch's sum, which DP-SGD
    would clip as if it were one record's. Saving reads the table directly for the same reason: a
    lookup outside a training step would leave an activation behind in Opacus's hooks.
    """
    encoder = model.prompt_encoder[model.active_adapter]
    tokens = model.prompt_tokens[model.active_adapter]

    def get_prompt(batch_size: int, task_ids=None, max_cache_len=None):
        rows = tokens.unsqueeze(0).repeat(batch_size, 1)  # contiguous: Opacus's ghost norm views it
        return encoder(rows.to(encoder.embedding.weight.device))

    def embedding_to_save(adapter_name: str):  # PEFT's own runs the lookup, which Opacus's hooks count
        return model.prompt_encoder[adapter_name].embedding.weight.detach().cpu()

    model.get_prompt = get_prompt
    model.get_prompt_embedding_to_save = embedding_to_save


def describe_trained(adapter_config: dict, placement: str | None, prompt: PromptSpec | None) -> str:
    """What a PEFT adapter folder trained, in words, from its ``adapter_config.json``: for the privacy
    statement and the card (the resolved module names, not only the option)."""
    if prompt is not None:
        return prompt.describe()
    modules = adapter_config.get("target_modules")
    names = ", ".join(sorted(modules)) if isinstance(modules, list | set) else f"modules matching {modules}"
    where = {"attention": "attention", "mlp": "MLP", "all": "attention and MLP"}[placement or "all"]
    return f"LoRA adapters of rank {adapter_config.get('r')} on the {where} projections ({names})"
