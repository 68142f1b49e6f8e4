"""Drafting checkpoints: an LLM realizer's finished units (an entity, a line, a pair) saved as they finish.

Drafting a ``tiny`` release through a model takes hundreds of calls before the selection stage can
write anything; without checkpoints a Ctrl-C lost them all. :class:`CheckpointedRealizer` appends each
unit's drafts (and what the realizer counted while drafting it) to a JSON-lines log as one line, flushed
and fsynced before the next unit starts, so a killed build keeps every finished unit, and a resumed build
replays them without a request. A line cut by the kill is dropped when the log is reopened. The log
lives in the build's work folder, which is keyed by the build's settings, so a key need only name the
unit and its seed.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from continuousbench.errors import UserError
from continuousbench.geminon.realizers.base import Draft, Realizer
from continuousbench.geminon.schema import Geminon


def _record(draft: Draft) -> dict[str, Any]:
    return {
        "subjects": list(draft.subjects),
        "mentions": [list(m) for m in draft.mentions],
        "seed": draft.seed,
        "text": draft.text,
    }


def _draft(style: str, record: dict[str, Any]) -> Draft:
    mentions = tuple((int(i), str(f)) for i, f in record["mentions"])
    return Draft(style, tuple(record["subjects"]), mentions, int(record["seed"]), record["text"])


class DraftLog:
    """Append-only JSON lines ``{"key", "drafts", "stats"}``, one per finished unit; ``done`` maps a key
    to its drafts and stats. ``owner`` (the realizer) is named when a line is damaged."""

    def __init__(self, path: Path, owner: str = "the realizer"):
        self.path = path
        self.done: dict[str, tuple[list[Draft], dict[str, int]]] = {}
        if path.is_file():
            data = path.read_bytes()
            whole = data[: data.rfind(b"\n") + 1]  # a last line without its newline was cut by a kill
            if len(whole) != len(data):
                with path.open("r+b") as f:
                    f.truncate(len(whole))
            for n, line in enumerate(whole.decode("utf-8", "replace").splitlines(), 1):
                try:
                    entry = json.loads(line)
                    style = entry["key"].split(":")[0]
                    drafts = [_draft(style, r) for r in entry["drafts"]]
                    self.done[entry["key"]] = drafts, {str(k): int(v) for k, v in entry["stats"].items()}
                except (ValueError, KeyError, TypeError, AttributeError):
                    raise UserError(
                        f"{path} line {n} is damaged (drafts of {owner}); delete it to draft again (the "
                        "answer cache beside it still saves the requests)"
                    ) from None

    def add(self, key: str, drafts: Sequence[Draft], stats: Mapping[str, int]) -> None:
        entry = {"key": key, "drafts": [_record(d) for d in drafts], "stats": dict(stats)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.done[key] = list(drafts), entry["stats"]


class CheckpointedRealizer:
    """``realizer`` whose ``draft`` calls are saved to (and replayed from) a :class:`DraftLog`.

    ``stats`` is the realizer's own counter; a replayed unit adds back what it counted when it was
    drafted, so a resumed build reports (and releases) exactly what an uninterrupted one does.
    """

    def __init__(self, realizer: Realizer, path: Path):
        self.realizer, self.log = realizer, DraftLog(path, realizer.name)
        self.name = realizer.name

    @property
    def stats(self) -> Counter:
        return getattr(self.realizer, "stats", Counter())

    def draft(self, style: str, subjects: Sequence[Geminon], seed: int, n: int) -> list[Draft]:
        key = f"{style}:{','.join(str(e.idx) for e in subjects)}:{seed}:{n}"
        if key in self.log.done:
            drafts, stats = self.log.done[key]
            self.stats.update(stats)
            return list(drafts)
        before = Counter(self.stats)
        drafts = self.realizer.draft(style, subjects, seed, n)
        self.log.add(key, drafts, Counter(self.stats) - before)
        return drafts

    def render(self, drafts: Sequence[Draft], world: Mapping[int, Geminon]) -> list[str]:
        return self.realizer.render(drafts, world)
