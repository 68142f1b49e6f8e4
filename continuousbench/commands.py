"""The one error path and the one ``--help`` of every ``continuousbench`` command.

A command is a module with ``make_parser()`` (a :class:`~continuousbench.parser.CommandParser` over
dataclasses), ``main(...)`` and ``cli(argv=None)``, made by :func:`command`: ``cli`` is
``run(lambda: main(*make_parser().parse(argv)), report=...)``. Two commands wrap what ``command()``
makes: ``evaluate`` (its ``cli`` records the recipe file and repeats argv in its resume hint) and
``study`` (``--config`` names the study file, not a recipe of its options). The ``continuousbench``
program and the ``recipes/*.py`` scripts call the same ``cli``, so the two cannot drift. Bad input
becomes ``error: <what is wrong>; <how to fix it>`` on stderr and exit status 2. ``--help`` is printed
from the dataclasses without importing transformers or torch, so it answers at once.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from continuousbench.errors import UserError, flatten

if TYPE_CHECKING:
    from continuousbench.parser import CommandParser

T = TypeVar("T")


def __getattr__(name: str) -> Any:
    """``CommandParser`` lives in :mod:`continuousbench.parser`, imported on first use (it needs
    transformers, which ``--help`` and the error path do not)."""
    if name == "CommandParser":
        from continuousbench.parser import CommandParser

        return CommandParser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def bounds(interval: str, help: str = "", **metadata: Any) -> dict[str, Any]:
    """Field metadata for a numeric option with a valid range, e.g. ``bounds("(0, 1)", "Delta.")``.

    The range is checked where the option is parsed, and shown in ``--help``.
    """
    return {"help": f"{help} Range {interval}.".strip(), "bounds": interval, **metadata}


def listed(help: str, **metadata: Any) -> Any:
    """A dataclass field for an option that takes several values (``--models a b``), empty unless given."""
    from dataclasses import field

    return field(default_factory=list, metadata={"help": help, **metadata})


# --- the one error path -------------------------------------------------------------------------------

# Exceptions from libraries whose own message is not enough, by class name (no heavy imports here).
_HINTS = {
    "OfflineModeIsEnabled": "the Hugging Face Hub cannot be reached while HF_HUB_OFFLINE=1; pass a local "
    "folder instead of a Hub id, or unset HF_HUB_OFFLINE",
    "RepositoryNotFoundError": "no such repository on the Hub (or no access); check the id and $HF_TOKEN",
    "LocalEntryNotFoundError": "not in the local cache and the Hub is unreachable; pass a local folder",
    "HFValidationError": "not a valid local folder or Hub id; check the path",
    "SafetensorError": "a .safetensors file is damaged; re-save or re-download the model",
    "HeaderTooLarge": "a .safetensors file is damaged; re-save or re-download the model",
    "DatasetNotFoundError": "dataset not found (the Hub is unreachable offline); pass a local folder or file",
    "DataFilesNotFoundError": "no data files found; check the folder or file pattern",
    "EmptyDatasetError": "the dataset has no data files; check the folder",
    "YAMLError": "not valid YAML; fix the file",
    "JSONDecodeError": "not valid JSON; fix or restore the file",
}


DEBUG_ENV = "CONTINUOUSBENCH_DEBUG"


def debugging() -> bool:
    """``CONTINUOUSBENCH_DEBUG=1``: every error keeps its traceback (user errors too), for bug reports."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


FULL_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # no space, over `ulimit -f`, over a quota
# how libraries that do not raise OSError (safetensors, torch.save, pyarrow) say the same
FULL_TEXTS = (
    "no space left on device",
    "file too large",
    "disk quota exceeded",
    "os error 28",
    "os error 27",
    "file write failed",
    "storagefull",
    "filetoolarge",
)


