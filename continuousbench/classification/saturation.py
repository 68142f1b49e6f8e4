"""``continuousbench saturation``: is a classification benchmark saturated? (paper Fig. 1, Fig. 8, App. F)

    continuousbench saturation --dataset imdb --model google/gemma-3-4b-pt --output_dir runs/sat-imdb
    continuousbench saturation --dataset reviews.jsonl --text_column text --label_column label \\
        --model google/gemma-3-1b-pt --output_dir runs/sat-mine --beside demo-output/report/results.json
    continuousbench saturation --plan

Four regimes on one dataset and one model, each a run folder under ``DIR/runs/`` that ``report``,
``compare`` and ``submit`` read (:mod:`.runs`):

* ``no-training``: the base model prompted under every condition of the grid (templates x shots x
  seeds, :mod:`.prompted`); the regime's figure is the best condition's (the paper's "best prompted");
* ``dp-syn``: a label-conditioned DP generator (``train-generator --label_column --epsilon``) trained on
  the training split, a corpus sampled from it (``synthesize --per_class``), the classifier fine-tuned
  on that corpus (:mod:`.finetune`);
* ``syn``: the same without DP;
* ``real``: the classifier fine-tuned on the training split itself.

The class balance of the synthetic corpora (``--class_balance``): ``dp`` spends what the generator left
of ``--epsilon`` on Gaussian noisy class counts (``--count_share`` of the budget is kept from the
generator), composed into the corpus's guarantee; ``public`` uses the exact counts, declared public;
``uniform`` uses none. ``DIR/saturation.json`` holds the summary (best prompted with its condition,
fine-tuned, gap, ratio), the regime table with 95% intervals and the grid; ``DIR/tables.md`` the App. F
tables; ``DIR/fig8.png`` the figure, beside a ContinuousBench release's four regimes when ``--beside``
names them. Finished stages are kept: a rerun with the same settings continues where it stopped.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command, listed
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

REGIMES = ("no-training", "dp-syn", "syn", "real")  # Fig. 8's order: more and more informative
# The smallest study that still runs every stage (the CPU test and ``benchmarks/saturation.py --quick``):
# 30 training and 9 test texts, a 0- and a 3-shot condition per template, 1 epoch of fine-tuning.
SMOKE = shlex.split(
    "--train_limit 30 --validation_limit 6 --test_limit 9 --shots 0 3 --seeds 0 --max_new_tokens 8 "
    "--ft_epochs 1 --ft_learning_rate 1e-3 --per_class 4 --synth_max_new_tokens 12 --batch_size 32"
)
OLD = ".saturation-old"  # an --overwrite run's predecessor, until the new study is written
WRITES = (
    "settings.json",
    "data",
    "generators",
    "synthetic",
    "runs",
    "prompted",
    "saturation.json",
    "tables.md",
    "fig8.png",
)


@dataclass
class SaturationArguments:
    dataset: str | None = field(
        default=None,
        metadata={
            "help": "A preset (imdb, yelp_polarity, openreview, fixture), Hub id, folder "
            "or .jsonl/.csv/.parquet file."
        },
    )
    preset: str | None = field(
        default=None, metadata={"help": "Read --dataset (a local copy) as this preset."}
    )
    text_column: str | None = field(default=None, metadata={"help": "Column of the texts (default: text)."})
    label_column: str | None = field(
        default=None, metadata={"help": "Column of the labels (default: label)."}
    )
    label_map: str | None = field(
        default=None,
        metadata={"help": "Class names by id (a,b) or value (0=neg,1=pos); default: the data's."},
    )
    splits: str | None = field(default=None, metadata={"help": "train,validation,test split names."})
    model: str | None = field(default=None, metadata={"help": "The base model: prompted and fine-tuned."})
    generator_model: str | None = field(
        default=None, metadata={"help": "The generators' base (default --model)."}
    )
    output_dir: str | None = field(default=None, metadata={"help": "Folder of every output."})
    regimes: list[str] = field(
        default_factory=lambda: list(REGIMES), metadata={"help": f"Regimes to run, of {', '.join(REGIMES)}."}
    )
    train_limit: int | None = field(
        default=2000, metadata=bounds("[2, inf)", "Training texts (seeded sample).")
    )
    validation_limit: int | None = field(default=200, metadata=bounds("[2, inf)", "Validation texts."))
    test_limit: int | None = field(default=200, metadata=bounds("[2, inf)", "Test texts (paper: 5,000)."))
    templates: list[str] = field(
        default_factory=lambda: ["direct", "reasoning", "structured"],
        metadata={"help": "Prompt templates, of direct, reasoning, structured."},
    )
    shots: list[int] = field(default_factory=lambda: [0, 3, 5, 7], metadata=bounds("[0, 64]", "Shot counts."))
    seeds: list[int] = field(
        default_factory=lambda: [0, 1, 2], metadata={"help": "Seeds of the few-shot draws."}
    )
    max_new_tokens: int = field(
        default=128, metadata=bounds("[1, 4096]", "Reasoning / structured reply tokens.")
    )
    max_text_chars: int = field(default=1500, metadata=bounds("[16, inf)", "Each text is cut after this."))
    batch_size: int = field(default=16, metadata=bounds("[1, 4096]", "Prompts per generation batch."))
    ft_tuning: str = field(
        default="auto",
        metadata={
            "help": "auto (full up to 2B parameters, else LoRA r 32, alpha 64), full, lora",
            "choices": ["auto", "full", "lora"],
        },
    )
    ft_epochs: float = field(default=3.0, metadata=bounds("(0, inf)", "Classifier epochs (App. F: 3)."))
    ft_learning_rate: float = field(default=2e-5, metadata=bounds("(0, inf)", "Classifier learning rate."))
    ft_batch_size: int = field(default=16, metadata=bounds("[1, inf)", "Classifier batch per step."))
    ft_gradient_accumulation: int = field(default=2, metadata=bounds("[1, inf)", "Classifier accumulation."))
    ft_max_length: int = field(default=512, metadata=bounds("[8, inf)", "Classifier tokens per example."))
    epsilon: float = field(
        default=10.0, metadata=bounds("(0, inf)", "The DP-synthetic corpus's total epsilon.")
    )
    class_balance: str = field(
        default="dp",
        metadata={
            "help": "dp (noisy counts from the budget), public (exact, declared public) or uniform",
            "choices": ["dp", "public", "uniform"],
        },
    )
    count_share: float = field(
        default=0.05, metadata=bounds("(0, 1)", "With dp: the share of --epsilon kept from the generator.")
    )
    generator_config: str | None = field(
        default=None, metadata={"help": "A train-generator recipe for both generators (default: a CPU one)."}
    )
    per_class: int | None = field(
        default=None,
        metadata=bounds("[1, inf)", "Synthetic texts per class (default: training size / classes)."),
    )
    temperature: float = field(default=1.0, metadata=bounds("(0, inf)", "Synthesis temperature (paper: 1)."))
    synth_max_new_tokens: int = field(default=128, metadata=bounds("[1, inf)", "Longest synthetic text."))
    beside: list[str] = listed(
        "A ContinuousBench release's regimes for Fig. 8: a report JSON, or ROLE=RUN folders "
        "(none, dp_syn, syn, real)."
    )
    beside_rows: list[str] = listed("ROLE=ROW of the report JSON (default: the demo's row names).")
    beside_metric: str = field(default="qa_public/exact_match", metadata={"help": "PART/MATCHER beside."})
    plan: bool = field(default=False, metadata={"help": "Print the GPU-hours of the paper's runs and exit."})
    seed: int = field(default=0, metadata=bounds("[0, 4294967295]", "Seed of every non-private choice."))
    overwrite: bool = field(default=False, metadata={"help": "Start over, removing what saturation wrote."})


def _check(args: SaturationArguments) -> None:
    from continuousbench.classification.prompts import TEMPLATES

    for option, given, known in (
        ("--regimes", args.regimes, REGIMES),
        ("--templates", args.templates, TEMPLATES),
    ):
        unknown = [v for v in given if v not in known]
        if unknown or not given:
            raise UserError(f"{option} {' '.join(given)}: choose among {', '.join(known)}")
    missing = [f"--{k}" for k in ("dataset", "model", "output_dir") if getattr(args, k) is None]
    if missing:
        raise UserError(
            f"{', '.join(missing)} missing: continuousbench saturation --dataset <preset | hub id | folder | "
            "file> --model <id | folder> --output_dir DIR (or --plan)"
        )


def _settings(args: SaturationArguments) -> dict:
    return {
        k: v
        for k, v in asdict(args).items()
        if k not in ("overwrite", "plan", "beside", "beside_rows", "beside_metric")
    }


def _open(args: SaturationArguments) -> Path:
    """The output folder, checked: a finished or unfinished study of the same settings continues; other
    settings need ``--overwrite``, which moves what this command wrote to ``.saturation-old/`` and removes
    it only once the new study is written (a failed new study leaves the old one there)."""
    from continuousbench.files import check_writable_dir, read_json, write_json

    out = check_writable_dir(Path(args.output_dir), "--output_dir")
    settings_file = out / "settings.json"
    if out.is_dir() and any(out.iterdir()) and not settings_file.is_file():
        raise UserError(f"--output_dir {out} holds other files; pass a new folder or a saturation study's")
    if args.overwrite:  # the old study is set aside, and removed once the new one is written
        old = out / OLD
        shutil.rmtree(old, ignore_errors=True)
        kept = [name for name in WRITES if (out / name).exists()]
        if kept:
            old.mkdir()
            for name in kept:
                os.replace(out / name, old / name)
    out.mkdir(parents=True, exist_ok=True)
    settings = _settings(args)
    if settings_file.is_file() and read_json(settings_file) != settings:
        raise UserError(
            f"{out} holds a saturation study with other settings: pass --overwrite or another folder"
        )
    write_json(settings_file, settings)
    return out


def load(args: SaturationArguments):
    from continuousbench.classification.tasks import load_task

    splits = tuple(args.splits.split(",")) if args.splits else None
    if splits is not None and len(splits) != 3:
        raise UserError(f"--splits {args.splits!r} must name three splits: train,validation,test")
    return load_task(
        args.dataset,
        preset=args.preset,
        text_column=args.text_column,
        label_column=args.label_column,
        label_map=args.label_map,
        splits=splits,
        seed=args.seed,
        limits=(args.train_limit, args.validation_limit, args.test_limit),
    )


def main(args: SaturationArguments) -> dict:
    """Run the regimes (finished ones are kept), then write the summary, the tables and Fig. 8."""
    from continuousbench.classification import regimes, report

    if args.plan:
        from continuousbench.classification.plan import print_plan

        return print_plan()
    from continuousbench.classification.figure import release_regimes

    _check(args)
    release_regimes(args.beside, args.beside_rows, args.beside_metric)  # a bad --beside fails now
    task = load(args)  # bad data fails before anything is written
    out = _open(args)
    done = {}
    for regime in [r for r in REGIMES if r in args.regimes]:
        logger.info("regime %s", regime)
        done[regime] = regimes.run(regime, args, task, out)
    summary = report.write(out, args, task, done)
    shutil.rmtree(out / OLD, ignore_errors=True)
    return summary


def _report(summary: dict) -> None:
    if "regimes" in summary:
        from continuousbench.classification.report import summary_line

        print(summary_line(summary))


make_parser, cli = command(
    SaturationArguments,
    "continuousbench saturation",
    "Is a classification benchmark saturated? Its four regimes (paper Fig. 8, App. F) by one command.",
    main,
    report=_report,
    resume_hint="finished regimes are kept; rerun the same command to continue",
)
