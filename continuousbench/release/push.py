"""Publish a release to a Hub dataset repo: folder ``<id>/``, the umbrella README, and a tag ``<id>``."""

from __future__ import annotations

from pathlib import Path

from continuousbench.errors import UserError
from continuousbench.release.card import umbrella_card
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import CARD, MANIFEST
from continuousbench.release.load import resolve_release, verify_release


def hub_errors() -> tuple[type[BaseException], ...]:
    """What a Hub call raises when the Hub fails: OSError (HTTP errors, offline mode) and the HTTP client's
    transport errors (an unreachable Hub: its ``ConnectError`` is not an OSError). huggingface_hub 2 talks
    through ``httpx2``, 1.x through ``httpx``: both are caught where installed."""
    import importlib.util

    errors: list[type[BaseException]] = [OSError]
    for client in ("httpx2", "httpx"):
        if importlib.util.find_spec(client) is not None:
            errors.append(importlib.import_module(client).HTTPError)
    return tuple(errors)


def hub_failure(err: BaseException, action: str) -> UserError:
    """One line for a Hub error (HTTP, connection, offline mode): what failed and how to fix it."""
    detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return UserError(
        f"{action} failed ({detail}); check the repo id, the network (HF_HUB_OFFLINE unset) "
        "and your token (HF_TOKEN or `hf auth login`)"
    )


def _releases_in_repo(files: list[str]) -> list[ReleaseId]:
    found = set()
    for name in files:
        top, _, rest = name.partition("/")
        if rest == MANIFEST:
            try:
                found.add(ReleaseId.parse(top))
            except ValueError:
                continue
    return sorted(found, key=str)


def push_release(
    release: str | Path, repo_id: str, *, token: str | None = None, private: bool = False
) -> str:
    """Upload a verified local release to ``repo_id`` and tag it; return the URL of the tagged tree.

    Releases are immutable: a tag that already exists is refused rather than moved.
    """
    from huggingface_hub import HfApi

    folder = resolve_release(release, repo_id=None)
    rid = ReleaseId.parse(verify_release(folder)["id"])  # never publish a damaged release
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    tags = {ref.name for ref in api.list_repo_refs(repo_id, repo_type="dataset").tags}
    if str(rid) in tags:
        raise FileExistsError(
            f"release {rid} is already tagged in dataset repo {repo_id}; "
            "releases are immutable: build a new quarter instead"
        )
    from huggingface_hub import CommitOperationAdd

    present = _releases_in_repo(api.list_repo_files(repo_id, repo_type="dataset"))
    card = umbrella_card(sorted(set(present) | {rid}, key=str))
    # One commit with the release's files and the umbrella card: a reader never sees a release that
    # the card does not list, nor a card that lists a release only half uploaded.
    operations = [
        CommitOperationAdd(path_in_repo=f"{rid}/{f.relative_to(folder).as_posix()}", path_or_fileobj=str(f))
        for f in sorted(Path(folder).rglob("*")) if f.is_file()
    ]  # fmt: skip
    operations.append(CommitOperationAdd(path_in_repo=CARD, path_or_fileobj=str(card).encode("utf-8")))
    commit = api.create_commit(
        repo_id=repo_id,
        operations=operations,
        commit_message=f"Add release {rid} and list it in the umbrella card",
        repo_type="dataset",
    )
    api.create_tag(
        repo_id, tag=str(rid), revision=commit.oid, repo_type="dataset", tag_message=f"Release {rid}"
    )
    return f"{api.endpoint}/datasets/{repo_id}/tree/{rid}"
