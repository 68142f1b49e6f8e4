import json

import pytest
from datasets import Dataset, DatasetDict, Features, Value

from continuousbench.training.data import corpus_fingerprint, load_corpus


def one_line_error(exc_type, source, match, **kw):
    with pytest.raises(exc_type, match=match) as info:
        load_corpus(str(source), **kw)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_release_folder_gives_its_train_corpus(tiny_release):
    from continuousbench.release.load import load_release

    corpus = load_corpus(str(tiny_release))
    assert corpus.column_names == ["text"]
    assert corpus["text"] == load_release(tiny_release, "corpus", split="train")["text"]


def test_files_and_saved_datasets(tmp_path):
    docs = ["Alpha is a Geminon.\nHP: 5", "Beta is another one.", "Gamma."]
    Dataset.from_dict({"body": docs, "n": [1, 2, 3]}).to_parquet(tmp_path / "c.parquet")
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
    (tmp_path / "c.txt").write_text("\n\n".join(docs) + "\n")
    Dataset.from_dict({"text": docs}).save_to_disk(tmp_path / "saved")
    DatasetDict(
        {"train": Dataset.from_dict({"text": docs}), "validation": Dataset.from_dict({"text": ["x"]})}
    ).save_to_disk(tmp_path / "saved_dict")
    assert load_corpus(str(tmp_path / "c.parquet"), text_column="body")["text"] == docs
    assert load_corpus(str(tmp_path / "c.jsonl"))["text"] == docs
    # .txt: one document per blank-line-separated paragraph, so multi-line documents survive
    assert load_corpus(str(tmp_path / "c.txt"))["text"] == docs
    assert load_corpus(str(tmp_path / "saved"))["text"] == docs
    assert load_corpus(str(tmp_path / "saved_dict"), split="validation")["text"] == ["x"]


def test_empty_rows_are_dropped_duplicates_kept(tmp_path):
    Dataset.from_dict({"text": ["a b", "", "  ", None, "a b", "c"]}).to_parquet(tmp_path / "c.parquet")
    assert load_corpus(str(tmp_path / "c.parquet"))["text"] == ["a b", "a b", "c"]


def test_bad_corpora_fail_with_one_clear_line(tmp_path):
    Dataset.from_dict({"text": []}, features=Features({"text": Value("string")})).to_parquet(
        tmp_path / "empty.parquet"
    )
    one_line_error(ValueError, tmp_path / "empty.parquet", "is empty")
    Dataset.from_dict({"body": ["x"], "id": [1]}).to_parquet(tmp_path / "nocol.parquet")
    msg = one_line_error(ValueError, tmp_path / "nocol.parquet", "has no column 'text'")
    assert "body, id" in msg and "--text_column" in msg
    Dataset.from_dict({"text": ["same doc"] * 5}).to_parquet(tmp_path / "dup.parquet")
    one_line_error(ValueError, tmp_path / "dup.parquet", "all the same text")
    Dataset.from_dict({"text": [1, 2, 3]}).to_parquet(tmp_path / "ints.parquet")
    one_line_error(ValueError, tmp_path / "ints.parquet", "not strings")
    Dataset.from_dict({"text": ["", " \n "]}).to_parquet(tmp_path / "blank.parquet")
    one_line_error(ValueError, tmp_path / "blank.parquet", "every 'text' value is empty")
    (tmp_path / "c.csvx").write_text("x")
    one_line_error(ValueError, tmp_path / "c.csvx", "unknown extension")
    one_line_error(FileNotFoundError, tmp_path / "missing.parquet", "does not exist")


def test_fingerprint_covers_content_order_and_boundaries():
    a = Dataset.from_dict({"text": ["ab", "c"]})
    assert corpus_fingerprint(a) == corpus_fingerprint(Dataset.from_dict({"text": ["ab", "c"]}))
    assert corpus_fingerprint(a) != corpus_fingerprint(Dataset.from_dict({"text": ["a", "bc"]}))
    assert corpus_fingerprint(a) != corpus_fingerprint(Dataset.from_dict({"text": ["c", "ab"]}))


def test_one_fingerprint_for_a_corpus_and_for_train_and_validation():
    """The harness's fingerprint (recorded in results.json: unchanged) and the generator's resume check
    (train and validation records, which had their own hash) are one function."""
    single = "43ee655579de01ca739b3f95c1c2d3f46d353b2c0df818064ea594506cdb2617"
    assert corpus_fingerprint({"text": ["ab", "c"]}) == corpus_fingerprint(["ab", "c"]) == single
    splits = [(["ab"], ["c"]), (["ab", "c"], []), ([], ["ab", "c"])]
    assert len({single, *(corpus_fingerprint(*s) for s in splits)}) == 4  # a record moved: a change


def test_replay_mixture_is_a_fixed_seeded_share():
    from datasets import Dataset

    from continuousbench.training.data import mix_replay

    corpus = Dataset.from_dict({"text": [f"doc {i:02d}" for i in range(30)]})  # 6 characters each
    replay = Dataset.from_dict({"text": [f"replay {i:03d}" + "x" * 8 for i in range(4)]})  # 18 characters
    mixed = mix_replay(corpus, replay, 0.25, seed=3)
    texts = mixed["text"]
    # a quarter of the text, not of the documents: 60 of 180 characters need 4 replay documents (72)
    assert texts[:30] == corpus["text"] and len(texts) == 34
    assert all(t.startswith("replay") for t in texts[30:])
    assert sorted(texts[30:34]) == sorted(replay["text"])  # whole permutations before any repeat
    assert len(mix_replay(corpus, replay, 0.5, seed=3)) == 30 + 10  # 180 characters: 10 x 18, cycling
    assert mix_replay(corpus, replay, 0.25, seed=3)["text"] == texts
    assert mix_replay(corpus, replay, 0.25, seed=4)["text"] != texts
    with pytest.raises(ValueError, match="replay_fraction"):
        mix_replay(corpus, replay, 1.0)


def test_folders_with_the_same_name_and_card_do_not_share_a_cache(tmp_path):
    """datasets keys a folder's cache on its name and card: a second `syn/` with the same card and a
    label column was cast to the first one's features ("column names don't match"), even rebuilt."""
    card = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/*\n---\n"
    labelled = {"text": ["second corpus", "more"], "label": ["a", "b"]}
    for run, columns in (("one", {"text": ["first corpus"]}), ("two", labelled)):
        folder = tmp_path / run / "syn"
        (folder / "data").mkdir(parents=True)
        Dataset.from_dict(columns).to_parquet(str(folder / "data" / "train.parquet"))
        (folder / "README.md").write_text(card)
        assert load_corpus(str(folder))["text"] == columns["text"]
    first = tmp_path / "one" / "syn"
    Dataset.from_dict({"text": ["x", "y"]}).to_parquet(str(first / "data" / "more.parquet"))
    assert len(load_corpus(str(first))) == 3  # a file added: read again
