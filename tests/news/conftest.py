"""Fixtures of the NEWS tests: WARC files written here with warcio, from the pages of ``newspages``."""

from __future__ import annotations

import pytest
from newspages import TINY_CLUSTERING, event_records, special_records, write_warc


@pytest.fixture(scope="session")
def warc_dir(tmp_path_factory):
    """Two gzipped WARC files of event reports (with a syndicated exact copy and the awkward pages), one
    plain WARC, and a gzipped WARC cut in the middle of a record."""
    folder = tmp_path_factory.mktemp("warc")
    records, _ = event_records(per_event=8)
    copy = dict(records[0], url=records[0]["url"].replace("bridge-0", "bridge-syndicated"))
    half = len(records) // 2
    write_warc(folder / "a.warc.gz", records[:half] + [copy] + special_records())
    write_warc(folder / "b.warc", records[half:], compress=False)
    late, _ = event_records(per_event=2, seed=1)
    write_warc(folder / "whole.warc.gz", [dict(r, url=r["url"] + "-late") for r in late[:6]])
    data = (folder / "whole.warc.gz").read_bytes()
    (folder / "cut.warc.gz").write_bytes(data[: len(data) * 2 // 3])
    (folder / "whole.warc.gz").unlink()
    return folder


@pytest.fixture(scope="session")
def extracted(warc_dir, tmp_path_factory):
    """The extract stage's output folder over ``warc_dir`` (two tasks, run once for the session)."""
    from continuousbench.news.executors import ExecutorArguments
    from continuousbench.news.extract import ExtractArguments, main

    out = tmp_path_factory.mktemp("extract")
    args = ExtractArguments(output=str(out), warc=[str(warc_dir / "*.warc*")], timeout=30)
    return main(args, ExecutorArguments(tasks=2))


@pytest.fixture(scope="session")
def deduped(extracted, tmp_path_factory):
    """The dedup stage's output over ``extracted``."""
    from continuousbench.news.dedup import DedupArguments, main
    from continuousbench.news.executors import ExecutorArguments

    out = tmp_path_factory.mktemp("dedup")
    return main(DedupArguments(input=str(extracted), output=str(out)), ExecutorArguments())


@pytest.fixture(scope="session")
def clustered(deduped, tmp_path_factory):
    """The cluster stage's output over ``deduped`` (TF-IDF encoder)."""
    from continuousbench.news.cluster import ClusterArguments, main

    out = tmp_path_factory.mktemp("cluster")
    return main(ClusterArguments(input=str(deduped), output=str(out), **TINY_CLUSTERING))


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory):
    """A sentence-transformers model built here: a 2-layer BERT and a WordPiece vocabulary trained on
    the fixture's sentences, mean pooling."""
    from newspages import EVENTS, FILLER_WORDS, STOP_PHRASES
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, trainers
    from tokenizers import models as tmodels
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("encoder")
    sentences = [p for e in EVENTS for f in e.facts for p in f.phrasings] + list(STOP_PHRASES)
    sentences += [" ".join(FILLER_WORDS)] + [t for e in EVENTS for t in e.titles]
    tok = Tokenizer(tmodels.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(sentences, trainers.WordPieceTrainer(vocab_size=400, special_tokens=special))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    import torch

    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder / "bert")
    fast.save_pretrained(folder / "bert")
    word = models.Transformer(str(folder / "bert"), max_seq_length=128)
    model = SentenceTransformer(modules=[word, models.Pooling(word.get_embedding_dimension(), "mean")])
    model.save(str(folder / "st"))
    return folder / "st"


@pytest.fixture(scope="session")
def model_stages(clustered, tmp_path_factory):
    """facts -> qa -> filter -> support over ``clustered`` with the offline model; the four folders."""
    from continuousbench.news import facts, qa, support
    from continuousbench.news import filter as filtering
    from continuousbench.news.models import ModelArguments

    root = tmp_path_factory.mktemp("model-stages")
    model = ModelArguments(
        llm="offline:news",
        max_dropped=1.0,  # the offline model fails 2 answers in 7
        judge_override_calibration=True,
    )  # and, a contains rule, fails calibration
    f = facts.main(facts.FactsArguments(input=str(clustered), output=str(root / "facts")), model)
    q = qa.main(qa.QAArguments(facts=str(f), articles=str(clustered), output=str(root / "qa")), model)
    kept = filtering.main(filtering.FilterArguments(input=str(q), output=str(root / "filter")), model)
    args = support.SupportArguments(input=str(kept), articles=str(clustered), output=str(root / "support"))
    return {"facts": f, "qa": q, "filter": kept, "support": support.main(args, model)}
