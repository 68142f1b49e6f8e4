"""A study evaluates a participant's own corpora (``corpora: {name: path}`` or ``{name: {path, privacy}}``),
named like any other corpus, found before anything runs, and ranked under the statement given with it."""

import json
from pathlib import Path

import pytest

from continuousbench.errors import UserError
from continuousbench.study.graph import expand
from continuousbench.study.schema import load_study

CONFIG = Path(__file__).resolve().parents[2] / "recipes" / "configs" / "geminon-tiny-demo.yaml"
STUDY = """name: mine
release: geminon-tiny-2026q1
corpora: {corpora}
evaluators:
  - name: tiny
    config: {config}
    corpora: [{names}]
"""
STATEMENT = {"private": True, "epsilon": 4.0, "delta": 1e-6}


def _write(tmp_path: Path, names: str = "none, real, mine", corpora: str = "{mine: ../mine.jsonl}") -> Path:
    (tmp_path / "mine.jsonl").write_text('{"text": "Zorblat evolves into Zorblax."}\n')
    (tmp_path / "statement.json").write_text(json.dumps(STATEMENT))
    folder = tmp_path / "studies"
    folder.mkdir(exist_ok=True)
    (folder / "s.yaml").write_text(STUDY.format(config=CONFIG, names=names, corpora=corpora))
    return folder / "s.yaml"


def _refused(study: Path) -> str:
    with pytest.raises(UserError) as err:
        load_study(study)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_a_participant_corpus_is_trained_on_by_its_name_and_its_path_reaches_the_job_whole(tmp_path):
    """Before: ``studies/../mine.jsonl`` as written (and a path missing there reached the job relative to
    wherever the study ran)."""
    study = load_study(_write(tmp_path))
    jobs = {job.name: job for job in expand(study, tmp_path / "out")}
    job = jobs["evaluate/tiny/mine-seed0"]
    argv = list(job.argv)
    assert argv[argv.index("--corpus") + 1] == str(tmp_path / "mine.jsonl")
    assert "--corpus_privacy" not in argv  # no statement: ranked as "no statement" (the study says so)
    assert str(tmp_path / "mine.jsonl") in job.inputs  # its sha256 goes into the manifest
    assert study.as_file()["corpora"] == {"mine": {"path": str(tmp_path / "mine.jsonl")}}
    assert "proxies/all" not in jobs  # proxies ranks the corpora a study made (synthetic/), not yours


def test_a_corpus_with_its_statement_reaches_its_runs_as_corpus_privacy(tmp_path):
    study = load_study(_write(tmp_path, corpora="{mine: {path: ../mine.jsonl, privacy: ../statement.json}}"))
    job = next(j for j in expand(study, tmp_path / "out") if j.name == "evaluate/tiny/mine-seed0")
    argv = list(job.argv)
    assert argv[argv.index("--corpus_privacy") + 1] == str(tmp_path / "statement.json")
    assert set(job.inputs) >= {str(tmp_path / "mine.jsonl"), str(tmp_path / "statement.json")}
    again = study.as_file()["corpora"]["mine"]
    assert again == {"path": str(tmp_path / "mine.jsonl"), "privacy": str(tmp_path / "statement.json")}


def test_an_unknown_corpus_name_lists_the_names_known(tmp_path):
    message = _refused(_write(tmp_path, "none, real, ../mine.jsonl"))
    assert "trains on unknown corpora ['../mine.jsonl']; the names known are mine, none, real" in message
    assert "(a corpus of your own: corpora: {name: {path: ..., privacy: ...}})" in message


@pytest.mark.parametrize("name", ["../../../esc", "a/b", ".hidden", ".."])
def test_a_corpus_name_that_is_no_folder_name_is_refused(tmp_path, name):
    """Before: ``../../../esc`` wrote its runs outside --out."""
    message = _refused(_write(tmp_path, names="real", corpora=f"{{'{name}': ../mine.jsonl}}"))
    assert f"name {name!r} must be letters, digits" in message and "corpora" in message


def test_a_missing_corpus_or_a_bad_statement_is_refused_before_anything_runs(tmp_path):
    message = _refused(_write(tmp_path, corpora="{mine: ../nope.jsonl}"))
    assert f"corpora.mine: {tmp_path / 'nope.jsonl'} does not exist" in message
    message = _refused(_write(tmp_path, corpora="{mine: {path: ../mine.jsonl, privacy: ../none.json}}"))
    assert f"corpora.mine.privacy: {tmp_path / 'none.json'} is not a file" in message
    (tmp_path / "bad.json").write_text('{"private": true}')
    message = _refused(_write(tmp_path, corpora="{mine: {path: ../mine.jsonl, privacy: ../bad.json}}"))
    assert "corpora.mine.privacy: " in message and 'without a finite "epsilon"' in message
