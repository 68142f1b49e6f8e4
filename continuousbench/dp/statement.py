"""Privacy statements (Ponomareva et al. 2023 checklist) of a generator and of a Private Evolution
corpus, and the cards that carry them.

The same markdown goes into the generator's model card and into the dataset card of every synthetic
corpus sampled from it, so a corpus never travels without the guarantee it was produced under.
"""

from __future__ import annotations

import json
import math
from typing import Any

from continuousbench.dp.accounting import EvolutionGuarantee, PrivacyGuarantee

NON_PRIVATE = (
    "## Privacy statement\n\n"
    "This generator was trained **without differential privacy** (epsilon = infinity). Its weights and "
    "every text sampled from it may reveal any record of the training corpus; it is the non-private "
    "reference point of the benchmark.\n"
)


def _sampling_line(g: PrivacyGuarantee) -> str:
    if g.sampling == "poisson":
        return "Poisson sampling: every record joins each batch independently with probability q"
    analysis = {
        "pld": "accounted exactly as truncated Poisson sampling (dp_accounting "
        "`TruncatedSubsampledGaussianDpEvent`, Ganesh 2025)",
        "union_bound": "accounted as Poisson sampling with e^epsilon x (probability of any truncation) added "
        "to delta (Chua et al. 2024)",
    }[g.truncation_analysis or "pld"]
    return (
        f"truncated Poisson sampling: Poisson batches larger than {g.physical_batch} records are cut to a "
        f"random subset of {g.physical_batch}; {analysis}. Union-bound probability that any of the "
        f"{g.steps} batches is truncated: {g.truncation_probability:.3g}"
    )


def privacy_statement(g: PrivacyGuarantee | None, *, lr_sweep: list[float] | None = None) -> str:
    """Markdown statement following the checklist; ``None`` gives the non-private statement."""
    if g is None:
        return NON_PRIVATE
    tuning = (
        f"The learning rate was chosen among {len(lr_sweep)} runs ({', '.join(f'{x:g}' for x in lr_sweep)}) "
        "by validation loss; this selection is **not** accounted for."
        if lr_sweep and len(lr_sweep) > 1
        else "Hyperparameter tuning, if any was done before this run, is not accounted for."
    )
    rows = [
        ("epsilon", f"{g.epsilon:.4g}"),
        ("delta", f"{g.delta:.3g}"),
        ("accountant", "privacy loss distributions (PLD), `dp_accounting.pld.PLDAccountant`"),
        ("noise multiplier (sigma)", f"{g.noise_multiplier:.6g}"),
        ("steps", str(g.steps)),
        ("expected batch size (q x n)", f"{g.expected_batch_size:.6g} (q = {g.sampling_probability:.6g})"),
        ("dataset size n", str(g.dataset_size)),
        (
            "clipping",
            f"normalised clipping at C = {g.clip_norm:g}: per-example gradients clipped to C then "
            "divided by C, noise std sigma on the sum, divided by the expected batch size",
        ),
    ]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"""## Privacy statement

This generator was trained with DP-SGD and satisfies **({g.epsilon:.4g}, {g.delta:.3g})-differential
privacy** with respect to its training corpus.

1. **DP setting.** Central DP: the party that trains the generator is trusted to run the mechanism as
   described. The trained model (its LoRA adapter weights) is released.
2. **What the guarantee covers.** One training run. The mechanism's output is the whole sequence of
   noisy gradients, so every checkpoint, the released weights and everything sampled from them
   (synthetic corpora) are covered by post-processing. Not covered: the base checkpoint (public data),
   the release's QA and support counts, and checkpoint selection by loss on the corpus's validation
   split (held out from training). {tuning}
3. **Unit of privacy.** One corpus record (one document, at most the training sequence length in
   tokens), example-level DP. Each record is one example with an empty prompt; its loss is the mean over
   its tokens.
4. **Adjacency.** Add-or-remove one record.
5. **Sampling.** {_sampling_line(g)}.
6. **Accounting.**

| quantity | value |
| --- | --- |
{table}

7. **Serialised DP event** (`dp_accounting` DpEvent, `continuousbench.dp.accounting.dp_event_from_json`
   rebuilds it):

```json
{g.event_json}
```
"""


