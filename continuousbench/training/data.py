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
is exactly what support counts measure. Bad input raises one ``ValueError`` line naming the option
(``--corpus`` or ``--replay_corpus``) and the file, and saying how to fix it; text files are checked
to be UTF-8 first (datasets would otherwise fail later, or store undecodable strings, without a line).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

FILE_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv", ".txt": "text"}
TEXT_SUFFIXES = (".txt", ".json", ".jsonl", ".csv", ".tsv")  # data files datasets decodes as UTF-8 text
CHARS_PER_TOKEN = 4  # a rough upper bound for English text: turns a token budget into characters


def check_utf8(path: Path, option: str = "--corpus") -> None:
    """Fail in one line, naming the file and line, when ``path`` is not UTF-8 text.

    The whole file is decoded in large chunks (fast); only when that fails is it read again line by
    line to say where.
    """
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 24):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        return
    except UnicodeDecodeError:
        pass
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as err:
                raise UserError(
                    f"{option} file {path} is not UTF-8 text: line {number}, byte {err.start + 1} "
                    f"({err.reason}); convert it to UTF-8, e.g. iconv -f latin1 -t utf-8"
                ) from None
    raise UserError(f"{option} file {path} ends in the middle of a UTF-8 character; convert it to UTF-8")


def _data_files(folder: Path) -> list[Path]:
    """The files datasets would read in ``folder``: hidden folders (caches) are skipped, as datasets does."""
    hidden = lambda p: any(x.startswith(".") for x in p.relative_to(folder).parts)  # noqa: E731
    return [p for p in sorted(folder.rglob("*")) if p.is_file() and not hidden(p)]


def _check_files(path: Path, option: str) -> None:
    """The data files datasets would read: text ones are UTF-8, parquet ones readable and not empty.

    datasets meets these deep inside a builder (a traceback about batch sizes or generation errors);
    here they are one line naming the file.
    """
    for file in [path] if path.is_file() else _data_files(path):
        if file.suffix.lower() in TEXT_SUFFIXES:
            check_utf8(file, option)
        elif file.suffix.lower() == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            try:
                rows = pq.read_metadata(file).num_rows
            except (pa.ArrowException, OSError) as err:
                raise UserError(
                    f"{option} file {file} is not a readable parquet file ({str(err).splitlines()[0]}); "
                    "it may be cut short: regenerate or replace it"
                ) from None
            if rows == 0 and file == path:
                raise UserError(f"{option} {path} is empty (no rows); pass a corpus with documents")
            if rows == 0:
                raise UserError(f"{option} file {file} holds no rows; remove it or regenerate it")


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


def _load_raw(source: str, split: str, option: str):
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
                raise UserError(
                    f"{option} {source} has no split {split!r} (splits: {', '.join(data)}); "
                    "pass --corpus_split naming one"
                )
            data = data[split]
        assert isinstance(data, Dataset)
        return data
    if path.is_dir():
        # datasets 5 keys a folder's cache on its name and card (its data-file patterns), not on its files:
        # two corpora in folders of the same name (`synthetic/syn` of two runs, one with a label column)
        # would share one cache entry, and a forced rebuild still casts to the stale entry's features. So
        # the folder gets a cache of its own, keyed on its files' paths, sizes and times.
        _check_files(path, option)
        return _read(
            source,
            option,
            lambda: load_dataset(
                str(path), split=split, cache_dir=_folder_cache(path), verification_mode="no_checks"
            ),
        )
    if path.is_file():
        builder = FILE_BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise UserError(
                f"{option} file {source} has an unknown extension: use {', '.join(FILE_BUILDERS)} or a folder"
            )
        _check_files(path, option)
        if builder == "text":  # paragraphs keep their trailing newline; the document does not include it
            if not path.read_bytes().strip():  # the text builder fails on an empty file with a traceback
                raise UserError(f"{option} {source} is empty: it holds no text; pass a corpus with documents")
            data = load_dataset("text", data_files=str(path), split="train", sample_by="paragraph")
            return data.map(lambda t: {"text": t.strip("\n")}, input_columns="text")
        return _read(source, option, lambda: load_dataset(builder, data_files=str(path), split="train"))
    if path.suffix.lower() in FILE_BUILDERS or source.startswith((".", "/", "~")):
        raise FileNotFoundError(
            f"{option} {source} does not exist: pass an existing file, folder or release id"
        )
    return _load_hub(source, split, option)


