"""Singleton leakage on a real tiny release: verbatim name + value in one document, whole words only."""

import json

import pytest

from continuousbench.diagnostics.leakage import leaked_facts, singleton_facts


def _corpus(folder, texts):
    from datasets import Dataset

    (folder / "data").mkdir(parents=True)
    Dataset.from_dict({"text": texts}).to_parquet(str(folder / "data" / "train-00000-of-00001.parquet"))
    return folder


@pytest.fixture(scope="module")
def facts(tiny_release):
    return singleton_facts(str(tiny_release))


def test_name_and_value_in_one_document_whole_words(facts):
    number = next(f for f in facts if f.values[0].isdigit() and len(f.values[0]) == 2)
    word = next(f for f in facts if not f.values[0].isdigit() and f.name != number.name)
    texts = [
        f"They say {number.name.upper()} has {number.values[0]} points.",  # leaked (case-insensitive)
        f"{word.name} is known.",  # the name alone
        f"Something has {word.values[0]}.",  # the value alone
        f"{number.name} scored 1{number.values[0]}.",  # "77" inside "177" is not the value
        f"{word.name}: {word.values[0]}",  # leaked
        f"{word.name} again, {word.values[0]} again",  # the same fact, a second document
    ]
    found = leaked_facts(facts, texts)
    assert found[number.id] == 1 and found[word.id] == 2


def test_command_compares_corpus_reference_and_real(invoke, tmp_path, tiny_release, facts):
    clean = _corpus(tmp_path / "dp", ["A Geminon with no name.", "Nothing sensitive here."])
    leaky = _corpus(tmp_path / "np", [f"{f.name} has {f.values[0]}." for f in facts[:5]])
    out = tmp_path / "leakage.json"
    argv = ["leakage", "--release", tiny_release, "--corpus", clean, "--reference", leaky, "--output", out]
    result = invoke(argv)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["corpus"]["facts_leaked"] == 0 and data["reference"]["facts_leaked"] >= 5
    assert data["real_train"]["facts_leaked"] > data["facts"] // 2  # the real split states most verbatim
    assert f"corpus: 0/{data['facts']}" in result.stdout
    again = invoke(argv)
    assert again.exit_code == 2 and "--overwrite" in again.stderr
