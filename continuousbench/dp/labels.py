"""Label-conditioned generation (the DP synthetic-text recipe's classification use): records carry their
label as a first line, and sampling starts each document with the line of the class it should belong to.

Training is unchanged: a formatted record (``Label: positive\\n<review>``) is one record of the corpus,
so the unit of privacy is the review *with* its label and the DP engine, its accounting and statement are
the same. The generator folder gets ``labels.json`` (the public label names and the column they came from),
which ``synthesize --per_class`` reads.

How many documents of each class to sample is the class balance, a fact about the private data. It is
one of (:func:`class_prior`):

* ``uniform``: the same number of each class, no private data used;
* a stated prior ``positive=0.3,negative=0.7`` (public: the user states it);
* a counts file (:func:`counts_record`): the training split's class counts, either declared public by
  the data owner (``"source": "public"``: published as they are) or released by the Gaussian mechanism
  (``"source": "dp"``: one record moves one count by 1, so the L2 sensitivity is 1), whose ``DpEvent``
  is composed with the generator's (:func:`compose`): the synthetic corpus states the composed epsilon.
"""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError

LABELS_FILE = "labels.json"
PREFIX = "Label: {name}\n"


def prefix(name: str) -> str:
    """The first line of a record of class ``name``, and the prompt that asks for one."""
    return PREFIX.format(name=name)


def format_records(texts: list[str], labels: list[int], names: tuple[str, ...]) -> list[str]:
    """Each text with its label's line in front (the records a label-conditioned generator trains on)."""
    return [prefix(names[y]) + t for t, y in zip(texts, labels, strict=True)]


def labelled_records(
    source: str,
    text_column: str,
    label_column: str,
    label_names: str | None,
    purpose: str = "",
    *,
    names_only: bool = False,
):
    """(train records, validation records, public names) of a labelled corpus, formatted with their
    labels; ``names_only``: just the names (read from the schema or ``label_names``)."""
    from continuousbench.training.data import corpus_fingerprint
    from continuousbench.training.labelled import load_labelled, public_names

    train, names = load_labelled(
        source, text_column, label_column, split="train", label_names=label_names, option="--corpus"
    )
    public = public_names(names)
    if names_only:
        return public
    val, _ = load_labelled(
        source, text_column, label_column, split="validation", label_names=label_names, option="--corpus"
    )
    if corpus_fingerprint(val) == corpus_fingerprint(train):
        raise UserError(f"--corpus {source} has no separate validation split; {purpose}")
    return (
        format_records(train["text"], train["label"], public),
        format_records(val["text"], val["label"], public),
        public,
    )


def write_spec(folder: Path, names: tuple[str, ...], column: str) -> Path:
    from continuousbench.files import write_json

    return write_json(folder / LABELS_FILE, {"names": list(names), "column": column, "prefix": PREFIX})


def read_spec(folder: str | Path) -> tuple[str, ...] | None:
    """The label names of a label-conditioned generator folder, or None (an unconditioned generator)."""
    file = Path(folder).expanduser() / LABELS_FILE
    if not file.is_file():
        return None
    spec = json.loads(file.read_text(encoding="utf-8"))
    if spec.get("prefix") != PREFIX:
        raise UserError(f"{file} was written with another label format; retrain the generator")
    return tuple(spec["names"])


@dataclass(frozen=True)
class Prior:
    """The class balance sampling follows: weights per name and where they came from."""

    weights: dict[str, float]
    source: str  # uniform, stated, public counts, dp counts
    counts: dict[str, Any] | None = None  # the counts file's record (DP: with its event)


def _read_counts(file: Path, names: tuple[str, ...]) -> dict[str, Any]:
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(
            f"--class_prior {file} is not a readable counts file ({type(err).__name__})"
        ) from None
    counts = record.get("counts") if isinstance(record, dict) else None
    if (
        not isinstance(counts, dict)
        or set(counts) != set(names)
        or record.get("source") not in ("public", "dp")
    ):
        raise UserError(
            f'--class_prior {file} must hold {{"source": "public" or "dp", "counts": {{name: count}}}} '
            f"with one count per label ({', '.join(names)}); see docs/saturation.md"
        )
    if record["source"] == "dp" and not {"event_json", "noise_multiplier"} <= set(record):
        raise UserError(f"--class_prior {file} says dp but carries no event_json and noise_multiplier")
    return record


def class_prior(spec: str, names: tuple[str, ...]) -> Prior:
    """``uniform``, ``name=weight,...`` or the path of a counts file, as a :class:`Prior`."""
    if spec == "uniform":
        return Prior({n: 1.0 for n in names}, "uniform")
    path = Path(spec).expanduser()
    if path.suffix == ".json" or path.exists():
        record = _read_counts(path, names)
        weights = {n: max(0.0, float(record["counts"][n])) for n in names}  # noisy counts may be negative
        if not sum(weights.values()) > 0:
            weights = {n: 1.0 for n in names}
        return Prior(weights, f"{record['source']} counts", record)
    try:
        pairs = dict((k.strip(), float(v)) for k, v in (item.split("=", 1) for item in spec.split(",")))
    except ValueError:
        pairs = {}
    if (
        set(pairs) != set(names)
        or any(not (w >= 0 and math.isfinite(w)) for w in pairs.values())
        or not any(pairs.values())
    ):
        raise UserError(
            f"--class_prior {spec!r} must be uniform, a counts file, or one weight per label "
            f"({', '.join(f'{n}=...' for n in names)}), non-negative and not all 0"
        )
    return Prior(pairs, "stated")


