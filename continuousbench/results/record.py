"""The versioned results record (``results.json``, schema 3): build it, validate it, read it.

The record splits like lighteval's ``config_general`` / ``results``: what was run (release and its
manifest hash, base model and revision, tuning, harness version and recipe hash, the candidate
corpus's fingerprint and privacy statement, seeds, checkpoint selection) and what came out (every
accuracy with its Wilson 95% interval and question count, overall, by support threshold and by
bucket). ``docs/results-format.md`` documents each key; ``docs/results.schema.json`` is the JSON
Schema generated from :class:`Results` (a test keeps the two equal).

Schema 2 adds ``model_privacy``: the guarantee of an evaluator trained with DP-SGD on the corpus itself
(``evaluate --epsilon``, paper App. E) - a DP *model*, kept apart from ``corpus.privacy`` (DP *data*).
Such a record leaves out the corpus's fingerprint (an un-noised function of the private documents).
Schema 3 adds ``model_repo`` (the Hub repo of the run's model and card, which the leaderboard links) and
``model_privacy.target_epsilon`` (the epsilon asked for, beside the one achieved). Schema 4 adds to
``recipe`` the fixed harness's identity: ``settings`` (what the recipe set, as applied), their digest in
``sha256``, ``name`` and ``canonical`` (one of the benchmark's canonical recipes) or
``why_not_canonical``; ``corpus.privacy_source`` (where the corpus's statement came from);
``submitted``; ``judge.endpoint`` and ``judge.server``; and the graded knowledge of FictionalQA:
``metrics.<part>.metrics.mcq`` (ranked-choice accuracy among the release's options, also per stratum
and bucket), ``metrics.<part>.answer_nll`` (the true answer's mean loss per token after the few-shot
prompt), ``metrics.<part>.by_heldout`` (a ``build --heldout entity`` release: trained-on vs held-out
entities) and ``forgetting``. Records of schemas 1-3 are still read: they lack those keys (their
``recipe.sha256`` hashed every effective setting, hardware included).

A submitted record (``continuousbench submit``) may also carry ``questions``: per part, the question
ids and one ``0``/``1`` character per question and matcher, so that the leaderboard can compare two
submissions question by question.
"""

from __future__ import annotations

import json
import logging
import math
import re
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from continuousbench.errors import UserError
from continuousbench.results.privacy_check import NOT_DP, delta_problem
from continuousbench.scoring.match import INTERVAL, SCORES

# The files of a run folder that the results layer reads (the harness writes them).
RESULTS = "results.json"
PREDICTIONS = "predictions.parquet"

logger = logging.getLogger(__name__)

