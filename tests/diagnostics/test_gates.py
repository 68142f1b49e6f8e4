"""Release gates on two real tiny Geminon releases (2026q1 and 2026q2): each passes against the other,
a release against itself is not fresh, and each failure is one line with its figure and threshold."""

import json

import numpy as np
import pytest

from continuousbench.diagnostics import gates


@pytest.fixture(scope="module")
def next_quarter(tmp_path_factory):
    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    root = tmp_path_factory.mktemp("cb-q2")
    return build_release(GeminonBuildArguments(size="tiny", quarter="2026q2", out=str(root)), progress=False)


def test_two_quarters_pass_with_each_other_as_previous(invoke, tmp_path, tiny_release, next_quarter,
                                                       tiny_model_dir):  # fmt: skip
    closed_book = ["--models", tiny_model_dir, "--max_new_tokens", "8"]
    cheap = ["--gates", "learnable", "fresh"]
    for release, other, extra in (
        (tiny_release, next_quarter, closed_book),
        (next_quarter, tiny_release, cheap),
    ):
        out = tmp_path / f"{release.name}.json"
        result = invoke(["gate", "--release", release, "--previous", other, "--output", out, *extra])
        assert result.exit_code == 0, result.output
        report = json.loads(out.read_text())
        assert report["passed"]
        if extra is closed_book:
            assert set(report["gates"]) == set(gates.GATES)
            closed = report["gates"]["unsolvable"]["models"][str(tiny_model_dir)]
            assert closed["questions"] == 156 and closed["wilson_95"][1] < 0.05
        fresh = report["gates"]["fresh"]
        assert 0 < fresh["checks"][2]["figure"] < 0.05  # template phrasing is shared, a little
        assert fresh["worst_overlaps"] and fresh["worst_overlaps"][0]["share"] > 0


def test_release_against_itself_fails_fresh_in_one_line(invoke, tmp_path, tiny_release):
    out = tmp_path / "self.json"
    result = invoke(["gate", "--release", tiny_release, "--previous", tiny_release, "--gates", "fresh",
                     "learnable", "--output", out])  # fmt: skip
    assert result.exit_code == 2
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert "gate fresh failed: questions repeated from earlier releases 234 (threshold 0)" in line
    assert "corpus 13-gram overlap 1 (threshold 0.05)" in line and "learnable" not in line
    report = json.loads(out.read_text())  # the report is written before the failure
    assert report["gates"]["fresh"]["worst_overlaps"][0]["share"] == 1.0


def test_learnable_minimum_and_histogram(tiny_release):
    gate = gates.learnable_gate(tiny_release)
    assert gate.passed and gate.details["min_support"] == gates.GEMINON_MIN_SUPPORT
    assert sum(gate.details["histograms"]["qa_singleton"].values()) == 78
    least = gate.details["least_public_support"]
    strict = gates.learnable_gate(tiny_release, min_support=least + 1)
    assert not strict.passed
    assert strict.line().startswith(f"gate learnable failed: public questions with support under {least + 1}")


def test_unsolvable_fails_when_a_model_knows_the_answers(monkeypatch, tiny_release, tiny_model_dir):
    from continuousbench.harness import qa_eval

    qa = gates.closed_book_questions(tiny_release)
    known = dict(zip(qa["question"], qa["answer"], strict=True))
    monkeypatch.setattr(
        qa_eval, "generate_answers", lambda m, t, questions, **_: [known[q] for q in questions]
    )
    gate = gates.unsolvable_gate(tiny_release, [str(tiny_model_dir)])
    assert not gate.passed
    assert gate.line().endswith("upper bound of " + str(tiny_model_dir) + " 1 (threshold 0.05)")


def test_ngram_hashes_do_not_cross_documents():
    hasher = gates.NgramHasher(3)
    hashes, docs = hasher(["a b c d", "c d e", "x y"])
    assert list(docs) == [0, 0, 1]
    again, _ = hasher(["b c d"])
    assert again[0] == hashes[1] and len(np.unique(hashes)) == 3


def test_previous_that_does_not_verify_is_refused(invoke, tmp_path, tiny_release):
    import shutil

    copy = shutil.copytree(tiny_release, tmp_path / tiny_release.name)
    card = copy / "README.md"
    card.write_text(card.read_text() + "edited\n")
    result = invoke(["gate", "--release", tiny_release, "--previous", copy, "--gates", "fresh"])
    errors = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "README.md" in errors[0]
