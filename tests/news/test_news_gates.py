"""Release gates on a real tiny NEWS release (offline model): learnable asks for questions to score at
the canonical minimum, fresh compares against the release itself."""

from __future__ import annotations

import pytest
from newspages import TINY_CLUSTERING

from continuousbench.diagnostics.gate_fresh import fresh_gate
from continuousbench.diagnostics.gate_learnable import learnable_gate
from continuousbench.news.build import NewsBuildArguments, main
from continuousbench.news.executors import ExecutorArguments
from continuousbench.news.models import ModelArguments

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_news_gates")]


@pytest.fixture(scope="module")
def news_release(warc_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("news-home")
    args = NewsBuildArguments(
        warc=[str(warc_dir / "*.warc*")], size="tiny", out=str(root), min_support=2, **TINY_CLUSTERING
    )
    model = ModelArguments(llm="offline:news", max_dropped=1.0, judge_override_calibration=True)
    return main(args, model, ExecutorArguments(tasks=2))


def test_news_release_gates(news_release):
    learnable = learnable_gate(news_release)
    assert learnable.passed and learnable.details["scored_questions"] >= 1
    assert set(learnable.details["histograms"]) == {"qa_public"}  # NEWS has no singletons
    strict = learnable_gate(news_release, min_support=10**6)
    assert (
        strict.line()
        == "gate learnable failed: test questions to score (support >= 1000000) missing 1 (threshold 0)"
    )
    fresh = fresh_gate(news_release, [news_release])
    assert not fresh.passed and fresh.checks[1].passed  # NEWS questions carry no entity name: no pairs
    assert fresh.checks[2].figure == 1.0


def test_release_command_builds_and_gates_a_news_quarter(invoke, warc_dir, tmp_path):
    import json
    from pathlib import Path

    recipe = Path(__file__).parents[2] / "builders/configs/news-tiny.yaml"
    argv = [
        "release",
        "--quarter",
        "2026q1",
        "--tracks",
        "news",
        "--size",
        "tiny",
        "--root",
        tmp_path,
        "--warc",
        f"{warc_dir}/*.warc*",
        "--news_config",
        recipe,
    ]
    result = invoke(argv)  # NEWS records no closed-book model: the unsolvable gate is not left out silently
    assert result.exit_code == 2 and "the unsolvable gate needs a closed-book model" in result.stderr
    assert not (tmp_path / "news-tiny-2026q1").exists()  # refused before the build
    result = invoke([*argv, "--skip_gates", "unsolvable"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / ".quarterly/2026q1/attempt-001/report.json").read_text())
    assert report["skipped_gates"] == ["unsolvable"]
    gated = report["releases"]["news-tiny-2026q1"]["gates"]
    assert report["passed"] and set(gated["gates"]) == {"learnable", "fresh"}
    assert gated["gates"]["learnable"]["min_support"] == 2  # the recipe's canonical minimum