SCHEMA = "continuousbench/results"
SCHEMA_VERSION = 4
CLASSIFICATION_VERSION = 5  # schema 5: a classification run (task, dataset; no release)
READABLE_VERSIONS = (1, 2, 3, 4, 5)  # schemas 2 to 5 only added optional keys
PARTS = ("qa_public", "qa_singleton")
CLASSIFICATION = "classification"  # the one part of a classification run's metrics
SELECTION_RULE = (
    "highest validation qa_public contains accuracy; among equal scores the earliest step "
    "(Trainer replaces the best checkpoint only when a later one is strictly better)"
)
# The privacy fields a corpus record republishes: the guarantee, never training losses or histories.
_GUARANTEE = (
    "private", "epsilon", "target_epsilon", "delta", "unit", "adjacency", "accountant", "noise_multiplier",
    "steps", "sampling", "sampling_probability", "expected_batch_size", "dataset_size", "clip_norm",
    "physical_batch", "truncation_analysis", "truncation_probability", "runs_accounted", "steps_per_run",
    "epsilon_per_run",
)  # fmt: skip
# A sweep's privacy.json written before its figures were all the composed ones: per-run, not copied.
_PER_RUN_BEFORE = ("steps", "truncation_probability")

Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]  # NaN: "not a finite number"
Count = Annotated[int, Field(ge=0)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Bits = Annotated[str, Field(pattern=r"^[01-]*$")]  # per question: 1 correct, 0 wrong, - no judge verdict


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Accuracy(_Strict):
    """One accuracy: ``count`` questions, ``ci95`` its Wilson interval (all None for no questions)."""

    model_config = ConfigDict(extra="forbid", title="Accuracy")
    accuracy: Fraction | None
    ci95: tuple[Fraction, Fraction] | None
    std: Fraction | None
    count: Count
    unparseable: Count | None = Field(None, description="llm_match only: verdicts the judge left unclear")

    @model_validator(mode="after")
    def _consistent(self) -> Accuracy:
        if (self.accuracy is None) != (self.count == 0) or (self.ci95 is None) != (self.count == 0):
            raise ValueError("accuracy and ci95 are null exactly when count is 0")
        if self.ci95 is not None and not self.ci95[0] - 1e-9 <= self.accuracy <= self.ci95[1] + 1e-9:
            raise ValueError(f"ci95 {list(self.ci95)} does not contain the accuracy {self.accuracy}")
        return self


class Stratum(_Strict):
    """The questions of one stratum and one :class:`Accuracy` per matcher scored."""

    n: Count
    exact_match: Accuracy | None = None
    contains: Accuracy | None = None
    llm_match: Accuracy | None = None
    mcq: Accuracy | None = Field(None, description="schema 4: ranked-choice accuracy (acc_norm)")
    mcq_acc: Accuracy | None = Field(None, description="schema 4: ranked choice, unnormalised (lm-eval acc)")

    @model_validator(mode="after")
    def _counts(self) -> Stratum:
        for name in SCORES:
            acc = getattr(self, name)
            if acc is not None and acc.count != self.n:
                raise ValueError(f"{name}.count {acc.count} differs from the stratum's n {self.n}")
        return self


class Bucket(Stratum):
    low: Count
    high: Count | None
    mean_support: float | None


class Matchers(_Strict):
    exact_match: Accuracy | None = None
    contains: Accuracy | None = None
    llm_match: Accuracy | None = None
    mcq: Accuracy | None = Field(
        None, description="schema 4: ranked-choice accuracy among the release's options (lm-eval acc_norm)"
    )
    mcq_acc: Accuracy | None = Field(
        None, description="schema 4: the same, the pick by unnormalised log-likelihood (lm-eval acc)"
    )


class MeanFigure(_Strict):
    """A mean over questions with its percentile bootstrap 95% interval (seed 0) and question count."""

    mean: float | None
    ci95: tuple[float, float] | None
    count: Count


class HeldoutGroup(Stratum):
    """The questions about trained-on (or held-out) entities of a ``build --heldout entity`` release."""

    answer_nll: MeanFigure | None = None


class PartMetrics(_Strict):
    n: Annotated[int, Field(ge=1)]
    metrics: Matchers
    by_support: dict[Annotated[str, Field(pattern=r"^>=\d+$")], Stratum] = {}
    buckets: list[Bucket] = []
    answer_nll: MeanFigure | None = Field(
        None, description="schema 4: the true answer's mean negative log-likelihood per token (nats)"
    )
    by_heldout: dict[Literal["trained", "heldout"], HeldoutGroup] | None = Field(
        None,
        description="schema 4, a --heldout entity release only: the figures on questions about trained-on "
        "and about held-out entities",
    )
    by_class: dict[str, Stratum] | None = Field(
        None, description="schema 5, classification: the figures on each class's test texts"
    )
    unparseable: dict[Literal["exact_match", "contains"], Count] | None = Field(
        None, description="schema 5, classification: replies read as no class (counted wrong), per rule"
    )

    @model_validator(mode="after")
    def _counts(self) -> PartMetrics:
        for name in SCORES:
            acc = getattr(self.metrics, name)
            if acc is not None and acc.count != self.n:
                raise ValueError(f"metrics.{name}.count {acc.count} differs from the part's n {self.n}")
        return self


class Release(_Strict):
    id: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+-\d{4}q[1-4](-heldout-(entity|document|style))?$")]
    manifest_sha256: Sha256
    track: str
    seed: int | None = None
    given: str | None = Field(None, description="The release as given (id or folder)")
    path: str | None = Field(None, description="The resolved folder it was read from")


class Dataset(_Strict):
    """Schema 5: the classification task a run was scored on (instead of a release)."""

    name: str = Field(description="the preset's name or the source as given")
    source: str
    classes: list[str]
    sizes: dict[Literal["train", "validation", "test"], Count]
    test_sha256: Sha256 = Field(description="sha256 over the test texts: runs on the same test set compare")
    notes: list[str] = Field(description="how the splits were made (carved, sampled)")


class Recipe(_Strict):
    given: str | None = Field(None, description="The --config YAML as given, when one was")
    path: str | None = Field(description="The --config YAML's resolved path, when one was given")
    file_sha256: Sha256 | None = Field(description="sha256 of that YAML file")
    sha256: Sha256 = Field(
        description="sha256 of the recipe's settings (schema 4: `settings`; before: every effective setting)"
    )
    settings: dict[str, Any] | None = Field(
        None, description="schema 4: what the recipe set, as applied (hardware knobs, seed, epsilon left out)"
    )
    name: str | None = Field(None, description="schema 4: the canonical recipe's name; null: not canonical")
    canonical: bool | None = Field(
        None, description="schema 4: canonical when recorded (readers recompute it: results.canonical)"
    )
    why_not_canonical: str | None = Field(None, description="schema 4: why the run is not canonical")

    @model_validator(mode="after")
    def _named(self) -> Recipe:
        if self.canonical is not None and (self.name is not None) != self.canonical:
            raise ValueError("a canonical recipe has a name; a non-canonical one has none")
        if self.canonical is False and not self.why_not_canonical:
            raise ValueError("a non-canonical recipe says why (why_not_canonical)")
        return self


_TARGET = (
    "the epsilon asked for (--epsilon; a sweep's: its total); epsilon is the one met, at or just below it. "
    "The leaderboard's epsilon bucket is this when epsilon is within it, else epsilon rounded up at two "
    "significant figures"
)


class Privacy(BaseModel):
    model_config = ConfigDict(extra="allow")
    private: bool
    epsilon: Annotated[float, Field(gt=0)] | None = None
    target_epsilon: Annotated[float, Field(gt=0)] | None = Field(None, description=_TARGET)
    delta: Annotated[float, Field(ge=0, lt=1)] | None = None
    unit: str | None = None


class Corpus(_Strict):
    source: str
    path: str | None = Field(None, description="The resolved path of a local corpus")
    cut: dict[str, Any] | None = Field(None, description="Documents cut at the length limit, and the limit")
    documents: Annotated[int, Field(ge=1)]
    fingerprint: Sha256 | None = Field(
        description="sha256 over the texts; null for a DP model run (model_privacy), whose corpus is private"
    )
    replay: dict[str, Any] | None = None
    privacy: Privacy | None = Field(None, description="The generator's guarantee; null: no statement found")
    privacy_source: str | None = Field(
        None, description="schema 4: where it was stated: privacy.json, README.md or --corpus_privacy <file>"
    )
    generation: dict[str, Any] | None = Field(None, description="The synthesis settings (sampling seed...)")


class ModelPrivacy(_Strict):
    """The guarantee of an evaluator trained with DP-SGD on the corpus itself (``evaluate --epsilon``,
    paper App. E): a DP *model*, not DP data."""

    kind: Literal["dp-model"]
    private: bool = Field(description="false: DP-SGD with noise from a public test seed, so no guarantee")
    epsilon: Annotated[float, Field(gt=0)]
    target_epsilon: Annotated[float, Field(gt=0)] | None = Field(None, description=_TARGET)
    delta: Annotated[float, Field(gt=0, lt=1)]
    unit: Literal["record"]
    unit_description: str
    adjacency: Literal["add-or-remove"]
    accountant: Literal["pld"]
    noise_multiplier: Annotated[float, Field(ge=0)]
    steps: Annotated[int, Field(ge=1)]
    sampling: Literal["poisson", "truncated_poisson"]
    sampling_probability: Fraction
    expected_batch_size: Annotated[float, Field(gt=0)]
    dataset_size: Annotated[int, Field(ge=1)] = Field(description="n: the records DP-SGD sampled from")
    corpus_documents: Count
    replay_documents: Count = Field(description="public replay documents among the n records")
    physical_batch: Count | None
    truncation_analysis: Literal["pld", "union_bound"] | None
    truncation_probability: Fraction | None
    clip_norm: Annotated[float, Field(gt=0)]
    max_tokens_per_record: Annotated[int, Field(ge=1)]
    tokenizer: str
    secure_noise: bool
    checkpoint_selection: str
    event_json: str = Field(description="the dp_accounting DpEvent, serialised")
    versions: dict[str, str]
    statement: str = Field(description="the privacy statement (markdown), as on the model card")


class Selection(_Strict):
    name: str
    step: Count
    validation_contains: Fraction | None
    rule: str
    tied_steps: list[Count] = Field(description="Validated steps scoring the selected score (>1: a tie)")


class Statistics(_Strict):
    interval: Literal["wilson"]
    confidence: Literal[0.95]


class QuestionOutcomes(_Strict):
    ids: list[str]
    support_counts: list[Count]
    outcomes: dict[Literal["exact_match", "contains", "llm_match"], Bits]

    @model_validator(mode="after")
    def _lengths(self) -> QuestionOutcomes:
        n = len(self.ids)
        if len(set(self.ids)) != n or len(self.support_counts) != n:
            raise ValueError("ids must be distinct, with one support count per id")
        for name, bits in self.outcomes.items():
            if len(bits) != n:
                raise ValueError(f"outcomes.{name} has {len(bits)} characters for {n} questions")
        return self


class Calibration(_Strict):
    """The judge's figures on the shipped calibration set and the bounds it was held to (docs/judge.md)."""

    cases: Annotated[int, Field(ge=1)]
    set_sha256: Sha256 = Field(description="sha256 of the calibration cases asked")
    accuracy: Fraction
    false_accept: Fraction = Field(description="share of wrong responses the judge accepted")
    false_reject: Fraction = Field(description="share of right responses it did not accept")
    unparseable: Count
    missed: list[str] = Field(description="ids of the cases it got wrong")
    min_accuracy: Fraction
    max_false_accept: Fraction
    passed: bool
    override: bool = Field(description="true: failed calibration, used anyway (--judge_override_calibration)")

    @model_validator(mode="after")
    def _outcome(self) -> Calibration:
        passed = self.accuracy >= self.min_accuracy and self.false_accept <= self.max_false_accept
        if passed != self.passed or self.override == self.passed:
            raise ValueError("passed must follow from the figures and bounds; override exactly when not")
        return self


class MatcherAgreement(_Strict):
    agreement: Fraction | None = Field(description="share of questions where the judge and the matcher agree")
    accept_when_right: Fraction | None = Field(description="judge's accept rate where the matcher says right")
    accept_when_wrong: Fraction | None = Field(description="judge's accept rate where the matcher says wrong")


class BothWrong(_Strict):
    count: Count = Field(description="questions that exact match and contains both score wrong")
    accept_rate: Fraction | None = Field(description="share of them the judge accepted")


class Agreement(_Strict):
    vs_exact_match: MatcherAgreement
    vs_contains: MatcherAgreement
    both_wrong: BothWrong


class Decided(_Strict):
    """Who took each LLM-match verdict of a part: code (empty, exact, numeric) or the judge."""

    empty: Count
    exact: Count
    numeric: Count
    judge: Count


class JudgeInfo(_Strict):
    """The LLM-match judge: what it is, how it calibrated, and how its verdicts relate to the code's."""

    kind: str = Field(description="backend kind of the spec: endpoint, completions, transformers, offline")
    model: str | None = Field(description="the judge model; null: the endpoint's default model")
    prompt_version: str
    prompt_sha256: Sha256
    endpoint: str | None = Field(
        None, description="schema 4: an endpoint judge's URL without credentials (verdicts are keyed on it)"
    )
    server: dict[str, Any] | None = Field(
        None, description="schema 4: what the endpoint said it serves (/models) and the first answer's model"
    )
    calibration: Calibration
    decided: dict[Literal["qa_public", "qa_singleton"], Decided]
    agreement: dict[Literal["qa_public", "qa_singleton"], Agreement]


class Submitted(_Strict):
    """What ``continuousbench submit`` adds: the submission's name and run folder, and what it found."""

    name: str = Field(description="the submission's name (default: the run's parent and run folders)")
    run_folder: str = Field(description="the run folder's last two parts, e.g. dp-direct/real-seed0")
    canonical: bool = Field(description="made with a canonical recipe, recomputed from recipe.settings")
    privacy_statement: bool = Field(description="the corpus (or the DP model) states a privacy guarantee")
class Forgetting(_Strict):
    """The mixed-in general corpus and its held-out sample's mean document loss before and after training."""

    source: str
    path: str | None
    ratio: Annotated[float, Field(ge=0, lt=1)] = Field(description="share of the training text (characters)")
    fingerprint: Sha256
    heldout_documents: Annotated[int, Field(ge=1)]
    loss_before: float = Field(description="the base model's loss (nats per token, mean over documents)")
    loss_after: float = Field(description="the selected model's loss on the same documents")
    change: float = Field(description="loss_after - loss_before: above 0, the model forgot some of it")


class Results(_Strict):
    """``results.json`` of one harness run (schema 1)."""

    model_config = ConfigDict(extra="forbid", title="ContinuousBench results")
    schema_: Literal["continuousbench/results"] = Field(alias="schema")
    schema_version: Literal[1, 2, 3, 4, 5]
    task: Literal["qa", "classification"] = Field("qa", description="schema 5: what the run scored")
    release: Release | None = Field(description="the release whose QA was scored; null: a classification run")
    dataset: Dataset | None = Field(None, description="schema 5: the classification task scored")
    base_model: str
    base_model_revision: str | None
    model: dict[str, Any] | None = Field(None, description="The base model as given and resolved")
    generation: dict[str, Any] | None = Field(
        None, description="max_new_tokens requested and effective (capped by the model's context)"
    )
    tuning: Literal["lora", "full"]
    package_version: str
    recipe: Recipe
    corpus: Corpus
    model_privacy: ModelPrivacy | None = Field(
        None, description="schema 2: the DP model's guarantee (evaluate --epsilon); null: trained without DP"
    )
    seed: int
    steps: Count
    tokens_per_step: Count
    model_args: dict[str, Any]
    harness_args: dict[str, Any]
    training_args: dict[str, Any]
    selected_checkpoint: Selection
    validation_history: list[dict[str, float | int | None]]
    statistics: Statistics
    matchers: list[Literal["exact_match", "contains", "llm_match"]]
    metrics: dict[Literal["qa_public", "qa_singleton", "classification"], PartMetrics]
    hub_commit: str | None = None
    model_repo: Annotated[str, Field(pattern=r"^[\w.-]+/[\w.-]+$")] | None = Field(
        None, description="schema 3: the Hub repo of the run's model and card (--push_to_hub, --model_repo)"
    )
    canonical: dict[str, Any] | None = Field(
        None, description="The release's canonical evaluation (its manifest) and its accuracy, by stratum"
    )
    questions: dict[Literal["qa_public", "qa_singleton", "classification"], QuestionOutcomes] | None = None
    judge: JudgeInfo | None = Field(
        None, description="The LLM-match judge, its calibration and agreement figures; null: no judge"
    )
    submitted: Submitted | None = Field(None, description="schema 4: added by `continuousbench submit`")
    forgetting: Forgetting | None = Field(
        None, description="schema 4: the forgetting monitor (evaluate --mix_corpus); null: not asked for"
    )

    @model_validator(mode="after")
    def _agree(self) -> Results:
        classification = self.task == "classification"
        if classification != (self.dataset is not None) or classification == (self.release is not None):
            raise ValueError("a classification run has a dataset and no release; a QA run a release")
        if classification and (self.schema_version < 5 or set(self.metrics) != {CLASSIFICATION}):
            raise ValueError("a classification run is schema 5 with one metrics part, classification")
        if self.model_privacy is not None and self.schema_version < 2:
            raise ValueError("model_privacy needs schema_version 2")
        newer = self.model_repo is not None or (self.model_privacy and self.model_privacy.target_epsilon)
        if newer and self.schema_version < 3:
            raise ValueError("model_repo and model_privacy.target_epsilon need schema_version 3")
        if self.judge is not None and (self.judge.endpoint or self.judge.server) and self.schema_version < 4:
            raise ValueError("judge.endpoint and judge.server need schema_version 4")
        if self.recipe.canonical is not None and self.schema_version < 4:
            raise ValueError("recipe.canonical needs schema_version 4")
        graded = any(m.metrics.mcq or m.answer_nll for m in self.metrics.values()) or self.forgetting
        if graded and self.schema_version < 4:
            raise ValueError("metrics.<part>.metrics.mcq, answer_nll and forgetting need schema_version 4")
        if any(m.by_heldout for m in self.metrics.values()) and self.schema_version < 4:
            raise ValueError("metrics.<part>.by_heldout needs schema_version 4")
        if (self.corpus.fingerprint is None) != (self.model_privacy is not None):
            raise ValueError("corpus.fingerprint is null exactly for a DP model run (model_privacy)")
        for part, m in self.metrics.items():
            missing = [k for k in self.matchers if getattr(m.metrics, k) is None]
            if missing:
                raise ValueError(f"metrics.{part} lacks matcher {missing[0]} listed in matchers")
        if self.judge is not None:
            if "llm_match" not in self.matchers:
                raise ValueError("judge is recorded but llm_match is not among matchers")
            for part, decided in self.judge.decided.items():
                total = decided.empty + decided.exact + decided.numeric + decided.judge
                if part not in self.metrics or total != self.metrics[part].n:
                    raise ValueError(f"judge.decided.{part} counts {total} verdicts, not the part's n")
        for part, q in (self.questions or {}).items():
            for name, bits in q.outcomes.items():
                acc = getattr(self.metrics[part].metrics, name) if part in self.metrics else None
                correct = None if acc is None or acc.count == 0 else round(acc.accuracy * acc.count)
                if acc is None or (len(bits), bits.count("1")) != (acc.count, correct):
                    raise ValueError(f"questions.{part}.outcomes.{name} disagree with metrics.{part}")
        return self


def validate(record: Any) -> list[str]:
    """One line per problem of ``record`` (empty when it follows the schema)."""
    if not isinstance(record, dict):
        return [f"a results record is a JSON object, got {type(record).__name__}"]
    version = record.get("schema_version")
    if version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS[:-1])) + f" and {READABLE_VERSIONS[-1]}"
        return [f"schema_version is {version!r}, this package reads {readable}; rerun the evaluation"]
    try:
        Results.model_validate(record)
    except ValidationError as err:
        return [_line(e) for e in err.errors()]
    return []


