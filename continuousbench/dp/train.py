"""Train a generator on a corpus: non-private (the evaluator recipe, TRL) or DP-SGD (Opacus, PLD).

``--epsilon`` unset or ``inf`` trains with the evaluator's presets (:mod:`.nonprivate`; paper App. I.2:
generator and evaluator share Tables 29/30, 10,000 steps). A finite ``--epsilon`` trains LoRA adapters,
a soft prompt or every weight (``--tuning full``) with DP-SGD (:mod:`.loop`; Table 31, 3,000 steps),
noise calibrated by our PLD accountant to
(epsilon, delta). Either way the checkpoint with the lowest validation loss is kept, and the folder
gets a model card with the privacy statement. ``--lr_sweep 5e-5,1e-4`` trains one run per learning
rate and publishes only the best by validation loss; ``--epsilon`` is then the sweep's total budget (the
noise is calibrated for all runs composed) and ``privacy.json`` states that composition.

The output folder is a :class:`~continuousbench.staged_output.StagedOutput`: runs, checkpoints and the secret
noise state live in the hidden ``.train-generator-work/``; the finished generator replaces only what
this command wrote before, once complete; ``--resume`` continues a killed job and refuses any change of
corpus or setting.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import continuousbench
from continuousbench import processes
from continuousbench.commands import bounds, command
from continuousbench.dp.published import publishable
from continuousbench.errors import UserError
from continuousbench.training.arguments import GeneratorOptions, ModelArguments
from continuousbench.training.options import DPOptions

if TYPE_CHECKING:  # imports torch: loaded when arguments are parsed, not for --help
    from continuousbench.training.config import GeneratorConfig

logger = logging.getLogger(__name__)

COMMAND = "train-generator"
HALF_PRECISION = ("bfloat16", "bf16", "float16", "fp16", "half")
PRIVACY_FILE = "privacy.json"
CARD_FILE = "README.md"
RESULT_FILE = "result.json"
# Options that change where things are written or how they are shown, not what is trained.
OUTPUT_ONLY = (
    "output_dir",
    "overwrite",
    "resume",
    "logging_dir",
    "logging_steps",
    "logging_strategy",
    "logging_first_step",
    "disable_tqdm",
    "report_to",
    "run_name",
    "local_rank",
    "project",
    "log_level",
    "log_level_replica",
    "log_on_each_node",
)


@dataclass
class GeneratorArguments:
    """What to train on and where the generator goes."""

    release: str | None = field(default=None, metadata={"help": "Release id or folder (its corpus)."})
    corpus: str | None = field(
        default=None, metadata={"help": "Corpus source instead of a release (needs a validation split)."}
    )
    text_column: str = field(default="text", metadata={"help": "Column holding the records."})
    label_column: str | None = field(
        default=None,
        metadata={"help": "Train label-conditioned: each record starts with its label's line (labels.py)."},
    )
    label_map: str | None = field(
        default=None, metadata={"help": "With --label_column: the public class names, a,b or 0=a,1=b."}
    )
    eval_limit: int | None = field(
        default=512, metadata=bounds("[1, inf)", "Validation records scored per DP evaluation (None: all).")
    )
    lr_sweep: str | None = field(
        default=None,
        metadata={"help": "Learning rates (a,b): one run each, all inside --epsilon; best by val loss."},
    )
    sweep: str | None = field(
        default=None,
        metadata={
            "help": "A grid, one run per combination, best by validation loss, all runs inside --epsilon: "
            "learning_rate=1e-4,2e-4,clip_norm=1e-3,1e-2 (keys: learning_rate, clip_norm, weight_decay, "
            "warmup_steps, adam_beta1, adam_beta2)."
        },
    )
    resume: bool = field(default=False, metadata={"help": "Continue a killed run from its last checkpoint."})
    overwrite: bool = field(
        default=False, metadata={"help": "Replace this command's earlier output (once the new one is done)."}
    )

    def __post_init__(self) -> None:
        if self.release and self.corpus:
            raise UserError(
                f"--release {self.release} and --corpus {self.corpus} both name the training data; pass one"
            )
        if self.lr_sweep and self.sweep:
            raise UserError("--lr_sweep and --sweep both set a sweep; put the learning rates in --sweep")


def load_data(args: GeneratorArguments) -> tuple[str, list[str], list[str]]:
    """(source, training records, validation records) of the corpus or release."""
    from continuousbench.training.data import train_and_validation

    source = args.corpus or args.release
    if not source:
        raise UserError("no training data: pass --release <id or folder> or --corpus <source>")
    purpose = "checkpoints are selected on it, outside the DP guarantee, so it must not hold training records"
    if args.label_column:
        from continuousbench.dp.labels import labelled_records

        columns = (args.text_column, args.label_column, args.label_map)
        train, val, _ = labelled_records(source, *columns, purpose)
        return source, train, val
    train, val = train_and_validation(
        source, args.text_column, purpose=purpose, option="--corpus" if args.corpus else "--release"
    )
    return source, list(train["text"]), list(val["text"])


def _grid(args: GeneratorArguments, config: GeneratorConfig) -> dict[str, list[float]]:
    """The swept settings (``--lr_sweep`` is ``--sweep learning_rate=...``); one run when none."""
    from continuousbench.dp import sweep

    if args.sweep:
        names = {f.name for f in dataclasses.fields(config)}  # and their aliases: steps for max_steps
        names |= {a.lstrip("-") for f in dataclasses.fields(config) for a in f.metadata.get("aliases", [])}
        return sweep.parse(args.sweep, names)
    if not args.lr_sweep:
        return {"learning_rate": [config.learning_rate]}
    try:
        return sweep.parse(f"learning_rate={args.lr_sweep}", set(sweep.SWEEPABLE), "--lr_sweep")
    except UserError:
        raise UserError(
            f"--lr_sweep {args.lr_sweep!r} must be comma-separated positive numbers, e.g. 1e-4,2e-4"
        ) from None


def settings(args, model_args, config, train: list[str], val: list[str]) -> dict[str, Any]:
    """Every option of the run plus the corpus's identity: what ``--resume`` must find unchanged (the
    fingerprint is kept in the work folder only)."""
    from continuousbench.training.data import corpus_fingerprint

    pinned = {**dataclasses.asdict(args), **dataclasses.asdict(model_args), **config.to_dict()}
    if config.samples_per_step is not None:  # derived from it and the number of processes
        pinned.pop("gradient_accumulation_steps")
    pinned.update(
        train_records=len(train), validation_records=len(val), corpus_sha256=corpus_fingerprint(train, val)
    )
    return {k: v for k, v in pinned.items() if k not in OUTPUT_ONLY}


def describe_tokenizer(tokenizer) -> str:
    """Class, subword algorithm and vocabulary size, for the statement's unit of privacy."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    algorithm = type(backend.model).__name__ if backend is not None else None
    model = f"{algorithm} model, " if algorithm else ""
    return f"{type(tokenizer).__name__}, {model}{len(tokenizer)} tokens"


