"""The `evaluate` module continuousbench/qa_match agrees with the library; install and push."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import evaluate
import pytest
from test_match import CASES

from continuousbench.scoring.match import score
from continuousbench.scoring.metric import FILES, install_metric, push_metric

REPO = Path(__file__).resolve().parents[2]
PREDICTIONS = [c[0] for c in CASES]
REFERENCES = [[c[1]] if isinstance(c[1], str) else c[1] for c in CASES]
SUPPORT = [(97 * i) % 1000 for i in range(len(CASES))]


def expected(indices=None) -> dict:
    """The flat dictionary the metric must return, computed by the library."""
    rows = range(len(CASES)) if indices is None else indices
    out = score([PREDICTIONS[i] for i in rows], [REFERENCES[i] for i in rows])
    return {name: out["metrics"][name]["accuracy"] for name in ("exact_match", "contains")}


@pytest.fixture(scope="module")
def local_metric():
    return evaluate.load(str(REPO / "metrics" / "qa_match"))


def test_local_module_agrees_on_every_case(local_metric):
    for i, (_, _, exact, contained) in enumerate(CASES):
        got = local_metric.compute(predictions=[PREDICTIONS[i]], references=[REFERENCES[i]])
        assert got == {"exact_match": float(exact), "contains": float(contained)}, CASES[i]
    assert local_metric.compute(predictions=PREDICTIONS, references=REFERENCES) == expected()


def test_support_strata_and_plain_string_references(local_metric):
    got = local_metric.compute(
        predictions=PREDICTIONS, references=[c[1] if isinstance(c[1], str) else c[1][0] for c in CASES]
    )
    single = score(PREDICTIONS, [c[1] if isinstance(c[1], str) else c[1][0] for c in CASES])
    assert got["exact_match"] == single["metrics"]["exact_match"]["accuracy"]
    got = local_metric.compute(
        predictions=PREDICTIONS, references=REFERENCES, support_counts=SUPPORT, thresholds=[0, 500, 5000]
    )
    lib = score(PREDICTIONS, REFERENCES, support_counts=SUPPORT, thresholds=[0, 500, 5000])
    assert got["contains@>=500"] == lib["by_support"][">=500"]["contains"]["accuracy"]
    assert got["exact_match@>=0"] == lib["metrics"]["exact_match"]["accuracy"]
    assert math.isnan(got["exact_match@>=5000"])


def test_support_counts_configuration_streams_through_add_batch():
    metric = evaluate.load(
        str(REPO / "metrics" / "qa_match"), "support_counts", matchers=["contains"], thresholds=[500]
    )
    for start in range(0, len(CASES), 25):
        stop = start + 25
        metric.add_batch(
            predictions=PREDICTIONS[start:stop],
            references=REFERENCES[start:stop],
            support_counts=SUPPORT[start:stop],
        )
    lib = score(PREDICTIONS, REFERENCES, support_counts=SUPPORT, matchers=["contains"], thresholds=[500])
    assert metric.compute() == {
        "contains": lib["metrics"]["contains"]["accuracy"],
        "contains@>=500": lib["by_support"][">=500"]["contains"]["accuracy"],
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": ["a", "b"], "references": [["a"]]}, "references has 1 items but predictions has 2"),
        ({"predictions": ["a"], "references": [["a"]], "matchers": ["bleu"]}, "matchers must be"),
        ({"predictions": ["a"], "references": [["a"]], "matchers": ["llm_match"]}, "llm_match needs a judge"),
        ({"predictions": ["a"], "references": [["..."]]}, "normalises to an empty answer"),
    ],
)
def test_bad_inputs_give_a_clear_error(local_metric, kwargs, message):
    with pytest.raises(ValueError, match=message):
        local_metric.compute(**kwargs)


@pytest.mark.slow  # a fresh interpreter (importing evaluate takes ~10 s) is the only clean offline check
def test_load_by_name_after_install_from_any_cwd(tmp_path):
    cache = tmp_path / "modules"
    installed = install_metric(cache)
    assert install_metric(cache) == installed, "installing the same code twice is a no-op"
    assert sorted(p.name for p in installed.parent.iterdir()) == sorted([*FILES, "__init__.py"])
    script = (
        "import json, sys, evaluate\n"
        "m = evaluate.load('continuousbench/qa_match')\n"
        "cases = json.loads(sys.stdin.read())\n"
        "print(json.dumps([m.compute(predictions=[p], references=[r]) for p, r in cases]))\n"
    )
    env = {**os.environ, "HF_MODULES_CACHE": str(cache), "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    run = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(list(zip(PREDICTIONS, REFERENCES, strict=True))),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got == [{"exact_match": float(c[2]), "contains": float(c[3])} for c in CASES]


def test_push_creates_a_gradio_space_and_uploads_the_module(monkeypatch):
    calls = []

    class FakeApi:
        def __init__(self, token=None):
            calls.append(("init", token))

        def create_repo(self, repo_id, **kwargs):
            calls.append(("create_repo", repo_id, kwargs))
            return f"https://huggingface.co/spaces/{repo_id}"

        def upload_folder(self, **kwargs):
            calls.append(("upload_folder", kwargs))
            assert {p.name for p in Path(kwargs["folder_path"]).iterdir()} >= set(FILES)

    monkeypatch.setattr("huggingface_hub.HfApi", FakeApi)
    url = push_metric("my-org/qa_match", private=True, token="hf_secret")
    assert url == "https://huggingface.co/spaces/my-org/qa_match"
    assert calls[0] == ("init", "hf_secret")
    assert calls[1] == (
        "create_repo",
        "my-org/qa_match",
        {"repo_type": "space", "space_sdk": "gradio", "private": True, "exist_ok": True},
    )
    upload = calls[2][1]
    assert upload["repo_id"] == "my-org/qa_match" and upload["repo_type"] == "space"
    assert upload["allow_patterns"] == list(FILES)
    with pytest.raises(ValueError, match="owner/name"):
        push_metric("qa_match")


def test_cli_metric_install(invoke, tmp_path):

    result = invoke(["metric", "install", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert Path(result.output.strip()).is_file()