def _line(error: dict) -> str:
    where = ".".join(str(p) for p in error["loc"] if p not in ("function-after",)) or "record"
    message = error["msg"].removeprefix("Value error, ").splitlines()[0]
    return f"{where}: {message}"


def check(record: Any, source: str | Path) -> dict:
    """``record`` if valid, else ValueError naming ``source`` and the first problem (one line)."""
    problems = validate(record)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UserError(f"{source} is not a valid results record: {problems[0]}{more}")
    return record


def load(path: str | Path) -> dict:
    """The record in a run folder (or a results JSON file), unvalidated; errors are one line."""
    path = Path(path).expanduser()
    file = path / "results.json" if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(
            f"{path} has no results.json: is it a finished `continuousbench evaluate` run?"
        )
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{file} is not valid JSON ({err.msg}); rerun the evaluation") from None
    if not isinstance(record, dict):
        raise UserError(f"{file} is not the results.json of a `continuousbench evaluate` run")
    return record


# ---------------------------------------------------------------------------------------------------
# Building the record (called by harness/run.py once the metrics are in)


def benchmark(record: dict) -> tuple[str, str | None]:
    """(what a run was scored on, its digest): the release's id and manifest hash, or for a classification
    run ``<dataset> (classification)`` and the test set's sha256. Runs compare only on equal pairs."""
    if record.get("task") == "classification":
        return f"{record['dataset']['name']} (classification)", record["dataset"]["test_sha256"]
    return record["release"]["id"], record["release"].get("manifest_sha256")


