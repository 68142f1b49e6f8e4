"""``continuousbench saturation`` on the committed fixture, on CPU: all four regimes, the summary, the
tables and Fig. 8 beside a release's regimes; the runs read by report, compare and submit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from continuousbench.classification.saturation import SMOKE
from continuousbench.demo.demo import SHIPPED_BASE
from continuousbench.dp.accounting import dp_event_from_json, event_epsilon

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_saturation")

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "recipes" / "saturation"
TINY = ["--dataset", "fixture", "--model", str(SHIPPED_BASE), *SMOKE]  # with 3-step generators:
GENERATOR = """tuning: lora\nlora_r: 4\ndtype: float32\nmax_length: 48\neval_limit: 8\nlearning_rate: 3.0e-3
max_steps: 3\nsamples_per_step: 8\nper_device_train_batch_size: 8\nsampling: poisson\nexpected_batch_size: "8"
micro_batch_size: 8\neval_steps: 3\nsave_steps: 3\nlogging_steps: 3\ndisable_tqdm: true\n"""


@pytest.fixture(scope="module")
def release_report(tmp_path_factory):
    """A ``report --json`` of a release's four regimes, as the demo writes it."""
    rows = [("no-training", 0.01), ("dp-syn-eps10", 0.05), ("syn", 0.4), ("train-on-real", 0.875)]
    runs = [
        {
            "run": name,
            "release": "geminon-tiny-2026q1",
            "qa_public/exact_match": acc,
            "qa_public/exact_match/ci95": [max(0, acc - 0.05), min(1, acc + 0.05)],
        }
        for name, acc in rows
    ]
    file = tmp_path_factory.mktemp("release") / "results.json"
    file.write_text(json.dumps({"runs": runs}))
    return file


@pytest.fixture(scope="module")
def study(tmp_path_factory, release_report):
    from continuousbench.cli import main

    folder = tmp_path_factory.mktemp("saturation")
    config = folder / "generator.yaml"
    config.write_text(GENERATOR)
    argv = [
        *TINY,
        "--output_dir",
        str(folder / "out"),
        "--generator_config",
        str(config),
        "--beside",
        str(release_report),
    ]
    main(["saturation", *argv])
    return folder / "out", argv


