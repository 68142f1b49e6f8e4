"""``continuousbench demo`` (``make demo``): the whole study in miniature, on a CPU, offline.

1. build the ``tiny`` Geminon release;
2. make a base model: a tiny Llama pretrained on a separate, disjoint Geminon world
   (:mod:`continuousbench.demo.pretrain`), so it knows the QA format but none of the release's facts;
3. evaluate it with no training, and after continued pretraining on the real corpus;
4. train three generators on the real corpus (non-private, DP at epsilon 100 and 10), sample a
   synthetic corpus from each, and evaluate the base model trained on each synthetic corpus;
5. MAUVE of each corpus against the real one (the base model's mean-pooled hidden states are the
   encoder), then a table and a bar chart.

Every stage is a public command or function of the library (``build_release``, ``pretrain_base_model``,
``harness.run.cli``, ``dp.train.cli``, ``dp.synthesize.cli``, ``diagnostics.mauve``, ``harness.report``);
the demo only chooses their arguments. The evaluator recipe ``configs/geminon-tiny-demo.yaml``
is the same for every candidate corpus. A finished stage (its output folder complete) is skipped on a
rerun, so an interrupted demo resumes where it stopped.

    continuousbench demo [--out demo-output] [--quick] [--overwrite] [--seed 0] [--threads 2]
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path

from continuousbench.commands import bounds
from continuousbench.files import read_json, write_json

RECIPES = Path(str(resources.files("continuousbench.demo") / "configs"))  # package data: wheels have it
EVALUATOR_RECIPE = RECIPES / "geminon-tiny-demo.yaml"
GENERATOR_RECIPE = RECIPES / "geminon-tiny-demo-generator.yaml"
QUARTER = "2026q1"
PRETRAIN_SEED = 1_000_003  # any seed other than the release's gives another world; names are forbidden too
RUNS: dict[str, str | None] = {  # run -> the corpus it trains on (None: no training)
    "no-training": None,
    "train-on-real": "real",
    "syn": "syn",
    "dp-syn-eps100": "dp-eps100",
    "dp-syn-eps10": "dp-eps10",
}
GENERATORS: dict[str, float | None] = {"syn": None, "dp-eps100": 100.0, "dp-eps10": 10.0}  # name -> epsilon


@dataclass(frozen=True)
class Settings:
    """What the demo decides beyond the recipes; ``quick`` shrinks it for the CI test (same stages)."""

    pretrain_lines: tuple[int, int, int] = (10, 10, 10)  # 3-, 2-, 1-stage lines of the pretraining world
    pretrain_docs: int = 6000
    qa_fraction: float = 0.4  # share of the pretraining text that is QA about the pretraining world
    held_out_fraction: float = 0.2  # pretraining entities seen in documents only (their QA measures transfer)
    base_steps: int = 800  # 600 steps: the base model answers 42% of its own world's questions (800: 77-96%)
    replay: bool = True  # the evaluator recipe's replay mixture: pretraining-world QA documents
    eval_steps: int | None = None  # None: the recipe's max_steps / eval_steps
    generator_steps: int = 250
    dp_steps: int = 20  # per-example gradients in float32: a DP step costs ~5x a non-private bf16 one here
    synthetic_samples: int = 600
    temperature: float = 0.7  # the same for every generator; at 1.0 Syn fell from 10.3% to 3.4% EM
    mauve_samples: int = 500
    bf16: bool = False  # bf16 autocast in non-private training; on where the CPU computes bf16 natively

    @classmethod
    def quick(cls) -> Settings:
        return cls(
            pretrain_lines=(3, 3, 3), pretrain_docs=600, base_steps=40, eval_steps=10, generator_steps=10,
            dp_steps=5, synthetic_samples=64, mauve_samples=64,
        )  # fmt: skip


def _argv(**options) -> list[str]:
    """``--key value`` pairs for a command's parser (None values left out)."""
    return [a for k, v in options.items() if v is not None for a in (f"--{k}", str(v))]


