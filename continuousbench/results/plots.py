"""The figures of a run and of a report, with error bars (paper Fig. 5), saved byte-reproducibly.

An error bar is either a run's Wilson 95% interval (``ci95``) or, for runs that differ only by seed,
the standard deviation over seeds around their mean; each figure's caption says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from continuousbench.files import atomic_write


@dataclass
class Series:
    """One line of an accuracy-by-support plot: points (x = mean support count) with error bars."""

    label: str
    x: list[float]
    y: list[float]
    low: list[float]  # lower end of each error bar (absolute)
    high: list[float]


def _figure(width: float, height: float):
    """A matplotlib Figure outside pyplot: no display needed, nothing kept in a global registry."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig, fig.add_subplot()


def _save(fig, path: Path) -> Path:
    # No "Software" metadata, so that the same numbers give the same bytes.
    return atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", metadata={"Software": None}))


def bucket_series(label: str, buckets: Sequence[dict], matcher: str) -> Series | None:
    """The series of one part's ``buckets`` from ``results.json`` (Wilson intervals as error bars)."""
    points = [
        (b["mean_support"], b[matcher]["accuracy"], *b[matcher]["ci95"])
        for b in buckets
        if b["n"] > 0 and b.get(matcher) and b[matcher].get("ci95")
    ]
    if not points:
        return None
    x, y, low, high = (list(v) for v in zip(*points, strict=True))
    return Series(label, x, y, low, high)


def support_figure(series: Sequence[Series], title: str, *, caption: str):
    """Accuracy per support-count bucket (x: mean support, symlog), one line with error bars per series."""
    fig, ax = _figure(6.5, 4.2)
    for s in series:
        below = [max(0.0, y - lo) for y, lo in zip(s.y, s.low, strict=True)]
        above = [max(0.0, hi - y) for y, hi in zip(s.y, s.high, strict=True)]
        ax.errorbar(s.x, s.y, yerr=[below, above], marker="o", capsize=3, label=s.label)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("support count (documents stating the fact)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if series:
        ax.legend(fontsize=7)
    fig.text(0.01, 0.01, caption, fontsize=6.5, color="0.35")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def accuracy_by_support(path: Path, series: Sequence[Series], title: str, *, caption: str) -> Path:
    """:func:`support_figure`, saved as PNG."""
    return _save(support_figure(series, title, caption=caption), path)


Bar = tuple[float, float, float] | None  # (accuracy, low, high) or nothing to draw


def grouped_bars(path: Path, names: Sequence[str], bars: dict[str, list[Bar]], *, caption: str) -> Path:
    """One group per run, one bar per ``bars`` key; each value (accuracy, low, high) or None."""
    import numpy as np

    x = np.arange(len(names))
    width = 0.8 / max(len(bars), 1)
    fig, ax = _figure(max(5, 1.5 * len(names) + 2), 4.2)
    for i, (label, values) in enumerate(bars.items()):
        y = [100 * v[0] if v else 0.0 for v in values]
        below = [100 * (v[0] - v[1]) if v else 0.0 for v in values]
        err = [below, [100 * (v[2] - v[0]) if v else 0.0 for v in values]]
        ax.bar(x + (i - (len(bars) - 1) / 2) * width, y, width, yerr=err, capsize=2, label=label)
    ax.set_xticks(x, list(names), rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.text(0.01, 0.01, caption, fontsize=6.5, color="0.35")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return _save(fig, path)


Point = tuple[str, float, float, float]  # (regime, accuracy, low, high)


def regime_panels(path: Path, panels: dict[str, list[Point]], *, title: str, caption: str) -> Path:
    """One panel per benchmark, its regimes left to right as points with error bars (paper Fig. 8)."""
    fig = _figure(3.8 * max(1, len(panels)), 3.8)[0]
    fig.clear()
    axes = fig.subplots(1, max(1, len(panels)), sharey=True, squeeze=False)[0]
    for ax, (name, points) in zip(axes, panels.items(), strict=False):
        x = list(range(len(points)))
        y = [100 * p[1] for p in points]
        err = [[100 * (p[1] - p[2]) for p in points], [100 * (p[3] - p[1]) for p in points]]
        ax.errorbar(x, y, yerr=err, fmt="o", capsize=3)
        ax.set_xticks(x, [p[0] for p in points], rotation=25, ha="right", fontsize=7)
        ax.set_title(name, fontsize=8)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("test accuracy (%)")
    fig.suptitle(title, fontsize=9)
    fig.text(0.01, 0.01, caption, fontsize=6.5, color="0.35")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return _save(fig, path)
