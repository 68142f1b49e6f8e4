"""Ctrl-C and ``--resume``: what is kept and the command that continues (refusals of a changed run are
cases of tests/test_bad_input.py)."""

from __future__ import annotations

import json
import shlex
import shutil

import pytest
from hostile import fill_disk, with_option


def moved(argv: list[str], src, dst) -> list[str]:
    shutil.copytree(src, dst)
    return with_option(argv, "--output_dir", str(dst))


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


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_a_checkpoint_cut_by_a_full_disk_is_skipped_on_resume(
    invoke, run_argv, tmp_path, tiny_release, tiny_model_dir, caplog
):
    argv = ["evaluate", *run_argv(tiny_release, tiny_model_dir, tmp_path / "run", steps=3)]
    with pytest.MonkeyPatch.context() as monkeypatch:
        fill_disk(monkeypatch, at=2)
        failed = invoke(argv)
    assert failed.exit_code == 2
    line = failed.stderr.strip().splitlines()[-1]
    assert line.startswith("error: no space left on the device writing ") and "checkpoint-2" in line, line
    work = tmp_path / "run" / ".evaluate-work"
    assert (work / "checkpoint-2" / ".incomplete").exists()  # half-written, and says so
    resumed = invoke([*argv, "--resume"])
    assert resumed.exit_code == 0, resumed.stderr[-2000:]
    assert "checkpoint-2 was not completely written" in caplog.text
    assert "resuming from checkpoint-1" in caplog.text
    assert json.loads((tmp_path / "run" / "results.json").read_text())["validation_history"][-1]["step"] == 3


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
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
