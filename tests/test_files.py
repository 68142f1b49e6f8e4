"""Staged outputs: the old output survives until the new one is complete; user files are never touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from continuousbench.files import atomic_write, check_writable_dir, read_json, write_json
from continuousbench.staged_output import StagedOutput


def finish(out, command="cmd", names=("results.json", "model"), **kwargs):
    staged = StagedOutput(out, command, **kwargs)
    write_json(staged.work / "results.json", {"run": kwargs})
    (staged.work / "model").mkdir()
    (staged.work / "model" / "weights.bin").write_bytes(b"w")
    staged.publish(names)
    return staged


def test_publish_moves_artefacts_and_leaves_user_files(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    finish(out)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "model",
        "notes.txt",
        "results.json",
    ]
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [".continuousbench-cmd.json"]
    assert (out / "notes.txt").read_text() == "mine"


def test_finished_output_needs_overwrite_and_survives_a_failed_attempt(tmp_path):
    out = tmp_path / "run"
    finish(out)
    with pytest.raises(FileExistsError, match="--overwrite"):
        StagedOutput(out, "cmd")
    staged = StagedOutput(out, "cmd", overwrite=True)
    write_json(staged.work / "results.json", {"partial": True})  # the attempt dies before publish
    assert read_json(out / "results.json") == {"run": {}}
    assert (out / "model" / "weights.bin").read_bytes() == b"w"
    finish(out, names=("results.json",), overwrite=True)  # a later attempt publishes less
    assert read_json(out / "results.json") == {"run": {"overwrite": True}}
    assert not (out / "model").exists()  # the command's own old artefact is gone, nothing else


def test_unfinished_run_needs_resume_or_overwrite(tmp_path):
    out = tmp_path / "run"
    staged = StagedOutput(out, "cmd")
    staged.pin_config({"lr": 1e-3, "corpus": "a", "output_dir": "x"})
    (staged.work / "checkpoint-2").mkdir()
    with pytest.raises(FileExistsError, match="--resume"):
        StagedOutput(out, "cmd")
    resumed = StagedOutput(out, "cmd", resume=True)
    assert (resumed.work / "checkpoint-2").is_dir()
    resumed.pin_config({"lr": 1e-3, "corpus": "a", "output_dir": "y"}, ignore=["output_dir"])
    with pytest.raises(ValueError, match=r"changed configuration \(lr: 0.001 -> 0.01\)"):
        StagedOutput(out, "cmd", resume=True).pin_config({"lr": 1e-2, "corpus": "a"}, ignore=["output_dir"])
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        StagedOutput(tmp_path / "other", "cmd", resume=True)


def test_a_command_refuses_another_commands_folder_unless_overwrite_replaces_it(tmp_path):
    out = tmp_path / "shared"
    finish(out, "a", names=("results.json", "model"))
    marker = read_json(out / ".continuousbench-a.json")
    assert marker["command"] == "a" and len(marker["run"]) == 32  # which command, which run
    with pytest.raises(FileExistsError, match="holds the output of `continuousbench a`; .* --overwrite"):
        finish(out, "b", names=("results.json",))
    assert read_json(out / "results.json") == {"run": {}} and not (out / ".b-work").exists()
    finish(out, "b", names=("results.json",), overwrite=True)  # replaces a's output, marker included
    assert read_json(out / "results.json") == {"run": {"overwrite": True}}
    assert not (out / "model").exists() and not (out / ".continuousbench-a.json").exists()


HOLD = """
import sys, time
from continuousbench.staged_output import StagedOutput
StagedOutput(sys.argv[1], "cmd")
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_run_into_a_locked_folder_fails_at_once_naming_the_holder(tmp_path):
    import subprocess
    import sys

    from continuousbench.locks import release_folders

    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        in_use = f"in use by another continuousbench command \\(pid {holder.pid}\\)"
        with pytest.raises(ValueError, match=in_use):
            StagedOutput(out, "cmd", overwrite=True)
        with pytest.raises(ValueError, match=f"pid {holder.pid}"):
            StagedOutput(out, "other", resume=True)
    finally:
        holder.kill()
        holder.wait()
    finish(out, overwrite=True)  # the lock died with its process
    release_folders()
    assert not (out / ".continuousbench.lock").exists()


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "f.json"
    write_json(target, {"v": 1})

    def broken(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, broken)
    assert read_json(target) == {"v": 1} and [p.name for p in tmp_path.iterdir()] == ["f.json"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_unwritable_and_system_paths_are_refused(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ValueError, match="--output_dir .* is a file"):
        check_writable_dir(a_file)
    with pytest.raises(ValueError, match="system folder|cannot be written"):
        check_writable_dir(Path("/proc/cb"))
    with pytest.raises(ValueError, match="not valid JSON"):
        a_file.write_text("{broken")
        read_json(a_file)


def test_a_command_ending_in_one_thread_keeps_the_locks_of_stages_in_others(tmp_path):
    """The demo runs stages in threads: one finishing must not unlock a folder another still writes."""
    import threading

    from continuousbench.locks import LOCK_FILE, lock_folder, release_folders

    held, done = threading.Event(), threading.Event()

    def stage():
        lock_folder(tmp_path / "a", "evaluate")
        held.set()
        done.wait(10)
        release_folders()

    worker = threading.Thread(target=stage)
    worker.start()
    try:
        assert held.wait(10)
        release_folders()  # another stage's command ends in this thread
        assert (tmp_path / "a" / LOCK_FILE).exists()
        with pytest.raises(ValueError, match="in use by `continuousbench evaluate` in this process"):
            StagedOutput(tmp_path / "a", "synthesize")
    finally:
        done.set()
        worker.join()
    assert not (tmp_path / "a" / LOCK_FILE).exists()


def test_an_argument_error_leaves_no_output_folder_behind(tmp_path, capsys):
    """A new run that fails before writing anything removes the folders it created (``runs/eval-1`` and
    ``runs``), not those that were there before; it left an empty ``runs/eval-1`` behind."""
    from continuousbench.commands import run
    from continuousbench.errors import UserError

    (tmp_path / "kept").mkdir()

    def fails(out: Path) -> None:
        StagedOutput(out, "evaluate")
        raise UserError("bad input")

    for out in (tmp_path / "runs" / "eval-1", tmp_path / "kept" / "eval-1"):
        with pytest.raises(SystemExit):
            run(lambda out=out: fails(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
    assert not any((tmp_path / "kept").iterdir())
    assert capsys.readouterr().err.count("error: bad input") == 2
