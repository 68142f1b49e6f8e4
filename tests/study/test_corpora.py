"""A study evaluates a participant's own corpora (``corpora: {name: path}``), named like any other."""

from pathlib import Path

import pytest

from continuousbench.errors import UserError
from continuousbench.study.graph import expand
from continuousbench.study.schema import load_study

STUDY = """name: mine
release: geminon-tiny-2026q1
corpora: {{mine: ../mine.jsonl}}
evaluators:
  - name: tiny
    config: {config}
    corpora: [{names}]
"""


def _write(tmp_path: Path, names: str) -> Path:
    config = Path(__file__).resolve().parents[2] / "recipes" / "configs" / "geminon-tiny-demo.yaml"
    (tmp_path / "mine.jsonl").write_text('{"text": "Zorblat evolves into Zorblax."}\n')
    folder = tmp_path / "studies"
    folder.mkdir()
    (folder / "s.yaml").write_text(STUDY.format(config=config, names=names))
    return folder / "s.yaml"


def test_a_participant_corpus_is_trained_on_by_its_name(tmp_path):
    study = load_study(_write(tmp_path, "none, real, mine"))
    jobs = {job.name: job for job in expand(study, tmp_path / "out")}
    argv = list(jobs["evaluate/tiny/mine-seed0"].argv)
    assert argv[argv.index("--corpus") + 1] == str(tmp_path / "studies" / ".." / "mine.jsonl")
    assert study.as_file()["corpora"] == {"mine": str(tmp_path / "studies" / ".." / "mine.jsonl")}


def test_an_unknown_corpus_name_lists_the_names_known(tmp_path):
    with pytest.raises(UserError) as err:
        load_study(_write(tmp_path, "none, real, ../mine.jsonl"))
    message = str(err.value)
    assert "trains on unknown corpora ['../mine.jsonl']; the names known are mine, none, real" in message
    assert "(a corpus of your own: corpora: {name: path})" in message