class Stages:
    """Runs each stage unless it is done, printing it with its wall time; times go to ``timings.json``."""

    def __init__(self, out: Path):
        from rich.console import Console

        self.console = Console()
        self.file = out / "timings.json"
        self.timings: dict[str, float] = read_json(self.file) if self.file.exists() else {}

    def run(self, name: str, done: Callable[[], bool], work: Callable[[], object]) -> None:
        if done():
            self.console.print(f"[dim]- {name}: done already, skipped[/dim]")
            return
        self.console.rule(f"[bold]{name}")
        start = time.perf_counter()
        work()
        self.timings[name] = round(time.perf_counter() - start, 1)
        write_json(self.file, self.timings)
        self.console.print(f"[green]- {name}: {self.timings[name]:.0f} s")


def _quiet() -> None:
    """Library progress bars and info logs would bury the demo's own output."""
    import logging

    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    logging.getLogger("continuousbench").setLevel(logging.WARNING)


def _base_model(out: Path, world_dir: Path, release: Path, s: Settings, seed: int) -> None:
    import numpy as np

    from continuousbench.demo import pretrain as P
    from continuousbench.geminon.sizes import SizeSpec

    scale = s.pretrain_docs / sum(P.PRETRAIN_SPEC.mix.values())
    spec = SizeSpec(
        name="pretrain", lines=dict(zip((3, 2, 1), s.pretrain_lines, strict=True)), sensitive_lines={},
        mix={k: round(v * scale) for k, v in P.PRETRAIN_SPEC.mix.items()},
    )  # fmt: skip
    world = P.make_pretraining_world(
        spec, seed=PRETRAIN_SEED + seed, forbidden_names=P.release_names(release)
    )
    qa_world, held_out = world.hold_out(s.held_out_fraction, seed)
    texts = qa_world.texts(qa_fraction=s.qa_fraction)
    rng = np.random.default_rng(seed)
    P.save_texts(world_dir / "texts.parquet", texts)
    P.save_texts(world_dir / "replay.parquet", qa_world.qa_documents(2 * len(qa_world.questions), rng))
    probe = rng.choice(len(qa_world.questions), size=min(104, len(qa_world.questions)), replace=False)
    info = {"entities": len(world.world), "documents": len(world.documents), "seed": world.seed}
    P.pretrain_base_model(
        out, texts, steps=s.base_steps, seed=seed, overwrite=True, extra_info={"pretraining_world": info},
        eval_questions=[qa_world.questions[int(i)] for i in sorted(probe)], held_out_questions=held_out,
        tokenizer_texts=world.without_names(texts), bf16=s.bf16,
    )  # fmt: skip


def _evaluate(
    run: Path, release: Path, base: Path, corpus: Path | None, replay: Path | None, s: Settings, seed: int
):
    from continuousbench.harness.run import cli as evaluate

    steps = None if corpus is None or s.eval_steps is None else 2 * s.eval_steps
    argv = _argv(
        config=EVALUATOR_RECIPE, release=release, model=base, output_dir=run, seed=seed, overwrite="true",
        corpus=None if corpus in (None, release) else corpus, steps=0 if corpus is None else steps,
        eval_steps=s.eval_steps if steps else None, save_steps=s.eval_steps if steps else None,
        replay_corpus=replay if corpus is not None else None, bf16=s.bf16,
    )  # fmt: skip
    evaluate(argv)


