"""The realizer interface shared by the offline template realizer and the LLM realizer.

This module knows no implementation; :func:`continuousbench.geminon.realizers.make_realizer` picks one.

The corpus builder drafts large candidate pools (``draft``: which facts each candidate states, cheap),
subsamples them by coverage, then renders only the chosen ones (``render``: the texts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from continuousbench.geminon.schema import Geminon

STYLES: tuple[str, ...] = ("wiki", "journal", "evolution", "comparison")  # the article styles


@dataclass(frozen=True, slots=True)
class Draft:
    """A candidate article: its style, subjects, the exact facts it states, and how to reproduce it."""

    style: str  # "wiki" | "journal" | "evolution" | "comparison"
    subjects: tuple[int, ...]  # 1 entity (wiki/journal), a line in stage order (evolution), 2 (comparison)
    mentions: tuple[tuple[int, str], ...]  # (entity idx, canonical feature) stated in the text, exactly
    seed: int  # everything `render` needs to reproduce the text deterministically
    text: str | None = None  # set by realizers that write while drafting (the LLM realizer)


class Realizer(Protocol):
    name: str

    def draft(self, style: str, subjects: Sequence[Geminon], seed: int, n: int) -> list[Draft]:
        """Decide which facts ``n`` candidate articles about ``subjects`` state (no text needed)."""
        ...

    def render(self, drafts: Sequence[Draft], world: Mapping[int, Geminon]) -> list[str]:
        """The texts of ``drafts``; ``world`` maps entity idx to its record."""
        ...


def check_style(style: str, subjects: Sequence[Geminon]) -> None:
    """Fail clearly when ``subjects`` do not fit ``style``."""
    if style not in STYLES:
        raise ValueError(f"unknown article style {style!r}; use one of {', '.join(STYLES)}")
    want = {"wiki": "1", "journal": "1", "comparison": "2", "evolution": "1-3"}[style]
    ok = len(subjects) == 2 if style == "comparison" else len(subjects) == 1
    if style == "evolution":
        ok = 1 <= len(subjects) <= 3
    if not ok:
        raise ValueError(f"a {style} article takes {want} subject(s), got {len(subjects)}")
    if style == "evolution" and tuple(e.name for e in subjects) != subjects[0].evolution_line:
        raise ValueError(
            f"an evolution article takes a whole line in stage order {subjects[0].evolution_line}, "
            f"got {tuple(e.name for e in subjects)}"
        )
