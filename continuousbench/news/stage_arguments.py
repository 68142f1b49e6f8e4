"""The options every NEWS stage shares: its output folder and what to do with an earlier run there.

Keyword-only, so that each stage's own fields (its input first) keep their order; a stage whose output
folder holds more than ``data/`` shards and ``stats.json`` redeclares ``output`` to name its tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(kw_only=True)
class StageArguments:
    output: str = field(metadata={"help": "Output folder (data/ shards + stats.json)."})
    overwrite: bool = field(default=False, metadata={"help": "Replace a finished output."})
    resume: bool = field(default=False, metadata={"help": "Continue an unfinished run."})


@dataclass(kw_only=True)
class ClusteredArticles:
    """What ``qa`` and ``support`` read their questions against: the cluster stage's output."""

    articles: str = field(metadata={"help": "Clustered articles: the cluster stage's output folder."})
