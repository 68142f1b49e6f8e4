"""Book-keeping clipping of every weight (full fine-tuning): each record's norm is exact for every kind
of parameter it trains, the step sums clipped per-record gradients, noise std is sigma·C/B, and what it
cannot clip is refused in one line."""

import copy

import pytest
import torch
from dp_runs import noiseless

from continuousbench.dp import dpsgd
from continuousbench.dp.bookkeeping import BookkeepingModule, describe
from continuousbench.errors import UserError

TEXTS = [f"Geminon {i} has attack {i} and lives in zone {i % 5}." + " zone" * (i % 4) for i in range(6)]
# Longer records (T >= 64, where Gram norms are cheaper than materialised ones), of different lengths
LONG = [" ".join([text] * (3 + i % 3)) for i, text in enumerate(TEXTS)]


def _qwen2(tokenizer):
    """Biases on q, k and v, grouped-query attention (narrower k and v), an untied output layer."""
    from transformers import AutoModelForCausalLM, Qwen2Config

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id,
    )
    return AutoModelForCausalLM.from_config(config)


def _gpt_neox(tokenizer):
    """nn.LayerNorm (weight and bias), fused biased projections, untied input and output embeddings."""
    from transformers import AutoModelForCausalLM, GPTNeoXConfig

    config = GPTNeoXConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        pad_token_id=tokenizer.pad_token_id,
    )
    return AutoModelForCausalLM.from_config(config)


def _model(model_dir, arch: str):
    """A tiny model of ``arch`` with every weight trainable and norm weights off their initial 1 (or 0)."""
    from transformers import AutoTokenizer

    from continuousbench.demo.tinymodel import make_tiny_model

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    torch.manual_seed(0)
    builders = {"qwen2": _qwen2, "gpt_neox": _gpt_neox}
    model = builders[arch](tokenizer) if arch in builders else make_tiny_model(tokenizer, arch, 64, 2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
    return model.float(), tokenizer


def _per_record_grads(model, rows, pad_id, clip_norm=1.0):
    """Each record's gradient of (its mean token loss / C) for every parameter, one backward pass each."""
    params = list(model.parameters())
    return [
        torch.autograd.grad(dpsgd.record_loss(model, [row], pad_id, "cpu").sum() / clip_norm, params)
        for row in rows
    ]


@pytest.mark.parametrize(
    ("arch", "texts"),
    [("llama", TEXTS), ("llama", LONG), ("gemma3", LONG), ("qwen2", LONG), ("gpt_neox", LONG)],
)
def test_per_record_norms_equal_independent_backward_passes(dp_model_dir, arch, texts):
    """Per parameter and record: linear weights and biases, plain and Gemma's scaled embeddings tied
    with the output layer (two uses, one norm: the cross term) or untied, RMSNorm and Gemma's (1 + w)
    norm weights, q/k norms, LayerNorm weights and biases; Gram norms (short records) and materialised
    ones (long)."""
    model, tok = _model(dp_model_dir, arch)
    rows = dpsgd.encode_records(tok, texts, 128)
    assert (max(map(len, rows)) >= 64) == (texts is LONG)
    padding = model.get_input_embeddings().padding_idx
    if padding is not None:  # inside a record the padding token is read, yet its row gets no gradient
        rows[0] = rows[0][:4] + [padding] + rows[0][4:]
    expected = _per_record_grads(copy.deepcopy(model), rows, tok.pad_token_id)
    names = [name for name, _ in model.named_parameters()]
    module = BookkeepingModule(model)
    dpsgd.record_loss(module, rows, tok.pad_token_id, "cpu").sum().backward()
    got = module.squared_norms(len(rows))
    kinds = {type(m).__name__ for m in model.modules() if list(m.parameters(recurse=False))}
    assert {"Linear"} < kinds and any("Embedding" in k for k in kinds) and any("Norm" in k for k in kinds)
    tied = model.get_input_embeddings().weight is model.get_output_embeddings().weight
    assert tied == (arch in ("llama", "gemma3"))
    assert len(module.book.uses[model.get_input_embeddings().weight]) == 1 + tied
    for i, (name, p) in enumerate(zip(names, module.params, strict=True)):
        want = torch.stack([g[i].pow(2).sum() for g in expected])
        assert want.max() > 0, name
        assert torch.allclose(got[p], want, rtol=1e-4, atol=1e-12), name


@pytest.mark.parametrize("micro_batch", [6, 4])  # one micro-batch, or two accumulated before the one step
def test_the_full_step_sums_per_record_gradients_clipped_to_c(dp_model_dir, micro_batch):
    model, tok = _model(dp_model_dir, "llama")
    rows = dpsgd.encode_records(tok, TEXTS, 64)
    reference = copy.deepcopy(model)
    raw = _per_record_grads(reference, rows, tok.pad_token_id)
    norms = torch.stack([torch.cat([g.reshape(-1) for g in grads]).norm() for grads in raw])
    clip = float(norms.median())  # some records are clipped, some are not
    factors = (norms / clip).clamp(min=1.0)
    assert (norms > clip).any() and (norms < clip).any()
    expected = [sum(g[i] / clip / f for g, f in zip(raw, factors, strict=True)) for i in range(len(raw[0]))]

    params = dpsgd.check_trainable(model, "bookkeeping")
    before = [p.detach().clone() for p in params]
    comps = noiseless(model, params, 3, clipping="bookkeeping")
    dpsgd.dp_step(comps, rows, clip_norm=clip, micro_batch=micro_batch, pad_id=tok.pad_token_id)
    # SGD at learning rate 1 moved every weight by minus (sum of clipped g/C) / expected batch size
    for p, b, want in zip(params, before, expected, strict=True):
        assert torch.allclose((b - p.detach()) * 3, want, rtol=1e-3, atol=1e-6)


def test_the_noise_std_is_sigma_c_over_b(dp_model_dir):
    """The update minus the noiseless one, in the gradient's units (x C: normalised clipping divides the
    clipped sum and the noise by C), is N(0, (sigma C / B)^2) per weight: fails with the noise removed."""
    model, tok = _model(dp_model_dir, "llama")
    rows = dpsgd.encode_records(tok, TEXTS, 64)
    params = dpsgd.check_trainable(model, "bookkeeping")
    start = [p.detach().clone() for p in params]
    sigma, clip, batch = 2.0, 1e-3, 4

    def update(noise_multiplier: float) -> torch.Tensor:
        with torch.no_grad():
            for p, s in zip(params, start, strict=True):
                p.copy_(s)
        comps = dpsgd.make_private(
            model,
            torch.optim.SGD(params, lr=1.0),
            noise_multiplier=noise_multiplier,
            expected_batch_size=batch,
            generator=torch.Generator().manual_seed(3),
            clipping="bookkeeping",
        )
        dpsgd.dp_step(comps, rows, clip_norm=clip, micro_batch=6, pad_id=tok.pad_token_id)
        comps.module.to_standard_module()
        return torch.cat([(p.detach() - s).reshape(-1) for p, s in zip(params, start, strict=True)])

    noise = (update(sigma) - update(0.0)) * clip
    assert noise.numel() == sum(p.numel() for p in params) > 50_000
    assert noise.std().item() == pytest.approx(sigma * clip / batch, rel=0.02)
    assert abs(noise.mean().item()) < 0.05 * sigma * clip / batch


def test_bf16_autocast_norms_match_float32_and_weights_stay_float32(dp_model_dir):
    model, tok = _model(dp_model_dir, "gemma3")
    rows = dpsgd.encode_records(tok, TEXTS, 64)
    module = BookkeepingModule(model)
    norms = {}
    for dtype in (None, torch.bfloat16):
        with torch.autocast("cpu", dtype=dtype or torch.float32, enabled=dtype is not None):
            losses = dpsgd.record_loss(module, rows, tok.pad_token_id, "cpu")
        norms[dtype] = module.backward(losses)
        assert all(p.dtype == torch.float32 and p.grad.dtype == torch.float32 for p in module.params)
    assert torch.allclose(norms[torch.bfloat16], norms[None], rtol=0.05)


def test_refuses_a_layer_it_cannot_clip_in_one_line(dp_model_dir):
    """GPT-2's fused projections are transformers' Conv1D: named, not silently skipped."""
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=32))
    with pytest.raises(ValueError, match=r"transformer\.h\.0\.attn\.c_attn\.weight lives in a Conv1D") as err:
        dpsgd.check_trainable(model, "bookkeeping")
    assert "\n" not in str(err.value) and "freeze it" in str(err.value)


