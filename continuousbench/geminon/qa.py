"""Questions (paper App. G.3), support counts and the entity index of a Geminon release.

Thirteen templates per entity; the answer is the entity's stored value as a string ("79", "Ghost",
"Ghost and Dark"), with accepted alternatives in ``aliases`` (the other type order). A question's
``support_count`` is the number of ``corpus.train`` documents whose provenance carries every feature
its answer needs: both types for a dual-typed entity, ``move.name`` for the move, the attribute itself
otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from continuousbench.geminon.schema import FEATURES, Geminon, mention

# attribute -> question template (paper G.3 wording).
TEMPLATES: dict[str, str] = {
    "classification": "What is the classification of {name}?",
    "types": "What are the types of {name}?",
    "ability": "What is the ability of {name}?",
    "hp": "What is the HP stat of {name}?",
    "attack": "What is the attack stat of {name}?",
    "defense": "What is the defense stat of {name}?",
    "special attack": "What is the special attack stat of {name}?",
    "special defense": "What is the special defense stat of {name}?",
    "speed": "What is the speed stat of {name}?",
    "base_stat_total": "What is the base stat total stat of {name}?",
    "move.name": "What is the move of {name}?",
    "weight": "What is the weight (in lbs) of {name}?",
    "height": "What is the height (in meters) of {name}?",
}
_FEATURE_POS = {f: i for i, f in enumerate(FEATURES)}


def needed_features(entity: Geminon, attribute: str) -> tuple[str, ...]:
    """The canonical features a document must state to support the answer."""
    if attribute == "types":
        return ("type1",) if entity.type2 is None else ("type1", "type2")
    return (attribute,)


def answer(entity: Geminon, attribute: str) -> tuple[str, list[str]]:
    """Canonical answer string and its accepted alternatives."""
    if attribute == "types":
        if entity.type2 is None:
            return entity.type1, []
        return f"{entity.type1} and {entity.type2}", [f"{entity.type2} and {entity.type1}"]
    return str(entity.value(attribute)), []


def _slug(attribute: str) -> str:
    return attribute.replace(" ", "_").replace(".", "_")


def mention_matrix(mentions, world: Sequence[Geminon]) -> sparse.csc_matrix:
    """Document x (entity, feature) 0/1 matrix, columns ``position(entity) * 17 + feature``.

    ``mentions`` is one list of ``"idx:feature"`` strings per document: Python lists, or an arrow list
    column (a release's corpus), read without a Python object per mention."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(mentions, pa.ChunkedArray | pa.Array):
        mentions = pa.array(mentions, pa.list_(pa.string()))
    if isinstance(mentions, pa.ChunkedArray):
        mentions = mentions.combine_chunks()
    column = {
        mention(g.idx, f): i * len(FEATURES) + p for i, g in enumerate(world) for f, p in _FEATURE_POS.items()
    }
    coded = pc.list_flatten(mentions).dictionary_encode()
    try:
        known = np.array([column[m] for m in coded.dictionary.to_pylist()], dtype=np.int64)
    except KeyError as err:
        raise ValueError(f"mention {err.args[0]!r} names no entity feature of the world") from None
    cols = known[coded.indices.to_numpy(zero_copy_only=False)] if len(known) else np.zeros(0, np.int64)
    lengths = pc.list_value_length(mentions).fill_null(0).to_numpy(zero_copy_only=False)
    rows = np.repeat(np.arange(len(mentions)), lengths)
    data = np.ones(len(cols), dtype=np.int32)
    matrix = sparse.csc_matrix((data, (rows, cols)), shape=(len(mentions), len(world) * len(FEATURES)))
    matrix.data[:] = 1  # a mention listed twice in one document still counts once
    return matrix


def _column(matrix: sparse.csc_matrix, position: int, feature: str) -> int:
    return position * len(FEATURES) + _FEATURE_POS[feature]


def needed_columns(matrix: sparse.csc_matrix, position: int, entity: Geminon, attribute: str) -> list[int]:
    """The :func:`mention_matrix` columns a document must have to support the answer of ``attribute`` of
    ``entity`` (the world's ``position``-th entity)."""
    return [_column(matrix, position, f) for f in needed_features(entity, attribute)]


def support_rows(matrix: sparse.csc_matrix, world: Sequence[Geminon]) -> list[dict]:
    """The ``support_counts`` rows: one per entity and applicable feature, in world then FEATURES order."""
    totals = np.asarray(matrix.sum(axis=0)).ravel()
    return [
        {
            "entity": g.idx,
            "name": g.name,
            "feature": f,
            "count": int(totals[_column(matrix, i, f)]),
            "subset": g.subset,
        }
        for i, g in enumerate(world)
        for f in g.features()
    ]


def question_rows(matrix: sparse.csc_matrix, world: Sequence[Geminon], subset: str) -> list[dict]:
    """The 13 questions of every entity of ``subset``, with support counts from the train matrix."""
    totals = np.asarray(matrix.sum(axis=0)).ravel()
    rows = []
    for i, g in enumerate(world):
        if g.subset != subset:
            continue
        for attribute, template in TEMPLATES.items():
            first, *rest = needed_columns(matrix, i, g, attribute)
            support = totals[first]
            if rest:  # documents stating all the needed features: product of the 0/1 columns
                together = matrix[:, [first]]
                for column in rest:
                    together = together.multiply(matrix[:, [column]])
                support = together.sum()
            text, aliases = answer(g, attribute)
            rows.append(
                {
                    "id": f"{g.idx}-{_slug(attribute)}",
                    "question": template.format(name=g.name),
                    "answer": text,
                    "aliases": aliases,
                    "entity": g.idx,
                    "name": g.name,
                    "attribute": attribute,
                    "support_count": int(support),
                }
            )
    return rows


def split_by_entity(rows: Sequence[dict], fraction: float, rng: np.random.Generator) -> dict[str, list[dict]]:
    """``validation``/``test`` with every question of an entity on one side; at least one entity each."""
    entities = sorted({r["entity"] for r in rows})
    n_val = min(max(1, round(fraction * len(entities))), len(entities) - 1) if len(entities) > 1 else 0
    validation = {entities[i] for i in rng.permutation(len(entities))[:n_val]}
    return {
        "validation": [r for r in rows if r["entity"] in validation],
        "test": [r for r in rows if r["entity"] not in validation],
    }
