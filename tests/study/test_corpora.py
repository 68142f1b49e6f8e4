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


@pytest.mark.slow
def test_a_study_corpus_with_its_statement_ranks_as_the_direct_run_and_an_edit_is_noticed(
    tmp_path, tiny_release, tiny_model_dir, run_argv, capsys, monkeypatch
):
    """The leaderboard row of ``corpora: {mine: {path, privacy}}`` is the row of ``evaluate --corpus mine
    --corpus_privacy statement`` (before: "no statement", beside the direct run's DP data at epsilon 4);
    and after an edit of the corpus ``--resume`` names it instead of reporting "all jobs done"."""
    from continuousbench import leaderboard as lb
    from continuousbench.harness.run import cli as evaluate
    from continuousbench.results.submit import cli as submit
    from continuousbench.study import command

    corpus, statement = tmp_path / "mine.jsonl", tmp_path / "statement.json"
    lines = [json.dumps({"text": f"Zorblat {i} evolves into Zorblax."}) for i in range(9)]
    corpus.write_text("\n".join(lines) + "\n")
    statement.write_text(json.dumps(STATEMENT))
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("tuning: lora\nlora_r: 8\n")
    argv = run_argv(
        tiny_release,
        tiny_model_dir,
        tmp_path / "direct",
        "--config",
        str(recipe),
        "--seed",
        "0",
        "--corpus",
        str(corpus),
        "--corpus_privacy",
        str(statement),
    )
    evaluate(argv)
    given = ("--release", "--output_dir", "--config", "--seed", "--corpus", "--corpus_privacy")
    options = {
        a.lstrip("-").replace("-", "_"): b
        for a, b in zip(argv[::2], argv[1::2], strict=True)
        if a not in given
    }
    study = tmp_path / "s.yaml"
    study.write_text(
        json.dumps(
            {
                "name": "mine",
                "release": str(tiny_release),
                "report": False,
                "corpora": {"mine": {"path": "mine.jsonl", "privacy": "statement.json"}},
                "evaluators": [
                    {"name": "tiny", "config": "recipe.yaml", "corpora": ["mine"], "options": options}
                ],
            }
        )
    )
    out = tmp_path / "out"
    command.cli(["--config", str(study), "--out", str(out), "--jobs", "1"])
    rows = {}
    for name, run in (("direct", tmp_path / "direct"), ("study", out / "runs" / "tiny" / "mine-seed0")):
        submit([str(run), "--to", str(tmp_path / f"results-{name}"), "--name", "mine"])
        releases = lb.ReleaseIndex(root=tiny_release.parent)
        subs, problems = lb.load_submissions(tmp_path / f"results-{name}", releases)
        assert problems == []
        _, (row,) = lb.rank(subs, tiny_release.name)
        rows[name] = {k: v for k, v in row.items() if k not in ("run", "record", "sub", "path", "submission")}
    assert rows["study"]["kind"] == "DP data" and rows["study"]["epsilon"] == "4"
    assert rows["study"] == rows["direct"]

    corpus.write_text(corpus.read_text() + '{"text": "Zorblax evolves into Zorblaxx."}\n')
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        command.cli(["--config", str(study), "--out", str(out), "--resume"])
    printed = capsys.readouterr()
    assert refused.value.code == 2 and "all jobs done" not in printed.out
    assert f"{corpus} changed since job evaluate/tiny/mine-seed0 ran with it" in printed.err
