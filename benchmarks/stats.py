"""Time the statistics behind results.json, compare and the leaderboard, alternatives side by side.

Usage:
    python benchmarks/stats.py                # 600 paired questions, 10,000 resamples, 5 rounds
    python benchmarks/stats.py --questions 5000 --rounds 3

Compares, on the same paired outcomes and alternating in each round (the machine is shared, so the
order is rotated and the median reported): our multinomial bootstrap (``stats.bootstrap_interval``),
numpy index resampling (the textbook loop, vectorised) and ``scipy.stats.bootstrap(paired=True)``;
then Wilson intervals for every stratum of a scored split (``scoring.score``) and a whole paired
comparison over every support stratum (``compare.paired_strata``). The intervals of the three
bootstraps are printed too: they must agree to Monte Carlo error.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    return parser


def main(questions: int, resamples: int, rounds: int) -> None:
    import pandas as pd
    from scipy.stats import bootstrap

    from continuousbench import stats
    from continuousbench.results.compare import paired_strata
    from continuousbench.scoring.match import SUPPORT_BUCKETS, score

    rng = np.random.default_rng(0)
    a, b = rng.random(questions) < 0.45, rng.random(questions) < 0.35
    diff = a.astype(float) - b.astype(float)
    support = rng.integers(0, 1500, size=questions).tolist()

    def ours():
        return stats.bootstrap_interval(diff, resamples=resamples, seed=0)

    def indices():
        idx = np.random.default_rng(0).integers(0, questions, size=(resamples, questions))
        return tuple(np.quantile(diff[idx].mean(axis=1), [0.025, 0.975]))

    def scipy_paired():
        def statistic(x, y, axis):
            return x.mean(axis) - y.mean(axis)

        data = (a.astype(float), b.astype(float))
        res = bootstrap(data, statistic, paired=True, n_resamples=resamples, method="percentile", rng=0)
        return tuple(res.confidence_interval)

    refs = [str(i) for i in range(questions)]
    preds = [r if hit else "x" for r, hit in zip(refs, a, strict=True)]

    def wilson_all_strata():
        return score(preds, refs, support_counts=support, buckets=SUPPORT_BUCKETS)

    frame = pd.DataFrame({"part": "qa_public", "support_count": support, "a": a, "b": b})

    def comparison():
        return paired_strata(frame, resamples=resamples, seed=0)

    cases = {
        "bootstrap: multinomial (ours)": ours,
        "bootstrap: numpy indices": indices,
        "bootstrap: scipy paired": scipy_paired,
        "score + Wilson, all strata": wilson_all_strata,
        "compare: every stratum": comparison,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:  # rotate the order each round
            start = time.perf_counter()
            cases[name]()
            times[name].append(time.perf_counter() - start)
    print(f"{questions} paired questions, {resamples} resamples, median of {rounds} rounds (shared CPU)")
    print(f"{'case':32} {'median ms':>10} {'min ms':>8}")
    for name, t in times.items():
        print(f"{name:32} {1000 * statistics.median(t):10.1f} {1000 * min(t):8.1f}")
    for name in names[:3]:
        low, high = cases[name]()
        print(f"{name:32} 95% interval of A-B: [{low:+.4f}, {high:+.4f}]")


if __name__ == "__main__":
    args = make_parser().parse_args()
    main(args.questions, args.resamples, args.rounds)
