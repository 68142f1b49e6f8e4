"""``saturation --plan``: GPU-hours of the paper's saturation runs (App. F) on one H100/H200-class GPU,
for IMDB, Yelp Polarity and OpenReview with Gemma 3 1B and 4B (the generators: Gemma 3 1B, App. F).

An estimate from FLOPs, not a measurement: ``2 N`` FLOPs per token forward, ``6 N`` per trained token
for full fine-tuning and ``4 N`` for LoRA (no weight gradients of the frozen base), DP-SGD at twice its
non-private step (per-example norms, :mod:`continuousbench.dp.ghost_passes`); each kind of work runs at
the share of the GPU's bf16 peak in :data:`EFFICIENCY`. The training share is calibrated on the paper's
own timings (Tables 20 and 25: 3.4-10.6% of peak, e.g. 7,313 s for 1B full fine-tuning on IMDB;
:func:`fine_tuning_seconds` reproduces them within a factor of two, a test checks it); the prefill and
decoding shares are ``benchmarks/saturation_gpu.py``'s figures on an H200 (prefill 0.28 of peak; greedy
decoding of 32 prompts 0.001 for 1B, 0.003 for 4B: eager ``generate`` dispatches its layers one step at a
time, hence its low share); rerun it on one's own GPU. Texts are cut at 512 tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

PEAK_FLOPS = 989e12  # H100/H200 dense bf16
EFFICIENCY = {"train": 0.06, "prefill": 0.28, "decode": 0.002}  # measured prefill and decoding (H200)
PROMPT_TOKENS = 40  # the direct template around a text


@dataclass(frozen=True)
class Data:
    train: int
    test: int  # the paper's test sets (IMDB: 5,000 of 25,000; OpenReview: 2,798)
    validation: int
    classes: int
    tokens: int  # mean tokens per text, cut at 512 (Gemma 3 tokenizer, estimated)
    shots: tuple[int, ...]  # the paper's grid: OpenReview 0 and 5 shots
    seeds: int = 3


DATASETS = {
    "imdb": Data(40_000, 5_000, 2_500, 2, 300, (0, 3, 5, 7)),  # App. F: a 40,000-review training split
    "yelp_polarity": Data(504_000, 5_000, 5_000, 2, 180, (0, 3, 5, 7)),
    "openreview": Data(8_396, 2_798, 2_798, 5, 480, (0, 5)),
}
MODELS = {"gemma-3-1b": (1.0e9, "full"), "gemma-3-4b": (3.9e9, "lora")}
GENERATOR = 1.0e9  # Gemma 3 1B generators for every classifier (App. F)
TEMPLATE_REPLY = {"direct": 4, "reasoning": 100, "structured": 12}  # tokens a reply takes
GENERATOR_STEPS = {"syn": (10_000, 32), "dp": (3_000, 512)}  # Tables 29/31: steps, records per step
EPOCHS = 3


def _hours(flops: float, kind: str) -> float:
    return flops / (PEAK_FLOPS * EFFICIENCY[kind]) / 3600


def fine_tuning_seconds(data: Data, params: float, tuning: str, epochs: float = EPOCHS) -> float:
    """One classifier fine-tuning run on ``data``'s training split (App. F: 3 epochs)."""
    per_token = 6 if tuning == "full" else 4
    flops = epochs * data.train * (min(data.tokens, 512) + PROMPT_TOKENS) * per_token * params
    return 3600 * _hours(flops, "train")


def estimate(data: Data, params: float, tuning: str) -> dict[str, float]:
    """GPU-hours per stage of one (dataset, model) saturation study."""
    length = min(data.tokens, 512)
    conditions = [
        (t, k) for t in TEMPLATE_REPLY for k in data.shots for _ in range(1 if k == 0 else data.seeds)
    ]
    prefill = sum(data.test * ((k + 1) * (length + 10) + 120) for _, k in conditions)
    decode = sum(data.test * TEMPLATE_REPLY[t] for t, _ in conditions)
    generators = sum(
        steps * batch * length * 4 * GENERATOR * (2 if name == "dp" else 1)
        for name, (steps, batch) in GENERATOR_STEPS.items()
    )
    synthesis = 2 * data.train * length * 2 * GENERATOR
    scoring = 3 * (data.test + data.validation) * (length + 130) * 2 * params
    return {
        "prompted grid": _hours(2 * params * prefill, "prefill") + _hours(2 * params * decode, "decode"),
        "generators": _hours(generators, "train"),
        "synthesis": _hours(synthesis, "decode"),
        # real, syn and DP-syn corpora of the training split's size
        "fine-tuning": 3 * fine_tuning_seconds(data, params, tuning) / 3600 + _hours(scoring, "prefill"),
    }


def plan() -> list[dict]:
    rows = []
    for name, data in DATASETS.items():
        for model, (params, tuning) in MODELS.items():
            stages = estimate(data, params, tuning)
            rows.append(
                {"dataset": name, "model": model, "tuning": tuning, **stages, "total": sum(stages.values())}
            )
    return rows


def print_plan() -> dict:
    """Print the table; return it (``saturation --plan``)."""
    from rich.table import Table

    from continuousbench.commands import wide_console

    rows = plan()
    table = Table(
        title="GPU-hours of the paper's saturation runs (one H100/H200-class GPU, estimated)",
        caption="FLOPs at the shares of bf16 peak in continuousbench/classification/plan.py; "
        "full train splits, the paper's test sets and grid",
    )
    stages = [k for k in rows[0] if k not in ("dataset", "model", "tuning")]
    for col in ("dataset", "model", "tuning", *stages):
        table.add_column(col, justify="left" if col in ("dataset", "model", "tuning") else "right")
    for r in rows:
        table.add_row(r["dataset"], r["model"], r["tuning"], *(f"{r[s]:.1f}" for s in stages))
    wide_console(140).print(table)
    return {"plan": rows, "total": sum(r["total"] for r in rows)}
