"""``continuousbench demo`` (``make demo``): the whole study in miniature, on a CPU, offline.

The demo is one study file, ``continuousbench/demo/study.yaml`` (package data), run by
:mod:`continuousbench.study` on its local executor: build the ``tiny`` Geminon release; evaluate the
shipped base model (a tiny Llama pretrained on a separate, disjoint Geminon world by
:func:`continuousbench.demo.pretrain.build_base_model`, so it knows the QA format but none of the
release's facts; sha256-checked) with no training and after continued pretraining on the real corpus;
train three generators on the real corpus (non-private, DP at epsilon 100 and 10), sample a synthetic
corpus from each, run Private Evolution at epsilon 10, evaluate the base model trained on each synthetic
corpus and the evaluator itself trained with DP-SGD at epsilon 10 (direct DP); MAUVE of each corpus
against the real one; then the study's ``report`` job writes the table with intervals, a bar chart,
Syn vs DP-Syn question by question and a verdict on each of the paper's four findings
(``report/report.txt``, ``results.json``, ``results.png``, ``findings.json``), and its ``proxies`` job
ranks MAUVE, the generators' validation loss, FID and leakage against QA (``report/proxies.txt``); the
demo prints both.

The demo only applies its command line to the study (``--seed``, ``--quick``'s smaller steps, bf16 where
the CPU computes it natively, ``--rebuild_base``), writes what it runs to ``<out>/study.yaml`` and checks
the base model against the release before anything trains. A few jobs run at a time, in child processes
of one CPU thread each; a finished job is skipped on a rerun and a stopped one continues with its
command's own ``--resume``, so an interrupted demo resumes where it stopped.

    continuousbench demo [--out demo-output] [--quick] [--overwrite] [--seed 0] [--threads 2] [--rebuild_base]
"""

from __future__ import annotations

import json
import shlex
import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.files import read_json, sha256_file, write_json

RECIPES = Path(str(resources.files("continuousbench.demo") / "configs"))  # package data: wheels have it
EVALUATOR_RECIPE = RECIPES / "geminon-tiny-demo.yaml"
GENERATOR_RECIPE = RECIPES / "geminon-tiny-demo-generator.yaml"
STUDY = Path(str(resources.files("continuousbench.demo") / "study.yaml"))  # the demo, as a study file
# The shipped base model (package data, ~4.5 MB): made once by ``build_base_model(BaseRecipe())``
# (``continuousbench demo --rebuild_base`` does it again); its files are checked against these digests.
SHIPPED_BASE = Path(str(resources.files("continuousbench.demo") / "base"))
BASE_SHA256 = {
    "model.safetensors": "68726e8c3b70a9fe48e3d59aa8135deb4343f6b05325f1ffe008f84057554042",
    "replay.parquet": "65f930a144871fca9044290eb5fecc2907f70d5f5594889ddebbf7f13907893c",
}
QUARTER = "2026q1"
# ``--quick`` (the CI test): the same jobs with fewer steps and samples; section or section/name -> options
QUICK: dict[str, dict] = {
    "generators/syn": {"steps": 4, "eval_steps": 1, "save_steps": 4},
    "generators/dp-eps100": {"steps": 4, "eval_steps": 1, "save_steps": 4, "expected_batch_size": 32},
    "generators/dp-eps10": {"steps": 4, "eval_steps": 1, "save_steps": 4, "expected_batch_size": 32},
    "pe/pe-eps10": {"num_samples": 16, "iterations": 1, "variations": 1},
    "evaluators/demo": {"steps": 4, "eval_steps": 2, "save_steps": 2},  # two evaluations: a selection
    "evaluators/dp-direct": {"steps": 4, "eval_steps": 2, "save_steps": 2},
    "synthesis": {"num_samples": 64},
    "mauve": {"n_samples": 64, "seeds": [0]},
    "memorization": {"docs": 16},
}
# Everything the demo writes in --out (what --overwrite removes): tests/demo checks a run writes no other.
WRITES = (
    "settings.json",
    "study.yaml",
    "manifest.json",
    "logs",
    "releases",
    "base-model",
    "generators",
    "synthetic",
    "runs",
    "mauve",
    "memorization",
    "compare",
    "report",
    "saturation",
)
# ``--saturation``: Fig. 8 of the demo's release beside the committed classification fixture's four regimes,
# from the demo's own report (nothing of the study reruns) and a small saturation study of the fixture with
# the shipped base model (docs/saturation.md: about a minute on one core, so it is opt-in).
SATURATION = shlex.split(
    "--dataset fixture --train_limit 150 --validation_limit 12 --test_limit 30 --shots 0 3 --seeds 0 "
    "--max_new_tokens 16 --ft_epochs 2 --ft_learning_rate 1e-3 --per_class 20 --synth_max_new_tokens 24 "
    "--batch_size 32"
)