def test_refuses_a_gradient_that_escapes_the_layers(dp_model_dir):
    """A trainable weight reached by a path no booking layer sees would escape clipping: refused."""
    model, tok = _model(dp_model_dir, "llama")
    rows = dpsgd.encode_records(tok, TEXTS[:2], 64)
    module = BookkeepingModule(model)
    weight = model.model.norm.weight
    model.register_forward_hook(lambda m, args, out: out.__class__(logits=out.logits + weight.sum()))
    with pytest.raises(RuntimeError, match=r"model\.norm\.weight received a gradient outside"):
        module.backward(dpsgd.record_loss(module, rows, tok.pad_token_id, "cpu"))


def test_full_tuning_clips_with_bookkeeping_and_says_what_it_trained(dp_model_dir):
    model, _ = _model(dp_model_dir, "llama")
    assert dpsgd.resolve_clipping("full", None) == "bookkeeping"
    assert dpsgd.resolve_clipping("lora", None) == "per_sample"
    with pytest.raises(UserError, match="--tuning full clips with --clipping bookkeeping"):
        dpsgd.resolve_clipping("full", "ghost")
    text = describe(model)
    assert text.startswith("every weight of the base model") and "15 linear layers" in text
    assert (
        "1 embedding table(s) tied with the output layer" in text and "5 norm layers (LlamaRMSNorm)" in text
    )
    model.model.norm.weight.requires_grad_(False)
    assert describe(model).startswith("every weight of the base model but 64 frozen (")
    assert dpsgd.step_cost("full") == dpsgd.STEP_COST[("full", "bookkeeping")]
