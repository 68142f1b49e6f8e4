"""Privacy statements (Ponomareva et al. 2023 checklist) of a generator and of a Private Evolution
corpus, and the cards that carry them.

The same markdown goes into the generator's model card and into the dataset card of every synthetic
corpus sampled from it, so a corpus never travels without the guarantee it was produced under. Every
item of the checklist in the DP synthetic-text appendix (App. A) is answered: setting, data accesses
covered, final output, unit (with its maximum length in tokens and the tokenizer), adjacency, accounting
(type, assumptions, formal statement with delta's origin), randomness and software versions, and
which published numbers are private.
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.dp.accounting import EvolutionGuarantee, PrivacyGuarantee

NON_PRIVATE = (
    "## Privacy statement\n\n"
    "This generator was trained **without differential privacy** (epsilon = infinity). Its weights and "
    "every text sampled from it may reveal any record of the training corpus; it is the non-private "
    "reference point of the benchmark.\n"
)


@dataclass(frozen=True)
class RunFacts:
    """What the statement needs to know about a DP run beyond its accounting (defaults: not recorded)."""

    base_model: str = "the base model"
    tokenizer: str = "tokenizer not recorded"  # class, algorithm and vocabulary size
    max_length: int | None = None  # None: not recorded
    randomness: str = "Not recorded."  # SecretStreams.describe(...)
    secret: bool = True  # False: test seed, no DP guarantee
    grid: dict[str, list[float]] = field(default_factory=dict)  # the sweep's settings and their values
    selected: dict[str, float] = field(default_factory=dict)  # the published run's settings

    @property
    def runs(self) -> int:
        """How many runs the sweep trained (1 without a sweep)."""
        return math.prod(len(v) for v in self.grid.values()) if self.grid else 1

    validation_records: int | None = None
    delta_given: bool = False  # --delta passed (else 1/n^1.1)
    epsilon_per_run: float | None = None  # a sweep's: one run alone (the guarantee is all runs composed)
    versions: dict[str, str] = field(default_factory=dict)
    trained: str = "LoRA adapter weights"  # what DP-SGD trained (adapters.describe_trained)
    tuning: str = "lora"  # lora, prompt or full (no frozen base model)


def versions() -> dict[str, str]:
    """Versions of the packages the guarantee depends on, and this package's git commit when known."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("continuousbench", "opacus", "dp-accounting", "torch", "transformers", "peft"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    commit = git_commit(Path(__file__).resolve().parent)
    if commit:
        found["continuousbench git commit"] = commit
    return found


def git_commit(folder: Path) -> str | None:
    """``HEAD`` of the git checkout holding ``folder`` (with ``+local changes`` when dirty), or None."""
    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + (" +local changes" if dirty.stdout.strip() else "")


def sampling_line(g: PrivacyGuarantee) -> str:
    """How the batches were drawn and accounted (the checklist's sampling item)."""
    if g.sampling == "poisson":
        return "Poisson sampling: every record joins each batch independently with probability q"
    analysis = {
        "pld": "accounted exactly as truncated Poisson sampling (dp_accounting "
        "`TruncatedSubsampledGaussianDpEvent`, Ganesh 2025), for both neighbour pairs (the dataset "
        "holding the differing record has n + 1 or n records; the worse epsilon is reported)",
        "union_bound": "accounted as Poisson sampling with (1 + e^epsilon) x (probability of any "
        "truncation) added to delta (Chua et al. 2024, coupling argument)",
    }[g.truncation_analysis or "pld"]
    return (
        f"truncated Poisson sampling: Poisson batches larger than {g.physical_batch} records are cut to a "
        f"random subset of {g.physical_batch}; {analysis}. Union-bound probability (computed from the "
        f"settings, not observed) that any of the {g.steps} batches is truncated: "
        f"{g.truncation_probability:.3g}"
    )


