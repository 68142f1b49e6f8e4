"""The results record: a real run's results.json follows schema 4, bad records fail in one line each."""

import copy
import json
from pathlib import Path

import pytest
from old_records import before_schema_4

from continuousbench.harness.outputs import RESULTS
from continuousbench.results import schema
from continuousbench.results.privacy_statement import corpus_privacy
from continuousbench.results.record import SELECTION_RULE, selection

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def record(finished_run):
    return json.loads((finished_run / RESULTS).read_text())


def test_a_run_writes_a_valid_schema_4_record(record):
    assert schema.validate(record) == []
    assert record["schema"] == "continuousbench/results" and record["schema_version"] == 4
    assert record["model_privacy"] is None  # trained without DP
    assert record["statistics"] == {"interval": "wilson", "confidence": 0.95}
    assert record["release"]["seed"] == 0 and record["base_model_revision"] is None  # a local folder
    assert len(record["recipe"]["sha256"]) == 64 and record["recipe"]["path"] is None
    assert record["recipe"]["canonical"] is False and record["recipe"]["name"] is None  # no --config
    assert record["recipe"]["settings"]["max_steps"] == 2 and record["corpus"]["privacy_source"] is None
    assert record["corpus"]["privacy"] is None  # the release's own corpus states no privacy guarantee
    selected = record["selected_checkpoint"]
    assert selected["rule"] == SELECTION_RULE and selected["step"] in selected["tied_steps"]
    for part in ("qa_public", "qa_singleton"):
        m = record["metrics"][part]
        strata = [m["metrics"], *m["by_support"].values(), *m["buckets"]]
        for s in strata:
            for name in record["matchers"]:
                acc = s[name]
                assert acc["ci95"] is None if acc["count"] == 0 else acc["ci95"][0] <= acc["accuracy"]


def test_the_recipe_digest_ignores_the_seed_and_hardware_but_not_the_recipe(record):
    """One digest (results.canonical) for report's grouping, compare and the leaderboard: recomputed
    from the settings, which leave out the seed and hardware; older records keep their recorded one."""
    from continuousbench.results.canonical import digest, recipe_digest

    assert recipe_digest(record) == digest(record["recipe"]["settings"]) == record["recipe"]["sha256"]
    other = copy.deepcopy(record)
    other["training_args"]["seed"] = 7
    other["training_args"]["per_device_train_batch_size"] = 1
    assert recipe_digest(other) == recipe_digest(record)
    other["recipe"]["settings"]["learning_rate"] = 1.0
    assert recipe_digest(other) != recipe_digest(record)
    old = {"recipe": {"sha256": "a" * 64}}  # schema < 4: no settings
    assert recipe_digest(old) == "a" * 64


def _set(record, path: str, value):
    *parents, last = path.split(".")
    node = record
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value


