"""The one parser family and the one error path (continuousbench.commands)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import pytest

from continuousbench.commands import CommandParser, bounds, one_line, run


@dataclass
class Args:
    steps: int = field(default=10, metadata=bounds("[0, inf)", "Steps."))
    delta: float | None = field(default=None, metadata=bounds("(0, 1)", "Delta."))
    name: str = "x"
    flag: bool = False
    items: list[str] = field(default_factory=list, metadata={"help": "Inputs.", "positional": True})


def parse(argv, tmp_path=None, yaml_text=None):
    if yaml_text is not None:
        (tmp_path / "r.yaml").write_text(yaml_text)
    return CommandParser([Args], prog="test").parse(argv)


def test_defaults_yaml_then_command_line(tmp_path):
    (args,) = parse(["--config=" + str(tmp_path / "r.yaml"), "--steps", "7"], tmp_path, "steps: 3\nname: y\n")
    assert (args.steps, args.name) == (7, "y")
    parser = CommandParser([Args])
    parser.parse(["--config", str(tmp_path / "r.yaml")])
    assert parser.config_path == str(tmp_path / "r.yaml")


def test_positional_words_fill_the_marked_field():
    (args,) = parse(["a", "b", "--flag"])
    assert args.items == ["a", "b"] and args.flag


@pytest.mark.parametrize(
    "yaml_text, message",
    [
        ("steps: ten\n", "steps = 'ten' has the wrong type"),
        ("steps: [1, 2]\n", "steps = [1, 2] has the wrong type"),
        ("colour: red\n", "unknown key(s) colour"),
        ("steps: 3\n  bad: indent\n", "is not valid YAML at line"),
        ("- a list\n", "must hold a mapping"),
        ("delta: 1\n", "--delta 1.0 is out of range: it must lie in (0, 1)"),
    ],
)
def test_bad_yaml_is_one_line_naming_the_key(tmp_path, yaml_text, message):
    with pytest.raises(ValueError) as err:
        parse(["--config", str(tmp_path / "r.yaml")], tmp_path, yaml_text)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--steps", "-5"], "--steps -5 is out of range: it must lie in [0, inf)"),
        (["--delta", "0"], "--delta 0.0 is out of range"),
        (["--delta", "nan"], "--delta nan is out of range"),
        (["--stpes", "3"], "unknown argument(s) ['--stpes', '3']"),
        (["--config"], "--config needs a path"),
        (["--config", "/nonexistent/r.yaml"], "--config /nonexistent/r.yaml does not exist"),
    ],
)
def test_bad_command_lines_name_the_option(argv, message):
    with pytest.raises((ValueError, FileNotFoundError)) as err:
        parse(argv)
    assert message in str(err.value)


def test_run_turns_known_errors_into_one_line(capsys):
    def fails():
        raise FileExistsError("out exists; pass --overwrite")

    with pytest.raises(SystemExit) as exit_:
        run(fails)
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: out exists; pass --overwrite\n"


def test_run_keeps_the_traceback_of_bugs():
    with pytest.raises(ZeroDivisionError):
        run(lambda: 1 / 0)


def test_ctrl_c_says_what_was_kept(capsys):
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as exit_:
        run(interrupted, resume_hint="checkpoints are kept; rerun with --resume")
    assert exit_.value.code == 130
    assert "interrupted: checkpoints are kept; rerun with --resume" in capsys.readouterr().err


def _raise(err: Exception):
    raise err


@pytest.mark.parametrize(
    "work", [lambda: "done", lambda: _raise(FileExistsError("out exists"))], ids=["success", "error"]
)
def test_run_leaves_the_process_group_before_exit(tmp_path, work):
    """A launched process destroys its process group itself, on success and on error: left to
    interpreter shutdown, gloo's threads can abort a process that finished its share early (SIGABRT),
    which fails the whole launch."""
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.FileStore(str(tmp_path / "store"), 1), rank=0, world_size=1)
    try:
        with contextlib.suppress(SystemExit):
            run(work)
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_library_errors_get_a_hint(tmp_path):
    from huggingface_hub.errors import OfflineModeIsEnabled

    assert "HF_HUB_OFFLINE=1" in one_line(OfflineModeIsEnabled("Cannot reach https://huggingface.co"))
    blob = tmp_path / "x.txt"
    blob.write_bytes(b"\xff\xfe bad")
    with pytest.raises(UnicodeDecodeError) as err:
        blob.read_text(encoding="utf-8")
    assert "not UTF-8" in one_line(err.value)
    denied = PermissionError(13, "Permission denied", "/root/x")
    assert one_line(denied).startswith("/root/x cannot be accessed")
    assert one_line(RuntimeError("a bug")) is None


def test_a_missing_extra_is_one_line_but_a_missing_name_is_a_bug():
    line = one_line(ModuleNotFoundError("No module named 'mauve'"))
    assert line == "No module named 'mauve'; install the missing package (README: extras)"
    assert one_line(ImportError("cannot import name 'x' from 'continuousbench.files'")) is None  # a traceback


def test_a_full_disk_is_recognised_however_the_library_says_it():
    """ENOSPC, a quota, `ulimit -f`'s EFBIG, or a library's own words (safetensors, torch.save), also as
    the cause of another error; a line of ours quoting a file name is not one."""
    import errno

    from continuousbench.commands import disk_full
    from continuousbench.errors import UserError

    assert disk_full(OSError(errno.EFBIG, "File too large"))
    assert disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert disk_full(RuntimeError("Error while serializing: I/O error: File too large (os error 27)"))
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as err:
            raise RuntimeError("PytorchStreamWriter failed") from err
    except RuntimeError as wrapped:
        assert disk_full(wrapped)
    assert not disk_full(UserError("--corpus file too large.txt does not exist"))
    assert not disk_full(OSError(errno.EACCES, "Permission denied"))
