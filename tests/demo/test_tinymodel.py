from continuousbench.demo.tinymodel import make_tiny_model, train_tokenizer

TEXTS = [f"Q: What is the HP stat of Zorblax{i}?\nA: {i * 7}\n" for i in range(200)]


def test_tokenizer_splits_digits_and_adds_bos():
    tok = train_tokenizer(TEXTS, vocab_size=300)
    ids = tok("A: 123").input_ids
    assert ids[0] == tok.bos_token_id
    assert [tok.decode([i]) for i in ids[-3:]] == ["1", "2", "3"]


def test_both_architectures_build():
    tok = train_tokenizer(TEXTS, vocab_size=300)
    for arch in ("llama", "gemma3"):
        model = make_tiny_model(tok, arch=arch)
        assert model.config.vocab_size == len(tok)
        assert sum(p.numel() for p in model.parameters()) < 2_000_000
