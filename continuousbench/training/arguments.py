"""The options of the evaluator and the generator that are ours (Table 29 defaults), as light dataclasses.

Nothing here imports torch, transformers or trl, so that ``evaluate --help`` and ``train-generator
--help`` list these options at once: :class:`~continuousbench.training.config.TrainingConfig` adds them
to TRL's ``SFTConfig`` (the trainer's hundred other options, shown by ``--help_all``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from continuousbench.commands import bounds
from continuousbench.errors import UserError
from continuousbench.training.adapters import LORA_PLACEMENTS, PROMPT_INITS, PromptSpec
from continuousbench.training.modeling import TUNINGS
from continuousbench.training.options import DP_STEPS

SAMPLES_PER_STEP = 32  # Table 29: effective batch of 32 samples (packed blocks) per optimizer step
NONPRIVATE_STEPS = 10_000  # Table 29
REPLAY_FRACTION = 0.25  # share of a replay corpus in the training text, when one is given
MIX_RATIO = 0.95  # share of a --mix_corpus in the training text (FictionalQA: 5% fiction in web text)


@dataclass
class RecipeOptions:
    """The trainer options a recipe sets, with the recipe's defaults (Table 29); the trainer's others keep
    transformers' defaults. Fields here override ``SFTConfig``'s in :class:`TrainingConfig`."""

    output_dir: str | None = field(
        default=None, metadata={"help": "Run folder (required): results, model and checkpoints go here."}
    )
    push_to_hub: bool = field(
        default=False, metadata={"help": "Upload the selected model to the Hub (with --hub_model_id)."}
    )
    hub_model_id: str | None = field(default=None, metadata={"help": "Its Hub repository (user/name)."})
    samples_per_step: int | None = field(
        default=SAMPLES_PER_STEP,
        metadata=bounds(
            "[1, inf)",
            "Packed blocks per optimizer step (sets gradient_accumulation_steps; None: as given).",
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


@dataclass
class GeneratorOptions(RecipeOptions):
    """The generator's recipe: the evaluator's, with these defaults and ranges (Table 31 under DP)."""

    max_steps: int | None = field(
        default=None,
        metadata=bounds(
            "[1, inf)",
            f"Optimizer steps; default {DP_STEPS} with --epsilon, {NONPRIVATE_STEPS} without.",
            aliases=["--steps"],
        ),
    )
    learning_rate: float = field(default=2e-4, metadata=bounds("(0, inf)", "Peak learning rate."))
    max_length: int | None = field(
        default=256, metadata=bounds("[2, inf)", "Tokens per record (DP: the longest unit of privacy).")
    )
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of the non-private randomness."))


@dataclass
class ModelArguments:
    """The base checkpoint (the same one the candidate's generator started from) and how it is tuned."""

    model: str = field(
        default="google/gemma-3-1b-pt", metadata={"help": "Base causal LM: a local folder or a Hub model id."}
    )
    tuning: str = field(
        default="lora", metadata={"help": "lora, full or prompt (a soft prompt).", "choices": list(TUNINGS)}
    )
    lora_r: int | None = field(default=None, metadata=bounds("[1, inf)", "LoRA rank; default 128."))
    lora_alpha: int | None = field(
        default=None, metadata=bounds("[1, inf)", "LoRA alpha; default = rank (scale 1).")
    )
    lora_targets: str | None = field(
        default=None,
        metadata={
            "help": "LoRA on attention, mlp or all (default) projections, named per architecture.",
            "choices": list(LORA_PLACEMENTS),
        },
    )
    num_virtual_tokens: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Soft-prompt length (default 20).")
    )
    prompt_init: str | None = field(
        default=None,
        metadata={
            "help": "Soft prompt's start: random_uniform (default; DP needs it) or vocab.",
            "choices": list(PROMPT_INITS),
        },
    )
    prompt_init_range: float | None = field(
        default=None, metadata=bounds("(0, inf)", "random_uniform's range (default 0.01).")
    )
    dtype: str | None = field(
        default=None, metadata={"help": "bfloat16, float32 ...; default bf16 where supported."}
    )
    attn_implementation: str | None = field(
        default=None, metadata={"help": "eager, sdpa ... (default: model's)."}
    )

    def __post_init__(self) -> None:
        lora = {"--lora_r": self.lora_r, "--lora_alpha": self.lora_alpha, "--lora_targets": self.lora_targets}
        prompt = {
            "--num_virtual_tokens": self.num_virtual_tokens,
            "--prompt_init": self.prompt_init,
            "--prompt_init_range": self.prompt_init_range,
        }
        stray = [k for k, v in (lora if self.tuning == "prompt" else prompt).items() if v is not None]
        if stray:
            other = "LoRA" if self.tuning == "prompt" else "prompt-tuning"
            raise UserError(
                f"{', '.join(stray)}: {other} options do not apply to --tuning {self.tuning}; drop them"
            )
        if self.tuning != "prompt":
            self.lora_r = 128 if self.lora_r is None else self.lora_r
            self.lora_targets = self.lora_targets or "all"
        else:
            spec = PromptSpec()
            # "is None", not "or": a 0 given is the parser's to refuse, never a silent default
            if self.num_virtual_tokens is None:
                self.num_virtual_tokens = spec.num_virtual_tokens
            self.prompt_init = self.prompt_init or spec.init
            if self.prompt_init_range is None:
                self.prompt_init_range = spec.init_range
            if self.prompt_init != "random_uniform" and prompt["--prompt_init_range"] is not None:
                raise UserError("--prompt_init_range applies to --prompt_init random_uniform only; drop it")

    def prompt_spec(self) -> PromptSpec | None:
        """The soft prompt to train (None unless ``--tuning prompt``)."""
        if self.tuning != "prompt":
            return None
        return PromptSpec(self.num_virtual_tokens, self.prompt_init, self.prompt_init_range)

    def loading(self) -> dict:
        """Keyword arguments of :func:`~continuousbench.training.modeling.load_model_and_tokenizer`."""
        return {
            "tuning": self.tuning,
            "lora_rank": self.lora_r or 128,
            "lora_alpha": self.lora_alpha,
            "lora_placement": self.lora_targets or "all",
            "prompt": self.prompt_spec(),
            "dtype": self.dtype,
            "attn_implementation": self.attn_implementation,
        }