def _one_run(run_dir: Path, swept: dict, args, model_args, config, train, val, plan, procs) -> dict:
    """Train (or, after a kill, finish) one run of the sweep; its result stays in the work folder."""
    from continuousbench.dp.sweep import configure
    from continuousbench.files import read_json, write_json

    if (run_dir / RESULT_FILE).is_file():
        logger.info("run %s: finished before, kept", run_dir.name)
        return read_json(run_dir / RESULT_FILE)
    logger.info("run %s: training into %s", run_dir.name, run_dir)
    run_config, plan = configure(dataclasses.replace(config, output_dir=str(run_dir)), plan, swept)
    if config.private:
        from continuousbench.dp.loop import train_dp

        limit = len(val) if args.eval_limit is None else args.eval_limit
        run = train_dp(
            run_dir,
            model_args,
            run_config,
            train,
            val[:limit],
            plan,
            procs=procs,
            resume=args.resume,
            insecure_seed=config.insecure_noise_seed,
        )
        result = {
            "validation_loss": run.best_score,
            "best_step": run.best_step,
            "history": run.history,
            "validation_records": len(run.val_records),
            "randomness": run.streams.describe(config.secure_noise),
            "secret": run.streams.secret,
            "tokenizer": describe_tokenizer(run.tokenizer),
            "clipping": run.comps.clipping,
        }
        if model_args.tuning == "full":  # what the engine clipped, read from the model itself
            from continuousbench.dp.bookkeeping import describe

            result["trained"] = describe(run.model)
    else:
        from continuousbench.dp.nonprivate import train_nonprivate

        result = train_nonprivate(
            run_dir, model_args, run_config, train, val, resume=args.resume, procs=procs
        )
    result.update(learning_rate=run_config.learning_rate, settings=swept)
    processes.on_main(lambda: write_json(run_dir / RESULT_FILE, result), procs)
    return result


