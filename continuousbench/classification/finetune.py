"""The fine-tuned classifier (paper App. F, Tables 20 and 25): the base model trained on (text, label)
pairs, then asked with the ``direct`` template, 0 shots, and scored like a prompted condition.

Each training pair is a prompt-completion example (the direct prompt, the class name): TRL's
``SFTTrainer`` computes the loss on the completion only. Full fine-tuning for 1B-class models, LoRA
(r = 32, alpha = 64, attention and MLP projections) for larger ones (``tuning="auto"``: full up to
:data:`FULL_UP_TO` parameters), 3 epochs, learning rate 2e-5, batches of 16 x 2, as App. F. This is the
downstream classifier, trained without DP on whatever data the regime gives it (the real training split,
a non-private or a DP synthetic corpus); nothing here touches the DP engine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from continuousbench.classification.prompted import Condition, run_condition
from continuousbench.classification.prompts import prompt
from continuousbench.errors import UserError
from continuousbench.loader import count_parameters

FULL_UP_TO = 2_000_000_000  # Gemma 3 1B (1.0B) is fine-tuned fully; 4B (3.9B) gets LoRA
LORA_RANK, LORA_ALPHA = 32, 64


@dataclass(frozen=True)
class FineTuning:
    """The classifier recipe (App. F defaults)."""

    tuning: str = "auto"  # auto, full or lora
    epochs: float = 3.0
    learning_rate: float = 2e-5
    batch_size: int = 16
    gradient_accumulation: int = 2
    max_length: int = 512
    seed: int = 0

    def resolved(self, parameters: int) -> str:
        if self.tuning not in ("auto", "full", "lora"):
            raise UserError(f"--ft_tuning {self.tuning!r}: use auto, full or lora")
        if self.tuning != "auto":
            return self.tuning
        return "full" if parameters <= FULL_UP_TO else "lora"


def examples(task, rows, max_chars: int):
    """Prompt-completion pairs of ``rows`` (text, label): the direct 0-shot prompt and the class name."""
    from datasets import Dataset

    names = task.names
    return Dataset.from_dict(
        {
            "prompt": [prompt("direct", task.text, t, (), max_chars) for t in rows["text"]],
            "completion": [f" {names[int(y)]}" for y in rows["label"]],
        }
    )


def train_classifier(model_id: str, task, rows, recipe: FineTuning, work, *, max_chars: int):
    """(model, tokenizer, what was trained) after fine-tuning ``model_id`` on ``rows`` in ``work``."""
    import torch
    from transformers import set_seed
    from trl import SFTConfig

    from continuousbench.training.modeling import load_model_and_tokenizer
    from continuousbench.training.sft import continued_pretraining

    tuning = recipe.resolved(count_parameters(model_id))
    set_seed(recipe.seed)
    lora = {"lora_rank": LORA_RANK, "lora_alpha": LORA_ALPHA} if tuning == "lora" else {}
    model, tokenizer = load_model_and_tokenizer(model_id, tuning=tuning, **lora)
    gpu = torch.cuda.is_available()
    args = SFTConfig(
        output_dir=str(work),
        num_train_epochs=recipe.epochs,
        learning_rate=recipe.learning_rate,
        per_device_train_batch_size=recipe.batch_size,
        gradient_accumulation_steps=recipe.gradient_accumulation,
        max_length=recipe.max_length,
        packing=False,
        lr_scheduler_type="linear",
        save_strategy="no",
        eval_strategy="no",
        report_to="none",
        seed=recipe.seed,
        data_seed=recipe.seed,
        use_cpu=not gpu,
        bf16=gpu and torch.cuda.is_bf16_supported(),
        logging_steps=10,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    start = time.perf_counter()
    trainer = continued_pretraining(model, tokenizer, examples(task, rows, max_chars), args)
    seconds = time.perf_counter() - start
    trained = {
        "tuning": tuning,
        "train_seconds": round(seconds, 1),
        "steps": trainer.state.global_step,
        "records": len(rows),
        **({"lora_r": LORA_RANK, "lora_alpha": LORA_ALPHA} if lora else {}),
    }
    return trainer.model, tokenizer, trained


def evaluate_classifier(
    model, tokenizer, task, *, batch_size: int, max_chars: int
) -> tuple[dict, dict, dict]:
    """(test scores, validation scores, test rows) of a fine-tuned classifier: direct, 0 shots."""
    import dataclasses

    condition = Condition("direct", 0, None)
    options = {"batch_size": batch_size, "max_new_tokens": 16, "max_chars": max_chars}
    test, rows = run_condition(model, tokenizer, task, condition, **options)
    on_validation = dataclasses.replace(task, test=task.validation)
    validation, _ = run_condition(model, tokenizer, on_validation, condition, **options)
    return test, validation, rows