def generator_card(
    statement: str,
    *,
    base_model: str,
    corpus: str,
    details: dict[str, Any],
    private: bool,
):
    """A ``huggingface_hub.ModelCard`` for a generator folder: metadata, training details, privacy."""
    from huggingface_hub import ModelCard, ModelCardData

    tags = ["continuousbench", "synthetic-data-generator", "lora"]
    tags += ["differential-privacy", "dp-sgd", "opacus"] if private else ["non-private"]
    data = ModelCardData(
        base_model=base_model, library_name="peft", tags=tags, pipeline_tag="text-generation"
    )
    body = (
        f"---\n{data.to_yaml()}\n---\n\n# ContinuousBench generator\n\n"
        f"LoRA generator fine-tuned from `{base_model}` on `{corpus}`, for sampling synthetic corpora "
        "(`continuousbench synthesize`).\n\n"
        f"## Training\n\n```json\n{json.dumps(details, indent=2, sort_keys=True, default=str)}\n```\n\n"
        f"{statement}"
    )
    return ModelCard(body)


def evolution_statement(g: EvolutionGuarantee, *, temperatures: list[float], sweep_voters: str) -> str:
    """Markdown statement of a Private Evolution corpus (same checklist as :func:`privacy_statement`)."""
    choices = ", ".join(f"{t:g}" for t in temperatures)
    if len(temperatures) == 1:
        selection = "One temperature was used: nothing was selected."
    elif sweep_voters == "private":
        selection = (
            f"It also picked the temperature among {choices} by each sweep run's final FID; the sweep runs' "
            "histograms were computed on the private records and are part of the accounting."
        )
    else:
        selection = (
            f"It also picked the temperature among {choices} by each sweep run's final FID; in the sweep "
            "runs the validation records voted instead of the private ones, so the sweep read none."
        )
    common = (
        "3. **Not covered, and not protected.** The corpus's validation split: the FID after every "
        f"iteration is measured against it and published. {selection} The dataset size n (it sets delta) "
        "is treated as public. The API model, the embedding model and the prompts are public; "
        "hyperparameters chosen before this job are not accounted for."
    )
    if math.isinf(g.epsilon):
        return f"""## Privacy statement

This corpus was made by Private Evolution **without noise** (epsilon = infinity): the selected texts
may reveal any record of the private corpus; it is a non-private reference point.

1. **What the private records influence.** Only the vote histograms (each record votes once per
   iteration for its nearest synthetic candidate); the API saw public prompts and synthetic text only.
2. **Unit.** One corpus record.
{common}
"""
    rows = [
        ("epsilon", f"{g.epsilon:.4g}"),
        ("delta", f"{g.delta:.3g}"),
        ("accountant", "privacy loss distributions (PLD), `dp_accounting.pld.PLDAccountant`"),
        ("noise std per histogram bin (sigma)", f"{g.noise_multiplier:.6g}"),
        ("iterations per run (T)", str(g.iterations)),
        ("runs whose histograms read private records", str(g.private_runs)),
        ("Gaussian mechanisms composed", str(g.mechanisms)),
        ("dataset size n", str(g.dataset_size)),
    ]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"""## Privacy statement

This corpus was made by Private Evolution (Aug-PE) and satisfies
**({g.epsilon:.4g}, {g.delta:.3g})-differential privacy** with respect to the private corpus.

1. **DP setting.** Central DP: the party running the job is trusted to run the mechanism as described.
   The synthetic corpus is released.
2. **What the guarantee covers.** The vote histograms: in every iteration each private record votes
   once for its nearest synthetic candidate (embedding L2 distance), and Gaussian noise of std sigma,
   drawn from the operating system's entropy (not from the published seed), is added to every bin
   before any use. Everything else - the selected populations, the rewrites, this corpus, the FID
   history and the temperature choice - is post-processing of the noisy histograms and public data.
   The API calls saw only public prompts and synthetic text, never a private record.
{common}
4. **Unit of privacy and adjacency.** One corpus record; add-or-remove one record. A record casts one
   vote per histogram, so each histogram has L2 sensitivity 1.
5. **Accounting.** The {g.mechanisms} histograms are composed adaptively.

| quantity | value |
| --- | --- |
{table}

6. **Serialised DP event** (`dp_accounting` DpEvent, `continuousbench.dp.accounting.dp_event_from_json`
   rebuilds it):

```json
{g.event_json}
```
"""
