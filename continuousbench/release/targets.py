"""Where releases are published: a Hub dataset repo, or a local git repository that rehearses it.

A target is a git repository of releases (the Hub's dataset repos are git repositories): each release is
one commit adding ``<id>/`` and the umbrella card, tagged ``<id>``. :class:`HubTarget` talks to the Hub
through ``HfApi``; :class:`FolderTarget` writes the same commit and tag into a local git repository (a
folder of its own, or a clone of the Hub repo), so a maintainer can rehearse a quarter's publishing, and
read back what was published, with no token and no network. :class:`DryRun` reads from a target and
writes the commit it would make into a JSON file instead.

Every target is checked (:meth:`check`: reachable, writable) before any work starts, and every failure
of a Hub call (HTTP errors, an unreachable Hub, offline mode, an answer without the fields expected)
becomes one line.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from continuousbench.errors import UserError

Files = Mapping[str, Path | bytes]  # path in the repo -> a local file or the bytes to write


class Target(Protocol):
    name: str

    def check(self) -> None: ...
    def prepare(self) -> None: ...
    def tags(self) -> list[str]: ...
    def files(self) -> list[str]: ...
    def read(self, path: str, revision: str | None) -> bytes | None: ...
    def commit(self, files: Files, message: str) -> str: ...
    def tag(self, tag: str, commit: str, message: str) -> None: ...
    def url(self, tag: str) -> str: ...


def is_local(spec: str) -> bool:
    """A local folder is written as a path (``./``, ``/``, ``~``) or already exists; else a Hub id."""
    return spec.startswith((".", "/", "~")) or Path(spec).expanduser().exists()


def make_target(spec: str, option: str = "--publish", *, dry_run: str | Path | None = None) -> Target:
    """A :class:`FolderTarget` for a local path, else a :class:`HubTarget` (the id checked); with
    ``dry_run``, a :class:`DryRun` writing its commit there."""
    if is_local(spec):
        target: Target = FolderTarget(Path(spec).expanduser())
    else:
        from continuousbench.hub import check_repo_id

        target = HubTarget(check_repo_id(spec, option))
    return DryRun(target, Path(dry_run)) if dry_run is not None else target


def _bytes(source: Path | bytes) -> bytes:
    return source if isinstance(source, bytes) else Path(source).read_bytes()


# -- the Hub ------------------------------------------------------------------------------------------


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


class HubTarget:
    """A Hub dataset repo (created on the first commit); the token from ``HF_TOKEN`` or ``hf auth login``."""

    def __init__(self, repo_id: str, *, token: str | None = None, private: bool = False):
        from huggingface_hub import HfApi

        self.repo_id, self.private, self.name = repo_id, private, f"dataset repo {repo_id}"
        self.api = HfApi(token=token)

    def _call(self, action: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except KeyError as err:  # huggingface_hub reads fields of the answer: not the Hub's answer
            raise UserError(
                f"{action} {self.name} failed: the server's answer lacks {err}; check HF_ENDPOINT"
            ) from None
        except hub_errors() as err:
            raise hub_failure(err, f"{action} {self.name}") from None

    def check(self) -> None:
        """The Hub answers, the token can write, and the repo's owner is the token's user or one of its
        organisations where it may write: before any build, so that no work is lost to a bad token."""
        me = self._call("checking the token (whoami) for", self.api.whoami)
        access = ((me.get("auth") or {}).get("accessToken") or {}).get("role")
        owner = self.repo_id.split("/", 1)[0]
        orgs = {o.get("name"): o.get("roleInOrg") for o in me.get("orgs") or []}
        if access == "read" or (owner != me.get("name") and orgs.get(owner, "read") == "read"):
            raise UserError(
                f"the Hub token of {me.get('name')} cannot write to {self.name} (token role {access}, "
                f"role in {owner}: {orgs.get(owner, 'none')}); use a write token (HF_TOKEN) of its owner"
            )

    def prepare(self) -> None:
        """Create the repo if it is missing (the first release of a repo)."""
        self._call(
            "publishing to",
            lambda: self.api.create_repo(
                self.repo_id, repo_type="dataset", private=self.private, exist_ok=True
            ),
        )

    def tags(self) -> list[str]:
        from huggingface_hub.errors import RepositoryNotFoundError

        def listing() -> list:
            try:
                return self.api.list_repo_refs(self.repo_id, repo_type="dataset").tags
            except RepositoryNotFoundError:  # not created yet: nothing published there
                return []

        return [ref.name for ref in self._call("listing the tags of", listing)]

    def files(self) -> list[str]:
        return list(
            self._call(
                "listing the files of", lambda: self.api.list_repo_files(self.repo_id, repo_type="dataset")
            )
        )

    def read(self, path: str, revision: str | None) -> bytes | None:
        """``path`` at ``revision`` (None: the head), or None when it is not there."""
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        def download() -> str | None:
            try:
                return hf_hub_download(
                    self.repo_id, path, repo_type="dataset", revision=revision, token=self.api.token
                )
            except EntryNotFoundError:
                return None

        local = self._call(f"reading {path} at {revision or 'the head'} from", download)
        return None if local is None else Path(local).read_bytes()

    def commit(self, files: Files, message: str) -> str:
        from huggingface_hub import CommitOperationAdd

        operations = [
            CommitOperationAdd(path_in_repo=p, path_or_fileobj=s if isinstance(s, bytes) else str(s))
            for p, s in files.items()
        ]
        done = self._call(
            "committing to",
            lambda: self.api.create_commit(
                repo_id=self.repo_id, operations=operations, commit_message=message, repo_type="dataset"
            ),
        )
        return done.oid

    def tag(self, tag: str, commit: str, message: str) -> None:
        self._call(
            f"tagging {tag} in",
            lambda: self.api.create_tag(
                self.repo_id, tag=tag, revision=commit, repo_type="dataset", tag_message=message
            ),
        )

    def url(self, tag: str) -> str:
        return f"{self.api.endpoint}/datasets/{self.repo_id}/tree/{tag}"


# -- a local git repository ---------------------------------------------------------------------------

_IDENTITY = {
    "GIT_AUTHOR_NAME": "continuousbench",
    "GIT_AUTHOR_EMAIL": "continuousbench@localhost",
    "GIT_COMMITTER_NAME": "continuousbench",
    "GIT_COMMITTER_EMAIL": "continuousbench@localhost",
}


class FolderTarget:
    """A local git repository: created (``git init``) when the folder is missing or empty; a folder that
    holds other files, or a repository with uncommitted changes, is refused."""

    def __init__(self, folder: Path):
        self.folder, self.name = folder, f"local repository {folder}"

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.folder), *args], capture_output=True, env={**os.environ, **_IDENTITY}
            )
        except FileNotFoundError:
            raise UserError("publishing to a local folder needs git on the PATH; install git") from None
        if check and done.returncode:
            why = done.stderr.decode(errors="replace").strip().splitlines()
            raise UserError(f"git {args[0]} in {self.folder} failed: {why[-1] if why else done.returncode}")
        return done

    def check(self) -> None:
        if self.folder.exists() and not self.folder.is_dir():
            raise UserError(f"--publish {self.folder} is a file; name a folder (a git repository or new)")
        if not self.folder.exists() or not any(self.folder.iterdir()):
            self.folder.mkdir(parents=True, exist_ok=True)
            self._git("init", "-q", "-b", "main")
        if not (self.folder / ".git").exists():
            raise UserError(
                f"--publish {self.folder} holds files but is not a git repository; name an empty folder "
                "or a clone of the dataset repo"
            )
        if not os.access(self.folder, os.W_OK):
            raise UserError(f"--publish {self.folder} is not writable; choose a folder of yours")
        if self._git("status", "--porcelain").stdout.strip():
            raise UserError(f"{self.name} has uncommitted changes; commit or remove them first")

    def prepare(self) -> None:
        """Nothing to do: :meth:`check` made the repository."""

    def _head(self) -> bool:
        return self._git("rev-parse", "--verify", "-q", "HEAD", check=False).returncode == 0

    def tags(self) -> list[str]:
        return self._git("tag", "-l").stdout.decode().split()

    def files(self) -> list[str]:
        return (
            self._git("ls-tree", "-r", "--name-only", "HEAD").stdout.decode().split() if self._head() else []
        )

    def read(self, path: str, revision: str | None) -> bytes | None:
        done = self._git("show", f"{revision or 'HEAD'}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def commit(self, files: Files, message: str) -> str:
        for path, source in files.items():
            where = self.folder / path
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_bytes(_bytes(source))
        self._git("add", "--", *files)
        self._git("commit", "-q", "-m", message)
        return self._git("rev-parse", "HEAD").stdout.decode().strip()

    def tag(self, tag: str, commit: str, message: str) -> None:
        self._git("tag", "-a", tag, "-m", message, commit)

    def url(self, tag: str) -> str:
        return f"{self.folder} (tag {tag})"


# -- a dry run ----------------------------------------------------------------------------------------


class DryRun:
    """Reads from ``target``; the commit and tag it would write go to ``plan`` (JSON: every file's path,
    size and sha256, the message, the tag) instead."""

    def __init__(self, target: Target, plan: Path):
        self.target, self.plan, self.name = target, plan, f"dry run of {target.name}"
        self.commits: list[dict] = []

    def check(self) -> None:
        self.target.check()

    def prepare(self) -> None:
        """Nothing is created by a dry run."""

    def tags(self) -> list[str]:
        return self.target.tags()

    def files(self) -> list[str]:
        return self.target.files()

    def read(self, path: str, revision: str | None) -> bytes | None:
        return self.target.read(path, revision)

    def commit(self, files: Files, message: str) -> str:
        listed = {
            p: {"bytes": len(b := _bytes(s)), "sha256": hashlib.sha256(b).hexdigest()}
            for p, s in sorted(files.items())
        }
        oid = hashlib.sha256(repr(sorted((p, f["sha256"]) for p, f in listed.items())).encode()).hexdigest()
        self.commits.append({"commit": oid[:40], "message": message, "files": listed, "tags": []})
        return oid[:40]

    def tag(self, tag: str, commit: str, message: str) -> None:
        from continuousbench.files import write_json

        next(c for c in self.commits if c["commit"] == commit)["tags"].append(tag)
        write_json(self.plan, {"target": self.target.name, "commits": self.commits})

    def url(self, tag: str) -> str:
        return f"{self.plan} (dry run: tag {tag} not written)"