def selection(selected: dict, history: list[dict]) -> dict:
    """``selected`` plus the rule and every validated step that scored the same (ties made visible)."""
    best = selected.get("validation_contains")
    tied = [
        int(h["step"])
        for h in history
        if best is not None and h.get("contains") is not None and math.isclose(h["contains"], best)
    ]
    if len(tied) > 1:
        logger.warning(
            "validation tie: steps %s all score %.4f; %s is selected (%s)", tied, best, selected["name"],
            SELECTION_RULE,
        )  # fmt: skip
    rule = SELECTION_RULE if selected.get("step") else "no training: the base model is scored"
    return {**selected, "rule": rule, "tied_steps": tied}


def corpus_privacy(source: str | Path) -> dict | None:
    """The guarantee a candidate corpus folder states (``privacy.json``, else its card); None if none."""
    return stated_privacy(source)[0]


def stated_privacy(source: str | Path, statement: str | Path | None = None) -> tuple[dict | None, str | None]:
    """(the corpus's guarantee, where it was stated): the ``statement`` file (``evaluate
    --corpus_privacy``), else ``privacy.json`` in a corpus folder, else its card; (None, None) if none.

    A statement file follows docs/results-format.md ("A corpus's privacy statement"); a malformed one is
    one line naming it. Our DP generators protect one record (document) under add-or-remove adjacency;
    that is the unit unless the statement names another.
    """
    folder = Path(str(source)).expanduser()
    if statement is not None:
        file = Path(statement).expanduser()
        stated = _read_statement(file, f"--corpus_privacy {statement}")
        where = f"--corpus_privacy {file.resolve()}"
    elif (folder / "privacy.json").is_file():
        stated, where = json.loads((folder / "privacy.json").read_text(encoding="utf-8")), "privacy.json"
    elif (folder / "README.md").is_file():
        stated, where = _privacy_from_card((folder / "README.md").read_text(encoding="utf-8")), "README.md"
    else:
        return None, None
    if not isinstance(stated, dict) or "private" not in stated:
        return None, None
    privacy = {k: stated[k] for k in _GUARANTEE if stated.get(k) is not None}
    if (stated.get("runs_accounted") or 1) > 1 and "steps_per_run" not in stated:
        privacy = {k: v for k, v in privacy.items() if k not in _PER_RUN_BEFORE}
    if privacy["private"]:
        privacy.setdefault("unit", "record")
        privacy.setdefault("adjacency", "add-or-remove")
    return privacy, where


