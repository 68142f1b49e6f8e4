"""Results records as older schema versions wrote them (tests of the results layer read them)."""

from __future__ import annotations

import copy


def before_schema_4(record: dict) -> dict:
    """``record`` without the keys schema 4 added: graded knowledge (``mcq``, ``answer_nll``,
    ``forgetting``), the fixed recipe's identity, where the corpus's statement came from, ``submitted``,
    and the judge's server."""
    old = copy.deepcopy(record)
    for key in ("forgetting", "submitted"):
        old.pop(key, None)
    kept = ("given", "path", "file_sha256", "sha256")
    old["recipe"] = {k: v for k, v in old["recipe"].items() if k in kept}
    old["corpus"].pop("privacy_source", None)
    for key in ("endpoint", "server"):
        (old.get("judge") or {}).pop(key, None)
    for part in old["metrics"].values():
        part.pop("answer_nll", None)
        for stratum in (part["metrics"], *part["by_support"].values(), *part["buckets"]):
            stratum.pop("mcq", None)
    return old
