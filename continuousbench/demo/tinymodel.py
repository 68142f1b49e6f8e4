"""Tiny tokenizers and causal LMs built locally, for tests, benchmarks and the offline demo.

Nothing here downloads anything: the tokenizer is trained with `tokenizers` on the caller's texts and
the model is initialised from a `LlamaConfig` or `Gemma3TextConfig`. Real users pass real model ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from continuousbench.errors import UserError

SPECIAL_TOKENS = {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048):
    """Byte-level BPE with every digit its own token (numbers tokenise the same way everywhere)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS["unk_token"]))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    bos = SPECIAL_TOKENS["bos_token"]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok, **SPECIAL_TOKENS)


def make_tiny_model(
    tokenizer,
    arch: str = "llama",
    hidden_size: int = 128,
    num_layers: int = 4,
    num_heads: int = 4,
    max_positions: int = 512,
    seed: int = 0,
):
    """A freshly initialised causal LM (1M parameters at the defaults, tied embeddings)."""
    import torch
    from transformers import AutoModelForCausalLM, Gemma3TextConfig, LlamaConfig

    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=3 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    match arch:
        case "llama":
            config = LlamaConfig(**common)
        case "gemma3":
            config = Gemma3TextConfig(
                **common, head_dim=hidden_size // num_heads, sliding_window=max_positions
            )
        case _:
            raise UserError(f"unknown tiny architecture {arch!r}: use llama or gemma3")
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config)


def save_tiny_model(
    out_dir: str | Path, texts: Iterable[str], arch: str = "llama", vocab_size: int = 2048, **kw
):
    """Train a tokenizer on ``texts``, build a tiny model, save both to ``out_dir``; return the path."""
    out = Path(out_dir)
    tokenizer = train_tokenizer(texts, vocab_size=vocab_size)
    model = make_tiny_model(tokenizer, arch=arch, **kw)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def train_on_texts(
    base: str | Path, texts: list[str], out: str | Path, *, seed: int = 0, lr: float = 3e-3, epochs: int = 1
) -> Path:
    """``base`` trained plainly on ``texts`` (next-token loss, 64 tokens, batches of 32, AdamW), saved
    with its tokenizer to ``out``: a model that has seen a corpus, for the contamination test's checks."""
    import torch

    from continuousbench.loader import load_model

    torch.manual_seed(seed)
    model, tok, _ = load_model(str(base), dtype="float32", device="cpu")
    encoded = tok(list(texts), truncation=True, max_length=64)["input_ids"]
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        for start in range(0, len(encoded), 32):
            rows = encoded[start : start + 32]
            ids = torch.full((len(rows), max(map(len, rows))), tok.pad_token_id)
            labels = torch.full_like(ids, -100)
            for j, r in enumerate(rows):
                ids[j, : len(r)] = labels[j, : len(r)] = torch.tensor(r)
            model(input_ids=ids, attention_mask=(labels != -100).long(), labels=labels).loss.backward()
            optimiser.step()
            optimiser.zero_grad()
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return Path(out)