def _read_statement(file: Path, option: str) -> dict:
    """A privacy statement file, checked: ``private`` (bool); when private, a finite ``epsilon`` > 0 and
    a ``delta`` in [0, 1); ``unit``, ``adjacency``, ``accountant`` text when given."""
    try:
        stated = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{option} does not exist; pass a JSON file stating the corpus's guarantee") from None
    except (json.JSONDecodeError, UnicodeDecodeError, IsADirectoryError):
        raise UserError(f"{option} is not a JSON file; see docs/results-format.md for its keys") from None
    fix = "see docs/results-format.md (a corpus's privacy statement)"
    if not isinstance(stated, dict) or not isinstance(stated.get("private"), bool):
        raise UserError(f'{option} must be a JSON object with "private": true or false; {fix}')
    if stated["private"]:
        eps, delta = stated.get("epsilon"), stated.get("delta")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < math.inf:
            raise UserError(f'{option} states "private": true without a finite "epsilon" > 0; {fix}')
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise UserError(f'{option} states "private": true without a "delta" in [0, 1); {fix}')
    for key in ("unit", "adjacency", "accountant"):
        if key in stated and not isinstance(stated[key], str):
            raise UserError(f'{option}: "{key}" must be text; {fix}')
    return stated


def _privacy_from_card(card: str) -> dict | None:
    """The guarantee of a synthetic corpus card written before corpora carried ``privacy.json``."""
    if "without differential privacy" in card:
        return {"private": False}
    rows = dict(re.findall(r"^\| (epsilon|delta) \| ([0-9.eE+-]+) \|$", card, flags=re.MULTILINE))
    if {"epsilon", "delta"} <= rows.keys():
        return {"private": True, "epsilon": float(rows["epsilon"]), "delta": float(rows["delta"])}
    return None


