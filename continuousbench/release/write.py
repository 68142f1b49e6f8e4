"""Write a release folder (parquet + card + manifest) atomically, then refresh the root's umbrella card."""

from __future__ import annotations

import hashlib
import json
import numbers
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import continuousbench
from continuousbench.errors import UserError
from continuousbench.files import check_writable_dir, dumps, replace_dir, sha256_file, temp_dir, write_text
from continuousbench.locks import holding, waiting_for
from continuousbench.release.card import UMBRELLA_TITLE, read_infos, release_card, umbrella_card
from continuousbench.release.ids import ReleaseId
from continuousbench.release.layout import (
    CARD,
    FORMAT_VERSION,
    MANIFEST,
    TRACK_REQUIRED_COLUMNS,
    WORK,
    configs,
    data_file,
    default_root,
    list_releases,
)
from continuousbench.release.registry import REGISTRY, registry_text

if TYPE_CHECKING:
    from datasets import Dataset


DIGEST_KEY = "manifest_sha256"


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """sha256 of the manifest's canonical JSON (sorted keys, no spaces), its own digest left out.

    The manifest records the checksum of every other file; this one covers the manifest itself, so an
    edit of any field (the seed, a row count, a file's checksum) is detected.
    """
    body = {k: v for k, v in manifest.items() if k != DIGEST_KEY}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def validate_parts(parts: Mapping[str, Mapping[str, Dataset]], track: str = "geminon") -> None:
    """Exactly the track's configs and splits, non-empty, with the required columns; else ValueError."""
    from datasets import Dataset

    expected, required = configs(track), TRACK_REQUIRED_COLUMNS[track]
    for config in parts:
        if config not in expected:
            raise UserError(f"unknown release part {config!r}: a release has exactly {', '.join(expected)}")
    for config, splits in expected.items():
        if config not in parts:
            raise UserError(
                f"release part {config!r} is missing: a release has exactly {', '.join(expected)}"
            )
        given = parts[config]
        for split in given:
            if split not in splits:
                raise UserError(f"unknown split {split!r} in part {config!r}: expected {', '.join(splits)}")
        for split in splits:
            if split not in given:
                raise UserError(
                    f"split {split!r} of part {config!r} is missing: expected {', '.join(splits)}"
                )
            ds = given[split]
            if not isinstance(ds, Dataset):
                raise UserError(f"{config}/{split} must be a datasets.Dataset, got {type(ds).__name__}")
            if len(ds) == 0:  # datasets cannot load a split without rows
                raise UserError(f"{config}/{split} is empty: every split of a release needs at least one row")
            missing = [c for c in required[config] if c not in ds.column_names]
            if missing:
                raise UserError(
                    f"{config}/{split} lacks column(s) {', '.join(missing)}; it has {ds.column_names}"
                )


def _is_null(feature: Any) -> bool:
    """``Value("null")``, or a list of it: what datasets infers from a column that is all None (or all [])."""
    from datasets import List, Value

    if isinstance(feature, Value):
        return feature.dtype == "null"
    return isinstance(feature, List) and _is_null(feature.feature)


def align_features(
    parts: Mapping[str, Mapping[str, Dataset]], track: str = "geminon"
) -> dict[str, dict[str, Dataset]]:
    """Give every split of a part the same features, so the part loads as one DatasetDict.

    A column that is all ``None`` in one split is inferred as ``null`` there; it takes its type from a
    sibling split. Splits whose columns really disagree are an error.
    """
    from datasets import Features

    aligned: dict[str, dict[str, Dataset]] = {}
    for config, splits in configs(track).items():
        given = [parts[config][s] for s in splits]
        first = given[0].features
        for split, ds in zip(splits, given, strict=True):
            if set(ds.column_names) != set(first):
                raise UserError(
                    f"{config}/{split} has columns {ds.column_names} but {config}/{splits[0]} has "
                    f"{list(first)}; give every split of a part the same columns"
                )
        merged = Features(
            {
                name: next((ds.features[name] for ds in given if not _is_null(ds.features[name])), feature)
                for name, feature in first.items()
            }
        )
        aligned[config] = {}
        for split, ds in zip(splits, given, strict=True):
            if ds.features != merged:
                try:
                    ds = ds.cast(merged)
                except (ValueError, TypeError, KeyError):
                    raise UserError(
                        f"{config}/{split} has features {ds.features} but {config}/{splits[0]} has {first}; "
                        "give every split of a part the same columns and types"
                    ) from None
            aligned[config][split] = ds
    return aligned


