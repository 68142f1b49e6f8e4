"""Publish a release to a Hub dataset repo: folder ``<id>/``, the umbrella README, and a tag ``<id>``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench.release.card import umbrella_card
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import CARD, MANIFEST
from continuousbench.release.load import resolve_release, verify_release

if TYPE_CHECKING:
    from continuousbench.release.targets import Target


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


GATES_FILE = "gates.json"  # the gate report published beside a release (not part of its checksummed files)


def gate_summary(report: Mapping[str, Any]) -> str:
    """One cell of the umbrella card: which gates passed, and which were skipped (``--skip_gates``)."""
    passed = ", ".join(sorted(name for name, gate in report.get("gates", {}).items() if gate.get("passed")))
    skipped = ", ".join(report.get("skipped", []))
    return f"passed: {passed or 'none'}" + (f"; skipped: {skipped}" if skipped else "")


def publish_release(release: str | Path, target: Target, gates: Mapping[str, Any] | None = None) -> str:
    """Commit a verified local release into ``target`` and tag it; return where the tag is.

    One commit holds the release's files, its gate report (``gates``, as ``<id>/gates.json``) and the
    umbrella card listing every release with what its gate report says, so a reader never sees a release
    the card does not list, nor a card listing a release half uploaded. Releases are immutable: a tag
    that already exists is refused rather than moved.
    """
    folder = resolve_release(release, repo_id=None)
    rid = ReleaseId.parse(verify_release(folder)["id"])  # never publish a damaged release
    target.prepare()
    if str(rid) in target.tags():
        raise FileExistsError(
            f"release {rid} is already tagged in {target.name}; releases are immutable: build a new quarter "
            "instead"
        )
    listed = target.files()
    present = _releases_in_repo(listed)
    files: dict[str, Path | bytes] = {
        f"{rid}/{f.relative_to(folder).as_posix()}": f for f in sorted(Path(folder).rglob("*")) if f.is_file()
    }
    summaries = {}
    for other in present:
        if f"{other}/{GATES_FILE}" in listed:
            published = target.read(f"{other}/{GATES_FILE}", None) or b"{}"
            summaries[str(other)] = gate_summary(json.loads(published))
    if gates is not None:
        files[f"{rid}/{GATES_FILE}"] = (json.dumps(gates, indent=1, sort_keys=True) + "\n").encode("utf-8")
        summaries[str(rid)] = gate_summary(gates)
    elif summaries:  # beside gated releases, one published without its gates (`publish release`) says so
        summaries[str(rid)] = "not gated"
    card = umbrella_card(sorted(set(present) | {rid}, key=str), gates=summaries or None)
    files[CARD] = str(card).encode("utf-8")
    commit = target.commit(files, f"Add release {rid} and list it in the umbrella card")
    target.tag(str(rid), commit, f"Release {rid}")
    return target.url(str(rid))


def push_release(
    release: str | Path, repo_id: str, *, token: str | None = None, private: bool = False
) -> str:
    """Upload a verified local release to the Hub dataset repo ``repo_id`` and tag it; return the URL of
    the tagged tree (:func:`publish_release` on a :class:`~.targets.HubTarget`)."""
    from continuousbench.release.targets import HubTarget

    return publish_release(release, HubTarget(repo_id, token=token, private=private))
