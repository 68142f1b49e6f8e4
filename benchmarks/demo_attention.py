"""The demo's training stages on one CPU thread with eager attention and with SDPA, alternated.

    .venv/bin/python benchmarks/demo_attention.py --demo demo-output --steps 30 --rounds 2

Reuses a finished demo folder's release. Runs the demo evaluator (``evaluate`` with the demo recipe on the
release corpus, ``--max_steps``) and the non-private generator (``train-generator`` with the demo
generator recipe, no epsilon, ``--steps``), each with ``--attn_implementation eager`` and ``sdpa`` in turn,
``--rounds`` times, and prints every run's user + system CPU seconds (its process tree) and the best of
each. The demo recipes set eager: see docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "continuousbench" / "demo" / "configs"
BASE = ROOT / "continuousbench" / "demo" / "base"


def commands(demo: Path, out: Path, steps: int) -> dict[str, list[str]]:
    """The two stages' command lines (``out`` is the output folder, emptied before each run)."""
    release = demo / "releases" / "geminon-tiny-2026q1"
    common = f"--release {release} --output_dir {out} --model {BASE} --seed 0 --bf16 true"
    every = f"--eval_steps {steps} --save_steps {steps}"
    return {
        "evaluate": shlex.split(
            f"evaluate --config {CONFIGS / 'geminon-tiny-demo.yaml'} {common} "
            f"--replay_corpus {BASE / 'replay.parquet'} --max_steps {steps} {every}"
        ),
        "train-generator": shlex.split(
            f"train-generator --config {CONFIGS / 'geminon-tiny-demo-generator.yaml'} {common} "
            f"--steps {steps} {every}"
        ),
    }


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU seconds of ``continuousbench argv`` (a child process, one thread)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    subprocess.run(
        [Path(sys.executable).with_name("continuousbench"), *argv],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, required=True, help="A finished demo folder (its release).")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=("evaluate", "train-generator"), help="One stage only.")
    args = parser.parse_args()
    best: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        for _ in range(args.rounds):
            for stage, argv in commands(args.demo, out, args.steps).items():
                if args.only and stage != args.only:
                    continue
                for attention in ("eager", "sdpa"):
                    shutil.rmtree(out, ignore_errors=True)
                    seconds = cpu_seconds([*argv, "--attn_implementation", attention])
                    best[stage, attention] = min(seconds, best.get((stage, attention), seconds))
                    print(f"{stage:<16} {attention:<6} {seconds:6.1f} CPU-s", flush=True)
    for stage in sorted({stage for stage, _ in best}):
        eager, sdpa = best[stage, "eager"], best[stage, "sdpa"]
        print(
            f"best of {args.rounds}: {stage:<16} eager {eager:6.1f}  sdpa {sdpa:6.1f}  ({sdpa / eager:.2f}x)"
        )


if __name__ == "__main__":
    main()
