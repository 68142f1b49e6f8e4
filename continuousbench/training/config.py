"""What evaluators and generators train with, as dataclasses: Table 29 values are the defaults, Table 30
lives in YAML presets.

:class:`TrainingConfig` is the one trainer configuration (TRL's ``SFTConfig`` with the recipe's defaults
and the DP-SGD settings of :class:`~continuousbench.training.options.DPOptions`); the evaluator
(:class:`EvaluatorConfig`: checkpoints chosen by validation QA) and the generator
(:class:`GeneratorConfig`: chosen by validation loss) are its two presets. Both live here, below ``dp/``
and ``harness/``, so that neither package imports the other's internals. The argument groups are parsed
together by ``CommandParser`` (``--config <yaml>``; default < YAML < command line; unknown keys are an
error): :class:`~continuousbench.training.arguments.HarnessArguments` (what to train on and score),
:class:`~continuousbench.training.arguments.ModelArguments` (base checkpoint and tuning) and one of the
two configs (a finite ``--epsilon`` trains with the DP loop, paper App. E). The options that are ours live
in the light :mod:`continuousbench.training.arguments`, so that ``--help`` needs no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from trl import SFTConfig

from continuousbench.errors import UserError
from continuousbench.training.arguments import NONPRIVATE_STEPS, GeneratorOptions, RecipeOptions
from continuousbench.training.options import DP_STEPS, DPOptions


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
class TrainingConfig(DPOptions, RecipeOptions, SFTConfig):
    """``SFTConfig`` with the recipe as defaults (Table 29) and CPU-safe resolution of devices.

    The token budget of a run is fixed whatever the corpus size: documents (EOS appended) are
    concatenated and cut into blocks of exactly ``max_length`` tokens ("wrapped" packing), each optimizer
    step sees ``samples_per_step`` blocks, so a run trains on ``max_steps * samples_per_step * max_length``
    tokens, cycling over the corpus as many times as that takes. With a finite ``epsilon`` the DP loop
    trains instead: one document per example, Poisson batches (the packing options do not apply).
    """

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
class GeneratorConfig(GeneratorOptions, TrainingConfig):
    """The generator's trainer: the recipe's presets (non-private path) plus the DP-SGD settings (Table
    31); checkpoints are selected by validation loss."""

    metric_for_best_model: str | None = "loss"
    # TrainingConfig's `str | list[str] | None` breaks TrlParser 1.16; one integration is enough.
    report_to: str | None = "none"
    greater_is_better: bool | None = False

    def __post_init__(self) -> None:
        if self.output_dir is None:  # Trainer would write into ./trainer_output
            raise UserError("--output_dir is required: the folder the generator is written to")
        super().__post_init__()
