"""Find a release (folder, local root, then the Hub), check it against its manifest, load a part."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import ALL_PARTS, HUB_REPO_ENV, MANIFEST, configs, default_root
from continuousbench.release.write import sha256_file


def _folder(path: Path) -> Path:
    if not (path / MANIFEST).is_file():
        raise FileNotFoundError(f"{path} is not a release folder: it has no {MANIFEST}")
    return path


def resolve_release(
    release: str | Path,
    *,
    root: Path | str | None = None,
    repo_id: str | None = None,
    revision: str | None = None,
) -> Path:
    """The folder of a release given as a folder path or an id (looked up under ``root``, then on the Hub).

    The Hub repo is ``repo_id`` or ``$CONTINUOUSBENCH_HUB_REPO``; a release there is the folder
    ``<release-id>/`` at the tag ``<release-id>`` (or ``revision``).
    """
    if isinstance(release, Path) or Path(str(release)).expanduser().is_dir():
        return _folder(Path(release).expanduser())
    try:
        rid = ReleaseId.parse(release)
    except ValueError as err:
        raise ValueError(f"{release!r} is neither a release folder nor a release id ({err})") from None
    root = Path(root).expanduser() if root is not None else default_root()
    local = root / str(rid)
    if local.is_dir():
        return _folder(local)
    repo = repo_id or os.environ.get(HUB_REPO_ENV)
    if not repo:
        raise FileNotFoundError(
            f"release {rid} not found under {root}: build it with `continuousbench build {rid.track} "
            f"--size {rid.size} --quarter {rid.period}`, or set ${HUB_REPO_ENV} to download it"
        )
    from huggingface_hub import snapshot_download

    try:
        snapshot = snapshot_download(
            repo_id=repo, repo_type="dataset", revision=revision or str(rid), allow_patterns=[f"{rid}/*"]
        )
    except OSError as err:  # hub HTTP errors, offline mode and missing cache entries are all OSErrors
        raise FileNotFoundError(
            f"release {rid} could not be downloaded from dataset repo {repo}: {err}"
        ) from None
    return _folder(Path(snapshot) / str(rid))


def verify_release(release: str | Path, **kw: Any) -> dict[str, Any]:
    """Recompute the sha256 of every file listed in ``release.json``; return the manifest if all match."""
    folder = resolve_release(release, **kw)
    fix = "rebuild it (`continuousbench build ... --overwrite`) or download it again"
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = dict(manifest["files"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{folder / MANIFEST} is malformed ({type(err).__name__}: {err}); {fix}") from None
    for name, expected in sorted(files.items()):
        path = folder / name
        if not path.is_file():
            raise ValueError(f"release {manifest['id']}: file {name} is missing from {folder}; {fix}")
        if sha256_file(path) != expected:
            raise ValueError(f"release {manifest['id']}: checksum mismatch for {path}; {fix}")
    return manifest


def load_release(
    release: str | Path,
    part: str = "corpus",
    split: str | None = None,
    *,
    verify: bool = True,
    **kw: Any,
):
    """One part of a release as a ``DatasetDict`` (or a ``Dataset`` when ``split`` is given).

    ``kw`` go to :func:`resolve_release` (``root``, ``repo_id``, ``revision``).
    """
    if part not in ALL_PARTS:
        raise ValueError(f"unknown release part {part!r}: choose one of {', '.join(ALL_PARTS)}")
    folder = resolve_release(release, **kw)
    manifest = verify_release(folder) if verify else json.loads((folder / MANIFEST).read_text("utf-8"))
    parts = configs(manifest.get("track", "geminon"))
    if part not in parts:
        name = manifest.get("id", folder.name)
        raise ValueError(f"release {name} has no part {part!r}: choose one of {', '.join(parts)}")
    if split is not None and split.split("[")[0] not in parts[part]:
        raise ValueError(f"unknown split {split!r} of part {part!r}: choose one of {', '.join(parts[part])}")
    from datasets import load_dataset

    return load_dataset(str(folder), part, split=split)
