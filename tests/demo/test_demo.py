"""`continuousbench demo --quick` end to end from an installed wheel: every job of the demo's study runs,
each run trained on the corpus its job made, and the study's report job writes the table with intervals
and the four findings, which the demo prints."""

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
from continuousbench.study.graph import expand
from continuousbench.study.schema import load_study

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
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
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


def outside_the_demo_install(modules: list[str]) -> list[str]:
    """The ``modules`` (top-level names) that belong to a library another extra names and `make demo` does
    not install: it installs ``continuousbench[mauve]`` and what that requires, transitively (this
    environment's metadata). Libraries that only other libraries bring are not judged: some are imported
    when present (httpx takes brotli, for one) and skipped when absent."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, distribution, packages_distributions

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[tuple[str, ...]] = set()
    todo = [Requirement("continuousbench[mauve]")]
    while todo:
        wanted = todo.pop()
        key = (canonicalize_name(wanted.name), *sorted(wanted.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = distribution(wanted.name).requires or []
        except PackageNotFoundError:  # an optional platform dependency this machine lacks
            continue
        for line in requires:
            needed = Requirement(line)
            extras = wanted.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                todo.append(needed)
    installed = {key[0] for key in seen}
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    others = {canonicalize_name(Requirement(r).name) for rs in extras.values() for r in rs} - installed
    owners = {m: {canonicalize_name(d) for d in ds} for m, ds in packages_distributions().items()}
    return sorted(m for m in modules if owners.get(m, set()) & others and not owners[m] & installed)


def test_the_demo_install_check_names_a_module_of_another_extra():
    """What the wheel test below checks can fail: a NEWS or test-only module is outside `make demo`."""
    assert outside_the_demo_install(["os", "torch", "transformers", "mauve", "datatrove", "pytest"]) == [
        "datatrove",
        "pytest",
    ]


def _env() -> dict[str, str]:
    """This environment without PYTHONPATH (which points at the source tree during the tests)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.mark.slow
