"""Install the `evaluate` module continuousbench/qa_match offline, or publish it as a Space.

The module's files ship inside the package (``continuousbench/metrics_src/qa_match``, the one source
of truth; the repository's ``metrics/qa_match`` is a link to it), so a wheel install can install it.

``evaluate.load("continuousbench/qa_match")`` with ``HF_EVALUATE_OFFLINE=1`` falls back to evaluate's
module cache: ``<HF_MODULES_CACHE>/evaluate_modules/metrics/continuousbench--qa_match/<sha256>/qa_match.py``
with an ``__init__.py`` at every level (the folders are imported as the package
``evaluate_modules.metrics.continuousbench--qa_match.<sha256>``); the newest 64-hex folder wins.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from continuousbench.commands import command
from continuousbench.files import atomic_write

METRIC_NAME = "continuousbench/qa_match"
FILES = ("qa_match.py", "README.md", "requirements.txt", "app.py")


def metric_source() -> Path:
    """The folder holding the metric's files inside the installed package."""
    folder = Path(str(resources.files("continuousbench") / "metrics_src" / "qa_match"))
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"metric files {missing} missing from {folder}: reinstall continuousbench")
    return folder


def install_metric(cache_dir: Path | None = None) -> Path:
    """Place the metric in evaluate's module cache (default: ``evaluate.config.HF_MODULES_CACHE``).

    Returns the installed ``qa_match.py``. Installing the same code twice is a no-op; new code goes in
    a new hash folder, which evaluate prefers because it is the newest.
    """
    from evaluate import config
    from evaluate.loading import files_to_hash

    source = metric_source()
    modules = Path(cache_dir).expanduser() if cache_dir is not None else Path(config.HF_MODULES_CACHE)
    package = modules / config.MODULE_NAME_FOR_DYNAMIC_MODULES / "metrics" / METRIC_NAME.replace("/", "--")
    digest = files_to_hash([str(source / "qa_match.py")])  # the same hash evaluate gives a local load
    target = package / digest
    levels = reversed(target.relative_to(modules).parents[:-1])  # evaluate_modules, metrics, <name>
    for folder in (modules, *(modules / level for level in levels), target):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").touch()
    if (target / "qa_match.py").is_file() and all(
        (target / f).read_bytes() == (source / f).read_bytes() for f in FILES
    ):
        return target / "qa_match.py"
    for name in FILES:  # each file copied beside its target, then renamed: never half a script
        atomic_write(target / name, lambda tmp, name=name: shutil.copyfile(source / name, tmp))
    os.utime(target / "qa_match.py")  # newest hash folder is the one evaluate picks
    return target / "qa_match.py"


def push_metric(repo_id: str, private: bool = False, token: str | None = None) -> str:
    """Create (or reuse) a Gradio Space ``repo_id`` and upload the metric files; returns the Space URL."""
    from huggingface_hub import HfApi

    from continuousbench.hub import check_repo_id

    check_repo_id(repo_id, "--repo_id")
    api = HfApi(token=token)
    url = api.create_repo(repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
    api.upload_folder(
        repo_id=repo_id,
        repo_type="space",
        folder_path=str(metric_source()),
        allow_patterns=list(FILES),
        commit_message="Upload the ContinuousBench qa_match metric",
    )
    return str(url)


@dataclass
class InstallArguments:
    cache_dir: str | None = field(
        default=None, metadata={"help": "evaluate's module cache (default: its own)."}
    )


@dataclass
class PushArguments:
    repo_id: str = field(default="", metadata={"help": "Space id, e.g. my-org/qa_match."})
    private: bool = field(default=False, metadata={"help": "Create the Space private."})


def _install(args: InstallArguments) -> Path:
    """``continuousbench metric install``: place the metric where ``evaluate.load`` finds it offline."""
    from continuousbench.files import check_writable_dir

    cache_dir = check_writable_dir(Path(args.cache_dir), "--cache_dir") if args.cache_dir else None
    return install_metric(cache_dir)


def _push(args: PushArguments) -> str:
    """``continuousbench metric push --repo_id org/name``: publish the module to a Gradio Space."""
    return push_metric(args.repo_id, private=args.private)


_, install_cli = command(
    InstallArguments,
    "continuousbench metric install",
    "Install the metric where evaluate.load finds it offline.",
    _install,
    report=print,
    resume_hint=None,
)
_, push_cli = command(
    PushArguments,
    "continuousbench metric push",
    "Publish the metric module to a Gradio Space.",
    _push,
    report=print,
    resume_hint=None,
)