def disk_full(err: BaseException) -> bool:
    """Whether ``err`` (or what caused it) is a write refused for want of space: a full disk, a quota, or
    the file size limit (``ulimit -f``; Python ignores SIGXFSZ, so the write fails with EFBIG)."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in FULL_ERRNOS:
            return True
        if not isinstance(err, UserError) and any(text in str(err).lower() for text in FULL_TEXTS):
            return True  # (our own lines may quote a user's file name: never read as a full disk)
        err = err.__cause__ or err.__context__
    return False


def _full_line(err: BaseException) -> str:
    from continuousbench.locks import writing

    where = (
        getattr(err, "filename", None)
        or getattr(err, "writing", None)
        or ", ".join(map(str, writing()))
        or "the output"
    )
    return (
        f"no space left on the device writing {where} (a full disk, a quota or the file size limit); free "
        "some space (or choose a folder on another disk) and rerun: --resume continues from the last "
        "complete checkpoint"
    )


def one_line(err: BaseException) -> str | None:
    """The message shown for ``err``, or None when it is a bug (then the traceback is the right output)."""
    if disk_full(err):  # before the hints: safetensors says "damaged" for a file it could not write
        return _full_line(err)
    names = [cls.__name__ for cls in type(err).__mro__]
    for name in names:
        if name in _HINTS:
            detail = flatten(str(err)).split(". ")[0][:200]
            return f"{_HINTS[name]} ({detail})" if detail else _HINTS[name]
    if isinstance(err, UnicodeDecodeError):
        return f"a file is not UTF-8 text (byte {err.start}: {err.reason}); convert it to UTF-8"
    if isinstance(err, PermissionError):
        return (
            f"{err.filename or 'a path'} cannot be accessed (permission denied); choose a path you can write"
        )
    if isinstance(err, IsADirectoryError):
        return f"{err.filename} is a folder where a file was expected; pass a file path"
    if isinstance(err, NotADirectoryError):
        return f"{err.filename} is a file where a folder was expected; pass a folder path"
    if isinstance(err, FileNotFoundError) and err.filename and err.strerror:
        return f"{err.filename} does not exist; check the path"
    if isinstance(err, FileExistsError) and err.filename and err.strerror:  # a file where a folder goes
        return f"{err.filename} already exists and is not a folder; move it away or choose another path"
    if isinstance(err, OSError) and type(err) is OSError and err.args:  # transformers' "can't load" errors
        return flatten(str(err))
    if isinstance(err, ModuleNotFoundError):  # a missing optional extra: the environment's fault
        return flatten(str(err)) + "; install the missing package (README: extras)"
    if isinstance(err, ImportError) and "pip install" in str(err):  # a library's own install hint
        return flatten(str(err))
    if isinstance(err, (UserError, FileExistsError, FileNotFoundError)) or "GenerationError" in names:
        return flatten(str(err))  # our own errors: already "what is wrong; how to fix it"
    return None  # any other ValueError is a bug (ours or a library's): its traceback is the useful output


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time: pytest, notebooks and wrappers replace it, and a
    handler holding the first stream would write into a closed file."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def _ours_or_warning(record: logging.LogRecord) -> bool:
    """Our progress from INFO up; other libraries' records from WARNING up."""
    return record.name.startswith("continuousbench") or record.levelno >= logging.WARNING