def test_quick_demo_end_to_end_from_a_wheel_install(tmp_path):
    """The wheel's demo runs every job in one process of the wheel's venv (tests/demo/one_process_demo.py:
    torch & co. imported once, not once per job), then its console script reruns it: every job is found
    finished, and the report is printed again from the same files."""
    program = wheel_install(tmp_path / "install")
    elsewhere = tmp_path / "elsewhere"  # no recipes/ or continuousbench/ in sight
    elsewhere.mkdir()
    out = elsewhere / "demo"
    options = ["--out", str(out), "--quick", "--threads", "1"]
    script = Path(__file__).with_name("one_process_demo.py")
    jobs = subprocess.run(
        [program.with_name("python"), script, *options],
        cwd=elsewhere,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert jobs.returncode == 0, jobs.stderr[-3000:]
    assert Path(jobs.stdout.splitlines()[-1]).is_relative_to(program.parents[1])  # the wheel's code ran
    assert "FAILED" not in jobs.stdout
    imported = json.loads(Path(f"{out}.modules.json").read_text())
    assert "torch" in imported and not outside_the_demo_install(imported)  # `make demo` installs no other
    results_before = (out / "report" / "results.json").read_text()
    command = [program, "demo", *options]
    rerun = subprocess.run(command, cwd=elsewhere, env=_env(), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "jobs finished already, 0 to run" in rerun.stdout
    rows = json.loads((out / "report" / "results.json").read_text())["runs"]
    study = load_study(demo.STUDY)
    quick = demo.QUICK
    folders = {name: out / "runs" / f"{key}-seed0" for name, key in study.report.rows.items()}

    assert [r["run"] for r in rows] == list(study.report.rows)
    records = {name: json.loads((folder / "results.json").read_text()) for name, folder in folders.items()}
    for row in rows:
        results = records[row["run"]]
        assert set(results["metrics"]) == {"qa_public", "qa_singleton"}
        for part in ("qa_public", "qa_singleton"):
            accuracy = results["metrics"][part]["metrics"]["exact_match"]
            assert row[f"{part}/exact_match"] == accuracy["accuracy"]
            assert row[f"{part}/exact_match/ci95"] == accuracy["ci95"]  # the table's intervals
    assert [r["steps"] for r in rows] == [0] + [quick["evaluators/demo"]["steps"]] * (len(rows) - 1)

    # Consistent stages: each run trained on the corpus its stage made, under the recorded guarantee.
    from continuousbench.training.data import corpus_fingerprint, load_corpus

    for gen in study.generators:
        privacy = json.loads((out / "generators" / gen.name / "privacy.json").read_text())
        assert privacy["private"] == (gen.epsilon is not None)
        assert gen.epsilon is None or privacy["epsilon"] == pytest.approx(gen.epsilon, rel=1e-3)
        corpus = load_corpus(str(out / "synthetic" / gen.name))
        assert len(corpus) == quick["synthesis"]["num_samples"]
    for name, key in study.report.rows.items():
        corpus = key.split("/")[1]
        if corpus not in ("none", "real"):
            texts = load_corpus(str(out / "synthetic" / corpus))
            assert records[name]["corpus"]["fingerprint"] == corpus_fingerprint(texts), name
    pe = json.loads((out / "synthetic" / "pe-eps10" / "pe.json").read_text())
    assert pe["guarantee"]["epsilon"] == pytest.approx(10, rel=1e-3)
    assert 0 < len(load_corpus(str(out / "synthetic" / "pe-eps10"))) <= quick["pe/pe-eps10"]["num_samples"]
    direct = records["dp-direct-eps10"]
    assert direct["model_privacy"]["epsilon"] == pytest.approx(10, rel=1e-3) and direct["tuning"] == "lora"
    assert records["no-training"]["steps"] == 0 and records["train-on-real"]["model_privacy"] is None

    assert {p.name for p in out.iterdir()} <= set(demo.WRITES)  # what --overwrite removes, all of it
    assert (out / "report" / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mauve = {p.stem: json.loads(p.read_text()) for p in (out / "mauve").glob("*.json")}
    assert set(mauve) == {g.name for g in study.generators} | {"pe-eps10"}
    scores = {c: m["candidate_vs_reference"]["mean"] for c, m in mauve.items()}
    (ceiling,) = [m["reference_disjoint"]["mean"] for m in mauve.values() if "reference_disjoint" in m]
    scores["real"] = ceiling  # the real corpus's disjoint halves, computed once
    assert all(0 <= m <= 1 for m in scores.values())
    corpus_of = {name: key.split("/")[1] for name, key in study.report.rows.items()}
    assert [r["mauve"] for r in rows] == [  # none for no training and for the DP model (not DP data)
        None if name in ("no-training", "dp-direct-eps10") else scores[corpus_of[name]] for name in folders
    ]
    checked = json.loads((out / "report" / "findings.json").read_text())
    assert len(checked) == 4 and all(isinstance(f["holds"], bool) and f["evidence"] for f in checked)
    printed = rerun.stdout
    assert (out / "report" / "report.txt").read_text() in printed  # the demo prints the report job's output
    assert "train-on-real" in printed and "MAUVE" in printed and "Wilson 95% interval" in printed
    assert "syn (A) vs dp-syn-eps10 (B): exact_match" in printed and "McNemar" in printed  # paired difference
    assert printed.count("hold") >= 4  # every finding printed with its verdict (holds, does not hold)

    # The shipped base model, in place: the wheel's copy (its digests checked before anything ran)
    assert not (out / "base-model").exists()
    assert all(Path(r["base_model"]).is_relative_to(tmp_path / "install") for r in records.values())

    # The console script's rerun skipped every finished stage and left the same table.
    assert json.loads(results_before)["runs"] == rows

    # The plan's CPU model against each job's own CPU seconds (one_process_demo.py keeps them beside the
    # demo's folder): every job kind within 2x, or within a second for a kind of sub-second jobs (compare
    # takes 0.04 s in one process, 0.4 s forked: start-up, which the plan does not try to split finer)
    # (docs/study.md, "Calibration on CPU").
    from continuousbench.study.plan import calibration

    kinds = calibration(out / "study.yaml", json.loads(Path(f"{out}.job-cpu.json").read_text()))
    assert set(kinds) == {job.kind for job in expand(study, out)}
    off = {
        kind: (round(took, 2), round(guessed, 2))
        for kind, (took, guessed, _) in kinds.items()
        if not 0.5 <= took / guessed <= 2 and abs(took - guessed) > 1
    }
    assert not off, f"kinds whose measured CPU seconds are off the plan's by more than 2x: {off}"


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
    (out / "study.yaml").write_text("name: demo\n")
    (out / "notes.txt").write_text("mine")

    class Stopped(Exception):
        pass

    def stop(*args, **kwargs):
        raise Stopped

    monkeypatch.setattr(demo, "demo_study", stop)  # stop right after the old demo is cleared
    with pytest.raises(Stopped):
        demo.main(demo.DemoArguments(out=str(out), quick=True, overwrite=True))
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "runs").exists() and not (out / "study.yaml").exists()


def test_demo_recipes_parse_with_the_real_parsers():
    from continuousbench.dp.train import make_parser as generator_parser
    from continuousbench.harness.run import make_parser as evaluator_parser

    harness, model, t = evaluator_parser().parse(
        ["--config", str(demo.EVALUATOR_RECIPE), "--output_dir", "/tmp/cb-unused"]
    )
    assert model.tuning == "full" and t.max_length == 256 and 0 < harness.replay_fraction < 1
    assert harness.replay_corpus == "../base/replay.parquet"  # named by the recipe, relative to it
    args, model, config = generator_parser().parse(
        ["--config", str(demo.GENERATOR_RECIPE), "--output_dir", "/tmp/cb-unused", "--epsilon", "10"]
    )
    assert model.tuning == "lora" and config.private and config.sampling == "poisson"


def test_the_demo_is_its_study_file_and_prints_the_report_jobs_output(tmp_path, monkeypatch, capsys):
    """The demo runs the packaged study (its command line applied, written to <out>/study.yaml, which
    `continuousbench study` expands to the same jobs) and prints what the report job wrote; the table and
    the findings come from the report job's command line, not from the demo."""
    from continuousbench.study import runner
    from continuousbench.study.schema import load_study

    ran: list[list] = []

    def run_to_end(study, executor, rerun):  # each job's command instead of the job; the report's files
        executor.close()
        ran.append(list(study.jobs.values()))
        report = study.jobs.get("report/all")
        if report is not None:
            (report.out).mkdir(parents=True)
            (report.out / "results.json").write_text(json.dumps({"runs": [{"run": "syn"}]}))
            report.stdout.write_text("TABLE\nholds: finding\n")
        return {}

    monkeypatch.setattr(runner, "run_to_end", run_to_end)
    monkeypatch.setattr(demo, "_check_base_model", lambda *a: None)
    out = tmp_path / "demo"
    assert demo.cli(["--out", str(out), "--quick", "--seed", "3"]) == [{"run": "syn"}]
    assert capsys.readouterr().out.startswith("TABLE\nholds: finding\n")
    build, jobs = ran
    assert [j.name for j in build] == ["build/geminon"]
    written = expand(load_study(out / "study.yaml"), out.absolute())
    assert [j.argv for j in written] == [j.argv for j in jobs]  # `study --config <out>/study.yaml`: the same
    assert jobs[-1].name == "proxies/all" and "--evaluator" in jobs[-1].argv  # QA against the proxies
    assert jobs[-1].argv[jobs[-1].argv.index("--evaluator") + 1] == "demo"
    from continuousbench.diagnostics.proxies import make_parser as proxies_parser

    (proxies,) = proxies_parser().parse([str(a) for a in jobs[-1].argv[1:]])  # FID in the MAUVE model's space
    assert Path(proxies.model).is_dir() and Path(proxies.study) == out.absolute()
    report = jobs[-2].argv
    rows = dict(a.split("=", 1) for a in report[1 : report.index("--mauve")])
    assert list(rows) == [
        "no-training",
        "train-on-real",
        "syn",
        "dp-syn-eps100",
        "dp-syn-eps10",
        "pe-eps10",
        "dp-direct-eps10",
    ]
    assert rows["dp-direct-eps10"].endswith("runs/dp-direct/real-seed3")
    assert "--findings" in report and "dp_syn=dp-syn-eps10" in report
    mauve = report[report.index("--mauve") + 1 : report.index("--compare")]
    assert [m.split("=")[0] for m in mauve] == [
        "train-on-real",
        "syn",
        "dp-syn-eps100",
        "dp-syn-eps10",
        "pe-eps10",
    ]  # no MAUVE for a DP model
    train = next(j for j in jobs if j.name == "evaluate/demo/real-seed3").argv
    assert train[train.index("--seed") + 1] == "3" and train[train.index("--steps") + 1] == "4"  # quick


def test_the_packaged_demo_study_plans_from_any_folder(tmp_path, monkeypatch, capsys):
    from continuousbench.study import command

    monkeypatch.chdir(tmp_path)
    plan = command.cli(["--config", str(demo.STUDY), "--plan"])
    # 24 jobs: 21, the memorisation probes of syn and dp-eps10, and the proxies
    assert len(plan["jobs"]) == 24 and plan["jobs"][-2:] == ["report/all", "proxies/all"]
    assert plan["gpu_hours"] == 0
    assert not list(tmp_path.iterdir())
