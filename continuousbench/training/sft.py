"""Continued pretraining with TRL's ``SFTTrainer`` on plain text, with QA-based checkpoint selection.

Each corpus record is one language-modeling example (EOS appended). With ``packing=True`` and
``packing_strategy="wrapped"`` (the :class:`~continuousbench.training.config.EvaluatorConfig` defaults)
the records are concatenated and cut into blocks of exactly ``max_length`` tokens, so every optimizer
step trains on ``per_device_train_batch_size x gradient_accumulation_steps x processes`` (= 32) full
blocks, whatever the corpus size; small corpora are simply repeated.

Checkpoint selection is Trainer's own: :class:`EvaluatorTrainer` overrides ``evaluate`` so that, at
every ``eval_steps``, the metrics of ``eval_fn(model)`` (e.g. ``{"qa_contains": 0.41}``) are logged as
``eval_qa_contains``; ``metric_for_best_model`` / ``load_best_model_at_end`` / ``save_total_limit`` then
keep and reload the best checkpoint, and ``resume_from_checkpoint`` restores that bookkeeping.

Checkpoints are written as a whole or not at all, as far as a resume can tell: a ``checkpoint-N`` is
marked incomplete (``.incomplete``) before Trainer writes it and unmarked once Trainer has written its
last file, so ``--resume`` after a kill or a full disk skips it with a warning and continues from the
one before. A full disk is one line naming the checkpoint.
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from transformers import PrinterCallback, Trainer, TrainerCallback
from trl import SFTConfig, SFTTrainer

from continuousbench.training.progress import Progress

EvalFn = Callable[[Any], dict[str, float]]


logger = logging.getLogger(__name__)

INCOMPLETE = ".incomplete"  # inside a checkpoint Trainer is still writing (EvaluatorTrainer)


def kept_checkpoints(work: Path, *, warn: bool = False) -> list[str]:
    """The complete ``checkpoint-N`` folders in ``work``, oldest first. One the run died writing (marked
    ``.incomplete``, or without Trainer's last file) is skipped, with a warning when ``warn``."""
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    found = []
    for path in work.glob(f"{PREFIX_CHECKPOINT_DIR}-*"):
        if (path / INCOMPLETE).exists() or not (path / "trainer_state.json").is_file():
            if warn:
                logger.warning("%s was not completely written (the run died saving it); skipping it", path)
        elif path.is_dir():
            found.append(path.name)
    return sorted(found, key=lambda name: int(name.rsplit("-", 1)[1]))


class ProgressLog(TrainerCallback):
    """Where the bar is off (``disable_tqdm``): a log line per ``logging_steps`` with the loss and an ETA,
    and one per evaluation, instead of Trainer's printed dicts."""

    progress: Progress | None = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.progress = Progress(state.max_steps, first=state.global_step)  # a resume starts later

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or self.progress is None:
            return
        line = self.progress.line(state.global_step)
        if "loss" in logs:
            logger.info("%s: loss %.4f", line, logs["loss"])
        evaluated = {k.removeprefix("eval_"): v for k, v in logs.items() if k.startswith("eval_")}
        if evaluated:
            shown = ", ".join(f"{k} {v:.4g}" for k, v in evaluated.items() if isinstance(v, (int, float)))
            logger.info("step %d: validation %s", state.global_step, shown)


class EvaluatorTrainer(SFTTrainer):
    """``SFTTrainer`` whose evaluation is ``eval_fn(model)`` (plus eval loss when given an eval dataset)."""

    def __init__(self, *args, eval_fn: EvalFn | None = None, **kwargs):
        self.eval_fn = eval_fn
        super().__init__(*args, **kwargs)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """The model's own next-token loss. TRL's chunked log-probability head (which also computes
        entropy and top-1 metrics) saves GPU memory on large vocabularies but costs ~25% of a CPU step
        for a small model; the loss is the same (checked by ``tests/harness/test_training_loss.py``)."""
        return Trainer.compute_loss(self, model, inputs, return_outputs, num_items_in_batch)

    def _issue_warnings_after_load(self, load_result) -> None:
        """Trainer 5.x warns that a reloaded checkpoint misses ``lm_head.weight`` when the head is tied to
        the embeddings: the checkpoint stores the shared tensor once, so nothing is missing."""
        tied = set(getattr(self.model, "all_tied_weights_keys", None) or ())
        missing = [k for k in load_result.missing_keys if k not in tied]
        super()._issue_warnings_after_load(load_result._replace(missing_keys=missing))

    def _save_checkpoint(self, model, trial) -> None:
        """Trainer's checkpoint, marked incomplete until its last file is written (see the module doc)."""
        from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

        folder = Path(self._get_output_dir(trial=trial)) / f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        marker = folder / INCOMPLETE
        try:
            if self.args.should_save:
                folder.mkdir(parents=True, exist_ok=True)
                marker.touch()
            super()._save_checkpoint(model, trial)
        except Exception as err:  # safetensors and torch.save report a full disk in their own errors
            from continuousbench.commands import disk_full

            if disk_full(err):
                raise OSError(
                    errno.ENOSPC, "no space left on the device while writing a checkpoint", str(folder)
                ) from None
            raise
        if self.args.should_save:
            marker.unlink(missing_ok=True)

    def evaluate(
        self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval"
    ) -> dict[str, float]:
        metrics: dict[str, float] = {}
        if self.eval_dataset or eval_dataset is not None:  # an empty dict is the "QA only" placeholder
            metrics.update(super().evaluate(eval_dataset, ignore_keys, metric_key_prefix))
        if self.eval_fn is not None:
            qa = {f"{metric_key_prefix}_{k}": float(v) for k, v in self.eval_fn(self.model).items()}
            qa["step"] = self.state.global_step
            metrics.update(qa)
            self.log(qa)
            self.control = self.callback_handler.on_evaluate(
                self.args, self.state, self.control, metrics=metrics
            )
        return metrics


def last_checkpoint(output_dir: str) -> str | None:
    """The newest complete ``checkpoint-N`` folder of a run, or None (an incomplete one is skipped)."""
    kept = kept_checkpoints(Path(output_dir)) if os.path.isdir(output_dir) else []
    return os.path.join(output_dir, kept[-1]) if kept else None


def continued_pretraining(
    model,
    tokenizer,
    train_dataset,
    args: SFTConfig,
    *,
    eval_fn: EvalFn | None = None,
    eval_dataset=None,
    callbacks: Sequence = (),
    resume: bool = False,
) -> SFTTrainer:
    """Train ``model`` on ``train_dataset`` (a ``text`` column) with ``args``; return the trained trainer.

    ``eval_fn(model) -> {name: value}`` runs at every evaluation; with neither ``eval_fn`` nor
    ``eval_dataset``, evaluation and best-checkpoint loading are switched off. ``resume=True`` continues
    from the newest checkpoint in ``args.output_dir`` (FileNotFoundError when there is none).
    """
    if eval_fn is None and eval_dataset is None and args.eval_strategy != "no":
        args = dataclasses.replace(args, eval_strategy="no", load_best_model_at_end=False)
    checkpoint = None
    if resume:
        checkpoint = last_checkpoint(args.output_dir)
        if checkpoint is None:
            raise FileNotFoundError(f"nothing to resume in {args.output_dir}: it has no checkpoint-N folder")
    if eval_dataset is None and args.eval_strategy != "no":
        # Trainer refuses step evaluation without an eval dataset; an empty dict satisfies it and
        # EvaluatorTrainer.evaluate then computes only the QA metrics.
        eval_dataset = {}
    trainer = EvaluatorTrainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        callbacks=list(callbacks),
        eval_fn=eval_fn,
    )
    if args.disable_tqdm:  # no bar: our progress lines (with an ETA) replace Trainer's printed dicts
        trainer.remove_callback(PrinterCallback)
        trainer.add_callback(ProgressLog())
    try:
        trainer.train(resume_from_checkpoint=checkpoint)
    except BaseException:  # Ctrl-C, a full disk...
        close_progress_bars(trainer)  # so that what is printed next is not followed by a stale bar
        raise
    return trainer


def close_progress_bars(trainer) -> None:
    """Close Trainer's tqdm bars, which it closes only when training ends normally."""
    from transformers import ProgressCallback

    for callback in trainer.callback_handler.callbacks:
        if isinstance(callback, ProgressCallback):
            for bar in (callback.training_bar, callback.prediction_bar):
                if bar is not None:
                    bar.close()
            callback.training_bar = callback.prediction_bar = None