def _published_table(facts: RunFacts) -> str:
    rows = [
        (facts.trained, "yes (DP-SGD output, post-processing of the noisy gradients)"),
        (
            "validation loss at each evaluation (privacy.json `validation`)",
            "**no**: computed without noise on the validation split, which is not protected",
        ),
        ("the selected learning rate and step", "**no**: chosen by validation loss (see item 2)"),
        ("dataset size n (and delta when derived from it)", "treated as public"),
        ("everything else here (settings, accounting)", "public: fixed before training"),
    ]
    return published_table(rows)


def published_table(rows: list[tuple[str, str]]) -> str:
    """The statement's "what is published, and is it private?" table, in markdown."""
    body = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"| published | private? |\n| --- | --- |\n{body}"


def privacy_statement(g: PrivacyGuarantee | None, facts: RunFacts | None = None) -> str:
    """Markdown statement following the checklist; ``None`` gives the non-private statement."""
    if g is None:
        return NON_PRIVATE
    facts = facts or RunFacts()
    runs = facts.runs
    chosen = ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in facts.selected.items())
    grid = " x ".join(
        f"{k.replace('_', ' ')} in {{{', '.join(f'{x:g}' for x in v)}}}" for k, v in facts.grid.items()
    )
    tuning = (
        f"The setting {chosen} was chosen among {runs} runs ({grid}) on the same corpus by validation loss; "
        f"only the selected run is published, and the guarantee above is that of all {runs} runs composed "
        f"(PLD composition; the noise was calibrated so that together they meet the budget); each run "
        f"alone is ({facts.epsilon_per_run:.4g}, {g.delta:.3g})-DP."
        if runs > 1 and facts.epsilon_per_run is not None
        else "Hyperparameter tuning, if any was done before this run, is not accounted for."
    )
    scored = f" ({facts.validation_records} validation records)" if facts.validation_records else ""
    length = facts.max_length or "the training sequence length in"
    headline = statement_headline(g, facts.secret, "This generator", sweep=(runs, facts.epsilon_per_run))
    frozen = "" if facts.tuning == "full" else "; the base model is frozen"
    return f"""## Privacy statement

{headline}

1. **DP setting.** Central DP: the party that trains the generator is trusted to run the mechanism as
   described. DP-SGD trained {facts.trained}, which is released{frozen}.
2. **What the guarantee covers.** One training run. The mechanism's output is the whole sequence of
   noisy gradients, so every checkpoint, the released weights and everything sampled from them
   (synthetic corpora) are covered by post-processing. Not covered: the base checkpoint (public data),
   the release's QA and support counts, and the corpus's **validation split**, which gets no
   protection: the validation loss of every evaluation{scored} is computed without noise, published
   below, and used to select the published checkpoint.
   {tuning}
3. **Unit of privacy.** One corpus record (one document), example-level DP, full record. A record is
   at most {length} tokens of the tokenizer of `{facts.base_model}` ({facts.tokenizer});
   longer records are cut to their first {length} tokens. Each record is one example with an
   empty prompt; its loss is the mean over its tokens.
4. **Adjacency.** Add-or-remove one record.
5. **Sampling.** {sampling_line(g)}. Batches are drawn exactly as accounted (no shuffling).
6. **Randomness.** {facts.randomness}
7. **Accounting.** PLD, for the formal statement above.

{accounting_table(g, facts)}

8. **Published numbers and whether they are private.** {NOT_PUBLISHED}

{_published_table(facts)}

{software_and_event(g, facts)}"""


NOT_PUBLISHED = (
    "The training loss, the batch sizes and the\n   number of truncated batches are raw statistics of the "
    "private records and are not published (the\n   training loss appears only in the console log of the "
    "person who trained)."
)


