"""The four regimes of a saturation study, each leaving a run folder under ``DIR/runs/<regime>``.

The synthetic regimes call the package's own commands: ``train-generator --label_column`` on the
training and validation splits (written once to ``DIR/data``), then ``synthesize --per_class``; the DP
engine, its accounting and its statement are exactly the command's. Every stage is skipped when its
output is finished, and a stage that stopped mid-way continues through its command's ``--resume``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from continuousbench import staged_output
from continuousbench.classification import runs
from continuousbench.classification.finetune import (
    FineTuning,
    evaluate_classifier,
    train_classifier,
)
from continuousbench.files import read_json, write_json
from continuousbench.loader import count_parameters
from continuousbench.results.record import RESULTS

logger = logging.getLogger(__name__)


def run(regime: str, args, task, out: Path) -> dict:
    """The regime's results record (made now, or read from its finished run folder)."""
    folder = out / "runs" / regime
    if runs.finished(folder):
        logger.info("%s: finished before, kept", folder)
        return read_json(folder / RESULTS)
    if regime == "no-training":
        return prompted(args, task, out, folder)
    if regime == "real":
        corpus = runs.corpus_block(task.source, list(task.train["text"]))
        return fine_tuned(args, task, task.train, corpus, out, folder, "the training split")
    corpus_dir = synthetic(args, task, out, private=regime == "dp-syn")
    rows = synthetic_rows(corpus_dir, task)
    return fine_tuned(
        args,
        task,
        rows,
        runs.corpus_block(str(corpus_dir), list(rows["text"])),
        out,
        folder,
        f"the synthetic corpus {corpus_dir.name}",
    )


def recipe(args) -> FineTuning:
    return FineTuning(
        args.ft_tuning,
        args.ft_epochs,
        args.ft_learning_rate,
        args.ft_batch_size,
        args.ft_gradient_accumulation,
        args.ft_max_length,
        args.seed,
    )


def prompted(args, task, out: Path, folder: Path) -> dict:
    """Every condition of the grid on the base model (``DIR/prompted/grid.json`` and ``grid.parquet``);
    the run folder holds the best condition's record and predictions."""
    import pandas as pd

    from continuousbench.classification.prompted import best, grid, run_condition
    from continuousbench.harness.outputs import write_predictions
    from continuousbench.loader import load_model

    model, tokenizer, _ = load_model(args.model)
    options = {
        "batch_size": args.batch_size,
        "max_new_tokens": args.max_new_tokens,
        "max_chars": args.max_text_chars,
    }
    conditions, tables, rows_of = [], [], {}
    for condition in grid(args.templates, args.shots, args.seeds):
        scores, rows = run_condition(model, tokenizer, task, condition, **options)
        logger.info("%s: exact %.3f", condition.name, scores["metrics"]["exact_match"]["accuracy"])
        conditions.append(scores)
        rows_of[condition.name] = rows
        tables.append(runs.predictions(task, scores, rows).assign(**condition.as_dict()))
    (out / "prompted").mkdir(parents=True, exist_ok=True)
    write_json(
        out / "prompted" / "grid.json",
        [{k: v for k, v in c.items() if k != "per_example"} for c in conditions],
    )
    write_predictions(out / "prompted" / "grid.parquet", pd.concat(tables, ignore_index=True))
    top = best(conditions)
    settings = {
        **options,
        "templates": args.templates,
        "shots": args.shots,
        "seeds": args.seeds,
    }
    record = runs.record(
        task=task,
        model=args.model,
        tuning=recipe(args).resolved(count_parameters(args.model)),  # what fine-tuning would train
        steps=0,
        scores=top,
        validation=None,
        corpus=runs.corpus_block(task.source, list(task.train["text"])),  # as the harness's steps-0 run
        settings=settings,
        seed=args.seed,
        selected=top["condition"],
        rule="the best test accuracy (exact match) over the prompting grid, as the paper's best prompted",
    )
    runs.write_run(folder, record, runs.predictions(task, top, rows_of[top["condition"]]))
    return record


