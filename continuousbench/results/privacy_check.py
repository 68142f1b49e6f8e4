"""Whether a corpus's privacy statement can be a DP guarantee at all: the rule the package's own mechanisms
follow (:func:`continuousbench.dp.accounting.check_delta`), applied to a participant's statement.

With delta >= 1/n a mechanism may publish one of n records outright (with probability delta) and still be
"(epsilon, delta)-DP", so such a statement guarantees nothing. n is the size of the data the statement is
about: a statement written by this package's generators records it (``dataset_size``: the private
records); for a participant's ``--corpus_privacy`` file it is the submitted corpus's records, or the
statement's ``dataset_size`` when that is larger (the data a synthetic corpus was made from is at least
what the statement says). ``evaluate`` refuses such a statement before training; the leaderboard puts a
record made before this check in a bucket of its own (:data:`NOT_DP`), never in an epsilon bucket.
"""

from __future__ import annotations

NOT_DP = "no DP guarantee (δ ≥ 1/n)"


def records_covered(privacy: dict, documents: int, given: bool) -> int:
    """n of the statement (see the module docstring); ``given``: a ``--corpus_privacy`` file."""
    stated = privacy.get("dataset_size")
    stated = stated if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0 else None
    if given:
        return max(documents, stated or 0)
    return stated or documents


def delta_problem(privacy: dict | None, documents: int, given: bool) -> str | None:
    """Why a DP statement's delta makes no guarantee (delta >= 1/n), or None when it can (or states no DP)."""
    if not privacy or not privacy.get("private") or privacy.get("epsilon") is None:
        return None
    n, delta = records_covered(privacy, documents, given), privacy.get("delta")
    if not isinstance(delta, int | float) or delta < 1 / n:
        return None
    return (
        f"the statement's delta {delta:.3g} is not below 1/n = {1 / n:.3g} (n = {n} records): at that "
        "delta a mechanism may publish a whole record, so it guarantees nothing"
    )
