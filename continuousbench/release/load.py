"""Find a release (folder, local root, then the Hub), check it against its manifest, load a part.

What :func:`load_release` returns is parsed from exactly the bytes whose checksum was checked. It does
not go through ``load_dataset``'s shared cache, which keys a local folder on its card, not its data:
after loading a tampered copy of a release, the pristine release would be served the tampered rows.
Instead each data file is converted once to an Arrow file named by its sha256 and memory-mapped from
there, so a cache entry can only ever hold the content its name promises.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from continuousbench.errors import UserError
from continuousbench.files import sha256_file
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import (
    ALL_PARTS,
    CARD,
    HUB_REPO_ENV,
    MANIFEST,
    configs,
    data_file,
    default_root,
)
from continuousbench.release.write import DIGEST_KEY, manifest_digest

if TYPE_CHECKING:
    from datasets import Dataset

FIX = "rebuild it (`continuousbench build ... --overwrite`) or download it again"
CACHE_DIR = "continuousbench-releases"  # under datasets' cache: <sha256 of a parquet file>/data.arrow


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
    if not str(release).strip():
        raise UserError(f"release {str(release)!r} is empty; pass a release id or a release folder")
    path = Path(str(release)).expanduser()
    if path.exists() and not path.is_dir():
        raise UserError(f"{release} is a file, not a release; pass the release's folder or its id")
    if isinstance(release, Path) or path.is_dir():
        return _folder(path)
    if "/" in str(release) or str(release).startswith((".", "~")):
        raise FileNotFoundError(f"release folder {release} does not exist; check the path, or pass an id")
    try:
        rid = ReleaseId.parse(release)
    except ValueError as err:
        raise UserError(f"{release!r} is neither a release folder nor a release id ({err})") from None
    root = Path(root).expanduser() if root is not None else default_root()
    local = root / str(rid)
    if local.is_dir():
        return _folder(local)
    repo = repo_id or os.environ.get(HUB_REPO_ENV)
    if not repo:
        raise FileNotFoundError(
            f"release {rid} not found under {root}: build it with `continuousbench build {rid.track} "
            f"--size {rid.size} --quarter {rid.period}{rid.heldout_option}`, or set ${HUB_REPO_ENV} to "
            "download it"
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


def _release_files(track: str) -> list[str]:
    return [data_file(c, s) for c, splits in configs(track).items() for s in splits] + [CARD]


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of a release folder, once its own digest and its file list are found sound."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        files = dict(manifest["files"])
        name = manifest["id"]
        expected = _release_files(manifest.get("track", "geminon"))
    except (ValueError, KeyError, TypeError) as err:  # UnicodeDecodeError is a ValueError
        raise UserError(f"{path} is malformed ({type(err).__name__}: {err}); {FIX}") from None
    recorded = manifest.get(DIGEST_KEY)
    if recorded is None:
        raise UserError(f"{path} has no {DIGEST_KEY}, so edits to it cannot be detected; {FIX}")
    if recorded != manifest_digest(manifest):
        raise UserError(
            f"release {name}: {path} was edited (its content no longer matches its {DIGEST_KEY}); {FIX}"
        )
    missing = [f for f in expected if f not in files]
    unsafe = [f for f in files if PurePosixPath(f).is_absolute() or ".." in PurePosixPath(f).parts]
    if missing or unsafe or not all(isinstance(v, str) for v in files.values()):
        what = f"lacks {missing[0]}" if missing else f"lists {(unsafe or ['a non-string checksum'])[0]}"
        raise UserError(f"{path} is malformed (its file list {what}); {FIX}")
    return manifest


def _check_file(folder: Path, manifest: dict[str, Any], name: str) -> None:
    path = folder / name
    if not path.is_file():
        raise UserError(f"release {manifest['id']}: file {name} is missing from {folder}; {FIX}")
    if sha256_file(path) != manifest["files"][name]:
        raise UserError(f"release {manifest['id']}: checksum mismatch for {path}; {FIX}")


def verify_release(release: str | Path, **kw: Any) -> dict[str, Any]:
    """Check ``release.json`` against its own digest and every file against ``release.json``.

    Returns the manifest when everything matches; ``kw`` go to :func:`resolve_release`.
    """
    folder = resolve_release(release, **kw)
    manifest = read_manifest(folder)
    for name in sorted(manifest["files"]):
        _check_file(folder, manifest, name)
    return manifest


def _cache_root() -> Path:
    import datasets

    return Path(datasets.config.HF_DATASETS_CACHE).expanduser() / CACHE_DIR


def _load_split(path: Path, split: str, expected: str | None, release: str) -> Dataset:
    """One data file as a memory-mapped Dataset, from an Arrow copy named by the file's sha256.

    The copy is made from bytes hashed in memory, so it holds exactly the content its name says even if
    the file changes meanwhile; ``expected`` (from a verified manifest) is checked against that hash.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Dataset

    from continuousbench.files import atomic_write

    if not path.is_file():
        raise UserError(f"release {release}: file {path.name} is missing from {path.parent}; {FIX}")
    digest = sha256_file(path)
    if expected is not None and digest != expected:
        raise UserError(f"release {release}: checksum mismatch for {path}; {FIX}")
    arrow = _cache_root() / digest / "data.arrow"
    if not arrow.is_file():
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise UserError(f"release {release}: {path} changed while it was read; load it again")

        def convert(tmp: Path) -> None:
            parquet = pq.ParquetFile(pa.BufferReader(data))
            with pa.ipc.new_stream(str(tmp), parquet.schema_arrow) as writer:
                for batch in parquet.iter_batches():
                    writer.write_batch(batch)

        try:
            atomic_write(arrow, convert)
        except pa.ArrowException as err:  # only reachable unverified: a verified file parsed when written
            raise UserError(f"{path} is not a readable parquet file ({err}); {FIX}") from None
    return Dataset.from_file(str(arrow), split=split)


