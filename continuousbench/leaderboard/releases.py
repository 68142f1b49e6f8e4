"""Which releases the leaderboard knows, and where each one's page is.

A submitted record names its release by id and by the sha256 of the manifest it was scored on. The
leaderboard ranks it only when that release is known: built under the local release root with the same
manifest (the page is then its ``release.json``), or published as a tag of the releases' Hub dataset
repo (``$CONTINUOUSBENCH_HUB_REPO``; the page is that tag's folder). A record for any other id, such as
a quarter that has not happened, is left out rather than shown as the newest release.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from continuousbench.files import sha256_file
from continuousbench.release.layout import HUB_REPO_ENV, MANIFEST, default_root

HUB = "https://huggingface.co"


@dataclass
class ReleaseIndex:
    """The releases under ``root`` (default: the release root) and the tags of ``hub_repo`` (default:
    ``$CONTINUOUSBENCH_HUB_REPO``; none: no Hub lookup)."""

    root: Path | None = None
    hub_repo: str | None = None
    _tags: set[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root).expanduser() if self.root is not None else default_root()
        self.hub_repo = self.hub_repo or os.environ.get(HUB_REPO_ENV) or None

    def hub_tags(self) -> set[str]:
        """The repo's tags, asked once; none when there is no repo or the Hub cannot be reached."""
        if self._tags is None:
            self._tags = set()
            if self.hub_repo:
                from huggingface_hub import HfApi

                try:
                    refs = HfApi().list_repo_refs(self.hub_repo, repo_type="dataset")
                    self._tags = {tag.name for tag in refs.tags}
                except Exception:  # noqa: BLE001 - offline, missing or private: then nothing is on the Hub
                    self._tags = set()
        return self._tags

    def find(self, release: dict) -> tuple[str, str | None]:
        """(the release's page: a Hub URL or the local manifest's path, None) when known, else
        ("", why it is not)."""
        rid = release["id"]
        manifest = self.root / rid / MANIFEST
        if rid in self.hub_tags():
            return f"{HUB}/datasets/{quote(self.hub_repo)}/tree/{quote(rid)}/{quote(rid)}", None
        if manifest.is_file():
            if sha256_file(manifest) == release.get("manifest_sha256"):
                return str(manifest), None
            return "", f"release {rid} here under {self.root} is another build (manifest sha256 differs)"
        hub = f" nor a tag of {self.hub_repo}" if self.hub_repo else f" and ${HUB_REPO_ENV} is not set"
        return "", f"release {rid} is not known: not under {self.root}{hub}"
