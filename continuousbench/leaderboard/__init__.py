"""The leaderboard: the ranking of a results dataset (:mod:`.ranking`), the releases it knows
(:mod:`.releases`), its figure (:mod:`.figure`), the Space's sortable table (:mod:`.page`) and the
static export (:mod:`.export`). The names below are the ones ``leaderboard/app.py`` uses.
"""

from continuousbench.leaderboard.figure import PALETTE, support_figure
from continuousbench.leaderboard.ranking import (
    ALL,
    CANONICAL,
    DP_DATA,
    DP_MODEL,
    NO_STATEMENT,
    NON_PRIVATE,
    NON_PRIVATE_DATA,
    NOT_DP,
    OTHER,
    OTHER_CORPUS,
    PART,
    SHORT,
    Submission,
    card_url,
    choices,
    epsilon_bucket,
    epsilon_label,
    generator_label,
    is_canonical,
    kind_label,
    left_out_html,
    links,
    load_submissions,
    method_label,
    model_label,
    primary_metric,
    rank,
    releases,
    separation,
    table,
    tracks,
)
from continuousbench.leaderboard.releases import ReleaseIndex

__all__ = [
    "ALL", "CANONICAL", "DP_DATA", "DP_MODEL", "NO_STATEMENT", "NON_PRIVATE", "NON_PRIVATE_DATA", "NOT_DP",
    "OTHER",
    "OTHER_CORPUS", "PALETTE", "PART", "SHORT", "ReleaseIndex", "Submission", "card_url", "choices",
    "epsilon_bucket", "epsilon_label", "generator_label", "is_canonical", "kind_label", "left_out_html",
    "links", "load_submissions", "method_label", "model_label", "primary_metric", "rank", "releases",
    "separation", "support_figure", "table", "tracks",
]  # fmt: skip
