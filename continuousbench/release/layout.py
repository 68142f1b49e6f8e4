"""Where a release lives: ``<root>/<id>/`` holds README.md, release.json, data/<config>/<split>-*.parquet."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from continuousbench.errors import UserError
from continuousbench.release.ids import ReleaseId

# config -> splits, in the order the card lists them.
CONFIGS: dict[str, tuple[str, ...]] = {
    "corpus": ("train", "validation"),
    "qa_public": ("validation", "test"),
    "qa_singleton": ("validation", "test"),
    "support_counts": ("train",),
    "entities": ("train",),
}

# The QA configs: one per entity subset (public entities, sensitive ones), scored separately.
QA_PARTS: tuple[str, ...] = ("qa_public", "qa_singleton")

# Columns every release must carry (DESIGN "Release contract"); builders may add more. The entity
# attributes are track-specific, so only the columns other stages join on are required there.
_QA_COLUMNS = ("id", "question", "answer", "entity", "name", "attribute", "support_count")
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "corpus": ("id", "text", "style", "entities", "mentions"),
    "qa_public": _QA_COLUMNS,
    "qa_singleton": _QA_COLUMNS,
    "support_counts": ("entity", "name", "feature", "count", "subset"),
    "entities": ("name", "subset"),
}

# Track II, NEWS (paper §2.1): no entities or singleton subset; support counts are per question, with the
# ids of the supporting corpus articles.
NEWS_CONFIGS: dict[str, tuple[str, ...]] = {
    "corpus": ("train", "validation"),
    "qa_public": ("validation", "test"),
    "support_counts": ("train",),
}
NEWS_REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "corpus": ("id", "url", "hostname", "title", "date", "crawl_date", "language", "text"),
    "qa_public": ("id", "question", "answer", "support_count"),
    "support_counts": ("id", "support_count", "article_ids"),
}
TRACK_CONFIGS = {"geminon": CONFIGS, "news": NEWS_CONFIGS}
TRACK_REQUIRED_COLUMNS = {"geminon": REQUIRED_COLUMNS, "news": NEWS_REQUIRED_COLUMNS}
ALL_PARTS: tuple[str, ...] = tuple(dict.fromkeys(p for configs in TRACK_CONFIGS.values() for p in configs))


def in_probe_half(text: str) -> bool:
    """Whether a ``corpus.validation`` document is in its probe half. The split has two halves, by a hash
    of each document's text (so any copy of the corpus splits alike): the selection half, on which
    generators may select checkpoints (:func:`continuousbench.training.data.train_and_validation`), and
    the probe half, which only memorisation's floor reads, so that the floor is a set no model was
    selected on."""
    return hashlib.sha256(b"probe-half:" + text.encode("utf-8")).digest()[0] % 2 == 1


def configs(track: str) -> dict[str, tuple[str, ...]]:
    """config -> splits of a track's releases."""
    if track not in TRACK_CONFIGS:
        raise UserError(f"unknown track {track!r}: choose one of {', '.join(TRACK_CONFIGS)}")
    return TRACK_CONFIGS[track]


CARD = "README.md"
MANIFEST = "release.json"
# What a release folder holds, as release.json's `format_version` says (absent: 1). 2: Geminon QA rows
# carry `options`, their ranked-choice options (continuousbench.scoring.mcq); readers derive the same
# options for a format-1 release. 3: every release carries ``names.json`` (release/registry.py: the keys a
# later release must not use again); Geminon QA rows carry their closed-book screening (`blind_answers`,
# `informed_answer`, `ill_posed`; geminon/closed_book.py).
FORMAT_VERSION = 3
HOME_ENV = "CONTINUOUSBENCH_HOME"
WORK = ".work"  # <root>/.work/: the builds' work folders and the lock of each release being built
HUB_REPO_ENV = "CONTINUOUSBENCH_HUB_REPO"


def default_root() -> Path:
    """``$CONTINUOUSBENCH_HOME``, else ``~/.cache/continuousbench``."""
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser() if home else Path.home() / ".cache" / "continuousbench"


def release_dir(release_id: str | ReleaseId, root: Path | str | None = None) -> Path:
    """The folder of a release under ``root`` (default :func:`default_root`)."""
    base = Path(root).expanduser() if root is not None else default_root()
    return base / str(ReleaseId.parse(release_id))


def data_file(config: str, split: str) -> str:
    """Path of one config/split's parquet file, relative to the release folder (POSIX, as in the card)."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def data_files(config: str, track: str = "geminon") -> dict[str, str]:
    """split -> relative data file of one config."""
    return {split: data_file(config, split) for split in configs(track)[config]}


def list_releases(root: Path | str) -> list[ReleaseId]:
    """Releases present under ``root``: folders named by a release id holding a manifest, sorted by id."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for child in root.iterdir():
        if child.is_dir() and not child.name.startswith(".") and (child / MANIFEST).is_file():
            try:
                found.append(ReleaseId.parse(child.name))
            except ValueError:  # an unrelated folder in the root
                continue
    return sorted(found, key=str)