def _select(parts: dict[str, Dataset], spec: str) -> Dataset:
    """``split`` with datasets' slicing syntax (``test[:10]``, ``train[:5%]+validation``)."""
    from datasets import ReadInstruction, concatenate_datasets

    pieces = [
        parts[i.splitname].select(range(i.from_, i.to))
        for i in ReadInstruction.from_spec(spec).to_absolute({s: len(d) for s, d in parts.items()})
    ]
    return pieces[0] if len(pieces) == 1 else concatenate_datasets(pieces)


def load_release(
    release: str | Path,
    part: str = "corpus",
    split: str | None = None,
    *,
    verify: bool = True,
    **kw: Any,
):
    """One part of a release as a ``DatasetDict`` (or a ``Dataset`` when ``split`` is given).

    With ``verify`` (the default) the whole release is checked as by :func:`verify_release`, and the
    rows returned are parsed from the very bytes that were checked. ``kw`` go to :func:`resolve_release`
    (``root``, ``repo_id``, ``revision``).
    """
    from datasets import DatasetDict

    if part not in ALL_PARTS:
        raise UserError(f"unknown release part {part!r}: choose one of {', '.join(ALL_PARTS)}")
    folder = resolve_release(release, **kw)
    manifest = read_manifest(folder) if verify else None
    about = manifest or json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    parts = configs(about.get("track", "geminon"))  # a NEWS release has no qa_singleton, for one
    if part not in parts:
        raise UserError(
            f"release {about.get('id', folder.name)} has no part {part!r}: choose one of {', '.join(parts)}"
        )
    wanted = parts[part] if split is None else [p.split("[")[0].strip() for p in str(split).split("+")]
    if not all(s in parts[part] for s in wanted):
        raise UserError(f"unknown split {split!r} of part {part!r}: choose one of {', '.join(parts[part])}")
    names = {s: data_file(part, s) for s in parts[part] if s in wanted}
    if manifest is not None:  # the rest of the release; the part's own files are checked as they are read
        for name in sorted(set(manifest["files"]) - set(names.values())):
            _check_file(folder, manifest, name)
    label = manifest["id"] if manifest else folder.name
    splits = {
        s: _load_split(folder / name, s, manifest["files"][name] if manifest else None, label)
        for s, name in names.items()
    }
    if split is None:
        return DatasetDict(splits)
    try:
        return _select(splits, split)
    except (ValueError, AssertionError) as err:
        raise UserError(
            f"bad split {split!r} of part {part!r} ({err}); write e.g. test, test[:100] or test[:10%]"
        ) from None
