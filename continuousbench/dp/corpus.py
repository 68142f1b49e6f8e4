"""The synthetic corpus folder every generation method writes (``synthesize``, ``pe``).

``data/train-00000-of-00001.parquet`` (one ``text`` column) and a dataset card whose YAML ``configs:``
makes ``load_dataset(folder)``, the harness's ``load_corpus(folder)`` and ``--corpus folder`` work. The
card carries how the corpus was made and the privacy statement it was produced under, so a corpus never
travels without its guarantee.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PARQUET = "data/train-00000-of-00001.parquet"
CARD = "README.md"


@dataclass(kw_only=True)
class CorpusOutputArguments:
    """Where a generation command (``synthesize``, ``pe``, ``private-prediction``) writes its corpus folder;
    keyword-only, so that each command's own fields keep their order. ``--resume`` stays each command's:
    what a killed job keeps (iterations, chunks, shards) differs."""

    output_dir: str = field(metadata={"help": "Where the synthetic corpus folder goes."})
    overwrite: bool = field(default=False, metadata={"help": "Replace a finished corpus in --output_dir."})


def corpus_card(
    *, title: str, description: str, settings: dict[str, Any], statement: str, private: bool
) -> str:
    """Dataset card: ``configs:`` metadata, a description, the settings as JSON, then the statement."""
    tags = ["continuousbench", "synthetic"] + (["differential-privacy"] if private else [])
    header = (
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: train\n    path: data/train-*.parquet\n"
        "tags:\n" + "".join(f"- {t}\n" for t in tags) + "---\n\n"
    )
    settings_json = json.dumps(settings, indent=2, sort_keys=True, default=str)
    return (
        f"{header}# {title}\n\n{description}\n\n## Settings\n\n```json\n{settings_json}\n```\n\n{statement}"
    )


def write_corpus(folder: Path, texts: list[str], card: str, labels: list[str] | None = None) -> Path:
    """Write the parquet file and the card into ``folder`` (a staged work folder: published whole later);
    ``labels``: each document's class name, kept as a ``label`` column (label-conditioned synthesis)."""
    from datasets import Dataset

    (folder / "data").mkdir(parents=True, exist_ok=True)
    columns = {"text": texts} | ({"label": labels} if labels is not None else {})
    Dataset.from_dict(columns).to_parquet(str(folder / PARQUET))
    (folder / CARD).write_text(card, encoding="utf-8")
    return folder
