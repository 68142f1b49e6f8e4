"""`continuousbench demo --quick` end to end: every stage runs; table, PNG and results.json files exist."""

from __future__ import annotations

import json

import pytest

from continuousbench import demo


@pytest.mark.slow
def test_quick_demo_end_to_end(tmp_path, capsys):
    out = tmp_path / "demo"
    rows = demo.cli(["--out", str(out), "--quick", "--threads", "1"])

    assert [r["run"] for r in rows] == list(demo.RUNS)
    for name in demo.RUNS:
        results = json.loads((out / "runs" / name / "results.json").read_text())
        assert set(results["metrics"]) == {"qa_public", "qa_singleton"}
    for gen in demo.GENERATORS:
        assert (out / "generators" / gen / "privacy.json").is_file()
        assert (out / "synthetic" / gen / "README.md").is_file()
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / "results.json").read_text()) == rows
    mauve = json.loads((out / "mauve.json").read_text())
    assert set(mauve) == {"real", *demo.GENERATORS} and all(0 <= m["mean"] <= 1 for m in mauve.values())
    printed = capsys.readouterr().out
    assert "train-on-real" in printed and "MAUVE" in printed and "Wilson 95% interval" in printed
    assert "syn (A) vs dp-syn-eps10 (B): exact_match" in printed and "McNemar" in printed  # paired difference

    # Figures: the quick base model has seen 40 steps, so only the shape of the results is checked here;
    # docs/demo.md reports the full demo's figures.
    assert [r["steps"] for r in rows] == [0, 20, 20, 20, 20]
    assert all(0 <= r[f"{p}/{m}"] <= 1 for r in rows for p in ("qa_public", "qa_singleton")
               for m in ("exact_match", "contains"))  # fmt: skip
    base = json.loads((out / "base-model" / "pretraining.json").read_text())
    assert base["pretraining_world"]["entities"] == 18 and base["training"]["steps"] == 40

    # A rerun skips every finished stage and gives the same table.
    assert demo.cli(["--out", str(out), "--quick", "--threads", "1"]) == rows
    assert "done already, skipped" in capsys.readouterr().out


def test_settings_mismatch_is_refused(tmp_path):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "settings.json").write_text(json.dumps({"quick": False}))
    with pytest.raises(SystemExit) as err:
        demo.cli(["--out", str(out), "--quick"])
    assert err.value.code == 2


def test_demo_recipes_parse_with_the_real_parsers():
    from continuousbench.dp.train import make_parser as generator_parser
    from continuousbench.harness.run import make_parser as evaluator_parser

    harness, model, t = evaluator_parser().parse(
        ["--config", str(demo.EVALUATOR_RECIPE), "--output_dir", "/tmp/cb-unused"]
    )
    assert model.tuning == "full" and t.max_length == 256 and 0 < harness.replay_fraction < 1
    assert harness.replay_corpus is None  # the demo passes its own pretraining world's QA documents
    args, model, config = generator_parser().parse(
        ["--config", str(demo.GENERATOR_RECIPE), "--output_dir", "/tmp/cb-unused", "--epsilon", "10"]
    )
    assert model.tuning == "lora" and config.private and config.sampling == "poisson"