def fine_tuned(args, task, rows, corpus: dict, out: Path, folder: Path, what: str) -> dict:
    """The classifier fine-tuned on ``rows`` and scored on the test split (validation beside it)."""
    logger.info("fine-tuning %s on %s (%d texts)", args.model, what, len(rows))
    work = out / "runs" / f".{folder.name}-training"
    model, tokenizer, trained = train_classifier(
        args.model, task, rows, recipe(args), work, max_chars=args.max_text_chars
    )
    test, validation, predicted = evaluate_classifier(
        model, tokenizer, task, batch_size=args.batch_size, max_chars=args.max_text_chars
    )
    settings = vars(recipe(args))  # the classifier's recipe: the same for every corpus (compare checks it)
    record = runs.record(
        task=task,
        model=args.model,
        tuning=trained["tuning"],
        steps=trained["steps"],
        scores=test,
        validation=validation,
        corpus=corpus,
        settings=settings,
        seed=args.seed,
        selected="final",
        rule="no selection: the classifier after its last epoch (App. F)",
        tokens_per_step=args.ft_batch_size * args.ft_gradient_accumulation * args.ft_max_length,
    )
    record["harness_args"] = {"trained": trained, "validation": validation["metrics"]}
    runs.write_run(folder, record, runs.predictions(task, test, predicted))
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return record


def labelled_data(task, out: Path) -> Path:
    """The training and validation splits with their class names, for ``train-generator --corpus``."""
    from datasets import Dataset, DatasetDict

    folder = out / "data"
    if not (folder / "dataset_dict.json").is_file():
        names = task.names
        as_names = lambda d: Dataset.from_dict({"text": d["text"], "label": [names[y] for y in d["label"]]})  # noqa: E731
        DatasetDict({"train": as_names(task.train), "validation": as_names(task.validation)}).save_to_disk(
            str(folder)
        )
    return folder


def _run_command(module, argv: list[str], folder: Path, command: str) -> None:
    """``continuousbench <command> argv`` in this process, unless finished; ``--resume`` when it stopped."""
    if staged_output.finished(folder, command):
        return
    if staged_output.work_folder(folder, command).is_dir():
        argv = [*argv, "--resume"]
    module.main(*module.make_parser().parse(argv))


def synthetic(args, task, out: Path, *, private: bool) -> Path:
    """Train the regime's label-conditioned generator and sample its corpus; return the corpus folder."""
    from continuousbench.dp import synthesize
    from continuousbench.dp import train as train_generator

    name = "dp-syn" if private else "syn"
    generator, corpus = out / "generators" / name, out / "synthetic" / name
    epsilon = args.epsilon * (1 - args.count_share) if args.class_balance == "dp" else args.epsilon
    config = args.generator_config or str(GENERATOR_CPU)
    argv = [
        "--config",
        config,
        "--corpus",
        str(labelled_data(task, out)),
        "--label_column",
        "label",
        "--label_map",
        ",".join(task.names),
        "--model",
        args.generator_model or args.model,
        "--output_dir",
        str(generator),
        "--seed",
        str(args.seed),
        *(["--epsilon", f"{epsilon:g}"] if private else []),
    ]
    _run_command(train_generator, argv, generator, "train-generator")
    per_class = args.per_class or max(1, round(len(task.train) / len(task.names)))
    argv = [
        "--generator",
        str(generator),
        "--output_dir",
        str(corpus),
        "--per_class",
        str(per_class),
        "--class_prior",
        class_prior(args, task, generator, out / "synthetic" / f"{name}-counts.json"),
        "--temperature",
        f"{args.temperature:g}",
        "--max_new_tokens",
        str(args.synth_max_new_tokens),
        "--batch_size",
        str(args.batch_size),
        "--seed",
        str(args.seed),
    ]
    _run_command(synthesize, argv, corpus, "synthesize")
    return corpus


GENERATOR_CPU = Path(__file__).parent / "configs" / "generator-cpu.yaml"


def class_prior(args, task, generator: Path, file: Path) -> str:
    """``--class_prior`` of the regime's synthesis: uniform, or a counts file (made once): exact counts
    (declared public; also what a non-private generator gets under ``dp``), or DP counts whose noise
    spends what the generator left of ``--epsilon``."""
    from continuousbench.dp.labels import calibrate_counts, counts_record

    if args.class_balance == "uniform":
        return "uniform"
    if not file.is_file():
        privacy = read_json(generator / "privacy.json")
        labels = [int(y) for y in task.train["label"]]
        if args.class_balance == "dp" and privacy.get("private") is not None and privacy.get("event_json"):
            sigma = calibrate_counts(privacy, args.epsilon)
            record = counts_record(labels, task.names, noise_multiplier=sigma)
            record["target_epsilon"] = args.epsilon  # the generator's share and the counts' together
        else:
            record = counts_record(labels, task.names, noise_multiplier=None)
        file.parent.mkdir(parents=True, exist_ok=True)
        write_json(file, record)
    return str(file)


def synthetic_rows(corpus: Path, task):
    from continuousbench.training.labelled import load_labelled

    rows, _ = load_labelled(
        str(corpus), "text", "label", split="train", label_names=",".join(task.names), option="--corpus"
    )
    return rows
