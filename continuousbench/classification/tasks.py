"""Classification tasks: the paper's three presets (App. F) and any labelled ``datasets`` source.

A task is three splits of ``text`` + integer ``label`` rows (:mod:`continuousbench.training.labelled`),
the class names, and what the prompts say about it. Where a source has no validation split, the last
10% of its training split becomes one (the DP synthetic-text recipe's split, App. H); a single file
(no splits at all) is cut 80/10/10 after a seeded shuffle. ``--*_limit`` options take seeded samples.
One line for a missing column, an empty split or a split with a single class.

Presets (users on the Hub; the committed ``fixture`` keeps CI offline):

| name | source | classes |
| --- | --- | --- |
| ``imdb`` | ``stanfordnlp/imdb`` (train, test) | negative, positive |
| ``yelp_polarity`` | ``fancyzhx/yelp_polarity`` (train, test) | negative, positive |
| ``openreview`` | a folder of the ICLR 2023 review CSVs (Xie et al. 2024; three splits) | 1, 3, 5, 6, 8 |
| ``fixture`` | ``classification/fixture`` (invented product reviews) | negative, neutral, positive |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from continuousbench.classification.prompts import TaskText
from continuousbench.errors import UserError

FIXTURE = Path(str(resources.files("continuousbench.classification") / "fixture"))
OPENREVIEW_SCORES = ("1", "3", "5", "6", "8")


@dataclass(frozen=True)
class Preset:
    source: str | None  # None: the user's local copy (--dataset)
    text_column: str
    label_column: str
    label_map: str | None
    noun: str
    question: str
    descriptions: tuple[str, ...] | None = None
    splits: tuple[str, str, str] = ("train", "validation", "test")


PRESETS: dict[str, Preset] = {
    "imdb": Preset(
        "stanfordnlp/imdb",
        "text",
        "label",
        "0=negative,1=positive",
        "movie review",
        "the sentiment it expresses",
    ),
    "yelp_polarity": Preset(
        "fancyzhx/yelp_polarity",
        "text",
        "label",
        "0=negative,1=positive",
        "business review",
        "the sentiment it expresses",
    ),
    "openreview": Preset(
        None,
        "text",
        "label2",
        ",".join(f"{s}={s}" for s in OPENREVIEW_SCORES),
        "ICLR 2023 paper review",
        "the recommendation score the reviewer gave",
        (
            "strong reject",
            "reject, not good enough",
            "marginally below the acceptance threshold",
            "marginally above the acceptance threshold",
            "accept, good paper",
        ),
        ("iclr23_reviews_train", "iclr23_reviews_val", "iclr23_reviews_test"),
    ),
    "fixture": Preset(
        str(FIXTURE),
        "text",
        "label",
        "negative,neutral,positive",
        "product review",
        "the sentiment it expresses",
    ),
}


@dataclass
class Task:
    """A classification task's three splits and its prompt text."""

    name: str
    source: str
    text: TaskText
    train: object  # datasets.Dataset: text, label
    validation: object
    test: object
    notes: list[str] = field(default_factory=list)  # how the splits were made

    @property
    def names(self) -> tuple[str, ...]:
        return self.text.names

    def describe(self) -> dict:
        """What ``saturation.json`` and results records say about the data."""
        from continuousbench.training.data import corpus_fingerprint

        return {
            "name": self.name,
            "source": self.source,
            "classes": list(self.names),
            "sizes": {s: len(getattr(self, s)) for s in ("train", "validation", "test")},
            "test_sha256": corpus_fingerprint(self.test),
            "notes": self.notes,
        }


GENERIC = Preset(None, "text", "label", None, "text", "its class")


def load_task(
    dataset: str,
    *,
    preset: str | None = None,
    text_column: str | None = None,
    label_column: str | None = None,
    label_map: str | None = None,
    splits: tuple[str, str, str] | None = None,
    limits: tuple[int | None, int | None, int | None] = (None, None, None),
    seed: int = 0,
) -> Task:
    """The task ``dataset`` names: a preset's name, or a source (Hub id, folder, file) read with
    ``preset``'s settings (its local copy) or with the options given; options override a preset's."""
    from continuousbench.training.data import corpus_fingerprint
    from continuousbench.training.labelled import check_classes, load_labelled

    if preset is not None and preset not in PRESETS:
        raise UserError(f"--preset {preset} is not one of {', '.join(PRESETS)}")
    chosen = PRESETS.get(preset or dataset, GENERIC)
    source = chosen.source if preset is None and dataset in PRESETS else dataset
    if source is None:
        raise UserError(
            f"--dataset {dataset} is not on the Hub: pass the folder of its CSV files as --dataset with "
            f"--preset {dataset} (docs/saturation.md)"
        )
    text_column = text_column or chosen.text_column
    label_column = label_column or chosen.label_column
    options = {"label_names": label_map or chosen.label_map, "option": "--dataset"}
    train_split, val_split, test_split = splits or chosen.splits

    def split(which: str):
        return load_labelled(str(source), text_column, label_column, split=which, **options)

    train, names = split(train_split)
    notes: list[str] = []
    test = _split_or_none(split, test_split)
    if test is None or corpus_fingerprint(test[0]) == corpus_fingerprint(train):  # one table: cut it
        whole = train.shuffle(seed=seed)
        a, b = int(0.8 * len(whole)), int(0.9 * len(whole))
        train, validation, test = (whole.select(range(i, j)) for i, j in ((0, a), (a, b), (b, len(whole))))
        notes.append(f"{source} has no splits: cut 80/10/10 after shuffling with seed {seed}")
    else:
        test = test[0]
        validation = _split_or_none(split, val_split)
        if validation is None or corpus_fingerprint(validation[0]) == corpus_fingerprint(train):
            cut = int(0.9 * len(train))
            train, validation = train.select(range(cut)), train.select(range(cut, len(train)))
            notes.append(f"validation: the last 10% of {train_split} (no {val_split} split)")
        else:
            validation = validation[0]
    parts = {"train": train, "validation": validation, "test": test}
    for (which, data), limit in zip(list(parts.items()), limits, strict=True):
        if len(data) == 0:
            raise UserError(f"--dataset {source}: the {which} split is empty; pass a dataset with rows there")
        if limit is not None and limit < len(data):
            parts[which] = data.shuffle(seed=seed).select(range(limit))
            notes.append(f"{which}: a seeded sample of {limit} of {len(data)} rows")
    # a small validation or test sample may hold one class; a task whose training split does has none
    check_classes(list(parts["train"]["label"]), names, f"--dataset {source} (train split)")
    text = TaskText(chosen.noun, chosen.question, names.names, chosen.descriptions)
    name = preset or dataset
    return Task(name, str(source), text, parts["train"], parts["validation"], parts["test"], notes)


def _split_or_none(split, which: str):
    """``split(which)``, or None when the source has no such split (a missing column or an unknown label
    is still an error)."""
    try:
        return split(which)
    except (KeyError, ValueError) as err:
        if any(reason in str(err) for reason in ("has no column", "is not one of", "is empty")):
            raise
        return None
