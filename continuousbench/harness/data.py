"""Load a candidate corpus, from wherever it lives, as a ``datasets.Dataset`` with one ``text`` column.

Accepted sources, tried in this order:

* a release folder (has ``release.json``) or a release id: its ``corpus`` config, checksums verified;
* a ``Dataset.save_to_disk`` folder (a ``DatasetDict`` one gives ``split``);
* any other folder: ``load_dataset(folder, split=split)`` (data files, or a card with ``configs:``);
* a file: ``.parquet``, ``.jsonl`` / ``.json`` (one record per line / a list of records), or ``.txt``, where
  a document is a paragraph: documents are separated by one or more blank lines and may themselves span
  several lines (Geminon infobox documents put one ``Label: value`` per line);
* otherwise a Hugging Face Hub dataset id.

Empty rows (``""``, whitespace, ``None``) are dropped and counted; duplicates are kept, since repetition
is exactly what support counts measure. Bad input raises one ``ValueError`` line saying how to fix it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

logger = logging.getLogger(__name__)

EMPTY = "corpus {source} is empty (split {split!r} has no rows); pass a corpus with documents"
FILE_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".txt": "text"}


def _is_release(source: str) -> bool:
    from continuousbench.release.ids import ReleaseId
    from continuousbench.release.layout import MANIFEST

    path = Path(source).expanduser()
    if path.is_dir():
        return (path / MANIFEST).is_file()
    try:
        ReleaseId.parse(source)
    except ValueError:
        return False
    return True


def _load_raw(source: str, split: str):
    """The dataset behind ``source`` (any columns)."""
    from datasets import Dataset, DatasetDict, load_dataset, load_from_disk

    path = Path(source).expanduser()
    if _is_release(source):
        from continuousbench.release.load import load_release

        return load_release(source, "corpus", split=split)
    if path.is_dir() and ((path / "dataset_info.json").is_file() or (path / "dataset_dict.json").is_file()):
        data = load_from_disk(str(path))
        if isinstance(data, DatasetDict):
            if split not in data:
                raise ValueError(
                    f"corpus {source} has no split {split!r} (splits: {', '.join(data)}); pass --split"
                )
            data = data[split]
        assert isinstance(data, Dataset)
        return data
    if path.is_dir():
        # datasets 5 keys a folder's cache on its name and card, not on its files: two synthetic corpora
        # in folders of the same name (`synthetic/syn` of two runs) would share one stale cache entry.
        return load_dataset(
            str(path), split=split, download_mode="force_redownload", verification_mode="no_checks"
        )
    if path.is_file():
        builder = FILE_BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise ValueError(
                f"corpus file {source} has an unknown extension: use {', '.join(FILE_BUILDERS)} or a folder"
            )
        if builder == "text":  # paragraphs keep their trailing newline; the document does not include it
            data = load_dataset("text", data_files=str(path), split="train", sample_by="paragraph")
            return data.map(lambda t: {"text": t.strip("\n")}, input_columns="text")
        return load_dataset(builder, data_files=str(path), split="train")
    if path.suffix.lower() in FILE_BUILDERS or source.startswith((".", "/", "~")):
        raise FileNotFoundError(
            f"corpus {source} does not exist: pass an existing file, folder or release id"
        )
    return load_dataset(source, split=split)  # a Hub dataset id


def load_corpus(source: str, text_column: str = "text", split: str = "train"):
    """The corpus at ``source`` as a ``Dataset`` with a single non-empty string column ``text``."""
    from datasets import Value

    try:
        data = _load_raw(str(source), split)
    except ValueError as err:
        if "corresponds to no data" in str(err):  # datasets' wording for a split without rows
            raise ValueError(EMPTY.format(source=source, split=split)) from None
        raise
    if text_column not in data.column_names:
        raise ValueError(
            f"corpus {source} has no column {text_column!r} (columns: {', '.join(data.column_names)}); "
            "pass --text-column"
        )
    feature = data.features[text_column]
    if not (isinstance(feature, Value) and feature.dtype in ("string", "large_string")):
        raise ValueError(
            f"column {text_column!r} of corpus {source} holds {feature}, not strings; "
            "pass --text-column naming a text column"
        )
    data = data.select_columns([text_column])
    if text_column != "text":
        data = data.rename_column(text_column, "text")
    n = len(data)
    if n == 0:
        raise ValueError(
            f"corpus {source} is empty (split {split!r} has no rows); pass a corpus with documents"
        )
    data = data.filter(lambda t: t is not None and t.strip() != "", input_columns="text")
    if len(data) == 0:
        raise ValueError(f"corpus {source} has {n} rows but every {text_column!r} value is empty")
    if len(data) < n:
        logger.warning("corpus %s: dropped %d empty documents of %d", source, n - len(data), n)
    if len(data) > 1 and len(set(data["text"])) == 1:
        raise ValueError(
            f"corpus {source} has {len(data)} documents but they are all the same text; "
            "pass a corpus with distinct documents"
        )
    return data


def mix_replay(corpus, replay, fraction: float, seed: int = 0):
    """``corpus`` plus documents of ``replay`` making up ``fraction`` of the characters, seeded.

    A fixed replay mixture (e.g. the base model's own pretraining text) keeps a small base model's
    answer format from drifting during continued pretraining. It is part of the evaluator recipe, so it
    must be the same for every candidate corpus; it is off unless a recipe asks for it. The share is
    one of text (characters, a proxy for tokens), not of documents: replay documents may be much longer
    than the corpus's. They are drawn without replacement, cycling through fresh permutations when more
    are needed, until their characters reach ``fraction`` of the mixture's.
    """
    import numpy as np
    from datasets import concatenate_datasets

    if not 0 < fraction < 1:
        raise ValueError(f"--replay_fraction must be in (0, 1), got {fraction}")
    target = fraction / (1 - fraction) * sum(map(len, corpus["text"]))
    lengths = [len(t) for t in replay["text"]]
    rows: list[int] = []
    total = 0
    for i in shuffled_cycle(len(replay), np.random.default_rng(seed)):
        if total >= target:
            break
        rows.append(i)
        total += lengths[i]
    return concatenate_datasets([corpus, replay.select(rows)])


def shuffled_cycle(n: int, rng) -> Iterator[int]:
    """``0 .. n-1`` in a fresh permutation from ``rng``, over and over: drawing without replacement, with
    a repeat only once every index has been drawn. Permutations are drawn lazily, one when needed."""
    if n < 1:
        raise ValueError("nothing to draw from: the collection is empty")
    while True:
        yield from (int(i) for i in rng.permutation(n))


def corpus_fingerprint(data) -> str:
    """sha256 over the texts in order, each length-prefixed so that document boundaries count."""
    digest = hashlib.sha256()
    for text in data["text"]:
        raw = text.encode("utf-8")
        digest.update(len(raw).to_bytes(8, "little"))
        digest.update(raw)
    return digest.hexdigest()


def train_and_validation(source: str, text_column: str = "text", *, purpose: str):
    """The ``train`` and ``validation`` splits of ``source``; one line if there is no separate validation
    split (a file or a single ``save_to_disk`` dataset has no splits: :func:`load_corpus` returns the same
    rows for any split name, and selecting on training records would be a silent leak). ``purpose`` says
    what the caller needs the validation split for."""
    train = load_corpus(source, text_column, split="train")
    try:
        validation = load_corpus(source, text_column, split="validation")
    except (ValueError, KeyError) as err:
        raise ValueError(f"corpus {source} has no usable validation split ({err}); {purpose}") from None
    if corpus_fingerprint(validation) == corpus_fingerprint(train):
        raise ValueError(
            f"corpus {source} has no separate validation split (the same records came back for 'train' and "
            f"'validation'); {purpose}: pass a release or a folder with train and validation splits"
        )
    return train, validation
