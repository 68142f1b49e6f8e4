"""The one parser family and the one error path of every ``continuousbench`` command.

A command is a module with ``make_parser()`` (a :class:`CommandParser` over dataclasses), ``main(...)``
and ``cli(argv=None)``; ``cli`` is ``run(lambda: main(*make_parser().parse(argv)), report=...)``. The
``continuousbench`` program and the ``recipes/*.py`` scripts call the same ``cli``, so the two cannot
drift. Bad input becomes ``error: <what is wrong>; <how to fix it>`` on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import errno
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from trl import TrlParser

from continuousbench import credentials
from continuousbench.errors import UserError

T = TypeVar("T")

OUR_METADATA = {"bounds", "positional", "distinct", "allow_empty"}
_INTERVAL = re.compile(r"^\s*([\[(])\s*([^,]+?)\s*,\s*([^\])]+?)\s*([\])])\s*$")


def bounds(interval: str, help: str = "", **metadata: Any) -> dict[str, Any]:
    """Field metadata for a numeric option with a valid range, e.g. ``bounds("(0, 1)", "Delta.")``.

    The range is checked where the option is parsed, and shown in ``--help``.
    """
    return {"help": f"{help} Range {interval}.".strip(), "bounds": interval, **metadata}


def _check_bounds(instance: Any) -> None:
    for f in dataclasses.fields(instance):
        interval = f.metadata.get("bounds")
        value = getattr(instance, f.name)
        if interval is None or value is None:
            continue
        left, low, high, right = _INTERVAL.match(interval).groups()
        lo, hi = float(low), float(high)
        for item in value if isinstance(value, list) else [value]:  # a list option: every item
            ok = (lo < item if left == "(" else lo <= item) and (item < hi if right == ")" else item <= hi)
            if not ok or (isinstance(item, float) and math.isnan(item)):
                raise UserError(f"--{f.name} {item} is out of range: it must lie in {interval}")


def _check_values(instance: Any) -> None:
    """No option is set to the empty string unless that is its default or it is marked ``allow_empty``
    (an unset shell variable in ``--out $OUT`` would otherwise silently mean the default folder), no
    list holds an empty item, and a list marked ``distinct`` holds no value twice (the same path
    written two ways counts as one)."""
    for f in dataclasses.fields(instance):
        value = getattr(instance, f.name)
        items = value if isinstance(value, list) else [value]
        if "" in items and f.default != "" and not f.metadata.get("allow_empty"):
            raise UserError(f"--{f.name} is empty; give it a value, or leave the option out")
        if f.metadata.get("distinct") and isinstance(value, list):
            seen: dict[Any, Any] = {}
            for item in value:
                key = os.path.realpath(item) if isinstance(item, str) and os.path.exists(item) else item
                if key in seen:
                    raise UserError(f"--{f.name} names {item} twice; give each value once")
                seen[key] = item


def _expand_home(instance: Any) -> None:
    """``~`` and ``~/...`` in any string option become the home folder, as the shell would do.

    The shell does not expand ``--out=~/x`` or a YAML value, and neither do ``datasets`` or ``transformers``;
    no option of ours is text that legitimately starts with ``~/``.
    """

    def expand(value: str) -> str:
        return os.path.expanduser(value) if value == "~" or value.startswith("~/") else value

    _map_strings(instance, expand)


def _map_strings(instance: Any, change: Callable[[str], str]) -> None:
    """Every string option (and string in a list option) of ``instance`` passed through ``change``."""

    def one(value: Any) -> Any:
        return change(value) if isinstance(value, str) else value

    for f in dataclasses.fields(instance):
        value = getattr(instance, f.name)
        new = [one(v) for v in value] if isinstance(value, list) else one(value)
        if new != value:  # set only what changes (some configs are frozen or derive fields from others)
            setattr(instance, f.name, new)


class _DuplicateKey(Exception):
    pass


def _unique_key_loader():
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping (YAML keeps the last silently)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
            twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
            if twice is not None:
                raise _DuplicateKey(twice)
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_yaml(text: str, source: str) -> Any:
    """The one strict YAML reading of a recipe or study file: a key given twice in one mapping, or text
    that is not YAML, is one line naming ``source`` (e.g. ``--config r.yaml``)."""
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())
    except _DuplicateKey as err:
        raise UserError(f"{source} sets {err} twice; keep one of them") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UserError(f"{source} is not valid YAML{where}; fix the file") from None


class CommandParser(TrlParser):
    """``trl.TrlParser`` (defaults < ``--config`` YAML < command line) that is strict about the YAML.

    Beyond TrlParser: ``--config=path`` works, the YAML must be a mapping of known keys whose values have
    the option's type (``max_steps: ten`` is an error, not a string), numeric ranges declared with
    :func:`bounds` are checked, and ``config_path`` tells which recipe was used.
    """

    def __init__(self, dataclass_types, **kwargs: Any):
        super().__init__(dataclass_types, **kwargs)
        self.config_path: str | None = None

    @staticmethod
    def _parse_dataclass_field(parser, field: dataclasses.Field) -> None:
        """Our metadata keys (``bounds``, ``positional``) are read by us, not handed to argparse."""
        if OUR_METADATA & set(field.metadata):
            field = copy.copy(field)
            field.metadata = {k: v for k, v in field.metadata.items() if k not in OUR_METADATA}
        TrlParser._parse_dataclass_field(parser, field)

    def error(self, message: str):
        """argparse's own errors (a bad int, a missing required option) as one line, not the usage text."""
        raise UserError(f"{message.rstrip('.')}; see `{self.prog} --help`")

    def _actions_by_dest(self) -> dict[str, Any]:
        return {a.dest: a for a in self._actions if a.dest != "help"}

    def _typed_config(self, path: str) -> dict[str, Any]:
        try:
            text = Path(path).expanduser().read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(
                f"--config {path} does not exist; pass the path of a recipe YAML"
            ) from None
        except (IsADirectoryError, UnicodeDecodeError) as err:
            raise UserError(f"--config {path} is not a readable YAML file ({type(err).__name__})") from None
        config = load_yaml(text, f"--config {path}")
        if config is None:
            config = {}
        if not isinstance(config, dict):
            raise UserError(
                f"--config {path} must hold a mapping of option: value, not {type(config).__name__}"
            )
        actions = self._actions_by_dest()
        unknown = [k for k in config if k not in actions and k != "env"]
        if unknown:
            raise UserError(
                f"--config {path} has unknown key(s) {', '.join(map(str, unknown))}; "
                f"see `--help` for the options this command takes"
            )
        typed = {}
        for key, value in config.items():
            if key == "env":
                if not isinstance(value, dict):
                    raise UserError(f"--config {path}: env must be a mapping of NAME: value; fix the file")
                typed[key] = value
                continue
            typed[key] = self._coerce(actions[key], key, value, path)
        return typed

    @staticmethod
    def _coerce(action, key: str, value: Any, path: str) -> Any:
        """Value of a YAML key converted by the option's own type, or one line naming the key."""
        if value is None:
            return None
        convert = action.type or (lambda v: v)
        try:
            if action.nargs in ("+", "*"):
                if not isinstance(value, list):
                    raise TypeError("a list")
                out = [convert(v) if isinstance(v, str) else v for v in value]
            elif isinstance(value, (dict, list)) and action.type is not None:
                raise TypeError("a single value")
            elif isinstance(value, bool) and action.type in (int, float):
                raise TypeError("a number")
            elif action.type is float and isinstance(value, int):
                out = float(value)
            elif action.type is not None and not isinstance(value, (dict, list)):
                out = convert(str(value) if not isinstance(value, str) else value)
            else:
                out = value
        except (TypeError, ValueError, argparse.ArgumentTypeError) as err:  # the last: a bool's "maybe"
            expected = str(err) if isinstance(err, TypeError) else getattr(convert, "__name__", "its type")
            expected = "true or false" if expected == "string_to_bool" else expected
            raise UserError(
                f"--config {path}: {key} = {value!r} has the wrong type (expected {expected}); fix the value"
            ) from None
        if action.choices is not None and out not in action.choices:
            raise UserError(
                f"--config {path}: {key} = {value!r} is not one of {', '.join(map(str, action.choices))}"
            )
        return out

    def _positional(self, args: list[str]) -> list[str]:
        """Leading bare words go to the one field marked ``positional`` (``report RUN_A RUN_B``)."""
        fields = [
            f for dc in self.dataclass_types for f in dataclasses.fields(dc) if f.metadata.get("positional")
        ]
        if not fields:
            return args
        n = next((i for i, a in enumerate(args) if a.startswith("-")), len(args))
        return ([f"--{fields[0].name}", *args[:n]] if n else []) + args[n:]

    def parse(self, argv: Sequence[str] | None = None) -> tuple:
        """Parse ``argv`` (default ``sys.argv[1:]``) into the dataclasses, YAML first."""
        args: list[str] = []
        for arg in sys.argv[1:] if argv is None else argv:
            args.extend(["--config", arg.split("=", 1)[1]] if arg.startswith("--config=") else [arg])
        self.config_path = None
        args = self._positional(args)
        if args.count("--config") > 1:
            raise UserError("--config is given more than once; pass one recipe (other options override it)")
        if "--config" in args:
            i = args.index("--config")
            if i + 1 >= len(args):
                raise UserError("--config needs a path: --config <recipe.yaml>")
            self.config_path = args[i + 1]
            config = self._typed_config(self.config_path)
            for key, value in config.pop("env", {}).items():
                os.environ[str(key)] = str(value)
            self.set_defaults_with_config(**config)
            del args[i : i + 2]
        try:
            groups = self.parse_args_into_dataclasses(args=args)
        except ValueError as err:  # the arguments' own checks (ours and TrainingArguments'): user errors
            message = str(err)
            if "not used by the HfArgumentParser" in message:
                unused = message.split(":", 1)[1].strip()
                raise UserError(f"unknown argument(s) {unused}; see `--help`") from None
            if isinstance(err, UserError):
                raise
            raise UserError(_flatten(message)) from err
        for group in groups:
            _check_values(group)
            _expand_home(group)
            _map_strings(group, credentials.hold)  # the one redaction: records and logs see only this form
            _check_bounds(group)
        return groups


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


