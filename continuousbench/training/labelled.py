"""Load a labelled text dataset (a classification task's split) as ``text`` + integer ``label`` columns.

The source is anything :mod:`continuousbench.training.data` loads (a Hub id, a folder, a ``.jsonl`` /
``.csv`` / ``.parquet`` file). The label column may hold a ``ClassLabel``, integers or strings; the label
names come from, in order: ``label_names`` (``negative,positive`` by index, or ``0=negative,1=positive`` /
``pos=positive`` by value: the label-name map), the ``ClassLabel`` feature, or the sorted distinct values.
A generator publishes its label names, so it asks for names that are public (given, or a ``ClassLabel``),
never ones read off the private rows (:func:`public_names`).

Bad input is one line: a missing column, an empty split, a value outside the label-name map, or a split
with a single class (nothing to classify).
"""

from __future__ import annotations

from dataclasses import dataclass

from continuousbench.errors import UserError


@dataclass(frozen=True)
class LabelNames:
    """The names of the classes, in label-id order, and how raw column values map to them."""

    names: tuple[str, ...]
    by_value: dict[str, int]  # str(raw value) -> label id
    origin: str  # "given", "ClassLabel" or "data"

    def id_of(self, value, where: str) -> int:
        key = str(value)
        if key not in self.by_value:
            raise UserError(
                f"{where}: label {value!r} is not one of {', '.join(self.by_value)}; fix the data or pass "
                "--label_map mapping every value (e.g. 0=negative,1=positive)"
            )
        return self.by_value[key]


def parse_label_names(spec: str | None) -> list[tuple[str | None, str]] | None:
    """``"a,b"`` -> [(None, "a"), (None, "b")] (by index); ``"0=a,1=b"`` -> [("0", "a"), ("1", "b")]."""
    if spec is None:
        return None
    items = [item.strip() for item in spec.split(",")]
    if not items or any(not item for item in items):
        raise UserError(f"--label_map {spec!r} has an empty item; pass e.g. negative,positive or 0=neg,1=pos")
    pairs = [tuple(i.strip() for i in item.split("=", 1)) if "=" in item else (None, item) for item in items]
    if len({p[0] is None for p in pairs}) > 1:
        raise UserError(f"--label_map {spec!r} mixes names and value=name pairs; use one form")
    names = [name for _, name in pairs]
    values = [v for v, _ in pairs if v is not None]
    if len(set(names)) < len(names) or len(set(values)) < len(values):
        raise UserError(f"--label_map {spec!r} names a class or a value twice; give each once")
    return pairs  # type: ignore[return-value]


def _names(feature, values: list, spec: str | None) -> LabelNames:
    from datasets import ClassLabel

    pairs = parse_label_names(spec)
    if pairs is not None and pairs[0][0] is not None:  # value=name map
        names = tuple(dict.fromkeys(name for _, name in pairs))
        return LabelNames(names, {v: names.index(n) for v, n in pairs}, "given")
    if isinstance(feature, ClassLabel):
        names = tuple(n for _, n in pairs) if pairs is not None else tuple(feature.names)
        if len(names) != feature.num_classes:
            raise UserError(
                f"--label_map gives {len(names)} names for a label column of {feature.num_classes} classes "
                f"({', '.join(feature.names)}); give one name per class"
            )
        return LabelNames(names, {str(i): i for i in range(len(names))}, "given" if pairs else "ClassLabel")
    if pairs is not None:  # names by index: integer values are indices, strings are the names themselves
        names = tuple(n for _, n in pairs)
        numeric = all(isinstance(v, int) for v in values)
        by_value = {str(i): i for i in range(len(names))} if numeric else {n: i for i, n in enumerate(names)}
        return LabelNames(names, by_value, "given")
    distinct = sorted(set(values), key=lambda v: (isinstance(v, str), v))
    names = tuple(str(v) for v in distinct)
    return LabelNames(names, {str(v): i for i, v in enumerate(distinct)}, "data")


def load_labelled(
    source: str,
    text_column: str,
    label_column: str,
    *,
    split: str,
    label_names: str | None = None,
    option: str = "--dataset",
):
    """(dataset with ``text`` and ``label`` (int) columns, :class:`LabelNames`) of one split of ``source``.

    Rows with empty text are dropped (as for a corpus); every label must map to a name."""
    from datasets import Dataset

    from continuousbench.training.data import _load_raw

    where = f"{option} {source} (split {split})"
    try:
        data = _load_raw(str(source), split, option)
    except ValueError as err:
        if "corresponds to no data" in str(err):
            raise UserError(f"{where} is empty; pass a dataset whose {split} split has rows") from None
        if "Unknown split" in str(err):
            raise UserError(f"{where} does not exist; pass --splits naming the dataset's splits") from None
        raise
    for column, flag in ((text_column, "--text_column"), (label_column, "--label_column")):
        if column not in data.column_names:
            raise UserError(
                f"{where} has no column {column!r} (columns: {', '.join(data.column_names)}); pass {flag} "
                "naming it"
            )
    if len(data) == 0:
        raise UserError(f"{where} is empty; pass a dataset whose {split} split has rows")
    texts, values = data[text_column], data[label_column]
    names = _names(data.features[label_column], values, label_names)
    kept = [(t, names.id_of(v, where)) for t, v in zip(texts, values, strict=True) if t and t.strip()]
    if not kept:
        raise UserError(f"{where} has {len(data)} rows but every {text_column!r} is empty")
    rows = Dataset.from_dict({"text": [t for t, _ in kept], "label": [y for _, y in kept]})
    return rows, names


def check_classes(labels: list[int], names: LabelNames, where: str) -> None:
    """One line when a split holds a single class: a classifier has nothing to tell apart."""
    present = sorted(set(labels))
    if len(present) < 2:
        only = names.names[present[0]] if present else "none"
        raise UserError(
            f"{where} holds a single class ({only}); a classification task needs two or more: check "
            "--label_column and the split"
        )


def public_names(names: LabelNames, option: str = "--label_map") -> tuple[str, ...]:
    """The label names a DP generator may publish: given by the user or from the dataset's ``ClassLabel``
    schema, never the distinct values of the private rows (a rare value would reveal its record)."""
    if names.origin == "data":
        raise UserError(
            f"the label names would be read off the private records; pass {option} listing the classes "
            "(e.g. negative,positive or 0=negative,1=positive): they are published with the generator"
        )
    return names.names