def _generation(source: str | Path) -> dict | None:
    file = Path(str(source)).expanduser() / "synthesis.json"
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None


def complete(results: dict, *, model=None) -> dict:
    """Turn the harness's raw results into a schema-4 record, validate it and return it.

    Adds the schema and its version, the base model's Hub revision (None for a local folder), the
    corpus's privacy statement (unless the harness read it) and synthesis settings, the interval
    method, and the checkpoint-selection rule with its ties.
    """
    config = getattr(getattr(model, "config", None), "_commit_hash", None)
    source = results["corpus"]["source"]
    if "privacy" not in results["corpus"]:  # the harness reads the statement before training
        results = {**results, "corpus": {**results["corpus"], "privacy": corpus_privacy(source)}}
    record = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        **results,
        "base_model_revision": config if isinstance(config, str) else None,
        "corpus": {**results["corpus"], "generation": _generation(source)},
        "selected_checkpoint": selection(results["selected_checkpoint"], results["validation_history"]),
        "statistics": dict(INTERVAL),
    }
    return check(json.loads(json.dumps(record, default=str)), "the run's results.json")


NON_PRIVATE = "∞ (non-private)"
NO_STATEMENT = "no statement"
DP_MODEL, DP_DATA, NON_PRIVATE_DATA, OTHER_CORPUS = "DP model", "DP data", "non-private data", "corpus"