def _flatten(text: str) -> str:
    return " ".join(str(text).split())


DEBUG_ENV = "CONTINUOUSBENCH_DEBUG"


def debugging() -> bool:
    """``CONTINUOUSBENCH_DEBUG=1``: every error keeps its traceback (user errors too), for bug reports."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


FULL_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # no space, over `ulimit -f`, over a quota
# how libraries that do not raise OSError (safetensors, torch.save, pyarrow) say the same
FULL_TEXTS = ("no space left on device", "file too large", "disk quota exceeded", "os error 28",
              "os error 27", "file write failed", "storagefull", "filetoolarge")  # fmt: skip


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
    from continuousbench.files import writing

    where = (getattr(err, "filename", None) or getattr(err, "writing", None)
             or ", ".join(map(str, writing())) or "the output")  # fmt: skip
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
            detail = _flatten(str(err)).split(". ")[0][:200]
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
        return _flatten(str(err))
    if isinstance(err, ModuleNotFoundError):  # a missing optional extra: the environment's fault
        return _flatten(str(err)) + "; install the missing package (README: extras)"
    if isinstance(err, ImportError) and "pip install" in str(err):  # a library's own install hint
        return _flatten(str(err))
    if isinstance(err, (UserError, FileExistsError, FileNotFoundError)) or "GenerationError" in names:
        return _flatten(str(err))  # our own errors: already "what is wrong; how to fix it"
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
    (:func:`continuousbench.files.abandon_new_runs`), so the next attempt needs no ``--resume``.
    """
    from continuousbench.files import abandon_new_runs, forget_new_runs, release_folders

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


def command(
    arguments: type | Sequence[type],
    prog: str,
    description: str,
    main: Callable[..., T],
    *,
    epilog: str | None = None,
    **run_options,
) -> tuple[Callable[[], CommandParser], Callable[[Sequence[str] | None], T]]:
    """``(make_parser, cli)`` of a command whose ``main`` takes the parsed dataclasses: the parser, and the
    entry point that parses ``argv`` and runs ``main`` through :func:`run` (``run_options``: its
    ``report`` and ``resume_hint``). Every command is made this way."""

    def make_parser() -> CommandParser:
        return CommandParser(arguments, prog=prog, description=description, epilog=epilog)

    def cli(argv: Sequence[str] | None = None) -> T:
        return run(lambda: main(*make_parser().parse(argv)), **run_options)

    return make_parser, cli
