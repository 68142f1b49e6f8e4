"""The contamination test's false-positive rate on worlds a model never saw, and its power.

Usage:
    python benchmarks/contamination_null.py                      # 20 worlds, 10 controls each, on CPU
    python benchmarks/contamination_null.py --worlds 30 --output null.json

**Null.** ``--worlds`` fresh tiny Geminon worlds (seeds 100, 101, ...), none seen by the demo's pretrained
base (its pretraining world has another seed and the names of no release). Each is tested as the release
with ``contamination`` itself, against its own ``--controls`` control worlds (seed-derived: no world
serves two tests, so the tests are independent and the Wilson interval holds). The table gives the
false-positive rate at alpha 0.05 and 0.01 with its 95% interval, for the world test (the verdict) and,
on the same scores, for the test it replaced (entities as units, Mann-Whitney against one control world).

**Power.** The base trained one epoch on the release's corpus, and on the release diluted with the
documents of an unrelated world of the same generator (same style, other names: the hardest dilution)
at each ``--fractions`` share of the training documents; each trained model is tested like the base.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def diluted(release: list[str], other: list[str], fraction: float, seed: int) -> list[str]:
    """As many documents as the release has: ``fraction`` of them the release's, the rest ``other``'s."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(release)
    own = round(fraction * n)
    mixed = [release[i] for i in rng.choice(n, own, replace=False)]
    mixed += [other[i] for i in rng.choice(len(other), n - own, replace=len(other) < n - own)]
    return [mixed[i] for i in rng.permutation(len(mixed))]


def old_test(report: dict) -> float:
    """The replaced test on the report's scores: entity units of the release against those of one control
    world, one-sided Mann-Whitney."""
    import numpy as np

    from continuousbench.diagnostics.contamination import one_sided_test

    units = [report["scores"]["release"]["units"], report["scores"]["controls"][0]["units"]]
    a, b = (np.array([u["min_k_plus_plus"] for u in side]) for side in units)
    return one_sided_test(a, b)["p_value"]


def rate(p_values: list[float], alpha: float) -> str:
    from continuousbench.stats import wilson_interval

    hits = sum(p < alpha for p in p_values)
    low, high = wilson_interval(hits, len(p_values))
    return f"{hits}/{len(p_values)} = {hits / len(p_values):.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=20)
    parser.add_argument("--controls", type=int, default=10)
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--fractions", type=float, nargs="*", default=[1.0, 0.3, 0.1, 0.03])
    parser.add_argument(
        "--power_worlds", type=int, default=2, help="Releases each trained model is made from."
    )
    parser.add_argument("--root", default=None, help="Where the worlds are built (kept for a rerun).")
    parser.add_argument("--output", default=None, help="Every report as JSON.")
    args = parser.parse_args()

    from continuousbench.demo.demo import SHIPPED_BASE
    from continuousbench.demo.tinymodel import train_on_texts
    from continuousbench.diagnostics.contamination import contamination
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.release.load import load_release

    root = Path(args.root or tempfile.mkdtemp(prefix="contamination-null-"))
    started, cpu = time.perf_counter(), time.process_time()
    options = {"controls": args.controls, "documents": args.documents, "root": root}

    def release(seed: int) -> Path:
        out = root / f"release-{seed}"
        found = out / "geminon-tiny-2026q1"
        if found.is_dir():
            return found
        return build_release(GeminonBuildArguments(seed=seed, out=str(out)), progress=False)

    null = []
    for i in range(args.worlds):
        report = contamination(str(SHIPPED_BASE), release(100 + i), **options)
        null.append(report)
        head = report["tests"]["min_k_plus_plus"]
        where = f"rank {head['rank']} of {head['worlds']}, old p={old_test(report):.3g}"
        print(f"world {i + 1}/{args.worlds} (seed {100 + i}): p={head['p_value']:.3g} {where}", flush=True)

    other = list(load_release(release(999_999), "corpus", "train")["text"])
    power = []
    with tempfile.TemporaryDirectory() as models:
        for i in range(args.power_worlds):
            folder = release(100 + i)
            texts = list(load_release(folder, "corpus", "train")["text"])
            for fraction in args.fractions:
                out = Path(models) / f"m{i}-{fraction}"
                train_on_texts(SHIPPED_BASE, diluted(texts, other, fraction, seed=i), out, seed=i)
                report = contamination(str(out), folder, **options)
                power.append({"fraction": fraction, "world": 100 + i, "report": report})
                p = report["tests"]["min_k_plus_plus"]["p_value"]
                print(f"trained on seed {100 + i} at {fraction}: p={p:.3g}", flush=True)

    p_new = [r["tests"]["min_k_plus_plus"]["p_value"] for r in null]
    p_old = [old_test(r) for r in null]
    wall, used = time.perf_counter() - started, time.process_time() - cpu
    print(
        f"\nload average {os.getloadavg()[0]:.1f}; {wall:.0f} s wall, {used:.0f} s CPU (this process); demo "
        f"base, tiny worlds, {args.documents} documents each, {args.controls} controls\n"
    )
    print("| test | worlds | false positives at alpha 0.05 [95% CI] | at alpha 0.01 [95% CI] |")
    print("| --- | --- | --- | --- |")
    for name, p in (
        ("world test (the verdict)", p_new),
        ("entities as units, one control (replaced)", p_old),
    ):
        print(f"| {name} | {len(p)} | {rate(p, 0.05)} | {rate(p, 0.01)} |")
    print("\n| share of the release in training | models | flagged at 0.05 | at 0.01 | p of each model |")
    print("| --- | --- | --- | --- | --- |")
    for fraction in args.fractions:
        p = sorted(
            x["report"]["tests"]["min_k_plus_plus"]["p_value"] for x in power if x["fraction"] == fraction
        )
        flagged = [f"{sum(x < alpha for x in p)}/{len(p)}" for alpha in (0.05, 0.01)]
        print(f"| {fraction:g} | {len(p)} | {' | '.join(flagged)} | {', '.join(f'{x:.2g}' for x in p)} |")
    if args.output:
        Path(args.output).write_text(json.dumps({"null": null, "power": power}, indent=1))


if __name__ == "__main__":
    main()
