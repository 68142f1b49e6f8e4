"""Release ids: ``{track}-{size}-{YYYY}q{N}``, e.g. ``geminon-small-2026q1``; a Geminon release built with
a FictionalQA held-out split adds ``-heldout-{split}`` (``geminon-tiny-2026q1-heldout-entity``): the
same world with another corpus split, so it gets its own folder and can never pass for the default."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from continuousbench.errors import UserError

TRACKS: tuple[str, ...] = ("geminon", "news")
SIZES: tuple[str, ...] = ("tiny", "small", "medium", "large")  # large: NEWS only (all articles)
HELDOUT_SPLITS: tuple[str, ...] = ("entity", "document", "style")  # Geminon only (docs/memorization.md)

_QUARTER = re.compile(r"\d{4}q[1-4]")
_PATTERN = re.compile(
    r"(?P<track>[a-z]+)-(?P<size>[a-z]+)-(?P<year>\d{4})q(?P<quarter>\d)(?:-heldout-(?P<heldout>[a-z]+))?"
)
TRACK_SIZES: dict[str, tuple[str, ...]] = {"geminon": SIZES[:3], "news": SIZES}
EXPECTED = (
    "expected {{track}}-{{size}}-{{YYYY}}q{{N}}[-heldout-{{split}}], e.g. geminon-small-2026q1 "
    f"(tracks: {', '.join(TRACKS)}; sizes{{of}}: {{sizes}}; quarter 1-4; held-out splits, Geminon "
    f"only: {', '.join(HELDOUT_SPLITS)})"
)


def expected(track: str | None = None) -> str:
    """The id's format, with the sizes of ``track`` when it is one (``large`` is NEWS's alone)."""
    sizes = TRACK_SIZES.get(track or "")
    listed = ", ".join(sizes) if sizes else "tiny, small, medium (NEWS also large)"
    return EXPECTED.format(of=f" of {track}" if sizes else "", sizes=listed)


@dataclass(frozen=True)
class ReleaseId:
    """One quarterly release of one track at one size."""

    track: str
    size: str
    year: int
    quarter: int
    heldout: str | None = None  # a FictionalQA held-out split (Geminon): entity, document or style

    def __post_init__(self) -> None:
        if (
            self.track not in TRACKS
            or self.size not in TRACK_SIZES.get(self.track, ())
            or not 1000 <= self.year <= 9999
            or self.quarter not in (1, 2, 3, 4)
            or (self.heldout is not None and (self.track != "geminon" or self.heldout not in HELDOUT_SPLITS))
        ):
            raise UserError(f"bad release id {self}: {expected(self.track)}")

    @classmethod
    def parse(cls, text: str | ReleaseId) -> ReleaseId:
        """``"geminon-small-2026q1"`` -> ``ReleaseId("geminon", "small", 2026, 1)``; ValueError otherwise."""
        if isinstance(text, ReleaseId):
            return text
        match = _PATTERN.fullmatch(str(text).strip())
        if match is None:
            raise UserError(f"bad release id {text!r}: {expected()}")
        try:
            return cls(
                match["track"], match["size"], int(match["year"]), int(match["quarter"]), match["heldout"]
            )
        except ValueError:
            raise UserError(f"bad release id {text!r}: {expected(match['track'])}") from None

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

    @property
    def heldout_option(self) -> str:
        """The ``build`` option that makes the held-out split (`` --heldout entity``), or ``""``."""
        return f" --heldout {self.heldout}" if self.heldout else ""

    def __str__(self) -> str:
        held = f"-heldout-{self.heldout}" if self.heldout else ""
        return f"{self.track}-{self.size}-{self.period}{held}"


def release_id(track: str, size: str, quarter: str, heldout: str | None = None) -> ReleaseId:
    """``<track>-<size>-<quarter>[-heldout-<split>]`` for a builder's options; UserError with the fix."""
    if not _QUARTER.fullmatch(str(quarter)):
        raise UserError(f"bad quarter {quarter!r}: write it as YYYYqN with N in 1-4, e.g. 2026q1")
    if heldout is not None and heldout not in HELDOUT_SPLITS:
        raise UserError(
            f"--heldout {heldout} is not a held-out split: choose one of {', '.join(HELDOUT_SPLITS)}"
        )
    held = f"-heldout-{heldout}" if heldout else ""
    return ReleaseId.parse(f"{track}-{size}-{quarter}{held}")


def stage_seeds(seed: int, rid: ReleaseId, keys: Sequence[str], bits: int) -> dict[str, int]:
    """One independent ``bits``-bit seed per build stage, from (seed, year, quarter): each quarter is a
    fresh draw and the same seed and quarter give the same seeds. (Geminon's stages take 63-bit seeds;
    NEWS passes its seeds to libraries that want 32-bit ones.)"""
    import numpy as np

    dtype, width = (np.uint32, 32) if bits <= 32 else (np.uint64, 64)
    children = np.random.SeedSequence([seed, rid.year, rid.quarter]).spawn(len(keys))
    states = (int(c.generate_state(1, dtype=dtype)[0]) >> (width - bits) for c in children)
    return dict(zip(keys, states, strict=True))
