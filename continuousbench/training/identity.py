"""A model (or data) folder named by its contents rather than its path: the identity a recipe's digest
gives a local base model or replay corpus, and the one the answer cache gives the generator a server
samples from (a retrained adapter served under the same name is another generator).

A model is its config, weights and tokenizer files (:data:`MODEL_FILES`; a card, notes or a corpus
beside them are not the model); a data folder is every file but hidden ones and its card; a file is its
bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from continuousbench.errors import UserError
from continuousbench.files import sha256_file

MODEL_FILES = (
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "*.bin",
    "*.index.json",
    "tokenizer*",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.*",
    "merges.txt",
    "adapter_config.json",
)


def content_digest(path: str | Path, *, model: bool) -> str:
    """sha256 of a file, or over (relative name, sha256) of a folder's model files (``model``) or data
    files; the same bytes give the same digest wherever they are."""
    root = Path(path).expanduser().resolve()
    if root.is_file():
        files = [root]
    elif model:
        files = sorted({f for pattern in MODEL_FILES for f in root.glob(pattern) if f.is_file()})
    else:
        files = sorted(f for f in root.rglob("*") if f.is_file() and not _skipped(f.relative_to(root)))
    if not files:
        kind = "model files (config, weights, tokenizer)" if model else "files"
        raise UserError(f"{path} holds no {kind} to name it by: check the path")
    stamps = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    return _digest(str(root), stamps)


def _skipped(relative: Path) -> bool:
    return relative.name == "README.md" or any(part.startswith(".") for part in relative.parts)


@cache  # keyed on every file's mtime and size: a run names its model more than once, read once
def _digest(root: str, stamps: tuple[tuple[str, int, int], ...]) -> str:
    if len(stamps) == 1 and stamps[0][0] == root:
        return sha256_file(root)
    listing = [(os.path.relpath(name, root), sha256_file(name)) for name, *_ in stamps]
    return hashlib.sha256(json.dumps(listing).encode("utf-8")).hexdigest()
