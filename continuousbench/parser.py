"""The one parser of every ``continuousbench`` command: ``transformers.HfArgumentParser`` made strict.

Its own module because importing transformers takes most of a second: ``continuousbench.commands``
(the error path, ``--help``) loads it only when a command parses its arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from transformers import HfArgumentParser  # the parser alone: no torch, no TrainingArguments

from continuousbench import credentials
from continuousbench.errors import UserError, flatten
from continuousbench.strict_yaml import load_yaml

OUR_METADATA = {"bounds", "positional", "distinct", "allow_empty"}  # field metadata read by us
_INTERVAL = re.compile(r"^\s*([\[(])\s*([^,]+?)\s*,\s*([^\])]+?)\s*([\])])\s*$")


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


class CommandParser(HfArgumentParser):
    """``transformers.HfArgumentParser`` (defaults < ``--config`` YAML < command line), strict about the YAML.

    Beyond HfArgumentParser: ``--config path`` or ``--config=path`` reads a recipe whose keys must be known
    options with values of the option's type (``max_steps: ten`` is an error, not a string), numeric
    ranges declared with :func:`bounds` are checked, and ``config_path`` tells which recipe was used.
    """

    def __init__(self, dataclass_types, **kwargs: Any):
        types = dataclass_types if isinstance(dataclass_types, (list, tuple)) else [dataclass_types]
        taken = [t.__name__ for t in types if "config" in {f.name for f in dataclasses.fields(t)}]
        if taken:  # --config is the recipe file
            raise TypeError(f"{', '.join(taken)} has a field named config, which --config shadows")
        super().__init__(types, **kwargs)
        self.config_path: str | None = None

    def add_argument(self, *names: str, **kwargs: Any):
        """Our metadata keys (``bounds``, ``positional`` ...) are read by us from the fields, not argparse."""
        return super().add_argument(*names, **{k: v for k, v in kwargs.items() if k not in OUR_METADATA})

    def set_defaults_with_config(self, **config: Any) -> None:
        """The recipe's values become the options' defaults (the command line still overrides them)."""
        for action in self._actions:
            if action.dest in config:
                action.default, action.required = config[action.dest], False

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
        values = out if action.nargs in ("+", "*") else [out]
        wrong = [v for v in values if action.choices is not None and v not in action.choices]
        if wrong:  # a list option checks each of its values, as argparse does on the command line
            raise UserError(
                f"--config {path}: {key} = {wrong[0]!r} is not one of {', '.join(map(str, action.choices))}"
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
            raise UserError(flatten(message)) from err
        for group in groups:
            _check_values(group)
            _expand_home(group)
            _map_strings(group, credentials.hold)  # the one redaction: records and logs see only this form
            _check_bounds(group)
        return groups