def kind_label(record: dict) -> str:
    """DP model (the evaluator trained with DP-SGD), DP data, non-private data, or a corpus without a
    privacy statement (e.g. the real one)."""
    if record.get("model_privacy"):
        return DP_MODEL
    privacy = record["corpus"].get("privacy")
    if privacy is None:
        return OTHER_CORPUS
    return DP_DATA if privacy["private"] and privacy.get("epsilon") is not None else NON_PRIVATE_DATA


def _guarantee(record: dict) -> dict | None:
    """The statement whose epsilon applies: the DP model's, else the corpus generator's."""
    return record.get("model_privacy") or record["corpus"].get("privacy")


def _bucket(guarantee: dict) -> float:
    """The epsilon bucket a statement earns: the epsilon asked for (``target_epsilon``) when the achieved
    one is within it (calibration stops just below the target: 9.99361 for 10), else the achieved epsilon
    rounded UP at two significant figures (10.04 -> 11), so no record sits in a bucket below what its
    statement achieves - a sweep that asked for 10 per run and composed to 26.4 is in bucket 27."""
    eps = float(guarantee["epsilon"])
    target = guarantee.get("target_epsilon") or guarantee.get("requested_epsilon")
    if target and eps <= float(target):
        return float(target)
    if not (eps > 0 and math.isfinite(eps)):
        return eps
    exact = Decimal(repr(eps))
    return float(exact.quantize(Decimal(1).scaleb(exact.adjusted() - 1), rounding=ROUND_CEILING))


