"""``continuousbench demo`` (``make demo``): the whole study in miniature, on a CPU, offline.

1. build the ``tiny`` Geminon release;
2. take the shipped base model (a tiny Llama pretrained on a separate, disjoint Geminon world by
   :func:`continuousbench.demo.pretrain.build_base_model`, so it knows the QA format but none of the
   release's facts; sha256-checked), or make it again with ``--rebuild_base``;
3. evaluate it with no training, and after continued pretraining on the real corpus;
4. train three generators on the real corpus (non-private, DP at epsilon 100 and 10), sample a
   synthetic corpus from each, run Private Evolution at epsilon 10, and evaluate the base model trained
   on each synthetic corpus; train the evaluator itself with DP-SGD at epsilon 10 (direct DP);
5. MAUVE of each corpus against the real one (the base model's mean-pooled hidden states are the
   encoder), then the table with intervals, a bar chart, Syn vs DP-Syn question by question, and a
   verdict on each of the paper's four findings (``findings.json``).

Every stage is a public command or function of the library (``build_release``, ``harness.run.cli``,
``dp.train.cli``, ``dp.synthesize.cli``, ``dp.pe_command.cli``, ``diagnostics.mauve``,
``harness.report``, ``harness.compare``); the demo only chooses their arguments. The evaluator recipe
``configs/geminon-tiny-demo.yaml`` is the same for every candidate corpus. Every stage is a job of a
study (:mod:`continuousbench.study`) on its local executor, a few at a time in child processes of one
CPU thread each; a finished job is skipped on a rerun and a stopped one continues with its command's own
``--resume``, so an interrupted demo resumes where it stopped. The demo's own two steps (copying the base
model, MAUVE of every corpus) are ``continuousbench demo --stage base-model|mauve``.

    continuousbench demo [--out demo-output] [--quick] [--overwrite] [--seed 0] [--threads 2] [--rebuild_base]
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.demo.pretrain import BaseRecipe
from continuousbench.errors import UserError
from continuousbench.files import read_json, sha256_file, write_json

RECIPES = Path(str(resources.files("continuousbench.demo") / "configs"))  # package data: wheels have it
EVALUATOR_RECIPE = RECIPES / "geminon-tiny-demo.yaml"
GENERATOR_RECIPE = RECIPES / "geminon-tiny-demo-generator.yaml"
DP_DIRECT_RECIPE = RECIPES / "geminon-tiny-demo-dp-direct.yaml"
# The shipped base model (package data, ~4.5 MB): made once by ``build_base_model(BaseRecipe())``
# (``continuousbench demo --rebuild_base`` does it again); its files are checked against these digests.
SHIPPED_BASE = Path(str(resources.files("continuousbench.demo") / "base"))
BASE_SHA256 = {
    "model.safetensors": "68726e8c3b70a9fe48e3d59aa8135deb4343f6b05325f1ffe008f84057554042",
    "replay.parquet": "65f930a144871fca9044290eb5fecc2907f70d5f5594889ddebbf7f13907893c",
}
BASE_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
              "tokenizer_config.json", "pretraining.json", "replay.parquet")  # fmt: skip
QUARTER = "2026q1"
RUNS: dict[str, str | None] = {  # run -> the corpus it trains on (None: no training)
    "no-training": None,
    "train-on-real": "real",
    "syn": "syn",
    "dp-syn-eps100": "dp-eps100",
    "dp-syn-eps10": "dp-eps10",
    "pe-eps10": "pe-eps10",
    "dp-direct-eps10": "real",  # the evaluator itself trained with DP-SGD on the real corpus (App. E)
}
CORPUS_RUNS = ("train-on-real", "syn", "dp-syn-eps100", "dp-syn-eps10", "pe-eps10")  # MAUVE: their corpus
GENERATORS: dict[str, float | None] = {"syn": None, "dp-eps100": 100.0, "dp-eps10": 10.0}  # name -> epsilon


@dataclass(frozen=True)
class Settings:
    """What the demo decides beyond the recipes; ``quick`` shrinks it for the CI test (same stages)."""

    base: BaseRecipe | None = None  # None: the shipped base model; a recipe: pretrain one with it
    replay: bool = True  # the evaluator recipe's replay mixture: pretraining-world QA documents
    eval_steps: int | None = None  # None: the recipe's max_steps / eval_steps
    generator_steps: int = 150  # Syn: 46% test EM at 150 steps, 59% at 250 (docs/demo.md)
    # DP generators: 32 steps of 128 expected records (2.4 passes over the corpus; a DP record costs ~3x
    # a non-private one). The update is a mean of unit-norm clipped gradients plus noise, so its learning
    # rate is tuned apart from the non-private one (epsilon 100, 24 steps: MAUVE 0.06 / 0.25 / 0.42 at
    # 3e-3 / 1e-2 / 2e-2; 3e-2 is unstable); 32 steps raise MAUVE to ~0.6 while QA stays near chance.
    dp_steps: int = 32
    dp_batch: int = 128
    dp_learning_rate: float = 2e-2
    synthetic_samples: int = 600
    temperature: float = 0.7  # the same for every generator; at 1.0 Syn fell from 10.3% to 3.4% EM
    pe_samples: int = 300  # Private Evolution: population size, iterations, variations per sample
    pe_iterations: int = 2
    pe_variations: int = 3
    mauve_samples: int = 500
    mauve_seeds: int = 3  # draws (and clusterings) per corpus: one draw's score varies by ~0.02-0.06
    bf16: bool = False  # bf16 autocast in non-private training; on where the CPU computes bf16 natively

    @classmethod
    def quick(cls) -> Settings:
        """Every stage and code path at the least work that exercises it (the CI test): two evaluations
        per run (checkpoint selection), a few steps per generator; the findings need not hold."""
        return cls(
            eval_steps=2, generator_steps=4, dp_steps=3, dp_batch=32, synthetic_samples=64, pe_samples=16,
            pe_iterations=1, pe_variations=1, mauve_samples=64, mauve_seeds=1,
        )  # fmt: skip


# Everything the demo writes in --out (what --overwrite removes): tests/demo checks a run writes no other.
WRITES = (
    "settings.json", "releases", "base-model", "runs", "synthetic", "generators", "mauve.json",
    "results.json", "results.png", "findings.json", "timings.json", "manifest.json", "logs",
)  # fmt: skip


def _argv(**options) -> list[str]:
    """``--key value`` pairs for a command's parser (None values left out)."""
    return [a for k, v in options.items() if v is not None for a in (f"--{k}", str(v))]