def _options(data: dict):
    """Every ``options`` mapping of a study file's data (and ``synthesis``), to apply the command line."""
    yield data["synthesis"]
    for key in ("build", "mauve", "memorization"):
        yield data[key].setdefault("options", {})
    for key in ("generators", "pe", "evaluators"):
        for section in data[key]:
            yield section.setdefault("options", {})


def demo_study(*, quick: bool, seed: int, bf16: bool, base: Path | None):
    """The packaged study with the demo's command line applied: ``quick``'s smaller jobs, ``seed`` for
    every seed (MAUVE's draws from it on), ``bf16`` for every ``bf16`` option of the file, and the base
    model at ``base`` (None: the shipped one)."""
    from continuousbench.strict_yaml import load_yaml
    from continuousbench.study.schema import Study

    data = load_yaml(STUDY.read_text(encoding="utf-8"), str(STUDY))
    for key, options in QUICK.items() if quick else ():
        section, _, name = key.partition("/")
        found = next(s for s in data[section] if s["name"] == name) if name else data[section]
        (found if section == "synthesis" else found.setdefault("options", {})).update(options)
    for options in _options(data):
        options.update({k: seed for k in ("seed",) if k in options})
        options.update({k: bf16 for k in ("bf16",) if k in options})
    data["seeds"] = [seed]
    data["mauve"]["options"]["seeds"] = [seed + s for s in data["mauve"]["options"]["seeds"]]
    study = Study(**data, root=STUDY.parent)
    if base is None:
        return study
    return Study(**_moved(study.as_file(), str(SHIPPED_BASE), str(base)), root=STUDY.parent)


def _moved(value, old: str, new: str):
    """``value`` (a study file's data, paths absolute) with every path under ``old`` moved to ``new``."""
    if isinstance(value, dict):
        return {k: _moved(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, old, new) for v in value]
    return value.replace(old, new) if isinstance(value, str) else value


def base_model_of(out: Path) -> Path:
    """The base model a demo folder's jobs start from: ``out/base-model`` after ``--rebuild_base``, else
    the shipped one (benchmarks/demo_*.py reuse it)."""
    rebuilt = Path(out) / "base-model"
    return rebuilt if (rebuilt / "pretraining.json").is_file() else SHIPPED_BASE


def _check_base_model(release: Path, base: Path | None, bf16: bool) -> None:
    """The shipped base model, its digests checked; or pretrain one at ``base`` (once). Either way its
    pretraining world shares no entity name with the release, so it knows none of the release's facts."""
    from continuousbench.demo import pretrain as P

    names = P.release_names(release)
    if base is not None:
        if not (base / P.INFO_FILE).is_file():
            P.build_base_model(base, P.BaseRecipe(bf16=bf16), forbidden_names=names)
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


