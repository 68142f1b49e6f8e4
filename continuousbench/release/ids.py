"""Release ids: ``{track}-{size}-{YYYY}q{N}``, e.g. ``geminon-small-2026q1``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from continuousbench.errors import UserError

TRACKS: tuple[str, ...] = ("geminon", "news")
SIZES: tuple[str, ...] = ("tiny", "small", "medium", "large")  # large: NEWS only (all articles)

_QUARTER = re.compile(r"\d{4}q[1-4]")
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
            raise UserError(
                f"bad release id {self.track}-{self.size}-{self.year}q{self.quarter}: {EXPECTED}"
            )

    @classmethod
    def parse(cls, text: str | ReleaseId) -> ReleaseId:
        """``"geminon-small-2026q1"`` -> ``ReleaseId("geminon", "small", 2026, 1)``; ValueError otherwise."""
        if isinstance(text, ReleaseId):
            return text
        match = _PATTERN.fullmatch(str(text).strip())
        if match is None:
            raise UserError(f"bad release id {text!r}: {EXPECTED}")
        try:
            return cls(match["track"], match["size"], int(match["year"]), int(match["quarter"]))
        except ValueError:
            raise UserError(f"bad release id {text!r}: {EXPECTED}") from None

    @property
    def period(self) -> str:
        """The quarter label used on the command line, e.g. ``2026q1``."""
        return f"{self.year}q{self.quarter}"

    @property
    def days(self) -> tuple[date, date]:
        """The quarter's first and last day, e.g. 2026-10-01 and 2026-12-31 for ``2026q4``."""
        first = date(self.year, 3 * self.quarter - 2, 1)
        after = date(self.year + 1, 1, 1) if self.quarter == 4 else date(self.year, 3 * self.quarter + 1, 1)
        return first, after - timedelta(days=1)

    def __str__(self) -> str:
        return f"{self.track}-{self.size}-{self.period}"


def release_id(track: str, size: str, quarter: str) -> ReleaseId:
    """``<track>-<size>-<quarter>`` for a builder's ``--size``/``--quarter``; ValueError with the fix."""
    if not _QUARTER.fullmatch(str(quarter)):
        raise UserError(f"bad quarter {quarter!r}: write it as YYYYqN with N in 1-4, e.g. 2026q1")
    return ReleaseId.parse(f"{track}-{size}-{quarter}")


def stage_seeds(seed: int, rid: ReleaseId, keys: Sequence[str], bits: int) -> dict[str, int]:
    """One independent ``bits``-bit seed per build stage, from (seed, year, quarter): each quarter is a
    fresh draw and the same seed and quarter give the same seeds. (Geminon's stages take 63-bit seeds;
    NEWS passes its seeds to libraries that want 32-bit ones.)"""
    import numpy as np

    dtype, width = (np.uint32, 32) if bits <= 32 else (np.uint64, 64)
    children = np.random.SeedSequence([seed, rid.year, rid.quarter]).spawn(len(keys))
    states = (int(c.generate_state(1, dtype=dtype)[0]) >> (width - bits) for c in children)
    return dict(zip(keys, states, strict=True))
