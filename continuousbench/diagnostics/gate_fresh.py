"""The fresh gate: no question text and no (entity name, answer) pair of an earlier release comes back, and
the share of the corpus's distinct word 13-grams already in an earlier corpus stays under
``--max_overlap``; the report lists the documents that overlap most. Also which releases count as
"earlier": strictly earlier quarters of the same track."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.diagnostics.gate_report import Check, Gate
from continuousbench.diagnostics.ngrams import NGRAM, corpus_overlap
from continuousbench.errors import UserError

MAX_OVERLAP = 0.05  # share of distinct 13-grams seen before; two unrelated tiny worlds share 0.22%
WORST = 5  # documents listed as the worst overlaps


def _questions(release: str | Path, **kw: Any) -> list[dict[str, Any]]:
    from continuousbench.release.layout import configs
    from continuousbench.release.load import load_release, read_manifest, resolve_release

    track = read_manifest(resolve_release(release, **kw))["track"]
    rows = []
    for part in (p for p in configs(track) if p.startswith("qa_")):
        for split in load_release(release, part, verify=False, **kw).values():
            rows.extend(
                split.select_columns(
                    [c for c in ("question", "answer", "name") if c in split.column_names]
                ).to_list()
            )
    return rows


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


def fresh_gate(
    release: str | Path,
    previous: Sequence[str | Path],
    *,
    max_overlap: float = MAX_OVERLAP,
    n: int = NGRAM,
    worst: int = WORST,
    verify: bool = True,
    **kw: Any,
) -> Gate:
    """No question or (name, answer) of ``previous`` again; corpus n-gram overlap under ``max_overlap``.

    ``verify=False``: the caller has verified every earlier release already."""
    from continuousbench.release.load import load_release, read_manifest, resolve_release, verify_release

    for earlier in previous if verify else ():  # a damaged earlier release makes the comparison meaningless
        verify_release(earlier, **kw)
    ids = [read_manifest(resolve_release(p, **kw))["id"] for p in previous]
    rows = _questions(release, **kw)
    seen_q, seen_pairs = set(), set()
    for earlier in previous:
        for row in _questions(earlier, **kw):
            seen_q.add(_norm(row["question"]))
            if row.get("name"):
                seen_pairs.add((_norm(row["name"]), _norm(row["answer"])))
    repeated_q = [r["question"] for r in rows if _norm(r["question"]) in seen_q]
    pairs = [(r["name"], r["answer"]) for r in rows if r.get("name")]
    repeated_pairs = [p for p in pairs if (_norm(p[0]), _norm(p[1])) in seen_pairs]

    corpus = load_release(release, "corpus", "train", verify=False, **kw)
    earlier = [load_release(p, "corpus", "train", verify=False, **kw)["text"] for p in previous]
    overlap, distinct, per_doc = corpus_overlap(corpus["text"], earlier, n)
    top = [int(i) for i in np.argsort(-per_doc, kind="stable")[:worst] if per_doc[i] > 0]
    gate = Gate(
        "fresh",
        [
            Check("questions repeated from earlier releases", len(repeated_q), 0, not repeated_q),
            Check("(name, answer) pairs repeated", len(repeated_pairs), 0, not repeated_pairs),
            Check(f"corpus {n}-gram overlap", overlap, max_overlap, overlap < max_overlap),
        ],
        {
            "previous": ids,
            "ngram": n,
            "distinct_ngrams": distinct,
            "repeated_questions": repeated_q[:worst],
            "repeated_pairs": [list(p) for p in repeated_pairs[:worst]],
            "worst_overlaps": [
                {"id": corpus[i]["id"], "share": float(per_doc[i]), "text": corpus[i]["text"][:160]}
                for i in top
            ],
        },
    )
    return gate


def earlier_releases(release: str | Path, root: Path | None = None) -> list[str]:
    """The releases under the root that ``release`` must be fresh against when ``--previous`` is left
    out: strictly earlier quarters of its track, at any size (:mod:`continuousbench.release.registry`)."""
    from continuousbench.release.ids import ReleaseId
    from continuousbench.release.layout import default_root
    from continuousbench.release.load import read_manifest, resolve_release
    from continuousbench.release.registry import earlier_under

    own = ReleaseId.parse(read_manifest(resolve_release(release, root=root))["id"])
    root = Path(root).expanduser() if root is not None else default_root()
    return [str(r) for r in earlier_under(own, root)]


def check_previous(release: str, previous: Sequence[str | Path], **kw: Any) -> None:
    """A ``--previous`` release of another track, or of the same or a later quarter, is refused in one line:
    freshness is against what came before."""
    from continuousbench.release.ids import ReleaseId
    from continuousbench.release.load import read_manifest, resolve_release
    from continuousbench.release.registry import is_earlier

    own = ReleaseId.parse(release)
    for given in previous:
        other = ReleaseId.parse(read_manifest(resolve_release(given, **kw))["id"])
        if not is_earlier(other, own):
            raise UserError(
                f"--previous {given} is not an earlier release of {own}: name releases of the {own.track} "
                f"track from quarters before {own.period}"
            )
