"""The one rule for "is this a Hugging Face Hub repo id": ``owner/name`` as the Hub validates it, and not
a path on this machine (a local folder ``org/name`` is a folder). Cards, ``submit --to``, the
leaderboard's links and the publishing commands all ask :func:`hub_repo_id` or :func:`check_repo_id`.
"""

from __future__ import annotations

from pathlib import Path

from continuousbench.errors import UserError

DATASETS = "hf://datasets/"  # how a results dataset may be named (fsspec's spelling)


def _problem(repo: str) -> str | None:
    """Why ``repo`` is not a Hub repo id ``owner/name``, or None when it is one."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if repo.count("/") != 1:
        return "it needs exactly one '/'"
    try:
        validate_repo_id(repo)
    except HFValidationError as err:
        return " ".join(str(err).split()).split(". ")[0]
    return None


def hub_repo_id(text: str | None) -> str | None:
    """The repo id ``owner/name`` that ``text`` names (``hf://datasets/owner/name`` too), or None when it
    is empty, a local path or not a valid id."""
    if not text:
        return None
    repo = text.removeprefix(DATASETS)
    if text.startswith((".", "~", "/")) or Path(text).expanduser().exists() or _problem(repo):
        return None
    return repo


def check_repo_id(repo_id: str, option: str) -> str:
    """``repo_id`` if it is a Hub id ``owner/name``, else one line naming ``option`` (before any work)."""
    problem = _problem(repo_id)
    if problem:
        raise UserError(f"{option} {repo_id!r} is not a Hub repo id owner/name ({problem}); fix it")
    return repo_id
