"""Time a Geminon build: wall and CPU seconds, the whole process tree's peak memory, stages, release digests.

Usage:
    python benchmarks/build_geminon.py                 # small (paper: 200k public documents)
    python benchmarks/build_geminon.py --size tiny     # quick mode, seconds
    python benchmarks/build_geminon.py --size medium   # 1M documents
    python benchmarks/build_geminon.py --size small --before /tmp/cb-before --rounds 3
        # before/after in one run: /tmp/cb-before holds the old package (`git archive <rev> continuousbench
        # | tar -x -C /tmp/cb-before`); the two alternate, odd rounds reversed; medians and ratios

Each build runs in a fresh process (imports included, as the CLI pays them) into a temporary root that is
removed afterwards. CPU is the build process's and its forked workers' (``getrusage`` of the process and
its reaped children); peak memory is polled every 0.2 s over the process tree: the sum of the processes'
PSS (pages shared by forked workers counted once) and of their RSS (counted in every process that maps
them). The release's files are hashed, so the variants' outputs can be compared byte for byte. Targets on
a 2-core CPU (issue 34): small <= 20 s; medium <= 90 s and <= 3 GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# What the build process runs: the build, then its stage timings, CPU and the release's digests as JSON.
CHILD = """
import hashlib, json, resource, sys, tempfile, time
from pathlib import Path
start = time.perf_counter()
from continuousbench.geminon.build import GeminonBuildArguments, build_release
size, seed, oversample = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
timings = {}
with tempfile.TemporaryDirectory(prefix="cb-bench-") as root:
    # the corpus pipeline, as before closed-book screening (benchmarks/quarters.py measures that stage)
    screen = {"closed_book_models": ["none"]} if hasattr(GeminonBuildArguments, "closed_book_models") else {}
    args = GeminonBuildArguments(size=size, seed=seed, out=root, oversample=oversample, **screen)
    path = build_release(args, progress=False, timings=timings)
    wall = time.perf_counter() - start
    files = {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(path.rglob("*")) if p.is_file()}
    rows = json.loads((path / "release.json").read_text())["rows"]
usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
import continuousbench
print(json.dumps({"package": continuousbench.__file__, "wall": wall, "timings": timings, "rows": rows,
                  "files": files,
                  "cpu_self": usage[0].ru_utime + usage[0].ru_stime,
                  "cpu_workers": usage[1].ru_utime + usage[1].ru_stime}))
"""
POLL_S = 0.2


def make_parser(subparsers=None) -> argparse.ArgumentParser:
    kwargs = {"description": "Benchmark a Geminon release build (optionally against older code)."}
    parser = (
        subparsers.add_parser("build-geminon", **kwargs) if subparsers else argparse.ArgumentParser(**kwargs)
    )
    parser.add_argument("--size", default="small", choices=("tiny", "small", "medium"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--oversample", type=float, default=None, help="cap pools at this multiple of the target"
    )
    parser.add_argument(
        "--before", default=None, help="a folder holding the old `continuousbench` package to compare with"
    )
    parser.add_argument("--rounds", type=int, default=1, help="builds per variant (alternating)")
    return parser


def _tree_memory(root) -> tuple[int, int]:
    """Summed PSS and RSS (bytes) of a process and all its descendants, skipping those that just ended."""
    import psutil

    pss = rss = 0
    for p in [root, *root.children(recursive=True)]:
        try:
            info = p.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        pss, rss = pss + info.pss, rss + info.rss
    return pss, rss


def run_build(package_dir: str, size: str, seed: int, oversample: float | None) -> dict:
    """One build in a fresh process importing ``continuousbench`` from ``package_dir``; its figures."""
    import psutil

    env = {**os.environ, "PYTHONPATH": package_dir}
    # -P and a neutral folder: the package comes from PYTHONPATH, not from the current directory
    argv = [sys.executable, "-P", "-c", CHILD, size, str(seed), json.dumps(oversample)]
    start, peak_pss, peak_rss = time.perf_counter(), 0, 0
    with subprocess.Popen(argv, env=env, cwd="/", stdout=subprocess.PIPE, text=True) as proc:
        watched = psutil.Process(proc.pid)
        while proc.poll() is None:
            pss, rss = _tree_memory(watched)
            peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
            time.sleep(POLL_S)
        out = proc.stdout.read()
    if proc.returncode:
        raise SystemExit(f"build with {package_dir} failed (exit {proc.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    if not result["package"].startswith(str(Path(package_dir).resolve())):
        raise SystemExit(f"the build imported {result['package']}, not the package under {package_dir}")
    return {
        **result,
        "process_wall": time.perf_counter() - start,
        "peak_pss_gib": peak_pss / 2**30,
        "peak_rss_gib": peak_rss / 2**30,
    }


def _row(name: str, runs: list[dict], base: list[dict] | None) -> str:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    cells = [
        f"{med('process_wall'):.1f} s",
        f"{med('cpu_self'):.1f} + {med('cpu_workers'):.1f} s",
        f"{med('peak_pss_gib'):.2f} / {med('peak_rss_gib'):.2f} GiB",
    ]
    if base:
        wall = med("process_wall") / statistics.median(r["process_wall"] for r in base)
        cpu = (med("cpu_self") + med("cpu_workers")) / statistics.median(
            r["cpu_self"] + r["cpu_workers"] for r in base
        )
        cells.append(f"{wall:.2f}x wall, {cpu:.2f}x CPU")
    else:
        cells.append("-")
    walls = ", ".join(f"{r['process_wall']:.1f}" for r in runs)
    return f"| {name} | " + " | ".join(cells) + f" | {walls} |"


def main(
    size: str = "small",
    seed: int = 0,
    oversample: float | None = None,
    before: str | None = None,
    rounds: int = 1,
) -> dict:
    here = str(Path(__file__).resolve().parents[1])
    variants = {"after": here} if before is None else {"before": before, "after": here}
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    loads = [os.getloadavg()[0]]
    for r in range(rounds):
        for name in list(variants)[:: -1 if r % 2 else 1]:  # odd rounds reversed
            runs[name].append(run_build(variants[name], size, seed, oversample))
            loads.append(os.getloadavg()[0])
            last = runs[name][-1]
            stages = ", ".join(f"{k} {v:.1f}" for k, v in last["timings"].items())
            print(f"round {r + 1} {name}: {last['process_wall']:.1f} s wall; {stages}", flush=True)
    digests = {name: [r["files"] for r in rs] for name, rs in runs.items()}
    same = all(d == digests["after"][0] for ds in digests.values() for d in ds)
    print(f"\ngeminon-{size}, {rounds} round(s), load average (1 min) {min(loads):.1f}-{max(loads):.1f}")
    print(
        "| variant | wall (median) | CPU: build process + workers | peak tree PSS / summed RSS | ratio "
        "| walls |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name, rs in runs.items():
        print(_row(name, rs, runs.get("before") if name == "after" else None))
    data = next(f for f in digests["after"][0] if f.startswith("data/corpus/train"))
    print(f"release files identical in every build: {same} ({data} {digests['after'][0][data][:16]}...)")
    print(f"rows: {runs['after'][0]['rows']}")
    return {"runs": runs, "identical": same, "load": loads}


if __name__ == "__main__":
    args = make_parser().parse_args()
    main(args.size, args.seed, args.oversample, args.before, args.rounds)