def epsilon_bucket(record: dict) -> str:
    """The filter value: the epsilon bucket the statement earns, or no statement / non-private / a
    statement whose delta guarantees nothing (:data:`~continuousbench.results.privacy_check.NOT_DP`)."""
    guarantee = _guarantee(record)
    if guarantee is None:
        return NO_STATEMENT
    if not guarantee["private"] or guarantee.get("epsilon") is None:
        return NON_PRIVATE
    corpus = record["corpus"]
    given = str(corpus.get("privacy_source") or "").startswith("--corpus_privacy")
    if not record.get("model_privacy") and delta_problem(guarantee, corpus["documents"], given):
        return NOT_DP
    return f"{_bucket(guarantee):g}"


def epsilon_label(record: dict) -> str:
    """What the row shows: the bucket, and the achieved epsilon when it differs (and the one asked for,
    when the achieved one exceeds it)."""
    bucket, guarantee = epsilon_bucket(record), _guarantee(record)
    if bucket in (NO_STATEMENT, NON_PRIVATE, NOT_DP) or f"{guarantee['epsilon']:g}" == bucket:
        return bucket
    target = float(guarantee.get("target_epsilon") or guarantee.get("requested_epsilon") or math.inf)
    over = f", over the {target:g} asked for" if guarantee["epsilon"] > target else ""
    return f"{bucket} (achieved {guarantee['epsilon']:g}{over})"


def json_schema() -> dict:
    """The JSON Schema of :class:`Results` (``docs/results.schema.json``), naming its dialect so that
    validators pick draft 2020-12 (pydantic's output) instead of guessing."""
    dialect = "https://json-schema.org/draft/2020-12/schema"
    return {"$schema": dialect, **Results.model_json_schema(by_alias=True)}


if __name__ == "__main__":  # python -m continuousbench.results.record > docs/results.schema.json
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