def resumable(work: Path) -> bool:
    """Whether a failed or killed job left something to continue: a checkpoint or a finished run."""
    runs = work / "runs"
    return any(runs.glob("*/checkpoint-*")) or any(runs.glob(f"*/{RESULT_FILE}"))


def open_generator_output(
    command: str, config: Any, args: Any, model_args: Any, procs: Any, **kwargs: Any
) -> Any:
    """The run's output folder (:class:`~continuousbench.staged_output.StagedOutput` on ``--output_dir``,
    its corpus, release and model as inputs), opened by process 0; the others join its work folder."""
    from continuousbench.staged_output import StagedOutput

    return processes.on_main(
        lambda: StagedOutput(
            config.output_dir,
            command,
            overwrite=args.overwrite,
            resume=args.resume,
            inputs=[args.corpus, args.release, model_args.model],
            **kwargs,
        ),
        procs,
    )


def main(args: GeneratorArguments, model_args: ModelArguments, config: GeneratorConfig) -> Path:
    """Train (one run per setting of the sweep), publish the best run's generator and return its folder."""
    from continuousbench.dp import sweep

    if model_args.tuning in ("prompt", "full") and not config.private:
        raise UserError(
            f"--tuning {model_args.tuning} trains with the DP engine only: pass --epsilon (a large one, e.g. "
            "1e6, for a nearly non-private reference), or --tuning lora"
        )
    if config.private:
        from continuousbench.dp.dpsgd import resolve_clipping

        resolve_clipping(model_args.tuning, config.clipping)  # refused before any data is read
    if model_args.tuning == "full" and str(model_args.dtype).lower() in HALF_PRECISION:
        raise UserError(
            f"--dtype {model_args.dtype} keeps the weights in half precision, where DP full fine-tuning's "
            "small noisy updates round away: drop it (float32 weights; --bf16 true computes in bfloat16)"
        )
    procs = processes.current()
    grid = _grid(args, config)
    settings_list = sweep.runs(grid)
    staged = open_generator_output(COMMAND, config, args, model_args, procs)
    source, train, val = processes.main_first(lambda: load_data(args), procs)
    processes.on_main(
        lambda: staged.pin_config(settings(args, model_args, config, train, val), ignore=OUTPUT_ONLY), procs
    )
    plan = None
    if config.private:
        from continuousbench.dp.plan import make_plan

        count = len(settings_list)
        shown = f"{config.epsilon:g}" + (f" in all ({count} runs composed)" if count > 1 else "")
        logger.info("calibrating the noise for epsilon %s on %d records", shown, len(train))
        plan = processes.on_main(lambda: make_plan(len(train), config, runs=count), procs)
        logger.info("DP plan: %s", plan)
    try:
        runs = {
            sweep.run_name(s): _one_run(
                staged.work / "runs" / sweep.run_name(s), s, args, model_args, config, train, val, plan, procs
            )
            for s in settings_list
        }
    except Exception:  # a run that left nothing to resume must not block the next one
        if procs.main and not resumable(staged.work):
            staged.discard()
        raise
    best = min(runs, key=lambda name: runs[name]["validation_loss"])
    if args.label_column:  # the public label names travel with the adapter (synthesize --per_class)
        from continuousbench.dp.labels import labelled_records, write_spec

        def labels() -> None:
            names = labelled_records(
                source, args.text_column, args.label_column, args.label_map, names_only=True
            )
            write_spec(staged.work / "runs" / best / "final", names, args.label_column)

        processes.on_main(labels, procs)
    processes.on_main(lambda: _publish(staged, grid, best, runs, source, model_args, config, plan), procs)
    return staged.out