@dataclass
class HarnessArguments:
    """What to train on and what to score."""

    release: str | None = field(default=None, metadata={"help": "Release id or folder whose QA is scored."})
    corpus: str | None = field(
        default=None,
        metadata={
            "help": "Candidate corpus: a release, dataset folder, .parquet/.jsonl/.txt file or Hub id "
            "(default: the release's)."
        },
    )
    corpus_privacy: str | None = field(
        default=None,
        metadata={
            "help": "The corpus's DP statement, JSON (docs/results-format.md); default: privacy.json "
            "beside it."
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
            "help": "Corpus mixed into every candidate, the same for all (e.g. the base model's own text)."
        },
    )
    replay_fraction: float | None = field(
        default=None,
        metadata=bounds(
            "(0, 1)",
            f"Its share of the training text (default {REPLAY_FRACTION}; needs --replay_corpus).",
        ),
    )
    mix_corpus: str | None = field(
        default=None,
        metadata={
            "help": "Forgetting monitor: a general corpus mixed in; its held-out loss before and after "
            "training."
        },
    )
    mix_ratio: float | None = field(
        default=None,
        metadata=bounds("[0, 1)", f"Its share of training (default {MIX_RATIO}; needs --mix_corpus)."),
    )
    max_document_blocks: int = field(
        default=64,
        metadata=bounds(
            "[1, inf)",
            "Documents are cut after about this many max_length blocks (cuts counted in results.json).",
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
        metadata={"help": "Use a judge that failed calibration anyway (recorded)."},
    )
    resume: bool = field(default=False, metadata={"help": "Continue a killed run from its last checkpoint."})
    overwrite: bool = field(default=False, metadata={"help": "Replace the results of a finished run."})
    json: bool = field(
        default=False, metadata={"help": "Print the whole results record (JSON), not one line of scores."}
    )
