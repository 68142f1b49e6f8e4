"""What evaluators and generators train with, as dataclasses: Table 29 values are the defaults, Table 30
lives in YAML presets.

:class:`TrainingConfig` is the one trainer configuration (TRL's ``SFTConfig`` with the recipe's defaults
and the DP-SGD settings of :class:`~continuousbench.training.options.DPOptions`); the evaluator
(:class:`EvaluatorConfig`: checkpoints chosen by validation QA) and the generator
(:class:`GeneratorConfig`: chosen by validation loss) are its two presets. Both live here, below ``dp/``
and ``harness/``, so that neither package imports the other's internals. The argument groups are parsed
together by ``CommandParser`` (``--config <yaml>``; default < YAML < command line; unknown keys are an
error): :class:`HarnessArguments` (what to train on and score), :class:`ModelArguments` (base checkpoint
and tuning) and one of the two configs (a finite ``--epsilon`` trains with the DP loop, paper App. E).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trl import SFTConfig

from continuousbench.commands import bounds
from continuousbench.errors import UserError
from continuousbench.training.modeling import LORA_TARGETS, TUNINGS
from continuousbench.training.options import DP_STEPS, DPOptions

SAMPLES_PER_STEP = 32  # Table 29: effective batch of 32 samples (packed blocks) per optimizer step
NONPRIVATE_STEPS = 10_000  # Table 29


def _has_accelerator() -> bool:
    import torch

    return torch.cuda.is_available() or (hasattr(torch, "xpu") and torch.xpu.is_available())


def _bf16_supported() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX). There, bf16 autocast trains
    a small model ~1.3x faster than float32; elsewhere bf16 is emulated and slower. CPU runs keep
    float32 by default (``bf16=None``); callers such as the demo opt in with ``bf16=True``."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")  # torch.cpu's own feature probes
    return any(getattr(torch.cpu, probe, lambda: False)() for probe in probes)


@dataclass
class TrainingConfig(DPOptions, SFTConfig):
    """``SFTConfig`` with the recipe as defaults (Table 29) and CPU-safe resolution of devices.

    The token budget of a run is fixed whatever the corpus size: documents (EOS appended) are
    concatenated and cut into blocks of exactly ``max_length`` tokens ("wrapped" packing), each optimizer
    step sees ``samples_per_step`` blocks, so a run trains on ``max_steps * samples_per_step * max_length``
    tokens, cycling over the corpus as many times as that takes. With a finite ``epsilon`` the DP loop
    trains instead: one document per example, Poisson batches (the packing options do not apply).
    """

    output_dir: str | None = field(
        default=None, metadata={"help": "Run folder (required): results, model and checkpoints go here."}
    )
    samples_per_step: int | None = field(
        default=SAMPLES_PER_STEP,
        metadata=bounds(
            "[1, inf)",
            "Packed blocks per optimizer step; sets gradient_accumulation_steps from "
            "per_device_train_batch_size x processes. None keeps gradient_accumulation_steps as given.",
        ),
    )
    max_steps: int | None = field(
        default=None,
        metadata=bounds(
            "[0, inf)",
            f"Optimizer steps (0: no training, score the base checkpoint); default {NONPRIVATE_STEPS}, "
            f"{DP_STEPS} with --epsilon (Table 31).",
            aliases=["--steps"],
        ),
    )
    learning_rate: float = field(default=2e-4, metadata=bounds("(0, inf)", "Peak learning rate (Table 30)."))
    adam_beta1: float = field(default=0.9, metadata=bounds("[0, 1)", "AdamW beta1."))
    adam_beta2: float = field(default=0.995, metadata=bounds("[0, 1)", "AdamW beta2."))
    weight_decay: float = field(default=0.1, metadata=bounds("[0, inf)", "AdamW weight decay."))
    lr_scheduler_type: str = "cosine"  # decays to 0 (Table 29: end learning-rate fraction 0)
    warmup_steps: float = field(
        default=0.1, metadata=bounds("[0, inf)", "Warmup steps; below 1: a fraction of max_steps.")
    )
    per_device_train_batch_size: int = field(
        default=8, metadata=bounds("[1, inf)", "Packed blocks per device per forward pass.")
    )
    max_length: int | None = field(default=256, metadata=bounds("[1, inf)", "Tokens per packed block."))
    packing: bool = True
    packing_strategy: str = "wrapped"
    shuffle_dataset: bool = True
    bf16: bool | None = field(
        default=None, metadata={"help": "bf16 mixed precision; default: where supported."}
    )
    use_cpu: bool | None = field(
        default=None, metadata={"help": "Train on CPU; default: when no accelerator."}
    )
    # 256/1024-token blocks fit without it, and it costs ~20% speed; gradient_checkpointing is its
    # deprecated alias (None so that transformers does not warn).
    activation_checkpointing: bool | None = False
    gradient_checkpointing: bool | None = None
    eval_strategy: str = "steps"
    eval_steps: float | None = field(
        default=500, metadata=bounds("(0, inf)", "Validation QA every this many steps (below 1: a fraction).")
    )
    save_strategy: str = "steps"
    save_steps: float = field(
        default=500, metadata=bounds("(0, inf)", "Checkpoint every this many steps (below 1: a fraction).")
    )
    save_total_limit: int | None = field(
        default=2,  # the best checkpoint and the latest (for --resume) survive
        metadata=bounds("[1, inf)", "Checkpoints kept (the best and the latest survive)."),
    )
    load_best_model_at_end: bool = True
    logging_steps: float = field(default=10, metadata=bounds("(0, inf)", "Log every this many steps."))
    report_to: None | str | list[str] = "none"
    seed: int = field(default=0, metadata=bounds("[0, 4294967295]", "Seed of every non-private choice."))

    def __post_init__(self) -> None:
        # TrainingArguments would quietly write into ./trainer_output; commands refuse that (after the
        # parser has reported unknown arguments, which it does once the dataclasses are built).
        self.output_dir_given = bool(self.output_dir)
        if self.max_steps is None:
            self.max_steps = DP_STEPS if self.private else NONPRIVATE_STEPS
        if self.use_cpu is None:
            self.use_cpu = not _has_accelerator()
        if self.bf16 is None:
            self.bf16 = not self.use_cpu and not self.fp16 and _bf16_supported()
        if self.max_steps == 0:  # baseline: nothing is trained, so nothing is evaluated or saved in training
            self.eval_strategy, self.save_strategy, self.load_best_model_at_end = "no", "no", False
        super().__post_init__()
        if self.samples_per_step is not None and not self.private:  # DP steps: Poisson batches instead
            per_step = self.per_device_train_batch_size * self.world_size
            if self.samples_per_step % per_step:
                raise UserError(
                    f"samples_per_step {self.samples_per_step} is not a multiple of per-device batch "
                    f"{self.per_device_train_batch_size} x {self.world_size} processes; "
                    "change --per_device_train_batch_size"
                )
            self.gradient_accumulation_steps = self.samples_per_step // per_step


@dataclass
class EvaluatorConfig(TrainingConfig):
    """The evaluator's trainer: the best checkpoint is the one with the highest validation QA accuracy."""

    metric_for_best_model: str | None = "qa_contains"
    greater_is_better: bool | None = True


