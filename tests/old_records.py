"""Results records as older schema versions wrote them (tests of the results layer read them)."""

from __future__ import annotations

import copy


def before_schema_4(record: dict) -> dict:
    """``record`` without the graded-knowledge keys of schema 4 (``mcq``, ``answer_nll``)."""
    old = copy.deepcopy(record)
    for part in old["metrics"].values():
        part.pop("answer_nll", None)
        for stratum in (part["metrics"], *part["by_support"].values(), *part["buckets"]):
            stratum.pop("mcq", None)
    return old
