"""Search the demo's generator settings: train one generator, sample a corpus, evaluate it, MAUVE it.

    .venv/bin/python benchmarks/demo_generators.py --demo demo-output --name dp100-b256 --epsilon 100 \
        --steps 40 --gen expected_batch_size=256 lora_r=8 --sample temperature=0.7 num_samples=1200

Reuses a demo folder's release and base model (the shipped one, or ``base-model/`` after
``--rebuild_base``; with ``replay.parquet``). ``--gen``
overrides options of the generator recipe (``recipes/configs/geminon-tiny-demo-generator.yaml``),
``--sample`` those of ``continuousbench synthesize``, ``--eval`` those of the evaluator recipe. Prints
and writes ``<demo>/generator-search/<name>/result.json``: QA test accuracy of the evaluator trained on
the synthetic corpus, MAUVE against the real corpus (the demo's encoder and sample size), the share of
documents naming a release entity, and wall and CPU (user + sys) seconds per stage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _options(pairs: list[str]) -> list[str]:
    return [a for p in pairs for a in (f"--{p.split('=', 1)[0]}", p.split("=", 1)[1])]


def _every(steps: int) -> int:
    """About five evaluations per run, at a divisor of ``steps`` (Trainer wants saves on evaluations)."""
    return next(d for d in range(max(1, steps // 5), 0, -1) if steps % d == 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--epsilon", type=float, default=None)
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--gen", nargs="*", default=[], help="key=value generator options")
    parser.add_argument("--sample", nargs="*", default=[], help="key=value synthesize options")
    parser.add_argument("--eval", nargs="*", default=[], help="key=value evaluator options")
    parser.add_argument("--eval-steps", type=int, default=250)
    parser.add_argument("--mauve-samples", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="Keep a finished generator / corpus.")
    args = parser.parse_args()

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from demo_base_search import Clock, evaluator_argv  # a sibling benchmark script

    from continuousbench.demo.demo import GENERATOR_RECIPE, QUARTER, base_model_of
    from continuousbench.demo.demo import quiet as _quiet
    from continuousbench.files import read_json, write_json
    from continuousbench.training.config import cpu_has_native_bf16

    torch.set_num_threads(args.threads)
    _quiet()
    bf16 = str(cpu_has_native_bf16()).lower()
    release = args.demo / "releases" / f"geminon-tiny-{QUARTER}"
    base = base_model_of(args.demo)
    folder = args.demo / "generator-search" / args.name
    gen, corpus, run = folder / "generator", folder / "corpus", folder / "run"
    clock = Clock()
    if not (args.reuse and (gen / "privacy.json").exists()):
        from continuousbench.dp.train import cli as train_generator

        argv = [
            "--config",
            str(GENERATOR_RECIPE),
            "--release",
            str(release),
            "--model",
            str(base),
            "--output_dir",
            str(gen),
            "--seed",
            str(args.seed),
            "--overwrite",
            "true",
            "--steps",
            str(args.steps),
            "--eval_steps",
            str(_every(args.steps)),
            "--save_steps",
            str(args.steps),
        ]
        argv += ["--epsilon", f"{args.epsilon:g}"] if args.epsilon else ["--bf16", bf16]
        with clock("train generator"):
            train_generator(argv + _options(args.gen))
    if not (args.reuse and (corpus / "README.md").exists()):
        from continuousbench.dp.synthesize import cli as synthesize

        argv = [
            "--generator",
            str(gen),
            "--output_dir",
            str(corpus),
            "--num_samples",
            "600",
            "--max_new_tokens",
            "160",
            "--temperature",
            "0.7",
            "--batch_size",
            "64",
            "--seed",
            str(args.seed),
            "--overwrite",
            "true",
        ]
        with clock("synthesize"):
            synthesize(argv + _options(args.sample))
    from continuousbench.demo.pretrain import release_names
    from continuousbench.harness.run import cli as evaluate
    from continuousbench.training.data import load_corpus

    texts = load_corpus(str(corpus))["text"]
    names = release_names(release)
    named = sum(any(n in t for n in names) for t in texts) / len(texts)
    argv = evaluator_argv(release, base, run, seed=args.seed, steps=args.eval_steps)
    argv += ["--corpus", str(corpus), "--overwrite", "true", "--bf16", bf16]
    with clock("evaluate"):
        results = evaluate(argv + _options(args.eval))
    from continuousbench.diagnostics.mauve import mauve_score

    with clock("mauve"):
        reference = load_corpus(str(release))["text"]
        mauve = mauve_score(texts, reference, model_path=str(base), n_samples=args.mauve_samples, seeds=(0,))
    public = results["metrics"]["qa_public"]["metrics"]["exact_match"]
    singleton = results["metrics"]["qa_singleton"]["metrics"]["exact_match"]
    row = {
        "name": args.name,
        "epsilon": args.epsilon,
        "steps": args.steps,
        "gen": args.gen,
        "sample": args.sample,
        "eval": args.eval,
        "documents": len(texts),
        "named_share": round(named, 3),
        "public_em": round(100 * public["accuracy"], 1),
        "questions": public["count"],
        "correct": round(public["accuracy"] * public["count"]),
        "singleton_em": round(100 * singleton["accuracy"], 1),
        "mauve": round(mauve["mean"], 3),
        "times": clock.times,
    }
    privacy = gen / "privacy.json"
    if privacy.exists():
        row["generator"] = {k: v for k, v in read_json(privacy).items() if k != "event_json"}
    write_json(folder / "result.json", row)
    print("RESULT", json.dumps({k: v for k, v in row.items() if k != "generator"}))


if __name__ == "__main__":
    main()