def _info(config: str, splits: Mapping[str, Dataset], folder: Path) -> dict[str, Any]:
    """The card's ``dataset_info`` entry of one part: features, rows and bytes per split, file sizes."""
    import pyarrow.parquet as pq
    from datasets import DatasetInfo, SplitDict, SplitInfo

    split_dict = SplitDict()
    for name, ds in splits.items():
        # uncompressed size of the rows actually written (``ds.data`` may hold more rows behind an index)
        meta = pq.read_metadata(folder / data_file(config, name))
        nbytes = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        split_dict.add(SplitInfo(name=name, num_bytes=nbytes, num_examples=len(ds)))
    info = DatasetInfo(
        features=next(iter(splits.values())).features,
        splits=split_dict,
        download_size=sum((folder / data_file(config, s)).stat().st_size for s in splits),
        dataset_size=sum(s.num_bytes for s in split_dict.values()),
    )
    return info._to_yaml_dict()


def _manifest(
    rid: ReleaseId, folder: Path, rows: dict, seed: int, generator: dict, evaluation: dict | None
) -> dict[str, Any]:
    files = [data_file(c, s) for c, splits in configs(rid.track).items() for s in splits] + [CARD, REGISTRY]
    extra = {"evaluation": evaluation} if evaluation else {}
    if rid.heldout:  # a held-out split of the same world: generator.heldout says which documents moved
        extra["heldout"] = rid.heldout
    manifest = {
        "id": str(rid),
        "format_version": FORMAT_VERSION,
        "track": rid.track,
        "size": rid.size,
        "year": rid.year,
        "quarter": rid.quarter,
        "seed": seed,
        "package_version": continuousbench.__version__,
        "generator": generator,
        "rows": rows,
        "files": {name: sha256_file(folder / name) for name in files},
        **extra,
    }
    return {**manifest, DIGEST_KEY: manifest_digest(manifest)}


def _keys(rid: ReleaseId, parts: dict[str, dict[str, Dataset]]) -> list[str]:
    """What the release's questions are keyed on (:mod:`.registry`): entity names, or NEWS's questions."""
    if rid.track == "geminon":
        return parts["entities"]["train"]["name"]
    return [q for split in parts["qa_public"].values() for q in split["question"]]


def write_umbrella_card(root: Path) -> Path:
    """Regenerate ``<root>/README.md`` from the releases present (temp file, then rename), holding the
    root's own lock: release locks are per release, so two releases finishing at once under one root
    would each write a card listing what it saw, and the last written could miss the other."""
    root = Path(root).expanduser()
    with waiting_for(root):
        ids = list_releases(root)
        infos = {str(rid): read_infos(root / str(rid) / CARD) for rid in ids}
        return write_text(root / CARD, str(umbrella_card(ids, infos)))


@contextmanager
def release_lock(rid: ReleaseId, root: Path) -> Iterator[None]:
    """Hold release ``rid``'s lock under ``root`` (``<root>/.work/<rid>.lock``) for the block: its build
    and its writing. A second build of it refuses at once in one line naming the first's pid; two would
    share one work folder and race to publish. Taken again by the writer inside a build, it goes on."""
    busy = (
        f"release {rid} under {root} is being built by {{holder}}; wait for it to finish, or build it "
        "under another release root"
    )
    try:
        with holding(Path(root) / WORK / f"{rid}.lock", f"build {rid.track}", busy, Path(root) / str(rid)):
            yield
    finally:
        with suppress(OSError):  # an empty .work is no one's leftover
            (Path(root) / WORK).rmdir()


def _exists_error(rid: ReleaseId, target: Path) -> FileExistsError:
    return FileExistsError(f"release {rid} already exists at {target}; pass --overwrite to replace it")


def check_replaceable(rid: ReleaseId, target: Path, overwrite: bool) -> None:
    """Refuse, before any work, to write over ``target`` unless ``overwrite``, or over files of the user.

    ``--overwrite`` replaces a release, i.e. the files a release has; anything else found in its folder
    (notes, a fine-tuned model) would be lost with it, so it has to be moved away first.
    """
    card = target.parent / CARD
    if card.is_file() and UMBRELLA_TITLE not in card.read_text(encoding="utf-8", errors="replace"):
        raise FileExistsError(
            f"{target.parent} holds a {CARD} that is not a card of ContinuousBench releases; a build "
            f"rewrites the card of the folder it writes into: move {card} away, or choose another folder"
        )
    if not target.exists() and not target.is_symlink():
        return
    if not overwrite:
        raise _exists_error(rid, target)
    if not target.is_dir():
        raise FileExistsError(f"{target} is a file, not release {rid}; move it away and rebuild")
    ours = {
        *(data_file(c, s) for c, splits in configs(rid.track).items() for s in splits),
        CARD,
        MANIFEST,
        REGISTRY,
    }
    foreign = sorted(
        p.relative_to(target).as_posix()
        for p in target.rglob("*")
        if not p.is_dir() and p.relative_to(target).as_posix() not in ours
    )
    if foreign:
        raise FileExistsError(
            f"{target} holds files that are not part of release {rid} ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}); move them away, then rerun with --overwrite"
        )


