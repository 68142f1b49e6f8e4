"""Release ids: ``{track}-{size}-{YYYY}q{N}``, e.g. ``geminon-small-2026q1``."""

from __future__ import annotations

import re
from dataclasses import dataclass

TRACKS: tuple[str, ...] = ("geminon", "news")
SIZES: tuple[str, ...] = ("tiny", "small", "medium", "large")  # large: NEWS only (all articles)

_PATTERN = re.compile(r"(?P<track>[a-z]+)-(?P<size>[a-z]+)-(?P<year>\d{4})q(?P<quarter>\d)")
EXPECTED = (
    "expected {track}-{size}-{YYYY}q{N}, e.g. geminon-small-2026q1 "
    f"(tracks: {', '.join(TRACKS)}; sizes: {', '.join(SIZES)}; quarter 1-4)"
)


@dataclass(frozen=True)
class ReleaseId:
    """One quarterly release of one track at one size."""

    track: str
    size: str
    year: int
    quarter: int

    def __post_init__(self) -> None:
        if (
            self.track not in TRACKS
            or self.size not in SIZES
            or not 1000 <= self.year <= 9999
            or self.quarter not in (1, 2, 3, 4)
        ):
            raise ValueError(
                f"bad release id {self.track}-{self.size}-{self.year}q{self.quarter}: {EXPECTED}"
            )

    @classmethod
    def parse(cls, text: str | ReleaseId) -> ReleaseId:
        """``"geminon-small-2026q1"`` -> ``ReleaseId("geminon", "small", 2026, 1)``; ValueError otherwise."""
        if isinstance(text, ReleaseId):
            return text
        match = _PATTERN.fullmatch(str(text).strip())
        if match is None:
            raise ValueError(f"bad release id {text!r}: {EXPECTED}")
        try:
            return cls(match["track"], match["size"], int(match["year"]), int(match["quarter"]))
        except ValueError:
            raise ValueError(f"bad release id {text!r}: {EXPECTED}") from None

    @property
    def period(self) -> str:
        """The quarter label used on the command line, e.g. ``2026q1``."""
        return f"{self.year}q{self.quarter}"

    def __str__(self) -> str:
        return f"{self.track}-{self.size}-{self.period}"