@pytest.mark.slow
def test_saturation_runs_the_four_regimes_and_writes_the_summary(study):
    out, _ = study
    summary = json.loads((out / "saturation.json").read_text())
    assert [r["regime"] for r in summary["regimes"]] == ["no-training", "dp-syn", "syn", "real"]
    for regime in summary["regimes"]:
        low, high = regime["ci95"]
        assert low <= regime["accuracy"] <= high and regime["n"] == 9
    best = summary["best_prompted"]
    assert best["condition"]["template"] in ("direct", "reasoning", "structured") and "condition_name" in best
    assert best["accuracy"] == max(c["metrics"]["exact_match"]["accuracy"] for c in summary["grid"])
    assert len(summary["grid"]) == 6  # 3 templates x (0-shot, 3-shot with one seed)
    assert summary["gap"] == pytest.approx(100 * (summary["fine_tuned"]["accuracy"] - best["accuracy"]))
    assert "ratio" in summary and summary["beside"]["release"] == "geminon-tiny-2026q1"
    tables = (out / "tables.md").read_text()
    for caption in ("Summary", "Prompting grid", "by seed", "Per-class", "Fine-tuning", "Unparseable"):
        assert caption in tables
    assert (out / "fig8.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_dp_synthetic_corpus_re_accounts_to_its_epsilon(study):
    out, _ = study
    privacy = json.loads((out / "synthetic" / "dp-syn" / "privacy.json").read_text())
    assert privacy["class_balance"]["source"] == "dp counts" and privacy["target_epsilon"] == 10
    rebuilt = event_epsilon(dp_event_from_json(privacy["event_json"]), privacy["delta"])
    assert rebuilt == pytest.approx(privacy["epsilon"], rel=1e-9) and privacy["epsilon"] <= 10
    generator = json.loads((out / "generators" / "dp-syn" / "privacy.json").read_text())
    assert generator["epsilon"] < privacy["epsilon"]  # the class counts spent the rest of the budget
    corpus = json.loads((out / "runs" / "dp-syn" / "results.json").read_text())["corpus"]
    assert corpus["privacy"]["epsilon"] == privacy["epsilon"]


@pytest.mark.slow
def test_report_compare_and_submit_read_the_runs(study, invoke, tmp_path):
    out, _ = study
    runs = [out / "runs" / r for r in ("no-training", "dp-syn", "syn", "real")]
    done = invoke(["report", *runs])
    assert done.exit_code == 0 and "classification EM" in done.stdout, done.output
    done = invoke(["compare", runs[2], runs[1], "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["questions"]["paired"] == 9
    done = invoke(["submit", runs[1], "--to", tmp_path / "results"])
    assert done.exit_code == 0 and "classification-fixture/" in done.stdout, done.output


@pytest.mark.slow
def test_fig8_takes_four_run_folders_beside(study):
    from continuousbench.classification.figure import release_regimes

    out, _ = study
    roles = {"none": "no-training", "dp_syn": "dp-syn", "syn": "syn", "real": "real"}
    items = [f"{r}={out / 'runs' / f}" for r, f in roles.items()]
    beside = release_regimes(items, [], "classification/contains")
    assert beside["release"] == "fixture (classification)" and len(beside["regimes"]) == 4
    assert all(r["ci95"] is not None for r in beside["regimes"])
    with pytest.raises(ValueError, match="ROLE=VALUE"):
        release_regimes(["mine=x"], [], "classification/contains")


@pytest.mark.slow
def test_a_rerun_keeps_finished_regimes_and_refuses_other_settings(study, invoke):
    out, argv = study
    before = (out / "runs" / "real" / "results.json").stat().st_mtime_ns
    assert invoke(["saturation", *argv]).exit_code == 0
    assert (out / "runs" / "real" / "results.json").stat().st_mtime_ns == before
    done = invoke(["saturation", *argv, "--test_limit", "8"])
    assert done.exit_code == 2 and "other settings" in done.stderr
    done = invoke(["saturation", *argv, "--overwrite", "--beside", str(out / "missing.json")])
    assert done.exit_code == 2 and "missing.json" in done.stderr
    assert (out / "saturation.json").is_file()  # a failed --overwrite leaves the study in place


def test_missing_options_and_columns_are_one_line(invoke, tmp_path):
    done = invoke(["saturation", "--dataset", "fixture"])
    assert done.exit_code == 2 and "--model, --output_dir missing" in done.stderr
    done = invoke(
        [
            "saturation",
            "--dataset",
            "fixture",
            "--label_column",
            "stars",
            "--model",
            "m",
            "--output_dir",
            tmp_path / "o",
        ]
    )
    last = done.stderr.strip().splitlines()[-1]
    assert done.exit_code == 2 and last.startswith("error:") and "has no column 'stars'" in last
    assert not (tmp_path / "o").exists()  # bad input writes nothing


def test_plan_prints_gpu_hours_of_the_paper_runs(invoke):
    done = invoke(["saturation", "--plan"])
    assert done.exit_code == 0
    for name in ("imdb", "yelp_polarity", "openreview", "gemma-3-1b", "gemma-3-4b"):
        assert name in done.stdout


@pytest.mark.parametrize(
    ("dataset", "model", "seconds"),  # paper Tables 20 and 25: fine-tuning on the real split
    [
        ("imdb", "gemma-3-1b", 7313),
        ("imdb", "gemma-3-4b", 6072),
        ("openreview", "gemma-3-1b", 1899),
        ("openreview", "gemma-3-4b", 4499),
    ],
)
def test_the_plan_reproduces_the_paper_timings_within_a_factor_of_two(dataset, model, seconds):
    from continuousbench.classification.plan import DATASETS, MODELS, fine_tuning_seconds

    estimate = fine_tuning_seconds(DATASETS[dataset], *MODELS[model])
    assert seconds / 2 < estimate < seconds * 2


@pytest.mark.parametrize("name", sorted(p.name for p in RECIPES.glob("*.yaml") if p.stem[0] != "g"))
def test_every_saturation_recipe_parses_and_names_its_generator_recipe(name):
    from continuousbench.classification.saturation import make_parser
    from continuousbench.dp.train import make_parser as generator_parser

    (args,) = make_parser().parse(["--config", str(RECIPES / name), "--output_dir", "/tmp/unused"])
    assert args.model.startswith("google/gemma-3-") and args.epsilon == 10 and args.ft_epochs == 3
    generator = ROOT / args.generator_config
    corpus = ["--corpus", "x", "--output_dir", "/tmp/unused", "--label_column", "label", "--label_map", "a,b"]
    assert generator_parser().parse(["--config", str(generator), *corpus])[2].max_steps == 3000