def statement_headline(
    g: PrivacyGuarantee, secret: bool, subject: str, sweep: tuple[int, float | None] = (1, None)
) -> str:
    """The statement's first sentence: the guarantee, or - under a public test seed - that there is none.

    ``sweep``: (runs, one run's epsilon) when the published model was chosen among several runs on the
    same data: ``g`` is then the runs composed, and the per-run value is shown beside it.
    """
    runs, alone = sweep
    epsilon = g.epsilon
    per_run = (
        f" (the {runs} runs of its sweep composed; each run alone: ({alone:.4g}, {g.delta:.3g}))"
        if alone is not None
        else ""
    )
    if secret:
        return (
            f"{subject} was trained with DP-SGD and satisfies **({epsilon:.4g}, {g.delta:.3g})-"
            f"differential privacy** with respect to its training corpus{per_run}."
        )
    return (
        f"**No DP guarantee.** {subject} was trained with DP-SGD whose noise and batches came "
        "from a public test seed (`--insecure_noise_seed`); the accounting below is what the run "
        f"would have had, ({epsilon:.4g}, {g.delta:.3g}){per_run}, but anyone who knows the seed can "
        "remove the noise. Do not release it."
    )


def accounting_table(g: PrivacyGuarantee, facts: RunFacts) -> str:
    """The formal statement's numbers as a markdown table."""
    delta_origin = (
        "given by `--delta`"
        if facts.delta_given
        else f"1/n^1.1 with n = {g.dataset_size}, the number of training records, which is treated as public"
    )
    sweep = facts.epsilon_per_run is not None
    rows = [
        (
            "epsilon" + (" of the whole sweep" if sweep else ""),
            f"{g.epsilon:.4g}" + (f" ({facts.runs} runs composed, PLD)" if sweep else ""),
        ),
        *([("epsilon of one run", f"{facts.epsilon_per_run:.4g}")] if sweep else []),
        ("delta", f"{g.delta:.3g}"),
        ("delta's origin", delta_origin),
        ("accountant", "privacy loss distributions (PLD), `dp_accounting.pld.PLDAccountant`"),
        ("noise multiplier (sigma)", f"{g.noise_multiplier:.6g}"),
        ("steps", f"{g.steps} ({facts.runs} runs of {g.steps // facts.runs})" if sweep else str(g.steps)),
        ("expected batch size (q x n)", f"{g.expected_batch_size:.6g} (q = {g.sampling_probability:.6g})"),
        ("dataset size n", str(g.dataset_size)),
        (
            "clipping",
            f"normalised clipping at C = {g.clip_norm:g}: per-example gradients clipped to C then "
            "divided by C, noise std sigma on the sum, divided by the expected batch size",
        ),
    ]
    return "| quantity | value |\n| --- | --- |\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)


def software_and_event(g: PrivacyGuarantee, facts: RunFacts) -> str:
    """Items 9 and 10: the software versions and the serialised DP event."""
    software = ", ".join(f"{k} {v}" for k, v in facts.versions.items()) or "not recorded"
    return f"""9. **Software.** {software}.
10. **Serialised DP event** (`dp_accounting` DpEvent, `continuousbench.dp.accounting.dp_event_from_json`
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
    tuning: str = "lora",
):
    """A ``huggingface_hub.ModelCard`` for a generator folder: metadata, training details, privacy."""
    from huggingface_hub import ModelCard, ModelCardData

    kinds = {"lora": "LoRA", "prompt": "Prompt-tuned (soft prompt)", "full": "Full-parameter"}
    kind = kinds.get(tuning, tuning)
    tags = ["continuousbench", "synthetic-data-generator", "lora" if tuning == "lora" else f"{tuning}-tuning"]
    tags += ["differential-privacy", "dp-sgd", "opacus"] if private else ["non-private"]
    data = ModelCardData(
        base_model=base_model,
        library_name="transformers" if tuning == "full" else "peft",
        tags=tags,
        pipeline_tag="text-generation",
    )
    body = (
        f"---\n{data.to_yaml()}\n---\n\n# ContinuousBench generator\n\n"
        f"{kind} generator fine-tuned from `{base_model}` on `{corpus}`, for sampling synthetic corpora "
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