def _base_model(out: Path, release: Path, s: Settings) -> None:
    """Copy the shipped base model to ``out`` (its digests checked), or pretrain one with ``s.base``.
    Either way its pretraining world shares no entity name with the release."""
    from continuousbench.demo import pretrain as P
    from continuousbench.files import replace_dir

    names = P.release_names(release)
    if s.base is not None:
        P.build_base_model(out, s.base, forbidden_names=names)
        return
    for name, digest in BASE_SHA256.items():
        if sha256_file(SHIPPED_BASE / name) != digest:
            raise UserError(
                f"the shipped base model's {name} does not match its recorded sha256; reinstall "
                "continuousbench, or pass --rebuild_base"
            )
    world = read_json(SHIPPED_BASE / P.INFO_FILE)["pretraining_world"]
    clash = {n.lower() for n in names} & {n.lower() for n in world["names"]}
    if clash:
        raise UserError(
            "this release shares entity names with the shipped base model's world "
            f"({', '.join(sorted(clash))}); pass --rebuild_base (a base model whose world avoids them) "
            "or another --seed"
        )
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in BASE_FILES:
        shutil.copyfile(SHIPPED_BASE / name, tmp / name)
    replace_dir(tmp, out)


def _evaluate(run: Path, release: Path, base: Path, corpus: Path | None, s: Settings, seed: int,
              dp: bool) -> list[str]:  # fmt: skip
    steps = None if corpus is None or s.eval_steps is None else 2 * s.eval_steps
    replay = base / "replay.parquet" if s.replay and corpus is not None and not dp else None
    argv = _argv(
        config=DP_DIRECT_RECIPE if dp else EVALUATOR_RECIPE, release=release, model=base, output_dir=run,
        seed=seed, corpus=None if corpus in (None, release) else corpus,
        steps=0 if corpus is None else steps, eval_steps=s.eval_steps if steps else None,
        save_steps=s.eval_steps if steps else None, replay_corpus=replay, bf16=None if dp else s.bf16,
    )  # fmt: skip
    return ["evaluate", *argv]


