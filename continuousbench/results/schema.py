"""The schema of the versioned results record (``results.json``, schema 4; classification runs: 5).

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
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from continuousbench.errors import UserError
from continuousbench.scoring.match import SCORES

SCHEMA = "continuousbench/results"
SCHEMA_VERSION = 4
CLASSIFICATION_VERSION = 5  # schema 5: a classification run (task, dataset; no release)
READABLE_VERSIONS = (1, 2, 3, 4, 5)  # schemas 2 to 5 only added optional keys
PARTS = ("qa_public", "qa_singleton")
CLASSIFICATION = "classification"  # the one part of a classification run's metrics

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


def json_schema() -> dict:
    """The JSON Schema of :class:`Results` (``docs/results.schema.json``), naming its dialect so that
    validators pick draft 2020-12 (pydantic's output) instead of guessing."""
    dialect = "https://json-schema.org/draft/2020-12/schema"
    return {"$schema": dialect, **Results.model_json_schema(by_alias=True)}


if __name__ == "__main__":  # python -m continuousbench.results.schema > docs/results.schema.json
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