@dataclass
class GeneratorConfig(TrainingConfig):
    """The generator's trainer: the recipe's presets (non-private path) plus the DP-SGD settings (Table
    31); checkpoints are selected by validation loss."""

    max_steps: int | None = field(
        default=None,
        metadata=bounds(
            "[1, inf)", f"Optimizer steps; default {DP_STEPS} with --epsilon, {NONPRIVATE_STEPS} without.",
            aliases=["--steps"],
        ),
    )  # fmt: skip
    learning_rate: float = field(default=2e-4, metadata=bounds("(0, inf)", "Peak learning rate."))
    max_length: int | None = field(
        default=256, metadata=bounds("[2, inf)", "Tokens per record (DP: the longest unit of privacy).")
    )
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of the non-private randomness."))
    metric_for_best_model: str | None = "loss"
    # TrainingConfig's `str | list[str] | None` breaks TrlParser 1.16; one integration is enough.
    report_to: str | None = "none"
    greater_is_better: bool | None = False

    def __post_init__(self) -> None:
        if self.output_dir is None:  # Trainer would write into ./trainer_output
            raise UserError("--output_dir is required: the folder the generator is written to")
        super().__post_init__()


@dataclass
class ModelArguments:
    """The base checkpoint (the same one the candidate's generator started from) and how it is tuned."""

    model: str = field(
        default="google/gemma-3-1b-pt", metadata={"help": "Base causal LM: a local folder or a Hub model id."}
    )
    tuning: str = field(default="lora", metadata={"help": "lora or full.", "choices": list(TUNINGS)})
    lora_r: int = field(default=128, metadata=bounds("[1, inf)", f"LoRA rank, on {', '.join(LORA_TARGETS)}."))
    lora_alpha: int | None = field(
        default=None, metadata=bounds("[1, inf)", "LoRA alpha; default = rank (scale 1).")
    )
    dtype: str | None = field(
        default=None, metadata={"help": "bfloat16, float32 ...; default bf16 where supported."}
    )
    attn_implementation: str | None = field(
        default=None, metadata={"help": "eager, sdpa ... (default: model's)."}
    )


