"""The leaderboard's figure: accuracy by support count of the top rows of each kind."""

from __future__ import annotations

from continuousbench.leaderboard.ranking import PART, SHORT

# Okabe & Ito's palette: told apart by readers with any common colour-vision deficiency.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def support_figure(rows: list[dict], metric: str, *, top: int = 4):
    """Accuracy by support count on ``qa_public``: one panel per kind, its ``top`` ranked rows in the
    Okabe-Ito palette, the legend below each panel (never over the data)."""
    from matplotlib.figure import Figure

    from continuousbench.results.plots import bucket_series

    kinds = list(dict.fromkeys(r["kind"] for r in rows)) or ["-"]
    fig = Figure(figsize=(min(4.2 * len(kinds), 12.6), 4.4), dpi=100)
    axes = fig.subplots(1, len(kinds), sharey=True, squeeze=False)[0]
    for ax, kind in zip(axes, kinds, strict=True):
        mine = [r for r in rows if r["kind"] == kind][:top]
        for colour, row in zip(PALETTE, mine, strict=False):
            s = bucket_series(
                f"#{row['rank']} {row['submission']}",
                row["record"]["metrics"][PART].get("buckets", []),
                metric,
            )
            if s is None:
                continue
            below = [max(0.0, y - lo) for y, lo in zip(s.y, s.low, strict=True)]
            above = [max(0.0, hi - y) for y, hi in zip(s.y, s.high, strict=True)]
            ax.errorbar(s.x, s.y, yerr=[below, above], marker="o", capsize=3, label=s.label, color=colour)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_title(kind, fontsize=10)
        ax.set_xlabel("support count (documents stating the fact)", fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    axes[0].set_ylabel(f"{SHORT[metric]} accuracy on {PART}")
    fig.text(
        0.01,
        0.01,
        f"top {top} per kind; error bars: Wilson 95% interval of each bucket",
        fontsize=7,
        color="0.35",
    )
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig
