"""Release gates on two real tiny Geminon releases (2026q1 and 2026q2): the later passes against the
earlier (the unsolvable gate re-checking the build's own screening), only earlier quarters may be named as
previous, a release against itself is not fresh, and each failure is one line with its figure and
threshold."""

import json

import numpy as np
import pytest

from continuousbench.diagnostics.gate_fresh import fresh_gate
from continuousbench.diagnostics.gate_learnable import GEMINON_MIN_SUPPORT, learnable_gate
from continuousbench.diagnostics.gate_unsolvable import closed_book_questions, unsolvable_gate
from continuousbench.diagnostics.gates import GATES
from continuousbench.diagnostics.ngrams import NgramHasher

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_gates")


@pytest.fixture(scope="module")
def next_quarter(tmp_path_factory, tiny_release):
    """2026q2, built beside 2026q1 (whose names it avoids)."""
    import shutil

    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    root = tmp_path_factory.mktemp("cb-q2")
    shutil.copytree(tiny_release, root / tiny_release.name)
    return build_release(GeminonBuildArguments(size="tiny", quarter="2026q2", out=str(root)), progress=False)


@pytest.mark.slow  # ~7 s: CI only, not the fast lane
def test_a_quarter_passes_against_the_one_before(invoke, tmp_path, tiny_release, next_quarter):
    """No --models: the unsolvable gate re-checks with the model that screened the release (demo-base)."""
    out = tmp_path / "q2.json"
    result = invoke(["gate", "--release", next_quarter, "--previous", tiny_release, "--output", out])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["passed"] and set(report["gates"]) == set(GATES)
    assert report["previous"] == ["geminon-tiny-2026q1"]
    closed = report["gates"]["unsolvable"]["models"]["demo-base"]
    kept = json.loads((next_quarter / "release.json").read_text())["rows"]
    assert closed["questions"] == kept["qa_public"]["test"] + kept["qa_singleton"]["test"]
    assert closed["correct"] == 0 and closed["wilson_95"][1] < 0.05  # what the build established
    line = f"closed-book accuracy of demo-base: 0 of {closed['questions']} correct, 95% Wilson upper bound"
    assert line in result.stdout and "(threshold 0.05): pass" in result.stdout
    fresh = report["gates"]["fresh"]
    assert 0 < fresh["checks"][2]["figure"] < 0.05  # template phrasing is shared, a little
    assert fresh["worst_overlaps"] and fresh["worst_overlaps"][0]["share"] > 0


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_previous_must_be_an_earlier_quarter(invoke, tiny_release, next_quarter):
    for release, previous in ((tiny_release, next_quarter), (tiny_release, tiny_release)):
        result = invoke(["gate", "--release", release, "--previous", previous, "--gates", "fresh"])
        (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
        assert result.exit_code == 2 and "is not an earlier release of geminon-tiny-2026q1" in line


def test_release_against_itself_is_not_fresh(tiny_release):
    gate = fresh_gate(tiny_release, [tiny_release])
    assert not gate.passed
    assert "gate fresh failed: questions repeated from earlier releases" in gate.line()
    assert "corpus 13-gram overlap 1 (threshold 0.05)" in gate.line()
    assert gate.details["worst_overlaps"][0]["share"] == 1.0


def test_learnable_minimum_and_histogram(tiny_release):
    gate = learnable_gate(tiny_release)
    assert gate.passed and gate.details["min_support"] == GEMINON_MIN_SUPPORT
    singletons = json.loads((tiny_release / "release.json").read_text())["rows"]["qa_singleton"]
    assert sum(gate.details["histograms"]["qa_singleton"].values()) == sum(singletons.values())
    least = gate.details["least_public_support"]
    strict = learnable_gate(tiny_release, min_support=least + 1)
    assert not strict.passed
    assert strict.line().startswith(f"gate learnable failed: public questions with support under {least + 1}")


def test_unsolvable_fails_when_a_model_knows_the_answers(monkeypatch, tiny_release, tiny_model_dir):
    from continuousbench.llm import local

    qa = closed_book_questions(tiny_release)
    known = {f"Q: {q}\nA:": a for q, a in zip(qa["question"], qa["answer"], strict=True)}
    monkeypatch.setattr(
        local, "greedy_answers", lambda m, t, prompts, **_: [known[p[p.rindex("Q: ") :]] for p in prompts]
    )
    gate = unsolvable_gate(tiny_release, [str(tiny_model_dir)])
    assert not gate.passed
    n = len(qa)
    assert gate.line().endswith(f"{n} of {n} correct, 95% Wilson upper bound 1 (threshold 0.05)")


def test_ngram_hashes_do_not_cross_documents():
    hasher = NgramHasher(3)
    hashes, docs = hasher(["a b c d", "c d e", "x y"])
    assert list(docs) == [0, 0, 1]
    again, _ = hasher(["b c d"])
    assert again[0] == hashes[1] and len(np.unique(hashes)) == 3


@pytest.mark.slow  # ~5 s: CI only, not the fast lane
def test_previous_that_does_not_verify_is_refused(invoke, tmp_path, tiny_release, next_quarter):
    import shutil

    copy = shutil.copytree(tiny_release, tmp_path / tiny_release.name)
    card = copy / "README.md"
    card.write_text(card.read_text() + "edited\n")
    result = invoke(["gate", "--release", next_quarter, "--previous", copy, "--gates", "fresh"])
    errors = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "README.md" in errors[0]
