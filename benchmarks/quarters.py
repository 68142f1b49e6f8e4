"""Four quarters in a row, each gated against every earlier one, published into a local rehearsal repo;
then a rehearsal at tiny size that must not change the real release; and the gates' false-positive rates.

Usage:
    python benchmarks/quarters.py --root /tmp/quarters           # small, 2026q1..2026q4 (~1 h, 2 busy cores)
    python benchmarks/quarters.py --root /tmp/quarters-tiny --size tiny --no-rehearsal
    python benchmarks/quarters.py --root /tmp/quarters --screening 1024   # CPU of the screening alone

Each quarter is one ``continuousbench release --quarter Q --size S --models demo-base --publish
<root>/published`` (default seeds and settings; the closed-book model is named because the size's
default, Gemma 3 1B, cannot be downloaded offline). The table gives its wall and CPU seconds (the command's
process, children included), the build's stages, each gate's seconds and figures. The rehearsal builds
``2026q2`` at tiny size under a second root that holds the same ``2026q1``, then the real ``2026q2``
there: its files must equal the first run's byte for byte, and pass every gate.

False positives (the gate fails when nothing is there): the fresh gate's null is an unrelated world of the
same generator, so each quarter's corpus overlap against all earlier ones is the figure that creeps up as
quarters accumulate (names and questions cannot repeat by construction); the unsolvable gate's null is a
model that cannot answer, so the table gives, at the small release's number of test questions, the chance
that the gate fails (the Wilson bound reaches 5%) for a model whose true accuracy is 0-4% (exact binomial).

``--screening N``: the CPU seconds of the build's closed-book screening alone (demo base, one thread), on
N questions of the root's ``2026q1`` release, blind and informed, with the shared prefix run once a batch
and without, alternated twice; then scaled to the release's whole question count.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

QUARTERS = ("2026q1", "2026q2", "2026q3", "2026q4")


def release(root: Path, quarter: str, size: str, published: Path | None) -> tuple[dict, float, float]:
    """Run one quarter's release command; (its report, wall seconds, CPU seconds of the command)."""
    argv = [
        sys.executable,
        "-m",
        "continuousbench.cli",
        "release",
        "--quarter",
        quarter,
        "--size",
        size,
        "--root",
        str(root),
        "--models",
        "demo-base",
    ]
    argv += ["--publish", str(published)] if published else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        raise SystemExit(f"release {quarter} failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    attempts = sorted((root / ".quarterly" / quarter).glob("attempt-*"))
    return json.loads((attempts[-1] / "report.json").read_text()), wall, cpu


def figures(report: dict) -> dict:
    ((rid, r),) = report["releases"].items()
    gates = r["gates"]["gates"]
    closed = next(iter(gates["unsolvable"]["models"].values()))
    return {
        "release": rid,
        "previous": len(r["previous"]),
        "build_s": r["seconds"]["build"],
        "closed_book_s": r["seconds"]["build_stages"].get("closed-book", 0.0),
        **{f"{g}_s": gates[g]["seconds"] for g in ("unsolvable", "learnable", "fresh")},
        "correct": closed["correct"],
        "n": closed["questions"],
        "upper": closed["wilson_95"][1],
        "overlap": gates["fresh"]["checks"][2]["figure"],
        "passed": r["gates"]["passed"],
    }


def fail_chance(n: int, accuracy: float, threshold: float = 0.05) -> float:
    """P(the Wilson 95% upper bound of k/n >= threshold) for k ~ Binomial(n, accuracy)."""
    from scipy.stats import binom

    from continuousbench.stats import wilson_interval

    first = next(k for k in range(n + 1) if wilson_interval(k, n)[1] >= threshold)
    return float(binom.sf(first - 1, n, accuracy))


def screening(root: Path, size: str, n: int) -> None:
    """CPU seconds of blind and informed answers to ``n`` questions, prefix reused or not, alternated."""
    import torch
    from datasets import concatenate_datasets

    from continuousbench.geminon.closed_book import load_model
    from continuousbench.llm.local import greedy_answers
    from continuousbench.release.load import load_release
    from continuousbench.scoring.prompts import informed_prompt, qa_prompt

    torch.set_num_threads(1)
    folder = root / f"geminon-{size}-2026q1"
    parts = [
        load_release(folder, p, s) for p in ("qa_public", "qa_singleton") for s in ("validation", "test")
    ]
    qa = concatenate_datasets(parts)
    total = json.loads((folder / "release.json").read_text())["generator"]["closed_book"]["questions"]
    picked = qa.shuffle(seed=0).select(range(min(n, len(qa))))
    train = load_release(folder, "corpus", "train")
    by_entity = {}
    for entities, text in zip(train["entities"], train["text"], strict=True):
        if len(entities) == 1 and entities[0] not in by_entity:
            by_entity[entities[0]] = text  # a document about the entity (a stand-in for its supporting one)
    prompts = {
        "blind": [qa_prompt(q) for q in picked["question"]],
        "informed": [
            informed_prompt(q, by_entity.get(e, ""))
            for q, e in zip(picked["question"], picked["entity"], strict=True)
        ],
    }
    model, tokenizer = load_model("demo-base")
    seconds: dict[tuple[str, bool], list[float]] = {}
    for _ in range(2):
        for kind, asked in prompts.items():
            for reuse in (True, False):
                started = time.process_time()
                greedy_answers(model, tokenizer, asked, batch_size=32, max_new_tokens=32, reuse_prefix=reuse)
                seconds.setdefault((kind, reuse), []).append(time.process_time() - started)
    print(f"\nscreening CPU seconds, {len(picked)} questions of {folder.name} ({total} in all), one thread:")
    print("| attempt | prefix run once a batch | CPU s (2 runs) | per 1,000 questions | whole release |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (kind, reuse), runs in seconds.items():
        per = min(runs) / len(picked) * 1000
        shown = " / ".join(f"{r:.1f}" for r in runs)
        print(f"| {kind} | {'yes' if reuse else 'no'} | {shown} | {per:.1f} | {per * total / 1000:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--size", default="small")
    parser.add_argument("--no-rehearsal", dest="rehearsal", action="store_false")
    parser.add_argument("--screening", type=int, default=0, help="time the screening alone on N questions")
    args = parser.parse_args()
    if args.screening:
        return screening(args.root, args.size, args.screening)
    load = os.getloadavg()
    rows = []
    for quarter in QUARTERS:
        report, wall, cpu = release(args.root, quarter, args.size, args.root / "published")
        rows.append({**figures(report), "wall_s": wall, "cpu_s": cpu})
        print(json.dumps(rows[-1]), flush=True)
    print(f"\nload average at the start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (2 cores)")
    print(
        "| release | earlier | wall s | CPU s | build s | closed-book s | unsolvable s | learnable s | "
        "fresh s | closed-book correct | Wilson upper | 13-gram overlap | passed |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        cells = [
            r["release"],
            r["previous"],
            f"{r['wall_s']:.0f}",
            f"{r['cpu_s']:.0f}",
            f"{r['build_s']:.0f}",
            f"{r['closed_book_s']:.0f}",
            f"{r['unsolvable_s']:.0f}",
            f"{r['learnable_s']:.1f}",
            f"{r['fresh_s']:.0f}",
            f"{r['correct']} of {r['n']}",
            f"{r['upper']:.4f}",
            f"{r['overlap']:.4f}",
            r["passed"],
        ]
        print("| " + " | ".join(map(str, cells)) + " |")
    n = rows[-1]["n"]
    print(f"\nunsolvable gate at n = {n}: chance it fails for a model of true closed-book accuracy p")
    print("| p | 0 | 0.01 | 0.02 | 0.03 | 0.04 | 0.045 |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        "| P(fail) | "
        + " | ".join(f"{fail_chance(n, p):.2g}" for p in (0, 0.01, 0.02, 0.03, 0.04, 0.045))
        + " |"
    )
    if not args.rehearsal:
        return
    second = args.root.with_name(args.root.name + "-rehearsal")
    shutil.rmtree(second, ignore_errors=True)
    first = f"geminon-{args.size}-2026q1"
    shutil.copytree(args.root / first, second / first)
    tiny, wall, _ = release(second, "2026q2", "tiny", None)
    real, wall2, _ = release(second, "2026q2", args.size, None)
    ((rid, r),) = real["releases"].items()
    compared = filecmp.dircmp(args.root / rid, second / rid)
    same = _same(compared)
    rehearsed = tiny["releases"]["geminon-tiny-2026q2"]["previous"]
    print(
        f"\nrehearsal: tiny 2026q2 ({wall:.0f} s, gated against {rehearsed}), then {rid} ({wall2:.0f} s, "
        f"gated against {r['previous']}): every gate passed: {r['gates']['passed']}; its files byte-identical"
        f" to the run without the rehearsal: {same}"
    )


def _same(compared: filecmp.dircmp) -> bool:
    """Every file of both folders present in both with equal bytes (filecmp's shallow check off)."""
    _, mismatch, errors = filecmp.cmpfiles(
        compared.left, compared.right, compared.common_files, shallow=False
    )
    return not (compared.left_only or compared.right_only or mismatch or errors) and all(
        _same(sub) for sub in compared.subdirs.values()
    )


if __name__ == "__main__":
    main()