def write_release(
    release_id: str | ReleaseId,
    parts: dict[str, dict[str, Dataset]],
    *,
    root: Path | None = None,
    seed: int,
    generator: dict,
    overwrite: bool = False,
    card_notes: str = "",
    evaluation: dict | None = None,
) -> Path:
    """Write ``<root>/<release-id>/`` from ``parts[config][split]`` and return its folder.

    The same parts, seed and generator settings give byte-identical files. Nothing is visible under the
    final name until the whole release is written; an existing release is replaced only with ``overwrite``.
    ``evaluation`` (the track's canonical evaluation: primary metric, support threshold, strata) goes
    into the manifest and the card.
    """
    rid = ReleaseId.parse(release_id)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise UserError(f"seed must be a non-negative integer (it rebuilds the release), got {seed!r}")
    seed = int(seed)  # numpy integers are welcome; the manifest stores a plain int
    if not isinstance(generator, Mapping):
        raise UserError(f"generator must be a mapping of settings, got {type(generator).__name__}")
    root = check_writable_dir(Path(root) if root is not None else default_root(), "root")
    target = root / str(rid)
    check_replaceable(rid, target, overwrite)
    validate_parts(parts, rid.track)
    parts = align_features(parts, rid.track)
    try:
        generator = json.loads(json.dumps(generator, sort_keys=True))
    except TypeError as err:
        raise UserError(f"generator settings must be JSON-serialisable: {err}") from None

    with release_lock(rid, root):
        _write_folder(
            rid,
            parts,
            root,
            seed=seed,
            generator=generator,
            overwrite=overwrite,
            card_notes=card_notes,
            evaluation=evaluation,
        )
        write_umbrella_card(root)
    return target


def _write_folder(
    rid: ReleaseId,
    parts: dict[str, dict[str, Dataset]],
    root: Path,
    *,
    seed: int,
    generator: dict,
    overwrite: bool,
    card_notes: str,
    evaluation: dict | None,
) -> None:
    """Write the release in a hidden folder under ``root``, then rename it to ``<root>/<rid>``."""
    import datasets

    target, expected = root / str(rid), configs(rid.track)

    root.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(root, prefix=f".{rid}.tmp-")  # readable by others as the umask allows, like any folder
    bars_were_on = not datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()  # one bar per parquet file is noise; the builder shows its own progress
    try:
        rows: dict[str, dict[str, int]] = {}
        for config, splits in expected.items():
            rows[config] = {}
            for split in splits:
                ds = parts[config][split]
                path = tmp / data_file(config, split)
                path.parent.mkdir(parents=True, exist_ok=True)
                # datasets' writer keeps the features in the schema metadata; its settings are fixed, so
                # equal data gives equal bytes (tested).
                ds.to_parquet(str(path))
                rows[config][split] = len(ds)
        columns = {c: parts[c][expected[c][0]].column_names for c in expected}
        infos = {c: _info(c, parts[c], tmp) for c in expected}
        card = release_card(
            rid,
            rows=rows,
            columns=columns,
            seed=seed,
            package_version=continuousbench.__version__,
            generator=generator,
            infos=infos,
            notes=card_notes,
            evaluation=evaluation,
        )
        write_text(tmp / CARD, str(card))
        write_text(tmp / REGISTRY, registry_text(rid, _keys(rid, parts)))
        write_text(tmp / MANIFEST, dumps(_manifest(rid, tmp, rows, seed, generator, evaluation)))
        if target.exists() and not overwrite:  # appeared while we were writing
            raise _exists_error(rid, target)
        replace_dir(tmp, target)  # an old release is set aside first and removed only afterwards
    finally:
        if bars_were_on:
            datasets.enable_progress_bars()
        if tmp.exists():
            shutil.rmtree(tmp)
