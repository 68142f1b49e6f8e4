"""Every command line the docs show parses with the real parser: the command exists, every flag is accepted.

A command runs through its real entry point (the ``continuousbench`` dispatcher, or the script's ``cli``)
up to the moment it parses; there the parser is captured and ``main`` never runs. A complete command (a
line of a ``bash`` block) must then parse in full, ``--config`` recipe included; a fragment (inline code
in prose, or a line with ``...``) must name only options the parser knows. ``<placeholders>`` stand for
any value.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import shlex
import sys
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path

import pytest

from continuousbench.commands import CommandParser

ROOT = Path(__file__).resolve().parents[1]
REAL_PARSE = CommandParser.parse
# Every page a user reads: the front page, the recipes, and every page under docs/ (new pages included).
DOCS = ("README.md", "recipes/README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))
PREFIXES = ("continuousbench ", "python builders/", "python recipes/", "accelerate launch ", "torchrun ")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")
_COMMENT = re.compile(r"\s+#\s.*$")
_PLACEHOLDER = re.compile(r"<[^<>]+>")


@dataclass(frozen=True)
class Command:
    where: str  # file:line
    text: str
    complete: bool  # a whole command line (parse in full) or a fragment in prose (check the flags)


def commands_in(name: str, text: str) -> list[Command]:
    """Command lines of a markdown text: lines of bash blocks (continuations joined) and inline code."""
    found: list[Command] = []
    for block in _FENCE.finditer(text):
        if block.group(1) not in ("bash", "sh", "shell", "console"):
            continue
        first = text[: block.start(2)].count("\n") + 1
        pending, start = "", first
        for i, line in enumerate(block.group(2).splitlines()):
            line = _COMMENT.sub("", line.rstrip()).removeprefix("$ ")
            if not pending:
                start = first + i
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            command, pending = " ".join((pending + line).split()), ""
            if command.startswith(PREFIXES):
                found.append(Command(f"{name}:{start}", command, "..." not in command))
    prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for span in _INLINE.finditer(prose):
        command = " ".join(span.group(1).split())
        if command.startswith(PREFIXES) and not command.startswith("continuousbench <"):  # "<command>"
            found.append(Command(f"{name}:{prose[: span.start()].count(chr(10)) + 1}", command, False))
    return found


class Parsed(BaseException):  # not an Exception: the commands' error path must not catch it
    def __init__(self, parser: CommandParser, argv: list[str]):
        self.parser, self.argv = parser, argv


def _script(path: str):
    file = ROOT / path
    if not file.is_file():
        raise AssertionError(f"{path} does not exist")
    spec = importlib.util.spec_from_file_location(f"docs_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def _launcher_args(tool: str, words: list[str]) -> list[str]:
    """The script and its arguments after ``accelerate launch`` / ``torchrun`` options, which are checked
    with the launcher's own parser (and a ``--config_file`` must exist)."""
    at = next((i for i, w in enumerate(words) if w.endswith(".py")), None)
    if at is None:
        raise AssertionError("no recipes/<script>.py after the launcher's options")
    if tool == "accelerate":
        from accelerate.commands.launch import launch_command_parser as launcher
    else:
        from torch.distributed.run import get_args_parser as launcher
    errors = io.StringIO()
    try:
        with redirect_stderr(errors):
            options = launcher().parse_args([*words[:at], words[at]])
    except SystemExit:
        raise AssertionError(f"{tool}: {errors.getvalue().strip().splitlines()[-1]}") from None
    config_file = getattr(options, "config_file", None)
    if config_file and not (ROOT / config_file).is_file():
        raise AssertionError(f"--config_file {config_file} does not exist")
    return words[at:]


def capture(command: str) -> Parsed | None:
    """Run the command's real entry point until it parses; return the parser and the arguments (None:
    the command asked for help, which is printed before parsing)."""
    words = shlex.split(_PLACEHOLDER.sub("PLACEHOLDER", command).replace("...", ""))
    if words[:2] == ["accelerate", "launch"]:
        words = ["python", *_launcher_args("accelerate", words[2:])]
    elif words[0] == "torchrun":
        words = ["python", *_launcher_args("torchrun", words[1:])]
    try:
        if words[0] == "continuousbench":
            from continuousbench.cli import main

            main(words[1:])
        else:
            _script(words[1]).cli(words[2:])
    except Parsed as parsed:
        return parsed
    except SystemExit as exit_:
        if exit_.code in (0, None) and {"--help", "--help_all", "-h"} & set(words):
            return None  # help is printed before parsing, from the same dataclasses (tests/test_help.py)
        raise AssertionError(f"the entry point exited with {exit_.code} before parsing") from None
    if words[:2] == ["continuousbench", "--help"]:
        return None  # the list of commands
    raise AssertionError("the entry point never parsed its arguments")


