"""Ctrl-C and ``--resume``: what is kept, the command that continues, and refusals of a changed run."""

from __future__ import annotations

import json
import shlex
import shutil

import pytest
from datasets import load_dataset

from continuousbench.harness import run


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory, tiny_release):
    """The tiny release's corpus as a parquet file (so that a test can change it in place)."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.parquet"
    load_dataset(str(tiny_release), "corpus", split="train").select_columns(["text"]).to_parquet(str(path))
    return path


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory, run_argv, tiny_release, tiny_model_dir, corpus_file, interrupt_training):
    """(folder, argv) of a 3-step run stopped by Ctrl-C at its second evaluation (checkpoint-1 kept)."""
    out = tmp_path_factory.mktemp("killed") / "run"
    argv = run_argv(tiny_release, tiny_model_dir, out, "--corpus", str(corpus_file), steps=3)
    with pytest.MonkeyPatch.context() as monkeypatch:
        interrupt_training(2, monkeypatch)
        with pytest.raises(SystemExit) as stopped:
            run.cli(argv)
    assert stopped.value.code == 130
    return out, argv


def with_option(argv: list[str], option: str, value: str) -> list[str]:
    args = list(argv)
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    return args


def moved(argv: list[str], src, dst) -> list[str]:
    shutil.copytree(src, dst)
    return with_option(argv, "--output_dir", str(dst))


CHANGES = [
    # (id, option, new value or a function of tmp_path returning it, expected fragment)
    ("learning rate", "--learning_rate", "2e-3", "learning_rate: 0.001 -> 0.002"),
    ("LoRA rank", "--lora_r", "4", "lora_r: 8 -> 4"),
    ("steps", "--steps", "5", "max_steps: 3 -> 5"),
    ("document cut", "--max_document_blocks", "8", "max_document_blocks: 64 -> 8"),
    ("validation sample", "--qa_eval_limit", "3", "qa_eval_limit: 4 -> 3"),
    ("another corpus", "--corpus", lambda tmp: str(tmp / "other.parquet"), "corpus:"),
    ("another model folder", "--model", lambda tmp: str(tmp / "model-copy"), "model:"),
    ("another release folder", "--release", lambda tmp: str(tmp / "release-copy"), "release:"),
]


@pytest.mark.parametrize(
    ("option", "value", "expected"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES]
)
def test_resume_refuses_a_changed_run(
    invoke, killed_run, tmp_path, tiny_release, tiny_model_dir, corpus_file, option, value, expected
):
    out, argv = killed_run
    # Same bytes in another place are still another input: the run records what it read, and where.
    shutil.copy(corpus_file, tmp_path / "other.parquet")
    shutil.copytree(tiny_model_dir, tmp_path / "model-copy")
    shutil.copytree(tiny_release, tmp_path / "release-copy")
    value = value(tmp_path) if callable(value) else value
    args = with_option(moved(argv, out, tmp_path / "run"), option, value)
    result = invoke(["evaluate", *args, "--resume"])
    assert result.exit_code == 2 and "--resume with a changed configuration" in result.stderr
    assert expected in result.stderr.strip().splitlines()[-1]
    assert (tmp_path / "run" / ".evaluate-work" / "checkpoint-1").is_dir()  # the refused run is kept


def test_resume_refuses_a_corpus_changed_in_place(
    invoke, run_argv, tmp_path, tiny_release, tiny_model_dir, interrupt_training
):
    from datasets import Dataset

    corpus = tmp_path / "corpus.parquet"
    texts = load_dataset(str(tiny_release), "corpus", split="train")["text"]
    Dataset.from_dict({"text": texts}).to_parquet(str(corpus))
    argv = run_argv(tiny_release, tiny_model_dir, tmp_path / "run", "--corpus", str(corpus), steps=3)
    with pytest.MonkeyPatch.context() as monkeypatch:
        interrupt_training(2, monkeypatch)
        assert invoke(["evaluate", *argv]).exit_code == 130
    Dataset.from_dict({"text": texts[::-1]}).to_parquet(str(corpus))  # regenerated at the same path
    result = invoke(["evaluate", *argv, "--resume"])
    assert result.exit_code == 2 and "corpus_fingerprint" in result.stderr


@pytest.mark.slow
def test_ctrl_c_says_what_is_kept_and_the_printed_command_resumes_to_the_same_bytes(
    invoke, killed_run, tmp_path, caplog, interrupt_training
):
    out, argv = killed_run
    args = moved(argv, out, tmp_path / "run")
    with pytest.MonkeyPatch.context() as monkeypatch:  # a fresh Ctrl-C, to read what it prints
        shutil.rmtree(tmp_path / "run")
        interrupt_training(2, monkeypatch)
        stopped = invoke(["evaluate", *args])
    assert stopped.exit_code == 130
    hint = stopped.stderr.strip().splitlines()[-1]  # the last line: no progress bar redrawn after it
    assert hint.startswith("interrupted: ") and "checkpoints saved so far are kept" in hint
    assert "kept in" in caplog.text and "checkpoint-1" in caplog.text
    command = shlex.split(hint.split("continue with: ", 1)[1])
    assert command[:2] == ["continuousbench", "evaluate"] and command[-1] == "--resume"
    caplog.clear()
    resumed = invoke(command[1:])
    assert resumed.exit_code == 0, resumed.stderr[-2000:]
    assert "resuming from checkpoint-1" in caplog.text
    whole = with_option(args, "--output_dir", str(tmp_path / "whole"))
    assert invoke(["evaluate", *whole]).exit_code == 0
    for name in ("results.json", "predictions.parquet", "accuracy_by_support.png"):
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    assert not (tmp_path / "run" / ".evaluate-work").exists()
    assert json.loads((tmp_path / "run" / "results.json").read_text())["validation_history"][-1]["step"] == 3


def test_resume_with_output_only_changes_and_no_checkpoint_yet(
    invoke, run_argv, tmp_path, tiny_release, tiny_model_dir, caplog, interrupt_training
):
    argv = run_argv(tiny_release, tiny_model_dir, tmp_path / "run", steps=1)
    with pytest.MonkeyPatch.context() as monkeypatch:
        interrupt_training(1, monkeypatch)  # before the first checkpoint
        assert invoke(["evaluate", *argv]).exit_code == 130
    assert "no checkpoint yet" in caplog.text
    result = invoke(["evaluate", *with_option(argv, "--qa_test_limit", "3"), "--resume"])
    assert result.exit_code == 0, result.stderr[-2000:]
    assert "training starts from step 0" in caplog.text
    assert json.loads((tmp_path / "run" / "results.json").read_text())["metrics"]["qa_public"]["n"] == 3