def _every(steps: int) -> int:
    """About five evaluations per run, at a divisor of ``steps`` (the Trainer saves on evaluations)."""
    return next(d for d in range(max(1, steps // 5), 0, -1) if steps % d == 0)


def _train_generator(gen: Path, release: Path, base: Path, epsilon: float | None, s: Settings,
                     seed: int) -> list[str]:  # fmt: skip
    dp = epsilon is not None
    steps = s.dp_steps if dp else s.generator_steps
    return [
        "train-generator",
        *_argv(
            config=GENERATOR_RECIPE, release=release, model=base, output_dir=gen, seed=seed,
            steps=steps, eval_steps=_every(steps), save_steps=steps, epsilon=f"{epsilon:g}" if dp else None,
            expected_batch_size=s.dp_batch if dp else None, learning_rate=s.dp_learning_rate if dp else None,
            bf16=None if dp else s.bf16,  # the DP loop trains in float32
        ),
    ]  # fmt: skip


def _synthesize(corpus: Path, gen: Path, s: Settings, seed: int) -> list[str]:
    return [
        "synthesize",
        *_argv(
            generator=gen, output_dir=corpus, num_samples=s.synthetic_samples, max_new_tokens=160,
            temperature=s.temperature, batch_size=64, seed=seed,
        ),
    ]  # fmt: skip


def _private_evolution(corpus: Path, release: Path, base: Path, s: Settings, seed: int) -> list[str]:
    """Aug-PE at epsilon 10 with the base model as both the text API and the embedding model."""
    return [
        "pe",
        *_argv(
            api=f"transformers:{base}", embedding_model=base, release=release, output_dir=corpus, epsilon=10,
            iterations=s.pe_iterations, variations=s.pe_variations, num_samples=s.pe_samples,
            temperatures=s.temperature, max_new_tokens=160, seed=seed,
        ),
    ]  # fmt: skip


def _mauve(out: Path, release: Path, base: Path, corpora: dict[str, Path], s: Settings, seed: int) -> None:
    from continuousbench.diagnostics.mauve import mauve_score, reference_mauve
    from continuousbench.training.data import load_corpus

    reference = load_corpus(str(release))["text"]
    seeds = tuple(range(seed, seed + s.mauve_seeds))
    common = {"model_path": str(base), "n_samples": s.mauve_samples, "seeds": seeds}
    # The real corpus against itself (two disjoint halves): the ceiling a synthetic corpus can reach.
    scores = {"real": reference_mauve(reference, **common)}
    for name, path in corpora.items():
        if name != "real":
            scores[name] = mauve_score(load_corpus(str(path))["text"], reference, **common)
    write_json(out, scores)


def findings(rows: list[dict], paired: dict) -> list[dict]:
    """The paper's four findings, each checked on this demo's rows (docs/demo.md gives the targets)."""
    row = {r["run"]: r for r in rows}
    em = {name: r["qa_public/exact_match"] for name, r in row.items()}
    single = row["train-on-real"]["qa_singleton/exact_match"]
    syn, dp100 = row["syn"], row["dp-syn-eps100"]
    overall = paired["parts"]["qa_public"]["overall"]
    checks = [
        ("training on the real corpus teaches its facts",
         em["train-on-real"] >= 0.5 and em["no-training"] <= 0.05,
         f"train-on-real {em['train-on-real']:.1%} (>= 50%), no-training {em['no-training']:.1%} (<= 5%)"),
        ("facts seen once are rarely learned", single <= em["train-on-real"] / 3,
         f"singleton {single:.1%} <= a third of public {em['train-on-real']:.1%}"),
        ("non-private synthetic data carries facts, DP synthetic data does not",
         em["syn"] >= 0.25 and overall["difference"] > 0 and overall["p_value"] < 0.01,
         f"Syn {em['syn']:.1%} (>= 25%) vs DP-Syn eps 10 {em['dp-syn-eps10']:.1%}: paired difference "
         f"{overall['difference']:+.1%}, McNemar p = {overall['p_value']:.2g} (< 0.01)"),
        ("MAUVE keeps the form while QA collapses",
         dp100["mauve"] >= syn["mauve"] / 2 and em["dp-syn-eps100"] < em["syn"] / 4,
         f"DP-Syn eps 100 MAUVE {dp100['mauve']:.3f} vs Syn {syn['mauve']:.3f} (>= half), EM "
         f"{em['dp-syn-eps100']:.1%} vs {em['syn']:.1%} (< a quarter)"),
    ]  # fmt: skip
    return [{"finding": f, "holds": bool(ok), "evidence": e} for f, ok, e in checks]


def _table(out: Path, runs: dict[str, Path], mauve: dict) -> list[dict]:
    from rich.console import Console
    from rich.table import Table

    from continuousbench.harness.report import comparison_rows, format_cell, load_run, plot_comparison

    rows = comparison_rows({name: load_run(path) for name, path in runs.items()})
    for row in rows:
        score = mauve.get(RUNS[row["run"]]) if row["run"] in CORPUS_RUNS else None  # a corpus it trained on
        row["mauve"], row["mauve_std"] = (score["mean"], score["std"]) if score else (None, None)
    plot_comparison(rows, out / "results.png")
    write_json(out / "results.json", rows)
    table = Table(
        title="Test accuracy (%) of the base model trained on each corpus; MAUVE vs the real corpus",
        caption="\\[low, high]: Wilson 95% interval over the test questions; MAUVE: mean ± sd over draws. "
        "dp-direct-eps10 is the evaluator trained with DP-SGD on the real corpus (a DP model, not DP data)",
    )
    table.add_column("run", no_wrap=True)
    for col in ("steps", "public EM", "public contains", "singleton EM", "singleton contains", "MAUVE"):
        table.add_column(col, justify="right")
    for r in rows:
        cols = [f"qa_{p}/{m}" for p in ("public", "singleton") for m in ("exact_match", "contains")]
        cells = [format_cell(r, c) for c in cols]
        mauve_cell = "-" if r["mauve"] is None else f"{r['mauve']:.3f} ± {r['mauve_std']:.3f}"
        table.add_row(r["run"], str(r["steps"]), *cells, mauve_cell)
    Console(width=max(120, Console().width)).print(table)
    return rows


def _jobs(out: Path, release: Path, s: Settings, seed: int) -> tuple[list, dict[str, Path]]:
    """Every job of the demo, longest chains first (the DP generators), and the run folders."""
    from continuousbench.study.graph import Job

    base = out / "base-model"
    runs = {name: out / "runs" / name for name in RUNS}
    corpora = {"real": release} | {c: out / "synthetic" / c for c in (*GENERATORS, "pe-eps10")}
    demo = ["demo", "--out", str(out)]

    def job(name: str, argv: list[str], folder: Path, done: Path, *after: str) -> Job:
        kind = argv[0] if argv[0] != "demo" else "demo"
        return Job(name, kind, tuple(map(str, argv)), folder, done, after, gpus=0,
                   log=out / "logs" / f"{name.replace('/', '--')}.log")  # fmt: skip

    jobs = [
        job("build release", ["build", "geminon", "--size", "tiny", "--quarter", QUARTER, "--seed", str(seed),
                              "--out", str(release.parent)], release.parent, release / "release.json"),
        job("base model", [*demo, "--stage", "base-model"], base, base / "pretraining.json", "build release"),
    ]  # fmt: skip
    for gen in ("dp-eps100", "dp-eps10", "syn"):
        gen_dir = out / "generators" / gen
        jobs += [
            job(f"train generator {gen}", _train_generator(gen_dir, release, base, GENERATORS[gen], s, seed),
                gen_dir, gen_dir / "privacy.json", "base model"),
            job(f"synthesize {gen}", _synthesize(corpora[gen], gen_dir, s, seed), corpora[gen],
                corpora[gen] / "README.md", f"train generator {gen}"),
        ]  # fmt: skip
    pe = corpora["pe-eps10"]
    jobs.append(job("private evolution pe-eps10", _private_evolution(pe, release, base, s, seed), pe,
                    pe / "README.md", "base model"))  # fmt: skip
    made_by = {"real": "base model", None: "base model", "pe-eps10": "private evolution pe-eps10"}
    for name, corpus in RUNS.items():
        trained_on = None if corpus is None else corpora[corpus]
        jobs.append(job(
            f"evaluate {name}", _evaluate(runs[name], release, base, trained_on, s, seed,
                                          name.startswith("dp-direct")),
            runs[name], runs[name] / "results.json", made_by.get(corpus, f"synthesize {corpus}"),
        ))  # fmt: skip
    after = [f"synthesize {g}" for g in GENERATORS] + ["private evolution pe-eps10"]
    jobs.append(job("mauve", [*demo, "--stage", "mauve"], out, out / "mauve.json", *after))
    return jobs, runs


def _release(out: Path) -> Path:
    from continuousbench.release.ids import ReleaseId

    return out / "releases" / str(ReleaseId.parse(f"geminon-tiny-{QUARTER}"))


def run_stage(out: Path, stage: str) -> None:
    """One of the demo's own steps, with the settings its demo recorded in ``out/settings.json``."""
    recorded = read_json(out / "settings.json")
    s = Settings(**{k: v for k, v in recorded.items() if k not in ("quick", "seed", "base")})
    if recorded.get("base"):
        from continuousbench.demo.pretrain import BaseRecipe

        s = replace(s, base=BaseRecipe(**recorded["base"]))
    release, seed = _release(out), recorded["seed"]
    if stage == "base-model":
        _base_model(out / "base-model", release, s)
    else:
        corpora = {"real": release} | {c: out / "synthetic" / c for c in (*GENERATORS, "pe-eps10")}
        _mauve(out / "mauve.json", release, out / "base-model", corpora, s, seed)


def run_demo(
    out: Path, *, quick: bool = False, overwrite: bool = False, seed: int = 0, threads: int = 2,
    rebuild_base: bool = False,
) -> list[dict]:  # fmt: skip
    """Run (or resume) every stage under ``out``; return the table rows (also in ``out/results.json``).

    The base model is the shipped one unless ``rebuild_base`` (pretrained again with
    :class:`~continuousbench.demo.pretrain.BaseRecipe`, ~20 minutes on one core)."""
    from rich.console import Console

    from continuousbench.demo.pretrain import BaseRecipe
    from continuousbench.errors import UserError
    from continuousbench.files import check_writable_dir
    from continuousbench.harness.compare import compare_runs, print_comparison
    from continuousbench.study.executors import LocalExecutor
    from continuousbench.study.runner import Study, run_to_end
    from continuousbench.training.config import cpu_has_native_bf16

    s = replace(Settings.quick() if quick else Settings(), bf16=cpu_has_native_bf16())
    if rebuild_base:
        s = replace(s, base=BaseRecipe(bf16=s.bf16))
    out = check_writable_dir(Path(out), "--out")
    settings_file = out / "settings.json"
    if out.is_dir() and any(out.iterdir()) and not settings_file.is_file():  # not ours: never write into it
        raise UserError(
            f"--out {out} is not a demo folder (it has files but no settings.json); the demo writes its "
            "own results.json, runs/ and more there: pass a demo's folder or a new one"
        )
    if overwrite and out.exists():  # what the demo wrote, and nothing else ("no command removes a file
        for name in WRITES:  # it did not write"): a user's notes beside it stay
            path = out / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    wanted = json.loads(json.dumps({"quick": quick, "seed": seed, **asdict(s)}))  # tuples read back as lists
    if settings_file.exists() and read_json(settings_file) != wanted:
        raise UserError(f"{out} holds a demo with other settings: pass --overwrite, or another --out")
    write_json(settings_file, wanted)
    start = time.perf_counter()
    jobs, runs = _jobs(out, _release(out), s, seed)
    study = Study(jobs, out)
    run_to_end(study, LocalExecutor(threads), "rerun the same command to resume")
    rows = _table(out, runs, read_json(out / "mauve.json"))
    paired = compare_runs(runs["syn"], runs["dp-syn-eps10"])
    print_comparison(paired)  # "Syn beats DP-Syn", question by question
    checked = findings(rows, paired)
    write_json(out / "findings.json", checked)
    console = Console()
    for f in checked:
        console.print(f"{'[green]holds' if f['holds'] else '[red]does not hold'}[/]: {f['finding']}: "
                             f"{f['evidence']}")  # fmt: skip
    total = time.perf_counter() - start
    timings = {name: entry.get("wall_s") for name, entry in study.manifest["jobs"].items()}
    console.print(f"stage times (s, {threads} at a time): {json.dumps(timings)}; wall {total:.0f} s "
                  f"({total / 60:.1f} min)")  # fmt: skip
    console.print(f"outputs in {out}/: results.png, results.json, findings.json, runs/, synthetic/")
    return rows


@dataclass
class DemoArguments:
    out: str = field(default="demo-output", metadata={"help": "Folder for every output."})
    quick: bool = field(default=False, metadata={"help": "A few-minute version (the CI test)."})
    overwrite: bool = field(default=False, metadata={"help": "Start over, removing --out first."})
    seed: int = field(default=0, metadata=bounds("[0, 1e9]", "Seed of the release and every training run."))
    threads: int = field(
        default=2, metadata=bounds("[1, 1024]", "Stages run at once, one CPU thread each (2 cores: 2).")
    )
    rebuild_base: bool = field(
        default=False,
        metadata={"help": "Pretrain the base model again with the shipped one's recipe (~20 min)."},
    )
    stage: str | None = field(
        default=None,
        metadata={"help": "Run one of the demo's own steps in --out (the demo's study runs them).",
                  "choices": ["base-model", "mauve"]},
    )  # fmt: skip


def main(args: DemoArguments) -> list[dict] | None:
    if args.stage is not None:
        return run_stage(Path(args.out), args.stage)
    return run_demo(
        Path(args.out), quick=args.quick, overwrite=args.overwrite, seed=args.seed, threads=args.threads,
        rebuild_base=args.rebuild_base,
    )  # fmt: skip


make_parser, cli = command(
    DemoArguments,
    "continuousbench demo",
    __doc__.splitlines()[0],
    main,
    resume_hint="finished stages are kept; rerun the same command to resume",
)


def quiet() -> None:
    """Library progress bars and info logs would bury a benchmark's own output (benchmarks/demo_*.py)."""
    import logging

    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    logging.getLogger("continuousbench").setLevel(logging.WARNING)
