"""FictionalQA's held-out splits of a Geminon corpus (``build geminon --heldout {entity,document,style}``).

A held-out build renders the very documents of the default build (same seed, same world) and moves some
public ones out of ``corpus.train`` into ``corpus.validation``, which then holds exactly the held-out
documents (no recipe trains on it; the memorisation probe reads it as its floor):

- ``entity``: every document about a held-out entity (a quarter of the public entities, drawn on each
  side of the QA validation/test split so that the scored test split always has both groups). Their
  questions stay in the QA parts with support 0: QA on them is what the format alone gives.
- ``document``: for each public entity and style, one document about it (not already held out).
- ``style``: every public document of one style. Sensitive articles always stay in ``train``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from continuousbench.geminon import qa as Q
from continuousbench.geminon.schema import Geminon

ENTITY_FRACTION = 0.25  # of the public entities on each side of the QA split (at least one test entity)


def _subjects(doc: dict) -> set[int]:
    """Entities a document is about or states a fact of (``mentions`` are ``"idx:feature"``)."""
    return {*doc["entities"], *(int(m.split(":", 1)[0]) for m in doc["mentions"])}


def held_out(
    kind: str,
    docs: Sequence[dict],
    world: Sequence[Geminon],
    rng: np.random.Generator,
    qa_sides: dict[str, list[dict]],
) -> tuple[set[int], dict[str, Any]]:
    """Positions in ``docs`` to hold out, and what release.json records of the split.

    ``qa_sides`` is the QA public split by entity (``validation``/``test`` rows carrying ``entity``).
    """
    public = [i for i, d in enumerate(docs) if d["subset"] == "public"]
    record: dict[str, Any] = {"split": kind}
    if kind == "entity":
        entities: list[int] = []
        for side in ("test", "validation"):
            pool = sorted({r["entity"] for r in qa_sides[side]})
            n = round(ENTITY_FRACTION * len(pool))
            n = max(n, 1) if side == "test" else n
            entities += sorted(int(e) for e in rng.choice(pool, size=min(n, len(pool)), replace=False))
        chosen = set(entities)
        held = {i for i in public if _subjects(docs[i]) & chosen}
        record["entities"] = sorted(entities)
    elif kind == "document":
        by_key: dict[tuple[int, str], list[int]] = defaultdict(list)
        for i in public:
            for e in sorted(docs[i]["entities"]):
                by_key[e, docs[i]["style"]].append(i)
        held = set()
        for key in sorted(by_key):
            free = [i for i in by_key[key] if i not in held]
            if free:
                held.add(free[int(rng.integers(len(free)))])
    elif kind == "style":
        style = str(rng.choice(sorted({docs[i]["style"] for i in public})))
        held = {i for i in public if docs[i]["style"] == style}
        record["style"] = style
    else:
        raise ValueError(f"unknown held-out split {kind!r}")
    record["documents"] = len(held)
    return held, record


def qa_sides(world: Sequence[Geminon], fraction: float, seed: int) -> dict[str, list[dict]]:
    """The public QA split's entities, drawn exactly as the build draws them (same rows' entities, same
    seed): known before the corpus is split, so held-out entities can be drawn on both sides."""
    rows = [{"entity": g.idx} for g in world if g.subset == "public"]
    return Q.split_by_entity(rows, fraction, np.random.default_rng(seed))
