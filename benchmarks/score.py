"""Predictions scored per second by exact_match and contains (continuousbench.scoring.match).

    .venv/bin/python benchmarks/score.py            # 100,000 pairs
    .venv/bin/python benchmarks/score.py --quick    # 10,000 pairs

The pairs mimic a Geminon test set: two thirds numeric answers (stats, weights, heights with units,
trailing explanations), one third names (classifications, abilities, moves, types in either order).
"""

from __future__ import annotations

import argparse
import random
import time


def make_pairs(n: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    words = ["Spore", "Parasite", "Ember", "Tidal", "Suction", "Cups", "Drought", "Jaw", "Lock", "Gale"]
    types = ["ghost", "dark", "fire", "water", "grass", "steel"]
    preds, refs = [], []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.67:
            value = rng.choice([str(rng.randint(5, 999)), f"{rng.randint(1, 40) / 10:.1f}"])
            noise = rng.choice(["", ".", " lbs", " m", "\nQ: next", ", I think", "0"])
            pred = rng.choice([value, str(rng.randint(5, 999))]) + noise
            preds.append(rng.choice(["", " ", "A: ", "It is "]) + pred)
            refs.append([value])
        elif kind < 0.85:
            name = f"{rng.choice(words)} {rng.choice(words)}"
            other = name if rng.random() < 0.6 else f"{rng.choice(words)} {rng.choice(words)}"
            preds.append(rng.choice(["", "The answer is "]) + other + rng.choice(["", ".", "\nQ:"]))
            refs.append([name if rng.random() < 0.5 else f"{name} Geminon"])
        else:
            a, b = rng.sample(types, 2)
            preds.append(rng.choice([f"{a} and {b}", f"{b} and {a}", a]))
            refs.append([f"{a} and {b}", f"{b} and {a}"])
    return preds, refs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="10,000 pairs")
    args = parser.parse_args(argv)
    n = 10_000 if args.quick else args.n

    from rich.console import Console
    from rich.table import Table

    from continuousbench.scoring.match import normalize, score

    preds, refs = make_pairs(n)
    table = Table(title=f"scoring {n:,} prediction/reference pairs (1 process)")
    for col in ("matchers", "seconds", "pairs / s", "accuracy"):
        table.add_column(col, justify="right")
    for matchers in (["exact_match"], ["contains"], ["exact_match", "contains"]):
        normalize.cache_clear()  # every run starts cold: references are not pre-normalised
        start = time.perf_counter()
        out = score(preds, refs, matchers=matchers)
        seconds = time.perf_counter() - start
        accuracy = " / ".join(f"{out['metrics'][m]['accuracy']:.3f}" for m in matchers)
        table.add_row(" + ".join(matchers), f"{seconds:.2f}", f"{n / seconds:,.0f}", accuracy)
    Console().print(table)


if __name__ == "__main__":
    main()
