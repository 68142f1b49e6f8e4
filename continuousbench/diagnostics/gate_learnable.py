"""The learnable gate: every public question is supported by at least the release's minimum number of
training documents, and every singleton by exactly one (the ``support_count`` the builder counted)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.diagnostics.gate_report import Check, Gate

GEMINON_MIN_SUPPORT = 20  # a public Geminon fact: tiny releases have >= 40 documents, small hundreds


def release_min_support(manifest: dict[str, Any]) -> int:
    """The release's own minimum (its canonical evaluation's, for NEWS), else Geminon's."""
    return int((manifest.get("evaluation") or {}).get("min_support", GEMINON_MIN_SUPPORT))


def support_histogram(counts: Sequence[int]) -> dict[str, int]:
    """Questions per support bucket (the harness's bucket edges), for the release report."""
    from continuousbench.scoring.match import SUPPORT_BUCKETS

    edges = np.asarray(SUPPORT_BUCKETS)
    which = np.searchsorted(edges, np.asarray(counts, dtype=int), side="right") - 1
    return {f">={edges[i]}": int((which == i).sum()) for i in range(len(edges)) if (which == i).any()}


def learnable_gate(release: str | Path, *, min_support: int | None = None, **kw: Any) -> Gate:
    """Every public question at or above the minimum support (a release with a canonical evaluation,
    NEWS: some question of its split to score at that minimum); every singleton at exactly 1."""
    from continuousbench.release.layout import configs
    from continuousbench.release.load import load_release, read_manifest, resolve_release

    manifest = read_manifest(resolve_release(release, **kw))
    minimum = release_min_support(manifest) if min_support is None else min_support
    evaluation = manifest.get("evaluation")
    gate = Gate("learnable", details={"min_support": minimum, "histograms": {}})
    for part in (p for p in configs(manifest["track"]) if p.startswith("qa_")):
        counts = [
            c
            for split in load_release(release, part, verify=False, **kw).values()
            for c in split["support_count"]
        ]
        gate.details["histograms"][part] = support_histogram(counts)
        if part == "qa_public" and evaluation:
            # NEWS keeps questions under its minimum (stratified analyses) and scores only those at or
            # above it: the gate asks that there are such questions to score
            split = evaluation["split"]
            scored = load_release(release, part, split, verify=False, **kw)["support_count"]
            scored = sum(c >= minimum for c in scored)
            gate.details["scored_questions"] = scored
            what = f"{split} questions to score (support >= {minimum}) missing"
            gate.checks.append(Check(what, int(scored == 0), 0, scored > 0))
        elif part == "qa_public":
            low = sum(c < minimum for c in counts)
            gate.checks.append(Check(f"public questions with support under {minimum}", low, 0, low == 0))
        if part == "qa_public":
            gate.details["least_public_support"] = min(counts, default=0)
        else:
            off = sum(c != 1 for c in counts)
            gate.checks.append(Check("singleton questions with support other than 1", off, 0, off == 0))
    return gate