def _folder_cache(path: Path) -> str:
    """A datasets cache folder for the data folder ``path``, named by what its files are now."""
    import hashlib

    from datasets import config

    stats = [(str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in _data_files(path.resolve())]
    key = hashlib.sha256(repr(stats).encode()).hexdigest()[:16]
    return str(Path(config.HF_DATASETS_CACHE) / "continuousbench-folders" / key)


def _read(source: str, option: str, load):
    """``load()`` of local data files; a damaged, cut or empty file is one line naming it, not the
    traceback of the datasets builder that met it."""
    import pyarrow as pa
    from datasets.exceptions import DatasetGenerationError

    try:
        return load()
    except StopIteration:  # the json builder reads a first batch to learn the columns
        raise UserError(f"{option} {source} holds no records; pass a corpus with documents") from None
    except (DatasetGenerationError, pa.ArrowException) as err:
        cause = err.__cause__ if isinstance(err, DatasetGenerationError) and err.__cause__ else err
        detail = " ".join(str(cause).split())[:200]
        raise UserError(
            f"{option} {source} cannot be read ({detail}); is it complete? regenerate or replace it"
        ) from None


def _load_hub(source: str, split: str, option: str):
    """A Hub dataset id; offline, an id that is not in the local cache is one clear line."""
    import os

    from datasets import load_dataset

    try:
        return load_dataset(source, split=split)
    except (ConnectionError, FileNotFoundError) as err:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or os.environ.get(
            "HF_DATASETS_OFFLINE", ""
        ) not in ("", "0")
        if offline:
            raise FileNotFoundError(
                f"{option} {source} is neither a local file or folder nor a Hub dataset cached on this "
                "machine, and the Hub is off (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE); pass a local path, "
                "or unset those variables to download it"
            ) from None
        raise FileNotFoundError(
            f"{option} {source} is neither a local file or folder nor a Hub dataset ({type(err).__name__}); "
            "check the path or id"
        ) from None


def load_corpus(source: str, text_column: str = "text", split: str = "train", option: str = "--corpus"):
    """The corpus at ``source`` as a ``Dataset`` with a single non-empty string column ``text``.

    ``option`` is the command-line option the source came from, named in error messages.
    """
    from datasets import Value

    empty = f"{option} {source} is empty (split {split!r} has no rows); pass a corpus with documents"
    try:
        data = _load_raw(str(source), split, option)
    except ValueError as err:
        if "corresponds to no data" in str(err):  # datasets' wording for a split without rows
            raise UserError(empty) from None
        raise
    if text_column not in data.column_names:
        raise UserError(
            f"{option} {source} has no column {text_column!r} (columns: {', '.join(data.column_names)}); "
            "pass --text_column naming the text column"
        )
    feature = data.features[text_column]
    if not (isinstance(feature, Value) and feature.dtype in ("string", "large_string")):
        raise UserError(
            f"column {text_column!r} of {option} {source} holds {feature}, not strings; "
            "pass --text_column naming a text column"
        )
    data = data.select_columns([text_column])
    if text_column != "text":
        data = data.rename_column(text_column, "text")
    n = len(data)
    if n == 0:
        raise UserError(empty)
    data = data.filter(lambda t: t is not None and t.strip() != "", input_columns="text")
    if len(data) == 0:
        raise UserError(
            f"{option} {source} has {n} rows but every {text_column!r} value is empty; "
            "pass a corpus with documents"
        )
    if len(data) < n:
        logger.warning("%s %s: dropped %d empty documents of %d", option, source, n - len(data), n)
    if len(data) > 1 and len(set(data["text"])) == 1:
        raise UserError(
            f"{option} {source} has {len(data)} documents but they are all the same text; "
            "pass a corpus with distinct documents"
        )
    return data


def cap_documents(data, max_chars: int) -> tuple[object, dict]:
    """Cut every document after ``max_chars`` characters; return (data, what was cut).

    Tokenizing one document costs memory in proportion to its length (a 50 MB single-line document
    needs several GiB), and wrapped packing trains on a fixed number of blocks however long the
    documents are; a bounded cut keeps memory bounded and is recorded rather than silent.
    """
    lengths = [len(t) for t in data["text"]]
    long = [i for i, n in enumerate(lengths) if n > max_chars]
    record = {
        "max_document_characters": max_chars,
        "documents_cut": len(long),
        "characters_dropped": sum(lengths[i] - max_chars for i in long),
    }
    if not long:
        return data, record
    logger.warning(
        "%d documents are longer than %d characters (the longest has %d): each is cut there, dropping "
        "%d characters (--max_document_blocks sets the limit)",
        len(long),
        max_chars,
        max(lengths),
        record["characters_dropped"],
    )
    return data.map(lambda t: {"text": t[:max_chars]}, input_columns="text"), record


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
        raise UserError(f"--replay_fraction must be in (0, 1), got {fraction}")
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
        raise UserError("nothing to draw from: the collection is empty")
    while True:
        yield from (int(i) for i in rng.permutation(n))


_PART_BOUNDARY = b"\xff" * 8  # no text's length prefix: between the parts of a multi-part fingerprint


def corpus_fingerprint(*parts) -> str:
    """The one corpus fingerprint: sha256 over the texts in order, each length-prefixed so that document
    boundaries count. A part is a dataset or mapping with a ``text`` column, or a list of texts; several
    parts (a generator's train and validation records) are hashed in order with a boundary between them,
    so moving a record from one to the other is a change."""
    digest = hashlib.sha256()
    for i, part in enumerate(parts):
        if i:
            digest.update(_PART_BOUNDARY)
        for text in part if isinstance(part, (list, tuple)) else part["text"]:
            raw = text.encode("utf-8")
            digest.update(len(raw).to_bytes(8, "little"))
            digest.update(raw)
    return digest.hexdigest()


def train_and_validation(source: str, text_column: str = "text", *, purpose: str, option: str = "--corpus"):
    """The ``train`` and ``validation`` splits of ``source``; one line if there is no separate validation
    split (a file or a single ``save_to_disk`` dataset has no splits: :func:`load_corpus` returns the same
    rows for any split name, and selecting on training records would be a silent leak). ``purpose`` says
    what the caller needs the validation split for. The validation records returned are its selection
    half (:func:`continuousbench.release.layout.in_probe_half`): the other half is the memorisation
    probe's floor, which nothing may select on."""
    from continuousbench.release.layout import in_probe_half

    train = load_corpus(source, text_column, split="train", option=option)
    try:
        validation = load_corpus(source, text_column, split="validation", option=option)
    except (ValueError, KeyError) as err:
        raise UserError(f"{option} {source} has no usable validation split ({err}); {purpose}") from None
    if corpus_fingerprint(validation) == corpus_fingerprint(train):
        raise UserError(
            f"{option} {source} has no separate validation split (the same records came back for 'train' "
            f"and 'validation'); {purpose}: pass a release or a folder with train and validation splits"
        )
    selection = validation.filter(lambda text: not in_probe_half(text), input_columns="text")
    if len(selection) == 0:
        raise UserError(
            f"{option} {source}: the selection half of its validation split is empty ({len(validation)} "
            f"records, all in the memorisation probe's half); {purpose}: pass a larger validation split"
        )
    return train, selection
