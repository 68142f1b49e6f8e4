"""Coverage-aware weighted subsampling of candidate documents (paper App. G.2).

Every candidate covers a set of (entity, feature) pairs. In each round a candidate's score is
``sum over its pairs of 1 / (1 + count)``, ``count`` being how often that pair has been selected so far;
each style then draws a batch with probability proportional to its score, without replacement, and the
counts are updated. Articles that fill the largest current coverage gaps are therefore the likeliest.

The counts are shared by all styles and the styles draw their batches in interleaved rounds, so that no
style is sampled against a coverage picture the others have not yet contributed to. Batch draws use the
Efraimidis-Spirakis keys ``log(score) + Gumbel noise`` (top-k of the keys is a weighted draw without
replacement), so one round is a sparse matrix-vector product and an ``argpartition``: millions of
candidates take seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse


def incidence_matrix(indptr: np.ndarray, pairs: np.ndarray, n_pairs: int) -> sparse.csr_matrix:
    """Candidate x pair 0/1 matrix from ragged pair ids (row ``i`` is ``pairs[indptr[i]:indptr[i+1]]``).

    A pair listed twice by one candidate counts once: coverage is about which facts a document carries.
    """
    data = np.ones(len(pairs), dtype=np.float32)
    matrix = sparse.csr_matrix(
        (data, pairs.astype(np.int32), indptr.astype(np.int64)), shape=(len(indptr) - 1, n_pairs)
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    return matrix


@dataclass
class Selection:
    """Selected candidate rows per style (in selection order), final pair counts and what was dropped."""

    indices: dict[str, np.ndarray]
    counts: np.ndarray
    stats: dict[str, dict[str, int]] = field(default_factory=dict)


def _batch_sizes(target: int, rounds: int) -> np.ndarray:
    """Split ``target`` into ``rounds`` near-equal batches (the rounding spreads the remainder)."""
    edges = (np.arange(rounds + 1) * target) // rounds
    return np.diff(edges)


def _draw(scores: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` indices drawn with probability proportional to ``scores`` without replacement (zeros never)."""
    positive = np.flatnonzero(scores > 0)
    if k >= len(positive):
        return positive
    keys = np.log(scores[positive]) + rng.gumbel(size=len(positive))
    top = np.argpartition(-keys, k - 1)[:k]
    top = top[np.argsort(-keys[top], kind="stable")]  # order of the draw, for a deterministic listing
    return positive[top]


def coverage_sample(
    incidence: Mapping[str, sparse.csr_matrix],
    targets: Mapping[str, int],
    rng: np.random.Generator,
    *,
    rounds: int = 100,
    counts: np.ndarray | None = None,
    on_round: Callable[[int], None] | None = None,
) -> Selection:
    """Select ``targets[style]`` rows of ``incidence[style]`` per style by coverage-aware weighted sampling.

    ``counts`` (one entry per pair column) seeds the coverage picture, e.g. with documents already chosen;
    it is not modified. A style whose pool runs out of candidates with a positive score stops short and
    the shortfall is reported; candidates that cover no pair at all can never be drawn.
    """
    styles = [s for s in incidence if targets.get(s, 0) > 0]
    n_pairs = next(iter(incidence.values())).shape[1] if incidence else 0
    counts = np.zeros(n_pairs, dtype=np.int64) if counts is None else counts.astype(np.int64).copy()
    taken = {s: np.zeros(incidence[s].shape[0], dtype=bool) for s in styles}
    chosen: dict[str, list[np.ndarray]] = {s: [] for s in styles}
    batches = {s: _batch_sizes(int(targets[s]), rounds) for s in styles}
    for r in range(rounds):
        weights = 1.0 / (1.0 + counts)
        for style in styles:
            k = int(batches[style][r])
            if k == 0:
                continue
            scores = incidence[style] @ weights
            scores[taken[style]] = 0.0
            picked = _draw(scores, k, rng)
            taken[style][picked] = True
            chosen[style].append(picked)
            counts += np.bincount(incidence[style][picked].indices, minlength=n_pairs)
        if on_round:
            on_round(r)
    indices = {s: np.concatenate(chosen[s]) if chosen[s] else np.zeros(0, dtype=np.int64) for s in styles}
    stats = {}
    for style in incidence:
        matrix, target = incidence[style], int(targets.get(style, 0))
        n_selected = len(indices.get(style, ()))
        stats[style] = {
            "candidates": matrix.shape[0],
            "target": target,
            "selected": n_selected,
            "dropped_not_selected": matrix.shape[0] - n_selected,
            "dropped_no_pairs": int((matrix.getnnz(axis=1) == 0).sum()),
            "shortfall": target - n_selected,
        }
        indices.setdefault(style, np.zeros(0, dtype=np.int64))
    return Selection(indices=indices, counts=counts, stats=stats)
