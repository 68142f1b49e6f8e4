"""LoRA placement resolved per architecture; one line for a model whose projections are unknown."""

import pytest
import torch

from continuousbench.errors import UserError
from continuousbench.training.adapters import resolve_lora_targets


def _tiny(kind: str):
    """A randomly initialised two-layer model of ``kind`` (built from a config: no download)."""
    from transformers import AutoModelForCausalLM, Gemma3TextConfig, GPT2Config, LlamaConfig, Qwen2Config

    small = {
        "vocab_size": 64,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
    }
    configs = {
        "llama": lambda: LlamaConfig(**small),
        "qwen2": lambda: Qwen2Config(**small),
        "gemma3": lambda: Gemma3TextConfig(**small, head_dim=16),
        "gpt2": lambda: GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=2),
    }
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(configs[kind]())


@pytest.mark.parametrize("kind", ["llama", "qwen2", "gemma3"])
def test_placements_name_the_attention_and_mlp_projections(kind):
    model = _tiny(kind)
    assert resolve_lora_targets(model, "attention")[1] == ["q_proj", "k_proj", "v_proj", "o_proj"]
    assert resolve_lora_targets(model, "mlp")[1] == ["gate_proj", "up_proj", "down_proj"]
    scheme, everything = resolve_lora_targets(model, "all")
    assert len(everything) == 7 and "Gemma 3" in scheme and "Qwen" in scheme


def test_an_unknown_architecture_gets_one_line_naming_its_projections():
    with pytest.raises(UserError) as err:
        resolve_lora_targets(_tiny("gpt2"), "mlp")
    message = str(err.value)
    assert "GPT2LMHeadModel" in message and "c_attn" in message and "c_fc" in message and "\n" not in message
