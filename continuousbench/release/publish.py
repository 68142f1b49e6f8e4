"""``continuousbench publish release <id> --repo <org/name>``: upload a release as a tagged revision.

The release is verified (every checksum) before anything is sent, uploaded into ``<id>/`` of the
dataset repo with the umbrella card listing every release there, and the commit is tagged ``<id>``
(:func:`continuousbench.release.push.push_release`; an existing tag is refused: releases are
immutable). The token comes from ``HF_TOKEN`` or ``hf auth login``, never from the command line.
Prints the line users type to load it.

    continuousbench publish release geminon-small-2026q1 --repo my-org/continuousbench
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from continuousbench.commands import command
from continuousbench.errors import UserError


@dataclass
class PublishArguments:
    release: str | None = field(
        default=None,
        metadata={"help": "Release id (under $CONTINUOUSBENCH_HOME) or release folder.", "positional": True},
    )
    repo: str | None = field(
        default=None, metadata={"help": "Hub dataset repo, org/name (created if missing)."}
    )
    private: bool = field(default=False, metadata={"help": "Create the repo private."})


def load_line(repo_id: str, release_id: str, part: str = "qa_public") -> str:
    """The ``load_dataset`` call that reads ``part`` of the published release at its tag."""
    from continuousbench.release.card import umbrella_config_name
    from continuousbench.release.ids import ReleaseId

    config = umbrella_config_name(ReleaseId.parse(release_id), part)
    return f'load_dataset("{repo_id}", "{config}", revision="{release_id}")'


def main(args: PublishArguments) -> dict:
    """Push and return ``{"url", "release", "load"}``."""
    release, repo = args.release, args.repo
    if release is None or repo is None:
        raise UserError("continuousbench publish release <id or folder> --repo <org/name>: give both")
    from continuousbench.hub import check_repo_id
    from continuousbench.release.layout import MANIFEST
    from continuousbench.release.load import resolve_release
    from continuousbench.release.push import push_release
    from continuousbench.release.targets import hub_errors, hub_failure

    check_repo_id(repo, "--repo")
    try:
        url = push_release(release, repo, private=args.private)  # verifies every checksum first
    except (FileNotFoundError, FileExistsError):
        raise
    except hub_errors() as err:
        raise hub_failure(err, f"publishing to dataset repo {repo}") from None
    release_id = json.loads((resolve_release(release, repo_id=None) / MANIFEST).read_text())["id"]
    return {"url": url, "release": release_id, "load": load_line(repo, release_id)}


def _report(result: dict) -> None:
    print(f"published {result['release']}: {result['url']}")
    print("load it with:")
    print("  from datasets import load_dataset")
    print(f"  qa = {result['load']}")


make_parser, cli = command(
    PublishArguments,
    "continuousbench publish release",
    __doc__.splitlines()[0],
    main,
    report=_report,
)