def allocate(total: int, weights: dict[str, float]) -> dict[str, int]:
    """``total`` documents split by ``weights`` (largest remainder, ties by name order): the counts add up
    to ``total`` exactly and are the same on every machine."""
    mass = sum(weights.values())
    exact = {n: total * w / mass for n, w in weights.items()}
    counts = {n: math.floor(x) for n, x in exact.items()}
    order = sorted(weights, key=lambda n: (-(exact[n] - counts[n]), list(weights).index(n)))
    for n in order[: total - sum(counts.values())]:
        counts[n] += 1
    return counts


def counts_record(
    labels: list[int],
    names: tuple[str, ...],
    *,
    noise_multiplier: float | None,
    insecure_seed: int | None = None,
) -> dict[str, Any]:
    """The training split's class counts: exact (``noise_multiplier`` None: the owner declares them
    public) or with Gaussian noise of std ``noise_multiplier`` per count, drawn from a generator seeded
    with 128 bits of OS entropy (a public ``insecure_seed`` only in tests: the record then says it has no
    guarantee)."""
    import numpy as np

    exact = np.bincount(np.asarray(labels, dtype=int), minlength=len(names)).astype(float)
    if noise_multiplier is None:
        return {"source": "public", "counts": {n: int(c) for n, c in zip(names, exact, strict=True)}}
    seed = secrets.randbits(128) if insecure_seed is None else insecure_seed
    # each noise value the mean of four draws scaled back to std sigma, as Opacus's secure mode does
    # (Holohan and Braghin 2021): a single floating-point Gaussian leaks through its low bits
    draws = np.random.default_rng(seed).normal(0.0, noise_multiplier, size=(4, len(names)))
    noisy = exact + draws.sum(axis=0) / 2
    from continuousbench.dp.accounting import dp_event_to_json

    return {
        "source": "dp",
        "counts": {n: round(float(c), 3) for n, c in zip(names, noisy, strict=True)},
        "noise_multiplier": noise_multiplier,
        "mechanism": "Gaussian, L2 sensitivity 1 (add-or-remove one record)",
        "event_json": dp_event_to_json(counts_event(noise_multiplier)),
        "secret": insecure_seed is None,
    }


def counts_event(noise_multiplier: float):
    import dp_accounting as dpa

    return dpa.GaussianDpEvent(float(noise_multiplier))


def generator_events(privacy: dict[str, Any]) -> list:
    """The generator's ``DpEvent`` for every size of the dataset holding the differing record that its
    accounting considered (truncated-Poisson PLD: n + 1 and n), rebuilt from its published guarantee; a
    sweep's runs self-composed. Checked against the published event."""
    import dp_accounting as dpa

    from continuousbench.dp.accounting import dp_event, dp_event_to_json, holder_sizes

    if privacy.get("truncation_analysis") == "union_bound":
        raise UserError(
            "class counts spent from the budget compose with PLD-accounted generators only; retrain with "
            "--truncation_analysis pld, or use --class_prior uniform or public counts"
        )
    n, runs = int(privacy["dataset_size"]), int(privacy.get("runs_accounted") or 1)
    steps, sigma, q = int(privacy["steps"]), privacy["noise_multiplier"], privacy["sampling_probability"]
    sampling, analysis = privacy["sampling"], privacy.get("truncation_analysis") or "pld"
    shape = {"physical_batch": privacy.get("physical_batch"), "sampling": sampling}
    events = [
        dp_event(sigma, q, steps, dataset_size=size, truncation_analysis=analysis, **shape)
        for size in holder_sizes(n, sampling, privacy.get("truncation_analysis"))
    ]
    if not any(dp_event_to_json(e) == privacy["event_json"] for e in events):
        raise UserError("the generator's privacy.json event does not match its own figures; retrain it")
    return [dpa.SelfComposedDpEvent(e, runs) if runs > 1 else e for e in events]


def compose(privacy: dict[str, Any], counts: dict[str, Any]) -> dict[str, Any]:
    """The generator's guarantee with the DP class counts composed in (PLD, at the generator's delta):
    epsilon is the worst over the holder sizes, ``event_json`` that composition's event."""
    import dp_accounting as dpa

    from continuousbench.dp.accounting import dp_event_to_json, event_epsilon

    noise = counts_event(counts["noise_multiplier"])
    composed = [dpa.ComposedDpEvent([e, noise]) for e in generator_events(privacy)]
    worst = max(((event_epsilon(e, privacy["delta"]), e) for e in composed), key=lambda pair: pair[0])
    return {
        **privacy,
        "epsilon": worst[0],
        "event_json": dp_event_to_json(worst[1]),
        "private": bool(privacy["private"]) and bool(counts.get("secret", True)),
    }


def calibrate_counts(privacy: dict[str, Any], total_epsilon: float) -> float:
    """The count noise whose composition with the generator meets ``total_epsilon`` (at its delta): the
    class balance spends what the generator left of the budget. One line when it left nothing."""
    import dp_accounting as dpa

    from continuousbench.dp.accounting import calibrate, event_epsilon

    events = generator_events(privacy)
    used = max(event_epsilon(e, privacy["delta"]) for e in events)
    if used >= total_epsilon:
        raise UserError(
            f"the generator alone spends epsilon {used:.4g}, nothing is left of {total_epsilon:g} for the "
            "class counts; give the generator a smaller share or use --class_balance uniform/public"
        )
    return max(
        calibrate(lambda s, e=e: dpa.ComposedDpEvent([e, counts_event(s)]), total_epsilon, privacy["delta"])
        for e in events
    )