def _publish(staged, grid, best: str, runs: dict[str, dict], source, model_args, config, plan) -> None:
    """Assemble the chosen run's adapter, ``privacy.json`` and the card in the work folder, then publish."""
    from continuousbench.dp import sweep as sweeps
    from continuousbench.dp.statement import RunFacts, generator_card, privacy_statement, versions
    from continuousbench.files import read_json, write_json
    from continuousbench.training.adapters import describe_trained

    chosen = runs[best]
    final = staged.work / "runs" / best / "final"
    names = sorted(p.name for p in final.iterdir() if p.name not in (PRIVACY_FILE, CARD_FILE))
    for name in names:
        os.replace(final / name, staged.work / name)
    adapter = staged.work / "adapter_config.json"
    trained = chosen.get("trained") or describe_trained(
        read_json(adapter) if adapter.is_file() else {}, model_args.lora_targets, model_args.prompt_spec()
    )
    validation = {
        "private": False,
        "note": "computed without noise on the validation split, which the DP guarantee does not cover",
        "loss": chosen["validation_loss"],
        "history": chosen["history"],
    }
    if list(grid) == ["learning_rate"]:
        validation["learning_rates"] = {
            f"{r['learning_rate']:g}": r["validation_loss"] for r in runs.values()
        }
    record: dict[str, Any] = {
        "private": False,
        "learning_rate": chosen["learning_rate"],
        "validation": validation,
        "tuning": model_args.tuning,
        "trained": trained,
        "selection": sweeps.record(grid, runs, best),
    }
    statement = privacy_statement(None)
    if plan is not None:
        assert plan.runs == len(runs), "the noise was calibrated for another number of runs"
        guarantee = plan.account()  # every run composed: the choice saw them all
        one_run = plan.account(runs=1) if plan.runs > 1 else None
        facts = RunFacts(
            base_model=model_args.model,
            tokenizer=chosen["tokenizer"],
            max_length=config.max_length or 256,
            randomness=chosen["randomness"],
            secret=chosen["secret"],
            grid=grid,
            selected=chosen["settings"],
            validation_records=chosen["validation_records"],
            delta_given=config.delta is not None,
            versions=versions(),
            epsilon_per_run=one_run and one_run.epsilon,
            trained=trained,
            tuning=model_args.tuning,
        )
        statement = privacy_statement(guarantee, facts)
        validation["best_step"] = chosen["best_step"]
        record.update(
            private=chosen["secret"],
            dp_sgd=True,
            **guarantee.to_dict(),  # the event and steps of all runs
            target_epsilon=config.epsilon,  # the budget asked for (a sweep's total); "epsilon" is the one met
            sampling_plan=plan.sampling.to_dict(),
            secure_noise=config.secure_noise,
            clipping=chosen["clipping"],
            max_tokens_per_record=facts.max_length,
            tokenizer=facts.tokenizer,
            lr_sweep_accounted=one_run is not None,
            versions=facts.versions,
        )
        if "clip_norm" in chosen["settings"]:
            record["clip_norm"] = chosen["settings"]["clip_norm"]
        if one_run is not None:
            record.update(epsilon_per_run=one_run.epsilon, steps_per_run=plan.steps, runs_accounted=plan.runs)
    write_json(staged.work / PRIVACY_FILE, publishable(record))
    details = {
        "base_model": model_args.model,
        "tuning": model_args.tuning,
        "trained": trained,
        **(
            {"lora_rank": model_args.lora_r, "lora_targets": model_args.lora_targets}
            if model_args.tuning == "lora"
            else {}
        ),
        **({"clipping": chosen["clipping"]} if "clipping" in chosen else {}),
        **chosen["settings"],
        "steps": config.max_steps,
        "seed": config.seed,
        "max_length": config.max_length,
        "validation_loss (not private: validation split)": chosen["validation_loss"],
        "package_version": continuousbench.__version__,
    }
    card = generator_card(
        statement,
        base_model=model_args.model,
        corpus=source,
        details=details,
        private=plan is not None,
        tuning=model_args.tuning,
    )
    card.save(str(staged.work / CARD_FILE))
    for path in staged.work.iterdir():  # some libraries write 0600 files; a generator is for sharing
        if path.is_file():
            path.chmod(0o644)
    staged.publish([*names, PRIVACY_FILE, CARD_FILE])
    logger.info("generator published in %s", staged.out)


def _report(out: Path) -> None:
    if processes.current().main:
        print(out)


def generator_config() -> type:
    """The generator's trainer configuration (TRL's SFTConfig with our presets; imports torch)."""
    from continuousbench.training.config import GeneratorConfig

    return GeneratorConfig


make_parser, cli = command(
    lambda: (GeneratorArguments, ModelArguments, generator_config()),
    "continuousbench train-generator",
    "Train a generator on a corpus: non-private (TRL) or DP-SGD (Opacus, PLD accounting).",
    main,
    report=_report,
    brief=(GeneratorArguments, ModelArguments, GeneratorOptions, DPOptions),
)
