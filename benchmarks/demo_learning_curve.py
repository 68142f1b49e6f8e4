"""How much the demo's evaluator learns with more training: train-on-real accuracy against steps.

    .venv/bin/python benchmarks/demo_learning_curve.py --demo demo-output --steps 300 600 1200

Reuses a finished (or at least pretrained) ``continuousbench demo`` folder: its tiny release, base
model and replay documents. For each step count, runs the demo's evaluator recipe on the real corpus
(a fresh cosine schedule of that length, validation every ``--eval-every`` steps, the best checkpoint
kept, as in the demo) and prints the validation history, the test accuracy and the wall time.
Any other option goes to the evaluator (``--bf16 false``, ``--learning_rate 1e-3``, ``--replay_fraction
0.1`` ...), to compare. CPU timings are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def run(demo: Path, steps: int, eval_every: int, extra: list[str], seed: int) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from demo_base_search import evaluator_argv, summary  # a sibling benchmark script

    from continuousbench.demo.demo import QUARTER, base_model_of
    from continuousbench.harness.run import cli as evaluate

    release = demo / "releases" / f"geminon-tiny-{QUARTER}"
    base = base_model_of(demo)
    with tempfile.TemporaryDirectory() as tmp:
        argv = evaluator_argv(release, base, Path(tmp) / "run", seed=seed, steps=steps)
        argv += ["--eval_steps", str(eval_every), "--save_steps", str(eval_every), *extra]
        start = time.perf_counter()
        evaluate(argv)
        seconds = time.perf_counter() - start
        results = json.loads((Path(tmp) / "run" / "results.json").read_text())
    return {"seconds": round(seconds, 1), **summary(results, steps, [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, default=Path("demo-output"), help="A demo output folder.")
    parser.add_argument("--steps", type=int, nargs="+", default=[300, 600, 1200])
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args, overrides = parser.parse_known_args()  # the rest goes to the evaluator

    import torch

    from continuousbench.demo.demo import quiet as _quiet
    from continuousbench.training.config import cpu_has_native_bf16

    if not (args.demo / "releases").is_dir():
        raise SystemExit(f"error: {args.demo} has no release: run `continuousbench demo` first")
    torch.set_num_threads(args.threads)
    _quiet()
    extra = ["--bf16", str(cpu_has_native_bf16()).lower(), *overrides]  # the demo's choice, unless overridden
    rows = [run(args.demo, n, args.eval_every, extra, args.seed) for n in args.steps]
    print(f"evaluator on the real corpus, {args.threads} threads, options {' '.join(extra)}")
    print("steps | s | validation contains % by step | selected | public EM % | contains % | singleton EM %")
    for r in rows:
        print(
            f"{r['steps']} | {r['seconds']} | {r['validation']} | {r['selected']} | {r['public_em']} | "
            f"{r['public_contains']} | {r['singleton_em']}"
        )


if __name__ == "__main__":
    main()
