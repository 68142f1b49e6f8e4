"""Train a generator on a corpus: non-private (the evaluator recipe, TRL) or DP-SGD (Opacus, PLD).

``--epsilon`` unset or ``inf`` trains with :func:`continuousbench.harness.train.continued_pretraining`
and the evaluator's presets (paper App. I.2: generator and evaluator share Tables 29/30). A finite
``--epsilon`` trains LoRA adapters with DP-SGD (:mod:`continuousbench.dp.dpsgd`), noise calibrated by
our PLD accountant to (epsilon, delta). Either way the checkpoint with the lowest loss on the corpus's
validation split is kept, and the folder gets a model card with the privacy statement.
``--lr_sweep 5e-5,1e-4`` trains one run per learning rate under ``<output_dir>/lr-<lr>`` and publishes
the best by validation loss into ``<output_dir>``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import continuousbench
from continuousbench.harness.config import EvaluatorConfig, ModelArguments

logger = logging.getLogger(__name__)

PRIVACY_FILE = "privacy.json"
CARD_FILE = "README.md"


@dataclass
class GeneratorArguments:
    """What to train on and where the generator goes."""

    release: str | None = field(default=None, metadata={"help": "Release id or folder (its corpus)."})
    corpus: str | None = field(
        default=None, metadata={"help": "Corpus source instead of a release (needs a validation split)."}
    )
    text_column: str = field(default="text", metadata={"help": "Column holding the records."})
    eval_limit: int | None = field(
        default=512, metadata={"help": "Validation records scored per DP evaluation (None: all)."}
    )
    lr_sweep: str | None = field(
        default=None, metadata={"help": "Comma-separated learning rates, one run each; best by val loss."}
    )
    resume: bool = field(default=False, metadata={"help": "Continue a killed run from its last checkpoint."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing generator folder."})


@dataclass
class GeneratorConfig(EvaluatorConfig):
    """Evaluator presets (non-private path) plus DP-SGD settings (Table 31)."""

    epsilon: float | None = field(
        default=None, metadata={"help": "Target epsilon; unset or inf: non-private."}
    )
    delta: float | None = field(default=None, metadata={"help": "Target delta; default 1/n^1.1."})
    max_steps: int = field(default=3000, metadata={"help": "Optimizer steps.", "aliases": ["--steps"]})
    expected_batch_size: str = field(
        default="auto",
        metadata={"help": "Expected Poisson batch (q*n), or auto: minimise noise per record (truncated)."},
    )
    physical_batch_size: int = field(
        default=512, metadata={"help": "Truncated Poisson: the most records a batch may hold."}
    )
    micro_batch_size: int = field(default=8, metadata={"help": "Records per forward/backward (memory)."})
    sampling: str = field(
        default="truncated_poisson",
        metadata={"help": "poisson or truncated_poisson.", "choices": ["poisson", "truncated_poisson"]},
    )
    truncation_analysis: str = field(
        default="pld", metadata={"help": "pld (exact) or union_bound.", "choices": ["pld", "union_bound"]}
    )
    clip_norm: float = field(default=1e-3, metadata={"help": "Normalised clipping norm C."})
    metric_for_best_model: str | None = "loss"
    # EvaluatorConfig's `str | list[str] | None` breaks TrlParser 1.16; one integration is enough.
    report_to: str | None = "none"
    greater_is_better: bool | None = False

    @property
    def private(self) -> bool:
        return self.epsilon is not None and not math.isinf(self.epsilon)


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser(
        (GeneratorArguments, ModelArguments, GeneratorConfig),
        prog="continuousbench train-generator",
        description="Train a generator on a corpus: non-private (TRL) or DP-SGD (Opacus, PLD accounting).",
    )


def _load_data(args: GeneratorArguments):
    from continuousbench.harness.data import load_corpus

    source = args.corpus or args.release
    if not source:
        raise ValueError("no training data: pass --release <id or folder> or --corpus <source>")
    train = load_corpus(source, args.text_column, split="train")
    try:
        val = load_corpus(source, args.text_column, split="validation")
    except (ValueError, KeyError) as err:
        raise ValueError(
            f"corpus {source} has no usable validation split for checkpoint selection ({err})"
        ) from None
    return source, train, val


def _learning_rates(args: GeneratorArguments, config: GeneratorConfig) -> list[float]:
    if not args.lr_sweep:
        return [config.learning_rate]
    try:
        return [float(x) for x in args.lr_sweep.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--lr_sweep {args.lr_sweep!r} is not a comma-separated list of numbers") from None


def _prepare_output(out: Path, args: GeneratorArguments) -> None:
    if out.exists() and any(out.iterdir()) and not (args.overwrite or args.resume):
        raise FileExistsError(f"{out} already exists and is not empty: pass --overwrite or --resume")
    if out.exists() and args.overwrite and not args.resume:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def _publish(tmp: Path, out: Path) -> None:
    """Move every finished artefact of ``tmp`` into ``out`` (rename: atomic per file), then drop ``tmp``."""
    for item in tmp.iterdir():
        target = out / item.name
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(item, target)
    tmp.rmdir()


def _train_nonprivate(run_dir: Path, model_args, config, train, val, resume: bool) -> float:
    from continuousbench.harness.modeling import load_model_and_tokenizer
    from continuousbench.harness.train import continued_pretraining

    model, tokenizer = load_model_and_tokenizer(
        model_args.model,
        tuning=model_args.tuning,
        lora_rank=model_args.lora_r,
        lora_alpha=model_args.lora_alpha,
        dtype=model_args.dtype,
    )
    trainer = continued_pretraining(model, tokenizer, train, config, eval_dataset=val, resume=resume)
    loss = float(trainer.evaluate()["eval_loss"])
    tmp = run_dir / ".final-tmp"
    trainer.save_model(str(tmp))  # the best checkpoint, reloaded by load_best_model_at_end
    tokenizer.save_pretrained(str(tmp))
    (tmp / PRIVACY_FILE).write_text(json.dumps({"private": False, "validation_loss": loss}, indent=2))
    _publish(tmp, run_dir)
    return loss


def _one_run(run_dir: Path, args, model_args, config, train, val, lrs) -> float:
    from continuousbench.dp.statement import generator_card, privacy_statement

    if config.private:
        from continuousbench.dp.loop import train_dp

        loss, guarantee = train_dp(run_dir, model_args, config, train, val, args)
    else:
        loss, guarantee = _train_nonprivate(run_dir, model_args, config, train, val, args.resume), None
    details = {
        "base_model": model_args.model,
        "lora_rank": model_args.lora_r,
        "learning_rate": config.learning_rate,
        "steps": config.max_steps,
        "seed": config.seed,
        "max_length": config.max_length,
        "validation_loss": loss,
        "package_version": continuousbench.__version__,
    }
    card = generator_card(
        privacy_statement(guarantee, lr_sweep=lrs),
        base_model=model_args.model,
        corpus=args.corpus or args.release,
        details=details,
        private=config.private,
    )
    card.save(str(run_dir / CARD_FILE))
    return loss


def main(args: GeneratorArguments, model_args: ModelArguments, config: GeneratorConfig) -> Path:
    """Train (one run per learning rate) and return the generator folder."""
    if model_args.tuning != "lora":
        raise ValueError("generators are LoRA-tuned (paper App. I.2): pass --tuning lora")
    out = Path(config.output_dir)
    _prepare_output(out, args)
    source, train, val = _load_data(args)
    lrs = _learning_rates(args, config)
    if len(lrs) == 1:
        _one_run(out, args, model_args, dataclasses.replace(config, learning_rate=lrs[0]), train, val, lrs)
        return out
    losses = {}
    for lr in lrs:
        run_dir = out / f"lr-{lr:g}"
        run_dir.mkdir(exist_ok=True)
        run_config = dataclasses.replace(config, learning_rate=lr, output_dir=str(run_dir))
        losses[lr] = _one_run(run_dir, args, model_args, run_config, train, val, lrs)
    best = min(losses, key=losses.get)
    best_dir = out / f"lr-{best:g}"
    for item in best_dir.iterdir():  # the best run's artefacts at the top level
        if not item.name.startswith("checkpoint-") and item.name != "best":
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, out / item.name)
    (out / "sweep.json").write_text(
        json.dumps(
            {"validation_loss": {f"{k:g}": v for k, v in losses.items()}, "best_learning_rate": best},
            indent=2,
        )
    )
    return out


def cli(argv: list[str] | None = None) -> Path:
    """Parse ``argv`` (default: sys.argv) with :func:`make_parser`, run :func:`main`, print the folder."""
    from continuousbench.commands import run

    return run(lambda: main(*make_parser().parse(argv)), report=print)
