"""What a release used that a later one must not use again: its names registry, ``names.json``.

A Geminon question is keyed on its entity's name ("What is the HP stat of Numzar?"), so a world whose
names are all new repeats no question and no (name, answer) pair of an earlier world. A NEWS question is
keyed on its own text. Every release carries the keys it used in ``names.json`` (in its manifest's
checksums), so a builder can read them back from the releases under its root and from the tags of a
published repo (:mod:`.targets`), and avoid them. A release written before registries existed gives the
same keys from its data (the entities' names; NEWS's questions).

*Earlier* means strictly earlier quarters of the same track, at any size (a rehearsal of the same quarter
at another size is not earlier, and never changes the real build).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from continuousbench.errors import UserError
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import data_file, list_releases

if TYPE_CHECKING:
    from continuousbench.release.targets import Target

REGISTRY = "names.json"
KIND = {"geminon": "names", "news": "questions"}  # what each track's questions are keyed on


def normal(text: str) -> str:
    """The form keys are compared in: case-folded, whitespace collapsed (as the fresh gate compares)."""
    return " ".join(str(text).casefold().split())


def registry_text(rid: ReleaseId, keys: Iterable[str]) -> str:
    """``names.json`` of a release: its id, track, and its keys (sorted, normal form, one per line)."""
    body = {"release": str(rid), "track": rid.track, KIND[rid.track]: sorted({normal(k) for k in keys})}
    return json.dumps(body, indent=0, ensure_ascii=False) + "\n"


def keys_of(rid: ReleaseId, read: Callable[[str], bytes | None]) -> set[str]:
    """The keys of release ``rid``; ``read(relative path)`` gives a file of it as bytes, or None."""
    import pyarrow.parquet as pq

    registry = read(REGISTRY)
    if registry is not None:
        try:
            return {normal(k) for k in json.loads(registry)[KIND[rid.track]]}
        except (ValueError, KeyError, TypeError):
            raise UserError(f"{REGISTRY} of {rid} is malformed; rebuild or republish {rid}") from None
    parts = (
        [("entities", "train", "name")]
        if rid.track == "geminon"
        else [("qa_public", split, "question") for split in ("validation", "test")]
    )
    keys: set[str] = set()
    for config, split, column in parts:
        data = read(data_file(config, split))
        if data is None:
            raise UserError(f"release {rid} has neither {REGISTRY} nor {data_file(config, split)}")
        keys.update(normal(v) for v in pq.read_table(io.BytesIO(data), columns=[column])[column].to_pylist())
    return keys


def is_earlier(other: ReleaseId, rid: ReleaseId) -> bool:
    """Same track, a strictly earlier quarter (any size, held-out variants included)."""
    return other.track == rid.track and (other.year, other.quarter) < (rid.year, rid.quarter)


def earlier_under(rid: ReleaseId, root: Path) -> list[ReleaseId]:
    """The releases under ``root`` earlier than ``rid``."""
    return [other for other in list_releases(root) if is_earlier(other, rid)]


def earlier_keys(
    rid: ReleaseId, root: Path | None, target: Target | None = None
) -> tuple[list[str], set[str]]:
    """(ids of the earlier releases found, the union of their keys): those under ``root`` and those tagged
    in ``target`` (read at their tags)."""
    found: dict[str, set[str]] = {}
    for other in earlier_under(rid, root) if root is not None else []:
        folder = Path(root) / str(other)
        found[str(other)] = keys_of(
            other, lambda p, f=folder: (f / p).read_bytes() if (f / p).is_file() else None
        )
    for tag in target.tags() if target is not None else []:
        try:
            other = ReleaseId.parse(tag)
        except UserError:  # a tag that is not a release id
            continue
        if str(other) not in found and is_earlier(other, rid):
            found[tag] = keys_of(other, lambda p, t=tag: target.read(f"{t}/{p}", t))
    return sorted(found), set().union(*found.values())


def digest(keys: Iterable[str]) -> str:
    """sha256 of the sorted keys: what a build's work folder is keyed on, and the manifest records."""
    return hashlib.sha256("\n".join(sorted(keys)).encode("utf-8")).hexdigest()
