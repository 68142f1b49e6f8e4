"""A participant's corpus states its guarantee: privacy.json beside a folder, or evaluate --corpus_privacy."""

import json

import pytest

from continuousbench.errors import UserError
from continuousbench.results.privacy_statement import stated_privacy

STATEMENT = {"private": True, "epsilon": 4.0, "delta": 1e-6, "accountant": "prv", "mechanism": "mine"}


def test_a_statement_file_states_the_guarantee_of_a_jsonl_corpus(tmp_path):
    corpus = tmp_path / "mine.jsonl"
    corpus.write_text('{"text": "a"}\n')
    assert stated_privacy(corpus) == (None, None)  # a file corpus states nothing by itself
    file = tmp_path / "statement.json"
    file.write_text(json.dumps(STATEMENT))
    privacy, where = stated_privacy(corpus, str(file))
    assert privacy == {
        "private": True,
        "epsilon": 4.0,
        "delta": 1e-6,
        "accountant": "prv",
        "unit": "record",
        "adjacency": "add-or-remove",
    }
    assert where == f"--corpus_privacy {file}"


def test_a_folders_privacy_json_is_read_and_the_file_given_wins(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "privacy.json").write_text(json.dumps({"private": False}))
    assert stated_privacy(folder) == ({"private": False}, "privacy.json")
    file = tmp_path / "statement.json"
    file.write_text(json.dumps(STATEMENT))
    assert stated_privacy(folder, file)[0]["epsilon"] == 4.0


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "is not a JSON file"),
        ('{"epsilon": 1}', 'must be a JSON object with "private": true or false'),
        ('{"private": true, "delta": 1e-6}', 'without a finite "epsilon" > 0'),
        ('{"private": true, "epsilon": "ten", "delta": 1e-6}', 'without a finite "epsilon" > 0'),
        ('{"private": true, "epsilon": 1}', 'without a "delta" in [0, 1)'),
        ('{"private": false, "unit": 3}', '"unit" must be text'),
    ],
)
def test_a_malformed_statement_is_one_line(tmp_path, text, message):
    file = tmp_path / "statement.json"
    file.write_text(text)
    with pytest.raises(UserError) as err:
        stated_privacy(tmp_path, file)
    assert message in str(err.value) and str(err.value).startswith(f"--corpus_privacy {file}")
    assert "docs/results-format.md" in str(err.value) and "\n" not in str(err.value)


def test_evaluate_refuses_a_bad_statement_before_training(
    tmp_path, invoke, tiny_release, tiny_model_dir, run_argv
):
    file = tmp_path / "statement.json"
    file.write_text('{"private": true}')
    argv = run_argv(tiny_release, tiny_model_dir, tmp_path / "run", "--corpus_privacy", str(file))
    result = invoke(["evaluate", *argv])
    assert result.exit_code == 2 and not list((tmp_path / "run").glob("*"))  # nothing kept
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: --corpus_privacy {file} states")


def test_a_statement_whose_delta_guarantees_nothing_is_refused_before_training(
    tmp_path, invoke, tiny_release, tiny_model_dir, run_argv
):
    """delta >= 1/n (n: the corpus's records) can publish a record outright: refused in one line rather
    than ranked as DP data (the leaderboard puts older such records in a bucket of their own)."""
    file = tmp_path / "statement.json"
    file.write_text('{"private": true, "epsilon": 8, "delta": 0.01}')  # the tiny corpus: 1,716 records
    argv = run_argv(tiny_release, tiny_model_dir, tmp_path / "run", "--corpus_privacy", str(file))
    result = invoke(["evaluate", *argv])
    assert result.exit_code == 2 and not list((tmp_path / "run").glob("*"))
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: --corpus_privacy {file}: the statement's delta 0.01 is not below 1/n = 0.000583 (n = 1716 "
        "records): at that delta a mechanism may publish a whole record, so it guarantees nothing; state a "
        "delta below 1/n, or evaluate without the statement"
    )


def test_n_is_the_statements_own_data_for_a_generator_and_at_least_the_corpus_for_a_participant():
    from continuousbench.results.privacy_check import delta_problem

    ours = {"private": True, "epsilon": 10, "delta": 1 / 300**1.1, "dataset_size": 300}  # a generator's
    assert delta_problem(ours, documents=600, given=False) is None  # 600 samples of 300 private records
    assert "n = 600 records" in delta_problem(ours, documents=600, given=True)  # a participant's file
    assert delta_problem({**ours, "dataset_size": 1}, documents=600, given=True)  # no escape by claiming n
    assert delta_problem({"private": True, "epsilon": 1, "delta": 1e-4}, 600, given=False) is None
    assert delta_problem({"private": False}, 600, given=True) is None