BAD = [
    ("schema_version", KeyError, "schema_version is None, this package reads 1, 2, 3, 4 and 5"),
    ("schema_version", 6, "schema_version is 6"),
    ("task", "classification", "a classification run has a dataset and no release"),
    ("recipe.name", "geminon-tiny-demo", "a canonical recipe has a name; a non-canonical one has none"),
    ("recipe.why_not_canonical", None, "a non-canonical recipe says why"),
    ("corpus.fingerprint", None, "corpus.fingerprint is null exactly for a DP model run"),
    ("tuning", "qlora", "tuning: Input should be 'lora' or 'full'"),
    ("release.manifest_sha256", "abc", "release.manifest_sha256: String should match pattern"),
    ("corpus.fingerprint", KeyError, "corpus.fingerprint: Field required"),
    ("surprise", 1, "surprise: Extra inputs are not permitted"),
    (
        "metrics.qa_public.metrics.exact_match.accuracy",
        1.5,
        "accuracy: Input should be less than or equal to 1",
    ),
    ("metrics.qa_public.metrics.contains.ci95", [0.99, 1.0], "does not contain the accuracy"),
    ("metrics.qa_public.metrics.contains.ci95", None, "accuracy and ci95 are null exactly when count is 0"),
    ("metrics.qa_public.metrics.contains.count", 99, "metrics.contains.count 99 differs from the part's n 6"),
    ("metrics.qa_public.by_support.>=0.exact_match.count", 999, "differs from the stratum's n"),
    ("metrics.qa_public.by_support.200", {"n": 0}, "String should match pattern '^>=\\d+$'"),
    ("selected_checkpoint.tied_steps", KeyError, "selected_checkpoint.tied_steps: Field required"),
    ("matchers", ["exact_match", "contains", "llm_match"], "metrics.qa_public lacks matcher llm_match"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD, ids=[b[0] + "=" + repr(b[1])[:12] for b in BAD])
def test_each_bad_record_gives_one_line(record, path, value, message):
    bad = copy.deepcopy(record)
    _set(bad, path, value)
    problems = schema.validate(bad)
    assert len(problems) == 1 and "\n" not in problems[0], problems
    assert message in problems[0]
    with pytest.raises(ValueError, match="^run-x is not a valid results record: ") as info:
        schema.check(bad, "run-x")
    assert "\n" not in str(info.value)


def test_schema_1_and_2_records_are_still_read(record):
    """Schemas 2 to 4 only added optional keys (``model_privacy``; ``model_repo``; the recipe's name and
    settings, graded knowledge): older records are valid as they were."""
    old = before_schema_4(record)
    old["schema_version"] = 1
    del old["model_privacy"]
    assert schema.validate(old) == [] and "model_repo" not in old
    assert schema.validate({**old, "schema_version": 2}) == []
    assert schema.validate({**old, "model_repo": "me/eval"}) == [
        "record: model_repo and model_privacy.target_epsilon need schema_version 3"
    ]


def test_graded_knowledge_is_recorded_and_needs_schema_4(record):
    for part in ("qa_public", "qa_singleton"):
        metrics = record["metrics"][part]
        mcq, nll = metrics["metrics"]["mcq"], metrics["answer_nll"]
        assert 0 <= mcq["accuracy"] <= 1 and mcq["count"] == metrics["n"] == nll["count"]
        assert mcq["ci95"][0] <= mcq["accuracy"] <= mcq["ci95"][1]
        assert nll["mean"] > 0 and nll["ci95"][0] <= nll["mean"] <= nll["ci95"][1]
        assert metrics["by_support"][">=0"]["mcq"]["count"] == metrics["n"]
    old = before_schema_4(record)
    assert schema.validate({**old, "metrics": record["metrics"], "schema_version": 3}) == [
        "record: metrics.<part>.metrics.mcq, answer_nll and forgetting need schema_version 4"
    ]
    assert schema.validate({**old, "schema_version": 3}) == []


def test_per_question_outcomes_must_agree_with_the_metrics(record, finished_run):
    good = copy.deepcopy(record)
    n = record["metrics"]["qa_public"]["n"]
    k = round(record["metrics"]["qa_public"]["metrics"]["exact_match"]["accuracy"] * n)
    bits = "1" * k + "0" * (n - k)
    good["questions"] = {
        "qa_public": {
            "ids": [f"q{i}" for i in range(n)],
            "support_counts": [1] * n,
            "outcomes": {"exact_match": bits},
        }
    }
    assert schema.validate(good) == []
    flipped = "0" + bits[1:] if bits[0] == "1" else "1" + bits[1:]
    good["questions"]["qa_public"]["outcomes"]["exact_match"] = flipped
    problem = "record: questions.qa_public.outcomes.exact_match disagree with metrics.qa_public"
    assert schema.validate(good) == [problem]
    assert schema.validate([1]) == ["a results record is a JSON object, got list"]


def test_selection_records_ties_and_the_rule():
    history = [{"step": 10, "contains": 0.25}, {"step": 20, "contains": 0.5}, {"step": 30, "contains": 0.5}]
    chosen = selection({"name": "checkpoint-20", "step": 20, "validation_contains": 0.5}, history)
    assert chosen["tied_steps"] == [20, 30] and chosen["rule"] == SELECTION_RULE
    base = selection({"name": "base", "step": 0, "validation_contains": 0.1}, [])
    assert base["tied_steps"] == [] and base["rule"].startswith("no training")


def test_corpus_privacy_from_privacy_json_and_from_older_cards(tmp_path):
    from continuousbench.dp.accounting import PrivacyGuarantee
    from continuousbench.dp.statement import privacy_statement

    dp = tmp_path / "dp"
    dp.mkdir()
    stated = {
        "private": True,
        "epsilon": 10.0,
        "delta": 1e-6,
        "steps": 20,
        "history": [1],
        "validation_loss": 2.0,
    }
    (dp / "privacy.json").write_text(json.dumps(stated))
    assert corpus_privacy(dp) == {
        "private": True,
        "epsilon": 10.0,
        "delta": 1e-6,
        "steps": 20,
        "unit": "record",
        "adjacency": "add-or-remove",
    }
    guarantee = PrivacyGuarantee(
        epsilon=3.0,
        delta=2e-7,
        noise_multiplier=1.1,
        sampling_probability=0.01,
        expected_batch_size=5.0,
        steps=10,
        dataset_size=500,
        sampling="poisson",
        physical_batch=None,
        truncation_analysis=None,
        truncation_probability=None,
        clip_norm=1e-3,
        event_json="{}",
    )
    old = tmp_path / "old"
    old.mkdir()
    (old / "README.md").write_text("# Synthetic corpus\n\n" + privacy_statement(guarantee))
    assert corpus_privacy(old) == {
        "private": True,
        "epsilon": 3.0,
        "delta": 2e-7,
        "unit": "record",
        "adjacency": "add-or-remove",
    }
    (old / "README.md").write_text(privacy_statement(None))
    assert corpus_privacy(old) == {"private": False}
    assert corpus_privacy(tmp_path / "missing") is None


def test_the_documented_json_schema_is_the_code(tmp_path):
    assert json.loads((DOCS / "results.schema.json").read_text()) == schema.json_schema()
    assert schema.json_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    doc = (DOCS / "results-format.md").read_text()
    for key in schema.Results.model_json_schema(by_alias=True)["properties"]:
        assert f"`{key}`" in doc, f"docs/results-format.md does not describe {key}"


def _judged(record) -> dict:
    """``record`` as if scored with a calibrated judge (llm_match = contains)."""
    import fake_judges

    from continuousbench.llm import OfflineGenerator
    from continuousbench.scoring.judge import Judge, calibrate, gate, identity
    from continuousbench.scoring.match import judge_agreement

    judged = copy.deepcopy(record)
    judged["matchers"] = [*judged["matchers"], "llm_match"]
    figures = gate(calibrate(Judge(OfflineGenerator(fake_judges.rule_following), "j")), "j")
    judged["judge"] = {
        **identity("endpoint:http://127.0.0.1:8000/v1#j"),
        "calibration": figures,
        "decided": {},
        "agreement": {},
    }
    for part, m in judged["metrics"].items():
        m["metrics"]["llm_match"] = {**m["metrics"]["contains"], "unparseable": 0}
        judged["judge"]["decided"][part] = {"empty": 1, "exact": 2, "numeric": 0, "judge": m["n"] - 3}
        flags = [True, False] * (m["n"] // 2)
        judged["judge"]["agreement"][part] = judge_agreement(
            {"exact_match": flags, "contains": flags, "llm_match": flags}
        )
    return judged


JUDGE_BAD = [
    ("judge.decided.qa_public.judge", 0, "judge.decided.qa_public counts 3 verdicts, not the part's n"),
    ("judge.calibration.override", True, "override exactly when not"),
    ("judge.calibration.accuracy", 0.5, "passed must follow from the figures and bounds"),
    ("judge.prompt_sha256", "v2", "judge.prompt_sha256: String should match pattern"),
    ("matchers", ["exact_match", "contains"], "judge is recorded but llm_match is not among matchers"),
]


def test_a_judged_record_is_valid_and_its_judge_entry_checked(record):
    judged = _judged(record)
    assert schema.validate(judged) == []
    for path, value, message in JUDGE_BAD:
        bad = copy.deepcopy(judged)
        _set(bad, path, value)
        problems = schema.validate(bad)
        assert len(problems) == 1 and message in problems[0], (path, problems)
