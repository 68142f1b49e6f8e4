"""The non-private generator: the evaluator's recipe (TRL continued pretraining), seeded end to end.

Paper App. I.2: a public LoRA generator shares the evaluator's settings (Tables 29/30), checkpoints
selected by validation loss. ``config.seed`` is set *before* the model is built, so the LoRA
initialisation is seeded as well as the data order: the same seed gives the same adapter.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from continuousbench import processes
from continuousbench.files import replace_dir


def train_nonprivate(
    run_dir: Path, model_args, config, train: list[str], val: list[str], *, resume: bool, procs
) -> dict:
    """Train into ``run_dir/trainer``, leave the best adapter and the tokenizer in ``run_dir/final``."""
    from datasets import Dataset
    from transformers import set_seed

    from continuousbench.training.modeling import load_model_and_tokenizer
    from continuousbench.training.sft import continued_pretraining, last_checkpoint

    set_seed(config.seed)
    model, tokenizer = load_model_and_tokenizer(model_args.model, **model_args.loading())
    trainer_dir = run_dir / "trainer"
    args = dataclasses.replace(config, output_dir=str(trainer_dir))
    resume = resume and last_checkpoint(str(trainer_dir)) is not None
    train, val = Dataset.from_dict({"text": train}), Dataset.from_dict({"text": val})
    trainer = continued_pretraining(model, tokenizer, train, args, eval_dataset=val, resume=resume)
    loss = float(trainer.evaluate()["eval_loss"])
    history = [
        {"step": e["step"], "validation_loss": e["eval_loss"]}
        for e in trainer.state.log_history
        if "eval_loss" in e
    ]
    tmp = run_dir / ".final-tmp"
    trainer.save_model(str(tmp))  # the best checkpoint (load_best_model_at_end); process 0 writes
    if procs.main:
        (tmp / "training_args.bin").unlink(missing_ok=True)  # a pickle; the card lists the settings
        tokenizer.save_pretrained(str(tmp))
        replace_dir(tmp, run_dir / "final")
        shutil.rmtree(trainer_dir)
    processes.barrier(procs)
    return {"validation_loss": loss, "history": history}
