"""Search for the demo's base model: one pretraining recipe per run, then the evaluator on the tiny release.

    .venv/bin/python benchmarks/demo_base_search.py --name wide --lines 100 100 100 --docs-per-entity 20 \
        --steps 3000 --eval-every 500 --release demo-output/releases/geminon-tiny-2026q1 --evaluate 250

Builds a pretraining world (``--lines`` 3-, 2- and 1-stage evolution lines; ``--docs-per-entity``
documents per entity in the release's style mix; the release's names forbidden), holds out
``--held-out`` of its entities (documents only), pretrains a base model with
:func:`continuousbench.demo.pretrain.pretrain_base_model` and records the accuracy on trained and held-out
entities every ``--eval-every`` steps (held-out accuracy = how well the model turns documents into
answers). ``--evaluate N`` then runs the demo's evaluator recipe for N steps on the release's real corpus
(with this world's QA documents as the replay mixture) and records test accuracy. Everything goes to
``<out>/<name>/result.json`` with wall and CPU (user + sys) seconds per stage: wall times on a shared
machine are inflated by other processes, CPU times much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class Clock:
    """Wall and CPU seconds of a block (CPU = user + sys of this process and its children)."""

    def __init__(self):
        self.times: dict[str, dict[str, float]] = {}

    @staticmethod
    def _cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    def __call__(self, name: str):
        clock = self

        class _Block:
            def __enter__(self):
                self.wall, self.cpu = time.perf_counter(), clock._cpu()

            def __exit__(self, *exc):
                clock.times[name] = {
                    "wall_s": round(time.perf_counter() - self.wall, 1),
                    "cpu_s": round(clock._cpu() - self.cpu, 1),
                }

        return _Block()


def evaluator_argv(release: Path, base: Path, run: Path, *, seed: int, steps: int) -> list[str]:
    """The demo's evaluator recipe on ``release`` from ``base`` (replaying its corpus) into ``run``; the
    sibling benchmark scripts add their own options."""
    from continuousbench.demo.demo import EVALUATOR_RECIPE

    return [
        "--config",
        str(EVALUATOR_RECIPE),
        "--release",
        str(release),
        "--model",
        str(base),
        "--output_dir",
        str(run),
        "--replay_corpus",
        str(base / "replay.parquet"),
        "--seed",
        str(seed),
        "--max_steps",
        str(steps),
    ]


def evaluate(run: Path, release: Path, base: Path, steps: int, extra: list[str], seed: int):
    from continuousbench.harness.run import cli
    from continuousbench.training.config import cpu_has_native_bf16

    argv = evaluator_argv(release, base, run, seed=seed, steps=steps)
    argv += ["--overwrite", "true", "--bf16", str(cpu_has_native_bf16()).lower(), *extra]
    return summary(cli(argv), steps, extra)


def summary(results: dict, steps: int, options: list[str]) -> dict:
    """Validation curve, selected step and test accuracies (%) of a harness run's ``results.json``."""
    public, singleton = (results["metrics"][p]["metrics"] for p in ("qa_public", "qa_singleton"))
    return {
        "steps": steps,
        "options": options,
        "validation": [(v["step"], round(100 * v["contains"], 1)) for v in results["validation_history"]],
        "selected": results["selected_checkpoint"]["step"],
        "public_em": round(100 * public["exact_match"]["accuracy"], 1),
        "public_contains": round(100 * public["contains"]["accuracy"], 1),
        "singleton_em": round(100 * singleton["exact_match"]["accuracy"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", type=Path, default=Path("/tmp/demo-base-search"))
    parser.add_argument("--release", type=Path, required=True, help="A tiny release folder.")
    parser.add_argument("--base", type=Path, help="Skip pretraining: evaluate this base model folder.")
    parser.add_argument("--lines", type=int, nargs=3, default=[10, 10, 10])
    parser.add_argument("--docs-per-entity", type=float, default=100)
    parser.add_argument("--qa-fraction", type=float, default=0.4)
    parser.add_argument("--held-out", type=float, default=0.2)
    parser.add_argument("--probe", type=int, default=156, help="Questions per accuracy probe.")
    parser.add_argument("--world-seed", type=int, default=1_000_003)
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=16, help="Blocks of 256 tokens per step.")
    parser.add_argument("--eval-every", type=int, default=0)
    parser.add_argument("--evaluate", type=int, nargs="*", default=[], help="Evaluator steps (one run each).")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args, extra = parser.parse_known_args()  # the rest goes to the evaluator

    import torch

    from continuousbench.demo import pretrain as P
    from continuousbench.demo.demo import quiet as _quiet
    from continuousbench.files import read_json, write_json
    from continuousbench.training.config import cpu_has_native_bf16

    torch.set_num_threads(args.threads)
    _quiet()
    folder = args.out / args.name
    folder.mkdir(parents=True, exist_ok=True)
    clock = Clock()
    result: dict = {"args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}}
    base = args.base or folder / "base-model"
    if args.base is None:
        n_entities = sum(k * v for k, v in zip((3, 2, 1), args.lines, strict=True))
        recipe = P.BaseRecipe(
            lines=tuple(args.lines), documents=round(args.docs_per_entity * n_entities),
            qa_fraction=args.qa_fraction, held_out_fraction=args.held_out, world_seed=args.world_seed,
            steps=args.steps, learning_rate=args.lr, samples_per_step=args.batch, hidden_size=args.hidden,
            num_layers=args.layers, num_heads=args.heads, vocab_size=args.vocab, bf16=cpu_has_native_bf16(),
            seed=args.seed, probe_questions=args.probe, curve_every=args.eval_every,
        )  # fmt: skip
        with clock("pretrain"):
            P.build_base_model(base, recipe, forbidden_names=P.release_names(args.release))
        result["pretraining"] = read_json(base / P.INFO_FILE)
        result["pretraining"]["pretraining_world"].pop("names", None)
        keys = ("pretraining_world_qa", "held_out_qa", "curve")
        print(json.dumps({k: result["pretraining"][k] for k in keys}))
    result["evaluations"] = []
    for steps in args.evaluate:
        with clock(f"evaluate {steps}"):
            row = evaluate(folder / f"eval-{steps}", args.release, base, steps, extra, args.seed)
        result["evaluations"].append(row)
        print(json.dumps(row))
    result["times"] = clock.times
    write_json(folder / "result.json", result)
    print(json.dumps(clock.times))


if __name__ == "__main__":
    main()