@dataclass
class HarnessArguments:
    """What to train on and what to score."""

    release: str | None = field(default=None, metadata={"help": "Release id or folder whose QA is scored."})
    corpus: str | None = field(
        default=None,
        metadata={
            "help": "Candidate corpus: release id/folder, save_to_disk folder, .parquet/.jsonl/.json/.txt "
            "file or Hub dataset id (default: the release's own corpus)."
        },
    )
    text_column: str = field(default="text", metadata={"help": "Column of the corpus holding the documents."})
    corpus_split: str = field(default="train", metadata={"help": "Split of the corpus to train on."})
    track: str | None = field(
        default=None, metadata={"help": "Few-shot prompt: geminon or news (default: the release's track)."}
    )
    replay_corpus: str | None = field(
        default=None,
        metadata={
            "help": "Corpus mixed into every candidate corpus (same sources as --corpus), e.g. the base "
            "model's own pretraining text; off by default. The same for every candidate."
        },
    )
    replay_fraction: float = field(
        default=0.25,
        metadata=bounds("(0, 1)", "Share of the training text (characters) drawn from --replay_corpus."),
    )
    mix_corpus: str | None = field(
        default=None,
        metadata={
            "help": "Forgetting monitor (FictionalQA): a general corpus (same sources as --corpus) mixed "
            "into the training text at --mix_ratio, with the loss on a held-out sample of it before and "
            "after training in results.json."
        },
    )
    mix_ratio: float = field(
        default=0.95,
        metadata=bounds("[0, 1)", "Share of the training text (characters) from --mix_corpus (0: none)."),
    )
    max_document_blocks: int = field(
        default=64,
        metadata=bounds(
            "[1, inf)",
            "Documents are cut after about this many max_length blocks (4 characters a token): one huge "
            "document would otherwise take gigabytes to tokenize. Cuts are counted in results.json.",
        ),
    )
    qa_eval_limit: int | None = field(
        default=None,
        metadata=bounds("[1, inf)", "Score at most this many validation questions per eval (seeded sample)."),
    )
    qa_test_limit: int | None = field(
        default=None,
        metadata=bounds("[1, inf)", "Score at most this many test questions per part (seeded; smoke runs)."),
    )
    qa_batch_size: int = field(default=32, metadata=bounds("[1, inf)", "Questions per generation batch."))
    max_new_tokens: int = field(
        default=256,
        metadata=bounds(
            "[1, inf)", "Generation budget (stops at the first newline; capped to fit the model's context)."
        ),
    )
    judge: str | None = field(
        default=None,
        metadata={"help": "LLM-match judge: a text-generation spec (endpoint:<url>#<model> ...)."},
    )
    judge_min_accuracy: float = field(
        default=0.85,
        metadata=bounds("[0, 1]", "Refuse a judge scoring below this on the calibration set (docs/judge.md)"),
    )
    judge_max_false_accept: float = field(
        default=0.2,
        metadata=bounds("[0, 1]", "Refuse a judge accepting more than this share of wrong calibration cases"),
    )
    judge_override_calibration: bool = field(
        default=False,
        metadata={"help": "Score with a judge that failed calibration anyway (results.json and card say so)"},
    )
    resume: bool = field(default=False, metadata={"help": "Continue a killed run from its last checkpoint."})
    overwrite: bool = field(default=False, metadata={"help": "Replace the results of a finished run."})