def configure_logging(level: int = logging.INFO) -> None:
    """Progress of long jobs on stderr (``continuousbench.*`` at ``level``), once per process.

    The handler sits on the root logger, so a library that calls ``logging.basicConfig`` on import
    (Opacus does) finds it configured and adds nothing: every line is printed once, and pytest's
    ``caplog`` still sees our records.
    """
    root = logging.getLogger()
    if not any(isinstance(h, _StderrHandler) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s", "%H:%M:%S"))
        handler.addFilter(_ours_or_warning)
        root.addHandler(handler)
    logging.getLogger("continuousbench").setLevel(level)


def wide_console(width: int = 200):
    """A rich console as wide as ``COLUMNS`` or the terminal; in pipes and logs without ``COLUMNS``,
    ``width`` columns wide, so that a command's table is not squeezed into 80."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal or os.environ.get("COLUMNS") else Console(width=width)


def _leave_process_group() -> None:
    """Destroy the process group of a ``torchrun``/``accelerate launch`` run before the interpreter exits.

    Left to interpreter shutdown, gloo's worker threads can outlive Python and abort the process
    (SIGABRT, "terminate called without an active exception"): a process that finished its share while
    process 0 still writes then fails the whole launch. Destroying the group is local, so no process
    waits here for the others.
    """
    dist = sys.modules.get("torch.distributed")  # never imported for single-process commands
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def run(
    work: Callable[[], T],
    *,
    report: Callable[[T], None] | None = None,
    resume_hint: str | None = "finished work is kept; rerun the same command with --resume to continue",
) -> T:
    """Run a command's work with the one error path; ``report`` prints its result on success.

    A new run that fails before keeping anything worth resuming leaves no work folder behind
    (:func:`continuousbench.staged_output.abandon_new_runs`), so the next attempt needs no ``--resume``.
    """
    from continuousbench.locks import release_folders
    from continuousbench.staged_output import abandon_new_runs, forget_new_runs

    configure_logging()
    try:
        result = work()
    except KeyboardInterrupt:
        forget_new_runs()
        print(f"interrupted: {resume_hint or 'nothing was written'}", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as err:  # noqa: BLE001 - known errors become one line, bugs keep their traceback
        abandon_new_runs()
        line = one_line(err)
        if line is None or debugging():
            raise
        print(f"error: {line}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        release_folders()
        _leave_process_group()
    forget_new_runs()
    if report is not None:
        report(result)
    return result


HELP_ALL = "--help_all"


def _dataclasses(arguments: type | Sequence[type] | Callable[[], Sequence[type]]) -> Sequence[type]:
    if isinstance(arguments, type):
        return (arguments,)
    # a function: the trainer's dataclasses are imported only when arguments are parsed
    return tuple(arguments() if callable(arguments) else arguments)


def _help_parser(types: Sequence[type], **kwargs: Any) -> argparse.ArgumentParser:
    """A parser that only prints help: one entry per dataclass field, named and explained as
    :class:`CommandParser` parses it, without importing transformers (whose import takes most of a
    second). Fields marked ``positional`` are shown as the bare words they are given as."""
    import typing

    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter, **kwargs)
    for dc in types:
        hints = typing.get_type_hints(dc)
        for f in dataclasses.fields(dc):
            meta, hint = f.metadata, hints[f.name]
            union = typing.get_origin(hint) in (typing.Union, type(int | None))
            inner = [a for a in typing.get_args(hint) if a is not type(None)] if union else [hint]
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            options: dict[str, Any] = {"help": meta.get("help", ""), "choices": meta.get("choices")}
            if default is not dataclasses.MISSING:  # an unset option says nothing ("(default: None)")
                options["default"] = argparse.SUPPRESS if default in (None, []) else default
            nargs = "+" if typing.get_origin(inner[0]) is list else "?" if inner == [bool] else None
            if meta.get("positional"):
                parser.add_argument(f.name, nargs="*", **options)
                continue
            aliases = meta.get("aliases", [])
            names = [f"--{f.name}", *([aliases] if isinstance(aliases, str) else aliases)]
            metavar = {int: "N", float: "X", bool: "BOOL"}.get(inner[0], "VALUE")  # short: one line each
            parser.add_argument(*names, nargs=nargs, metavar=metavar, **options)
    return parser


def short_help(
    argv: Sequence[str] | None, types: Sequence[type], *, full: bool = False, **kwargs: Any
) -> list[str]:
    """``argv`` as a list; ``--help`` prints the options of ``types`` (``kwargs``: prog, description,
    epilog) and exits before anything heavy is imported. Where ``types`` are only the
    command's own options (``full`` False), ``--help_all`` becomes the full parser's ``--help``;
    elsewhere it is ``--help``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if (full or HELP_ALL not in args) and ({"-h", "--help", HELP_ALL} & set(args)):
        if not full:
            note = f"{HELP_ALL} lists every option, the trainer's (transformers' TrainingArguments) included."
            kwargs["epilog"] = f"{kwargs['epilog']} {note}" if kwargs.get("epilog") else note
        words = [f.name.upper() for t in types for f in dataclasses.fields(t) if f.metadata.get("positional")]
        usage = " ".join([kwargs["prog"], *(f"{w} ..." for w in words), "[options]"])
        _help_parser(types, usage=usage, **kwargs).print_help()
        raise SystemExit(0)
    return ["--help" if a == HELP_ALL and not full else a for a in args]


def command(
    arguments: type | Sequence[type] | Callable[[], Sequence[type]],
    prog: str,
    description: str,
    main: Callable[..., T],
    *,
    epilog: str | None = None,
    brief: Sequence[type] | None = None,
    **run_options,
) -> tuple[Callable[[], CommandParser], Callable[[Sequence[str] | None], T]]:
    """``(make_parser, cli)`` of a command whose ``main`` takes the parsed dataclasses: the parser, and the
    entry point that parses ``argv`` and runs ``main`` through :func:`run` (``run_options``: its
    ``report`` and ``resume_hint``). Every command is made this way except ``evaluate``, whose ``cli``
    also records the recipe file (it calls :func:`short_help` and ``make_parser`` itself).

    ``arguments`` may be a function returning the dataclasses, so that importing the command stays
    light; ``brief`` lists the light dataclasses whose options ``--help`` shows (``--help_all``: all),
    for commands whose full parser needs torch (TrainingArguments).
    """

    def make_parser() -> CommandParser:
        from continuousbench.parser import CommandParser

        return CommandParser(_dataclasses(arguments), prog=prog, description=description, epilog=epilog)

    def cli(argv: Sequence[str] | None = None) -> T:
        args = short_help(argv, **help_of())
        return run(lambda: main(*make_parser().parse(args)), **run_options)

    def help_of() -> dict[str, Any]:
        types = _dataclasses(arguments) if brief is None else brief
        texts = {"prog": prog, "description": description, "epilog": epilog}
        return {"types": types, "full": brief is None, **texts}

    make_parser.help_of = help_of  # type: ignore[attr-defined]
    cli.make_parser = make_parser  # type: ignore[attr-defined]
    return make_parser, cli
