"""The DP-SGD settings (paper Table 31), one set for every command that trains with the DP loop.

``train-generator --epsilon`` trains a DP generator and ``evaluate --epsilon`` the evaluator itself
(direct DP fine-tuning, App. E); both read these fields through :func:`continuousbench.dp.plan.make_plan`
and :func:`continuousbench.dp.loop.train_dp`, so the two can never drift apart. A finite ``epsilon``
switches DP on; everything else here only matters then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from continuousbench.commands import bounds

DP_STEPS = 3000  # Table 31 (the direct DP evaluators of App. E share the DP generators' settings)


@dataclass
class DPOptions:
    """Privacy target, Poisson batches, normalised clipping and the noise's source."""

    epsilon: float | None = field(
        default=None,
        metadata=bounds("(0, inf]", "Target epsilon: DP-SGD training; unset or inf: non-private."),
    )
    delta: float | None = field(default=None, metadata=bounds("(0, 1)", "Target delta; default 1/n^1.1."))
    expected_batch_size: str = field(
        default="auto",
        metadata={"help": "Expected Poisson batch (q*n), or auto: minimise noise per record (truncated)."},
    )
    physical_batch_size: int = field(
        default=512, metadata=bounds("[1, inf)", "Truncated Poisson: the most records a batch may hold.")
    )
    micro_batch_size: int = field(default=8, metadata=bounds("[1, inf)", "Records per forward/backward."))
    sampling: str = field(
        default="truncated_poisson",
        metadata={"help": "poisson or truncated_poisson.", "choices": ["poisson", "truncated_poisson"]},
    )
    truncation_analysis: str = field(
        default="pld", metadata={"help": "pld (exact) or union_bound.", "choices": ["pld", "union_bound"]}
    )
    clip_norm: float = field(default=1e-3, metadata=bounds("(0, inf)", "Normalised clipping norm C."))
    clipping: str | None = field(
        default=None,
        metadata={
            "help": "per_sample, ghost (little memory) or bookkeeping (--tuning full's); default by tuning.",
            "choices": ["per_sample", "ghost", "bookkeeping"],
        },
    )
    secure_noise: bool = field(default=True, metadata={"help": "Opacus's float-safe noise sampler."})
    insecure_noise_seed: int | None = field(
        default=None,
        metadata=bounds(
            "[0, inf)",
            "TESTS ONLY: DP noise and batches from this public seed (then: no DP guarantee).",
        ),
    )

    @property
    def private(self) -> bool:
        """Whether this run trains with DP-SGD (a finite ``--epsilon``)."""
        return self.epsilon is not None and not math.isinf(self.epsilon)


# The DP settings a results record lists beside the trainer's (only for DP runs).
DP_KEYS = (
    "epsilon",
    "delta",
    "expected_batch_size",
    "physical_batch_size",
    "micro_batch_size",
    "sampling",
    "truncation_analysis",
    "clip_norm",
    "clipping",
    "secure_noise",
    "insecure_noise_seed",
)
