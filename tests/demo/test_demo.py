"""`continuousbench demo --quick` end to end from an installed wheel: every stage runs, each run trained on
the corpus its stage made, the table carries intervals and the findings are checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from continuousbench.demo import demo
from continuousbench.files import sha256_file

ROOT = Path(__file__).resolve().parents[2]


def wheel_install(tmp: Path) -> Path:
    """Build the wheel (not editable) from a copy of the tree and install it alone into a fresh venv.

    The venv borrows the dependencies (torch & co.) from the test's own environment through a ``.pth``
    line instead of installing them again, and the wheel goes in with ``--no-deps``. So this proves what
    a wheel carries (code, recipes, priors, metric files) and that the demo needs nothing from the
    source tree; it does not test dependency resolution. Returns the venv's ``continuousbench`` script.
    """
    src = tmp / "src"
    shutil.copytree(
        ROOT / "continuousbench", src / "continuousbench", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", tmp / "dist", src], check=True)
    (wheel,) = (tmp / "dist").glob("continuousbench-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(purelib) / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = [python, "-c", "import continuousbench; print(continuousbench.__file__)"]
    before = subprocess.run(probe, cwd=tmp, env=_env(), capture_output=True, text=True)
    assert before.returncode != 0 and "No module named 'continuousbench'" in before.stderr  # not leaked
    subprocess.run(
        [*pip, "--python", python, "install", "--no-deps", "--no-index", wheel], check=True, env=_env()
    )
    after = subprocess.run(probe, cwd=tmp, env=_env(), capture_output=True, text=True, check=True)
    assert Path(after.stdout.strip()).is_relative_to(purelib)  # the wheel's copy, not the tree's
    return venv / "bin" / "continuousbench"


def _env() -> dict[str, str]:
    """This environment without PYTHONPATH (which points at the source tree during the tests)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.mark.slow
def test_quick_demo_end_to_end_from_a_wheel_install(tmp_path):
    """The wheel's demo runs every job in one process of the wheel's venv (tests/demo/one_process_demo.py:
    torch & co. imported once, not once per job), then its console script reruns it: every job is found
    finished, and the table, comparison and findings are printed again from the same files."""
    program = wheel_install(tmp_path / "install")
    elsewhere = tmp_path / "elsewhere"  # no recipes/ or continuousbench/ in sight
    elsewhere.mkdir()
    out = elsewhere / "demo"
    options = ["--out", str(out), "--quick", "--threads", "1"]
    script = Path(__file__).with_name("one_process_demo.py")
    jobs = subprocess.run([program.with_name("python"), script, *options], cwd=elsewhere, env=_env(),
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert jobs.returncode == 0, jobs.stderr[-3000:]
    assert Path(jobs.stdout.splitlines()[-1]).is_relative_to(program.parents[1])  # the wheel's code ran
    assert "FAILED" not in jobs.stdout
    results_before = (out / "results.json").read_text()
    command = [program, "demo", *options]
    rerun = subprocess.run(command, cwd=elsewhere, env=_env(), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "jobs finished already, 0 to run" in rerun.stdout
    rows = json.loads((out / "results.json").read_text())
    settings = demo.Settings.quick()

    assert [r["run"] for r in rows] == list(demo.RUNS)
    records = {r["run"]: json.loads((out / "runs" / r["run"] / "results.json").read_text()) for r in rows}
    for row in rows:
        results = records[row["run"]]
        assert set(results["metrics"]) == {"qa_public", "qa_singleton"}
        for part in ("qa_public", "qa_singleton"):
            accuracy = results["metrics"][part]["metrics"]["exact_match"]
            assert row[f"{part}/exact_match"] == accuracy["accuracy"]
            assert row[f"{part}/exact_match/ci95"] == accuracy["ci95"]  # the table's intervals
    assert [r["steps"] for r in rows] == [0] + [2 * settings.eval_steps] * (len(rows) - 1)

    # Consistent stages: each run trained on the corpus its stage made, under the recorded guarantee.
    from continuousbench.training.data import corpus_fingerprint, load_corpus

    for gen, epsilon in demo.GENERATORS.items():
        privacy = json.loads((out / "generators" / gen / "privacy.json").read_text())
        assert privacy["private"] == (epsilon is not None)
        assert epsilon is None or privacy["epsilon"] == pytest.approx(epsilon, rel=1e-3)
        corpus = load_corpus(str(out / "synthetic" / gen))
        assert len(corpus) == settings.synthetic_samples
    for run, corpus in demo.RUNS.items():
        if corpus not in (None, "real"):
            texts = load_corpus(str(out / "synthetic" / corpus))
            assert records[run]["corpus"]["fingerprint"] == corpus_fingerprint(texts), run
    pe = json.loads((out / "synthetic" / "pe-eps10" / "pe.json").read_text())
    assert pe["guarantee"]["epsilon"] == pytest.approx(10, rel=1e-3)
    assert 0 < len(load_corpus(str(out / "synthetic" / "pe-eps10"))) <= settings.pe_samples
    direct = records["dp-direct-eps10"]
    assert direct["model_privacy"]["epsilon"] == pytest.approx(10, rel=1e-3) and direct["tuning"] == "lora"
    assert records["no-training"]["steps"] == 0 and records["train-on-real"]["model_privacy"] is None

    assert {p.name for p in out.iterdir()} <= set(demo.WRITES)  # what --overwrite removes, all of it
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mauve = json.loads((out / "mauve.json").read_text())
    assert set(mauve) == {"real", *demo.GENERATORS, "pe-eps10"}
    assert all(0 <= m["mean"] <= 1 for m in mauve.values())
    assert [r["mauve"] for r in rows] == [
        mauve[c]["mean"] if r in demo.CORPUS_RUNS else None for r, c in demo.RUNS.items()
    ]
    checked = json.loads((out / "findings.json").read_text())
    assert len(checked) == 4 and all(isinstance(f["holds"], bool) and f["evidence"] for f in checked)
    printed = rerun.stdout
    assert "train-on-real" in printed and "MAUVE" in printed and "Wilson 95% interval" in printed
    assert "syn (A) vs dp-syn-eps10 (B): exact_match" in printed and "McNemar" in printed  # paired difference
    assert printed.count("hold") >= 4  # every finding printed with its verdict (holds, does not hold)

    # The shipped base model, copied after its digests were checked
    base = out / "base-model"
    assert all(sha256_file(base / name) == digest for name, digest in demo.BASE_SHA256.items())
    assert json.loads((base / "pretraining.json").read_text())["training"]["steps"] == 3000

    # The console script's rerun skipped every finished stage and wrote the same table.
    assert json.loads(results_before) == rows


def test_settings_mismatch_is_refused(tmp_path):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "settings.json").write_text(json.dumps({"quick": False}))
    with pytest.raises(SystemExit) as err:
        demo.cli(["--out", str(out), "--quick"])
    assert err.value.code == 2


def test_overwrite_removes_only_what_the_demo_wrote(tmp_path, monkeypatch):
    out = tmp_path / "demo"
    (out / "runs" / "syn").mkdir(parents=True)
    (out / "settings.json").write_text("{}")
    (out / "results.json").write_text("[]")
    (out / "notes.txt").write_text("mine")

    class Stopped(Exception):
        pass

    def stop(*args, **kwargs):
        raise Stopped

    monkeypatch.setattr(demo, "_jobs", stop)  # stop right after the old demo is cleared
    with pytest.raises(Stopped):
        demo.main(demo.DemoArguments(out=str(out), quick=True, overwrite=True))
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "runs").exists() and not (out / "results.json").exists()


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