def _train_generator(gen: Path, release: Path, base: Path, epsilon: float | None, s: Settings, seed: int):
    from continuousbench.dp.train import cli as train_generator

    steps = s.generator_steps if epsilon is None else s.dp_steps
    train_generator(
        _argv(
            config=GENERATOR_RECIPE, release=release, model=base, output_dir=gen, seed=seed, overwrite="true",
            steps=steps, eval_steps=max(1, steps // 5), save_steps=steps,
            epsilon=None if epsilon is None else f"{epsilon:g}",
            bf16=s.bf16 if epsilon is None else None,  # the DP loop trains in float32
        )
    )  # fmt: skip


def _synthesize(corpus: Path, gen: Path, s: Settings, seed: int) -> None:
    from continuousbench.dp.synthesize import cli as synthesize

    synthesize(
        _argv(
            generator=gen, output_dir=corpus, num_samples=s.synthetic_samples, max_new_tokens=160,
            temperature=s.temperature, batch_size=64, seed=seed, overwrite="true",
        )
    )  # fmt: skip


def _mauve(out: Path, release: Path, base: Path, corpora: dict[str, Path], s: Settings, seed: int) -> None:
    from continuousbench.diagnostics.mauve import mauve_score, reference_mauve
    from continuousbench.harness.data import load_corpus

    reference = load_corpus(str(release))["text"]
    common = {"model_path": str(base), "n_samples": s.mauve_samples, "seeds": (seed,)}
    # The real corpus against itself (two disjoint halves): the ceiling a synthetic corpus can reach.
    scores = {"real": reference_mauve(reference, **common)}
    for name, path in corpora.items():
        if name != "real":
            scores[name] = mauve_score(load_corpus(str(path))["text"], reference, **common)
    write_json(out, scores)


def _table(out: Path, runs: dict[str, Path], mauve: dict) -> list[dict]:
    from rich.console import Console
    from rich.table import Table

    from continuousbench.harness.report import comparison_rows, format_cell, load_run, plot_comparison

    rows = comparison_rows({name: load_run(path) for name, path in runs.items()})
    for row in rows:
        corpus = RUNS[row["run"]]
        row["mauve"] = mauve[corpus]["mean"] if corpus in mauve else None
    plot_comparison(rows, out / "results.png")
    write_json(out / "results.json", rows)
    table = Table(
        title="Test accuracy (%) of the base model trained on each corpus; MAUVE vs the real corpus",
        caption="\\[low, high]: Wilson 95% interval over the test questions",
    )
    table.add_column("run", no_wrap=True)
    for col in ("steps", "public EM", "public contains", "singleton EM", "singleton contains", "MAUVE"):
        table.add_column(col, justify="right")
    for r in rows:
        cols = [f"qa_{p}/{m}" for p in ("public", "singleton") for m in ("exact_match", "contains")]
        cells = [format_cell(r, c) for c in cols]
        mauve_cell = "-" if r["mauve"] is None else f"{r['mauve']:.3f}"
        table.add_row(r["run"], str(r["steps"]), *cells, mauve_cell)
    Console(width=max(100, Console().width)).print(table)
    return rows


def run_demo(out: Path, *, quick: bool = False, overwrite: bool = False, seed: int = 0, threads: int = 2):
    """Run (or resume) every stage under ``out``; return the table rows (also in ``out/results.json``)."""
    import torch

    from continuousbench.geminon.build import GeminonBuildArguments, build_release, release_id
    from continuousbench.harness.compare import compare_runs, print_comparison
    from continuousbench.harness.config import cpu_has_native_bf16

    s = replace(Settings.quick() if quick else Settings(), bf16=cpu_has_native_bf16())
    from continuousbench.files import check_writable_dir

    out = check_writable_dir(Path(out), "--out")
    settings_file = out / "settings.json"
    if out.is_dir() and any(out.iterdir()) and not settings_file.is_file():  # not ours: never write into it
        raise ValueError(
            f"--out {out} is not a demo folder (it has files but no settings.json); the demo writes its "
            "own results.json, runs/ and more there (and --overwrite removes the whole folder): pass a "
            "demo's folder or a new one"
        )
    if overwrite and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = json.loads(json.dumps({"quick": quick, "seed": seed, **asdict(s)}))  # tuples read back as lists
    if settings_file.exists() and read_json(settings_file) != wanted:
        raise ValueError(f"{out} holds a demo with other settings: pass --overwrite, or another --out")
    write_json(settings_file, wanted)
    torch.set_num_threads(threads)
    _quiet()
    stages = Stages(out)
    root, base, world_dir = out / "releases", out / "base-model", out / "pretraining-world"
    release = root / str(release_id("tiny", QUARTER))
    replay = world_dir / "replay.parquet" if s.replay else None
    stages.run(
        "build release", (release / "release.json").exists,
        lambda: build_release(
            GeminonBuildArguments(size="tiny", quarter=QUARTER, seed=seed, out=str(root)), progress=False
        ),
    )  # fmt: skip
    stages.run(
        "pretrain base model", (base / "pretraining.json").exists,
        lambda: _base_model(base, world_dir, release, s, seed),
    )  # fmt: skip
    runs = {name: out / "runs" / name for name in RUNS}
    corpora = {"real": release} | {gen: out / "synthetic" / gen for gen in GENERATORS}

    def evaluate(name: str) -> None:
        corpus = None if RUNS[name] is None else corpora[RUNS[name]]
        stages.run(
            f"evaluate {name}", (runs[name] / "results.json").exists,
            lambda: _evaluate(runs[name], release, base, corpus, replay, s, seed),
        )  # fmt: skip

    evaluate("no-training")
    evaluate("train-on-real")
    for gen, epsilon in GENERATORS.items():
        gen_dir = out / "generators" / gen
        stages.run(
            f"train generator {gen}", (gen_dir / "privacy.json").exists,
            lambda g=gen_dir, e=epsilon: _train_generator(g, release, base, e, s, seed),
        )  # fmt: skip
        stages.run(
            f"synthesize {gen}", (corpora[gen] / "README.md").exists,
            lambda c=corpora[gen], g=gen_dir: _synthesize(c, g, s, seed),
        )  # fmt: skip
    for name, corpus in RUNS.items():
        if corpus in GENERATORS:
            evaluate(name)
    mauve_file = out / "mauve.json"
    stages.run("mauve", mauve_file.exists, lambda: _mauve(mauve_file, release, base, corpora, s, seed))
    rows = _table(out, runs, read_json(mauve_file))
    print_comparison(compare_runs(runs["syn"], runs["dp-syn-eps10"]))  # "Syn beats DP-Syn", paired
    total = sum(stages.timings.values())
    stages.console.print(
        f"stage times (s): {json.dumps(stages.timings)}; total {total:.0f} s ({total / 60:.1f} min)"
    )
    stages.console.print(f"outputs in {out}/: results.png, results.json, runs/, generators/, synthetic/")
    return rows


@dataclass
class DemoArguments:
    out: str = field(default="demo-output", metadata={"help": "Folder for every output."})
    quick: bool = field(default=False, metadata={"help": "A few-minute version (the CI test)."})
    overwrite: bool = field(default=False, metadata={"help": "Start over, removing --out first."})
    seed: int = field(default=0, metadata=bounds("[0, 1e9]", "Seed of the release and every training run."))
    threads: int = field(
        default=2, metadata=bounds("[1, 1024]", "torch CPU threads (2 on the reference machine).")
    )


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser([DemoArguments], prog="continuousbench demo", description=__doc__.splitlines()[0])


def main(args: DemoArguments) -> list[dict]:
    return run_demo(
        Path(args.out), quick=args.quick, overwrite=args.overwrite, seed=args.seed, threads=args.threads
    )


def cli(argv: Sequence[str] | None = None) -> list[dict]:
    """Parse ``argv`` and run the demo; bad input exits 2 with one line; a rerun resumes."""
    from continuousbench.commands import run

    return run(
        lambda: main(*make_parser().parse(argv)),
        resume_hint="finished stages are kept; rerun the same command to resume",
    )
