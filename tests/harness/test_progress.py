"""Training progress lines with an ETA, and no warning for a tied LM head when the best checkpoint is
reloaded (training/progress.py, training/sft.py)."""

from __future__ import annotations

import logging
from collections import namedtuple

from continuousbench.training.progress import Progress, clock


def test_the_eta_counts_the_steps_this_process_ran():
    progress = Progress(100, first=40, started=1000.0)  # resumed at step 40
    assert progress.line(40, now=1000.0) == "step 40/100 (40%), 0:00 elapsed"
    assert progress.line(50, now=1020.0) == "step 50/100 (50%), 0:20 elapsed, ETA 1:40"
    assert clock(3725) == "1:02:05"


def test_trainer_logs_progress_with_an_eta(caplog):
    from transformers import TrainerState, TrainingArguments

    from continuousbench.training.sft import ProgressLog

    callback, state = ProgressLog(), TrainerState(max_steps=10, global_step=0)
    args = TrainingArguments(output_dir="unused", report_to="none")
    callback.on_train_begin(args, state, None)
    state.global_step = 5
    with caplog.at_level(logging.INFO, logger="continuousbench"):
        callback.on_log(args, state, None, logs={"loss": 2.5})
        callback.on_log(args, state, None, logs={"eval_qa_contains": 0.25, "step": 5})
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("step 5/10 (50%)") and "ETA" in lines[0] and lines[0].endswith("loss 2.5000")
    assert lines[1] == "step 5: validation qa_contains 0.25"


def test_a_tied_head_is_not_reported_missing(caplog):
    """Trainer 5.x warned ``There were missing keys in the checkpoint model loaded: ['lm_head.weight']``
    on every full-tuning run that reloaded its best checkpoint; a really missing weight still warns."""
    from types import SimpleNamespace

    from continuousbench.training.sft import EvaluatorTrainer

    trainer = EvaluatorTrainer.__new__(EvaluatorTrainer)
    trainer.model = SimpleNamespace(
        all_tied_weights_keys={"lm_head.weight": "model.embed_tokens.weight"}, _keys_to_ignore_on_save=set()
    )
    Loaded = namedtuple("Loaded", "missing_keys unexpected_keys")
    with caplog.at_level(logging.WARNING):
        trainer._issue_warnings_after_load(Loaded(["lm_head.weight"], []))
        assert "missing keys" not in caplog.text
        trainer._issue_warnings_after_load(Loaded(["model.norm.weight"], []))
    assert "model.norm.weight" in caplog.text