def check(command: Command) -> None:
    """AssertionError (or the parser's own one-line error) when the docs' command does not parse."""
    parsed = capture(command.text)
    if parsed is None:
        return
    parser, argv = parsed.parser, parsed.argv
    environ = dict(os.environ)  # a recipe's `env:` block sets variables while parsing
    try:
        if command.complete:
            REAL_PARSE(parser, argv)
            return
        known = set(parser._option_string_actions) | {"--config"}
        unknown = [w.split("=")[0] for w in argv if w.startswith("--") and w.split("=")[0] not in known]
        if unknown:
            raise AssertionError(f"unknown option(s) {', '.join(unknown)}")
        if "--config" in argv:
            parser._typed_config(argv[argv.index("--config") + 1])
    finally:
        os.environ.clear()
        os.environ.update(environ)


@pytest.fixture
def capturing(monkeypatch):
    def stop(self, argv=None):
        raise Parsed(self, list(sys.argv[1:] if argv is None else argv))

    monkeypatch.setattr(CommandParser, "parse", stop)
    monkeypatch.chdir(ROOT)  # paths in the docs are relative to the repository


def _all_commands() -> list[Command]:
    return [c for name in DOCS for c in commands_in(name, (ROOT / name).read_text(encoding="utf-8"))]


def test_the_docs_show_commands_of_every_kind():
    found = _all_commands()
    assert sum(c.complete for c in found) >= 10 and sum(not c.complete for c in found) >= 5
    for prefix in (
        "continuousbench build",
        "continuousbench evaluate",
        "accelerate launch",
        "python builders",
    ):
        assert any(c.text.startswith(prefix) for c in found), prefix


def test_every_command_in_the_docs_parses(capturing, capsys):
    failures = []
    for command in _all_commands():
        try:
            check(command)
        except (AssertionError, ValueError, FileNotFoundError, SystemExit) as err:
            printed = capsys.readouterr().err.strip()
            failures.append(f"{command.where}: {command.text}\n    -> {err} {printed}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("doc", "complete", "problem"),
    [
        ("```bash\ncontinuousbench build geminon --size tiny --colour red\n```\n", True, "unknown argument"),
        ("```bash\ncontinuousbench biuld geminon --size tiny\n```\n", True, "exited with 2"),
        ("Run `continuousbench evaluate --release x --steps-to-take 3` to ...\n", False, "--steps-to-take"),
        (
            "```bash\ncontinuousbench evaluate --config recipes/configs/nope.yaml --release x\n```\n",
            True,
            "does not exist",
        ),
        ("```bash\npython builders/nope.py --size tiny\n```\n", True, "does not exist"),
        (
            "```bash\naccelerate launch --num_procs 2 recipes/evaluate.py --release x\n```\n",
            True,
            "unrecognized arguments: --num_procs",
        ),
    ],
)
def test_a_wrong_command_or_flag_fails(capturing, doc, complete, problem):
    (command,) = commands_in("doc.md", doc)
    assert command.complete is complete
    with pytest.raises((AssertionError, ValueError, FileNotFoundError), match=problem):
        check(command)


def test_every_make_target_in_the_docs_exists():
    """``make install`` (the README's first step), ``make demo`` ... name targets of the Makefile."""
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE))
    shown = {
        (name, target)
        for name in DOCS
        for block in _FENCE.finditer((ROOT / name).read_text(encoding="utf-8"))
        for target in re.findall(r"^make (?:[A-Z_]+=\S+ )*([\w-]+)", block.group(2), re.MULTILINE)
    }
    assert ("README.md", "install") in shown
    assert not {t for _, t in shown} - targets, sorted(shown)


def test_help_lines_in_the_docs_count_as_commands(capturing):
    check(Command("doc.md:1", "continuousbench evaluate --help", True))
    check(Command("doc.md:1", "continuousbench --help", True))
    with pytest.raises(AssertionError, match="exited with 2"):
        check(Command("doc.md:1", "continuousbench evalute --help", True))


def test_the_participants_sections_are_checked(capturing):
    """The participant's path (issue 35) as the README and docs show it is among the commands checked in
    full: its own corpus with a privacy statement, compare, submit and the static leaderboard. Were one
    of these blocks turned into prose or another language, its commands would silently go unchecked."""
    found = [c for c in _all_commands() if c.complete]
    section = (ROOT / "docs" / "harness.md").read_text(encoding="utf-8").split("## Evaluate your own")[0]
    own = section.count("\n") + 1  # the first line of harness.md's "Evaluate your own (DP) corpus"
    export = "continuousbench leaderboard --results ./results --html"
    wanted = {
        "README.md": ("evaluate --config recipes/configs/geminon-tiny-demo.yaml", "--corpus_privacy", export),
        "docs/harness.md": ("--corpus_privacy", "compare runs/mine", "submit runs/mine"),
        "docs/leaderboard.md": (export,),
    }
    for page, parts in wanted.items():
        shown = [c for c in found if c.where.split(":")[0] == page]
        if page == "docs/harness.md":
            shown = [c for c in shown if int(c.where.split(":")[1]) > own]
        for part in parts:
            assert any(part in c.text for c in shown), (page, part)
        for command in shown:
            check(command)