def _clear(out: Path) -> None:
    """What the demo wrote, and nothing else ("no command removes a file it did not write"): a user's
    notes beside it stay."""
    for name in WRITES:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def run_demo(
    out: Path,
    *,
    quick: bool = False,
    overwrite: bool = False,
    seed: int = 0,
    threads: int = 2,
    rebuild_base: bool = False,
    saturation: bool = False,
) -> list[dict]:
    """Run (or resume) the demo's study under ``out``, print its report; return the table's rows (also in
    ``out/report/results.json``).

    The base model is the shipped one unless ``rebuild_base`` (pretrained again with
    :class:`~continuousbench.demo.pretrain.BaseRecipe` into ``out/base-model``, ~20 minutes on one core)."""
    import yaml

    from continuousbench.files import check_writable_dir, write_text
    from continuousbench.study.executors import LocalExecutor
    from continuousbench.study.graph import expand
    from continuousbench.study.runner import Study, run_to_end
    from continuousbench.training.config import cpu_has_native_bf16

    bf16 = cpu_has_native_bf16()
    out = check_writable_dir(Path(out), "--out")
    settings_file = out / "settings.json"
    if out.is_dir() and any(out.iterdir()) and not settings_file.is_file():  # not ours: never write into it
        raise UserError(
            f"--out {out} is not a demo folder (it has files but no settings.json); the demo writes its "
            "own study.yaml, runs/ and more there: pass a demo's folder or a new one"
        )
    if overwrite and out.exists():
        _clear(out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = {"quick": quick, "seed": seed, "bf16": bf16, "rebuild_base": rebuild_base}
    if settings_file.exists() and read_json(settings_file) != wanted:
        raise UserError(f"{out} holds a demo with other settings: pass --overwrite, or another --out")
    write_json(settings_file, wanted)
    base = out.absolute() / "base-model" if rebuild_base else None
    study = demo_study(quick=quick, seed=seed, bf16=bf16, base=base)
    write_text(out / "study.yaml", yaml.safe_dump(study.as_file(), sort_keys=False))
    start = time.perf_counter()
    jobs = expand(study, out.absolute())
    rerun = "rerun the same command to resume"
    build = [job for job in jobs if job.kind == "build"]  # the release first: the base model is checked on it
    run_to_end(Study(build, out.absolute()), LocalExecutor(1), rerun)
    _check_base_model(build[0].done.parent, base, bf16)
    state = Study(jobs, out.absolute())
    run_to_end(state, LocalExecutor(threads), rerun)
    report = out / "report"
    print((report / "report.txt").read_text(encoding="utf-8"), end="", flush=True)
    if (report / "proxies.txt").is_file():  # the proxy metrics ranked against QA over the corpora
        print((report / "proxies.txt").read_text(encoding="utf-8"), end="", flush=True)
    total = time.perf_counter() - start
    timings = {name: entry.get("wall_s") for name, entry in state.manifest["jobs"].items()}
    print(
        f"job times (s, {threads} at a time): {json.dumps(timings)}; wall {total:.0f} s "
        f"({total / 60:.1f} min)"
    )
    print(
        f"outputs in {report}/: report.txt, results.json, results.png, findings.json, "
        f"proxies.txt/.json/.png; the study that ran: {out / 'study.yaml'}"
    )
    if saturation:
        beside_fixture(out, base or SHIPPED_BASE, seed)
    else:
        print("Fig. 8, this release beside a classification fixture's four regimes: rerun with --saturation")
    return read_json(report / "results.json")["runs"]


def beside_fixture(out: Path, base: Path, seed: int) -> Path:
    """``continuousbench saturation`` on the classification fixture, its Fig. 8 beside the demo's release
    (``out/saturation/fig8.png``); the demo's own runs are read from its report, not rerun."""
    from continuousbench.classification.saturation import main as saturation
    from continuousbench.classification.saturation import make_parser

    argv = [
        *SATURATION,
        "--model",
        str(base),
        "--output_dir",
        str(out / "saturation"),
        "--seed",
        str(seed),
        "--beside",
        str(out / "report" / "results.json"),
    ]
    start = time.perf_counter()
    summary = saturation(*make_parser().parse(argv))
    from continuousbench.classification.report import summary_line

    print(
        f"{summary_line(summary)}; Fig. 8: {out / 'saturation' / 'fig8.png'} "
        f"({time.perf_counter() - start:.0f} s)"
    )
    return out / "saturation" / "fig8.png"


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
    saturation: bool = field(
        default=False,
        metadata={"help": "Also Fig. 8: this release beside a classification fixture's regimes (~1 min)."},
    )


def main(args: DemoArguments) -> list[dict]:
    return run_demo(
        Path(args.out), quick=args.quick, overwrite=args.overwrite, seed=args.seed, threads=args.threads,
        rebuild_base=args.rebuild_base, saturation=args.saturation,
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
