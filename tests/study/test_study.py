"""``continuousbench study`` in miniature on CPU: a tiny study (build a tiny release, score the shipped
demo base model untrained and after two steps on the real corpus, report, compare) runs to the same
results table on local processes, a local two-CPU Ray cluster and the one-machine Slurm stand-in; a
killed study resumes; a failing job is named with its log; ``--plan`` of a paper study runs nothing."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_slurm import FakeSlurm

from continuousbench.files import read_json, sha256_file
from continuousbench.study import command

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_study")

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "continuousbench" / "demo"
TINY = (Path(__file__).parent / "tiny_study.yaml").read_text().replace("DEMO_FOLDER", str(DEMO))
# the build job without closed-book screening (tests/geminon checks it): 3/4 of a tiny build's CPU time
SCREENED = "options: {size: tiny, quarter: 2026q1, seed: 0}"
assert SCREENED in TINY
TINY = TINY.replace(SCREENED, SCREENED[:-1] + ", closed_book_models: none}")
METRICS = ("qa_public/exact_match", "qa_public/contains", "qa_singleton/exact_match", "steps", "seed")


def _study(folder: Path, extra: str = "", release: Path | None = None) -> Path:
    """The tiny study in ``folder``; with ``release``, on that built release instead of building one (the
    local study's: a build is a third of a study's time, and the local and Slurm studies run theirs)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = TINY.replace("EXTRA_OPTIONS", extra)
    if release is not None:
        build = next(line for line in text.splitlines() if line.startswith("build:"))
        text = text.replace(build, f"release: {release}")
    (folder / "tiny.yaml").write_text(text)
    return folder / "tiny.yaml"


def _release(out: Path) -> Path:
    return out / "releases" / "geminon-tiny-2026q1"


def _table(out: Path) -> list[dict]:
    """The report's rows, without what names the machine or the folder."""
    rows = read_json(out / "report" / "results.json")["runs"]
    return [{"run": r["run"], **{m: r[m] for m in METRICS}} for r in rows]


@pytest.fixture(scope="module")
def local_study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("local")
    command.cli(["--config", str(_study(folder)), "--out", str(folder / "out"), "--jobs", "2"])
    return folder / "out"


@pytest.mark.slow
def test_local_study_runs_every_job_and_records_it(local_study):
    rows = _table(local_study)
    assert [r["run"] for r in rows] == ["none-seed0", "real-seed0"]
    assert rows[0]["steps"] == 0 and rows[1]["steps"] == 2
    manifest = read_json(local_study / "manifest.json")["jobs"]
    assert set(manifest) == {
        "build/geminon",
        "evaluate/tiny/none-seed0",
        "evaluate/tiny/real-seed0",
        "report/all",
        "compare/tiny/real-vs-none-seed0",
    }
    for name, entry in manifest.items():
        assert entry["status"] == "done" and entry["executor"] == "local" and entry["wall_s"] > 0, name
        assert entry["command"].startswith("continuousbench ") and Path(entry["log"]).is_file()
    assert manifest["evaluate/tiny/real-seed0"]["inputs"]  # the recipe's and the release's digests
    paired = json.loads((local_study / "compare" / "tiny-real-vs-none-seed0.json").read_text())
    assert "parts" in paired
    printed = (local_study / "report" / "report.txt").read_text()  # the report job's table, kept
    assert "real-seed0" in printed and "Wilson 95% interval" in printed
    assert "real-seed0 (A) vs none-seed0 (B): exact_match" in printed  # the comparison, under the table
    # a rerun needs --resume; with it, every job is finished already and nothing runs again
    with pytest.raises(SystemExit):
        command.cli(["--config", str(local_study.parent / "tiny.yaml"), "--out", str(local_study)])
    before = (local_study / "report" / "results.json").stat().st_mtime_ns
    command.cli(["--config", str(local_study.parent / "tiny.yaml"), "--out", str(local_study), "--resume"])
    assert (local_study / "report" / "results.json").stat().st_mtime_ns == before


@pytest.mark.slow
def test_ray_gives_the_local_table(local_study, tmp_path):
    study = _study(tmp_path, release=_release(local_study))
    command.cli(
        ["--config", str(study), "--out", str(tmp_path / "out"), "--executor", "ray", "--ray_cpus", "2"]
    )
    assert _table(tmp_path / "out") == _table(local_study)
    manifest = read_json(tmp_path / "out" / "manifest.json")["jobs"]
    assert {e["executor"] for e in manifest.values()} == {"ray"}


@pytest.mark.slow
def test_slurm_stand_in_gives_the_local_table_and_refuses_a_rerun_while_queued(
    local_study, tmp_path, monkeypatch
):
    cluster = FakeSlurm(tmp_path / "slurm")
    monkeypatch.setenv("PATH", cluster.path)
    monkeypatch.setenv("FAKE_SLURM_QUEUE", str(cluster.queue))
    argv = [
        "--config",
        str(_study(tmp_path)),
        "--out",
        str(tmp_path / "out"),
        "--executor",
        "slurm",
        "--partition",
        "cpu",
        "--gpus_per_job",
        "0",
    ]
    queued = command.cli(argv)["queued"]
    assert len(queued) == 5
    with pytest.raises(SystemExit) as refused:  # the jobs are still in squeue: no second copy
        command.cli([*argv, "--resume"])
    assert refused.value.code == 2
    jobs = cluster.run()  # checks every afterok dependency ran first
    assert "afterok:" in " ".join(j["dependency"] for j in jobs)
    assert command.cli([*argv, "--resume"])["queued"] == {}  # all done: nothing queued again
    assert _table(tmp_path / "out") == _table(local_study)


@pytest.mark.slow
def test_a_failing_job_is_named_with_its_log_and_fails_its_dependants(tmp_path, capsys):
    # parses (so --plan passes it: an option's own mistakes are refused before anything runs), fails when run
    study = _study(tmp_path, extra=f", replay_corpus: {tmp_path / 'nope.parquet'}")
    with pytest.raises(SystemExit) as failed:
        command.cli(["--config", str(study), "--out", str(tmp_path / "out")])
    assert failed.value.code == 2
    out = capsys.readouterr()
    log = tmp_path / "out" / "logs" / "evaluate--tiny--real-seed0.log"
    assert f"evaluate/tiny/real-seed0 FAILED (exit status 2): see its log {log}" in out.out
    assert "nope.parquet" in log.read_text().splitlines()[-1]
    assert "report/all not run: it needs evaluate/tiny/" in out.out
    assert "jobs failed" in out.err and "rerun with --resume" in out.err
    manifest = read_json(tmp_path / "out" / "manifest.json")["jobs"]
    assert manifest["build/geminon"]["status"] == "done"
    assert manifest["report/all"]["status"] == "failed"


@pytest.mark.slow
def test_a_killed_study_resumes_its_stopped_job_through_the_jobs_own_resume(local_study, tmp_path):
    """Killed (the whole process group, as Ctrl-C would) while the second evaluation trains; --resume runs
    what never finished, the stopped evaluation with ``evaluate --resume``, to the same table, and not the
    finished first evaluation. (On the local study's release: its build is the local test's to check.)"""
    study, out = _study(tmp_path, release=_release(local_study)), tmp_path / "out"
    argv = [
        sys.executable,
        "-m",
        "continuousbench.cli",
        "study",
        "--config",
        str(study),
        "--out",
        str(out),
        "--jobs",
        "1",
    ]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    started = subprocess.Popen(argv, start_new_session=True, **quiet)
    work = out / "runs" / "tiny" / "real-seed0" / ".evaluate-work"
    deadline = time.monotonic() + 120
    while not work.is_dir() and time.monotonic() < deadline and started.poll() is None:
        time.sleep(0.2)
    os.killpg(started.pid, signal.SIGKILL)
    started.wait()
    assert work.is_dir(), "the evaluation never started"
    done = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "evaluate/tiny/real-seed0 started (resuming)" in done.stdout
    assert "Wilson 95% interval" in done.stdout  # a finished study prints its report
    assert "evaluate/tiny/none-seed0" not in done.stdout.split("to run")[1]  # finished already: not run again
    manifest = read_json(out / "manifest.json")["jobs"]
    assert manifest["evaluate/tiny/real-seed0"]["command"].endswith("--resume")
    assert _table(out) == _table(local_study)


def test_plan_lists_every_job_of_fig3_priced_on_the_recipes_gpu_and_runs_nothing(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTINUOUSBENCH_HUB_REPO", "org/releases")  # where its release comes from
    fig3 = str(ROOT / "recipes" / "paper" / "fig3-geminon-1b.yaml")
    plan = command.cli(["--config", fig3, "--plan"])
    jobs = set(plan["jobs"])
    for gen in ("syn", "dp-syn-eps100", "dp-syn-eps10"):
        assert {f"train-generator/{gen}", f"synthesize/{gen}", f"evaluate/1b-full/{gen}-seed0"} <= jobs
    assert {"evaluate/1b-full/none-seed0", "evaluate/1b-full/real-seed0", "report/all", "proxies/all"} <= jobs
    assert len(jobs) == 16  # docs/study.md says so
    text = capsys.readouterr().out
    assert "priced on one NVIDIA A100 80GB per GPU job" in text and "6·N·tokens (full)" in text
    assert f"total: {plan['gpu_hours']:.1f} GPU-hours on NVIDIA A100 80GB" in text
    # synthesis by its decode steps: 6,250 batches of 32 x 256 steps at eager generate's floor measured on
    # an H200 (before: 0.06 GPU-hours of FLOPs on an H100); the whole study well above the 3.6 GPU-hours
    # of FLOPs at 45% MFU alone (docs/study.md: 113.0 with the build, the fixture names no build)
    assert re.search(r"synthesize/syn .* 24\.49 ", text) and 80 < plan["gpu_hours"] < 150
    assert plan["wall_hours"][8] < plan["wall_hours"][1] and plan["wall_hours"][1] >= plan["gpu_hours"]
    assert "wall-clock:" in text and "disk:" in text and plan["disk_bytes"] > 5e9
    h200 = command.cli(["--config", fig3, "--plan", "--gpu", "h200"])
    assert h200["gpu_hours"] < plan["gpu_hours"]
    with pytest.raises(SystemExit):
        command.cli(["--config", fig3, "--plan", "--gpu", "v100"])
    assert "--gpu v100 is not in the table; use one of a100-40gb, a100-80gb" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "recipes" / "paper").glob("*.yaml")))
def test_every_paper_study_expands_with_known_model_sizes(name):
    from continuousbench.study import costs
    from continuousbench.study.check import check_jobs
    from continuousbench.study.graph import expand
    from continuousbench.study.plan import price
    from continuousbench.study.schema import load_study

    study = load_study(ROOT / "recipes" / "paper" / name)
    jobs = expand(study, Path("/tmp/plan"))
    priced = price(
        jobs, study.parameters, costs.GPUS["a100-80gb"], costs.preset_rows("geminon", "small"), "geminon"
    )
    assert jobs and all(p.hours is not None for p in priced), [p.job.name for p in priced if p.hours is None]
    for job in jobs:  # every recipe a job names exists
        assert all(Path(p).is_file() for p in job.inputs), job.name
    check_jobs(jobs, name)  # and every job's command line parses, recipe included


def test_a_local_pool_starts_no_more_jobs_than_it_runs(tmp_path):
    """Jobs waiting for a free worker are not "running": their wall time would count the wait."""
    from concurrent.futures import ThreadPoolExecutor

    from continuousbench.study.graph import Job
    from continuousbench.study.runner import Study, run_jobs

    class Counting:
        name, parallel, peak, live = "counting", 2, 0, 0

        def __init__(self):
            self.pool = ThreadPoolExecutor(8)  # would run all eight at once if asked to

        def _run(self, job: Job) -> int:
            self.live += 1
            self.peak = max(self.peak, self.live)
            time.sleep(0.05)
            job.done.write_text("done")
            self.live -= 1
            return 0

        def start(self, job, argv):
            return self.pool.submit(self._run, job), "thread"

    jobs = [
        Job(
            name=f"j/{i}",
            kind="j",
            argv=("x",),
            out=tmp_path,
            done=tmp_path / f"{i}.done",
            log=tmp_path / f"{i}.log",
        )
        for i in range(8)
    ]
    executor = Counting()
    assert set(run_jobs(Study(jobs, tmp_path), executor).values()) == {"done"}
    assert executor.peak == 2


def test_plan_prices_a_release_not_built_yet_as_its_build_job_and_a_run_refuses_it(
    tmp_path, monkeypatch, capsys
):
    """Before: --plan refused ("release ... not found"), so a study could not be priced before its release
    existed, although building it is part of what the plan is for."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CONTINUOUSBENCH_HUB_REPO", raising=False)
    fig3 = str(ROOT / "recipes" / "paper" / "fig3-geminon-1b.yaml")
    plan = command.cli(["--config", fig3, "--plan"])
    assert plan["jobs"][0] == "build/geminon-small-2026q1" and len(plan["jobs"]) == 17
    printed = capsys.readouterr().out
    assert "release geminon-small-2026q1 is not built yet: planned as its build job" in printed
    with pytest.raises(SystemExit):
        command.cli(["--config", fig3, "--out", str(tmp_path / "out")])
    assert "release geminon-small-2026q1 not found under" in capsys.readouterr().err


def test_plan_of_a_cpu_study_gives_cpu_hours_and_whole_normalised_paths(tmp_path, monkeypatch, capsys):
    """A CPU study's plan: CPU-hours beside its 0 GPU-hours (the model's size read from its folder), and
    the model's path normalised, whole (before: "0.0 GPU-hours" alone, the path as given and cut)."""
    monkeypatch.chdir(tmp_path)
    text = TINY.replace(f"model: {DEMO / 'base'}", f"model: {DEMO}/../demo/base").replace("EXTRA_OPTIONS", "")
    (tmp_path / "cpu.yaml").write_text(text + "gpus: {evaluate: 0}\n")
    plan = command.cli(["--config", str(tmp_path / "cpu.yaml"), "--plan"])
    out = capsys.readouterr().out
    total = re.search(r"total: 0\.0 GPU-hours on NVIDIA A100 80GB; ([0-9.e-]+) CPU-hours", out)
    assert plan["gpu_hours"] == 0 and total and float(total.group(1)) > 0, out[-800:]
    assert f" {DEMO / 'base'} " in out and "../demo" not in out and "…" not in out


def _finished(tmp_path: Path, recipe_text: str = "steps: 2\n"):
    """A study of one finished job (recipe, done marker, manifest) as a run leaves it."""
    from continuousbench.study.graph import Job
    from continuousbench.study.runner import Study, _line

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(recipe_text)
    job = Job(
        name="evaluate/e/real-seed0",
        kind="evaluate",
        argv=("evaluate", "--config", str(recipe), "--steps", "2"),
        out=tmp_path / "run",
        done=tmp_path / "run" / "results.json",
        inputs=(str(recipe),),
        log=tmp_path / "log",
    )
    job.out.mkdir()
    job.done.write_text("{}")
    state = Study([job], tmp_path)
    state.record(job, command=_line(job.argv), inputs={str(recipe): sha256_file(recipe)}, status="done")
    return job, recipe


def test_resume_after_a_recipe_changed_is_refused_naming_the_file(tmp_path):
    """Before: "all jobs done", with runs made from the old recipe."""
    from continuousbench.study.runner import Study

    job, recipe = _finished(tmp_path)
    Study([job], tmp_path).check(resume=True)  # unchanged: resumes
    recipe.write_text("steps: 3\n")
    with pytest.raises(ValueError, match=f"{recipe} changed since job evaluate/e/real-seed0 ran with it"):
        Study([job], tmp_path).check(resume=True)


def test_resume_after_a_corpus_was_edited_is_refused_naming_it_and_what_to_remove(tmp_path):
    """Before: "all jobs done", with runs of the old corpus (only a recipe's edit was noticed)."""
    from dataclasses import replace

    from continuousbench.study.graph import Job
    from continuousbench.study.runner import Study, _inputs, _line

    job, _ = _finished(tmp_path)
    corpus = tmp_path / "mine.jsonl"
    corpus.write_text('{"text": "a"}\n')
    job = replace(job, inputs=(*job.inputs, str(corpus)))
    report = Job(
        name="report/all",
        kind="report",
        argv=("report",),
        out=tmp_path / "report",
        done=tmp_path / "report" / "done",
        after=(job.name,),
        log=tmp_path / "r.log",
    )
    report.out.mkdir()
    report.done.write_text("table")
    state = Study([job, report], tmp_path)
    for j in (job, report):
        state.record(j, command=_line(j.argv), inputs=_inputs(j, state.jobs), status="done")
    Study([job, report], tmp_path).check(resume=True)  # unchanged: resumes
    corpus.write_text('{"text": "b"}\n')
    with pytest.raises(ValueError) as err:
        Study([job, report], tmp_path).check(resume=True)
    message = str(err.value)
    assert message.startswith(f"{corpus} changed since job evaluate/e/real-seed0 ran with it (sha256 ")
    assert "remove run, report to run it and what was made from it again" in message


def test_a_job_that_runs_again_refuses_the_finished_jobs_made_from_its_old_output(tmp_path):
    """Its dependants would otherwise be skipped, finished, with a table of the runs it replaces."""
    from continuousbench.study.graph import Job
    from continuousbench.study.runner import Study

    job, _ = _finished(tmp_path)
    report = Job(
        name="report/all",
        kind="report",
        argv=("report",),
        out=tmp_path / "report",
        done=tmp_path / "report.txt",
        after=(job.name,),
        log=tmp_path / "r.log",
    )
    report.done.write_text("table")
    job.done.unlink()  # removed to run it again
    with pytest.raises(ValueError, match="evaluate/e/real-seed0 will run again .* but report/all, made from"):
        Study([job, report], tmp_path).check(resume=True)
    report.done.unlink()
    Study([job, report], tmp_path).check(resume=True)


def test_a_changed_option_is_refused_saying_what_changed(tmp_path):
    from dataclasses import replace

    from continuousbench.study.runner import Study

    job, _ = _finished(tmp_path)
    changed = replace(job, argv=(*job.argv[:-1], "3", "--bf16", "true"))
    with pytest.raises(ValueError, match="--steps: 2 -> 3; --bf16: \\(not given\\) -> true"):
        Study([changed], tmp_path).check(resume=True)


@pytest.mark.parametrize(
    "given, minutes",
    [("90", 90), ("30:30", 31), ("1:30:00", 90), ("2-00", 2880), ("1-01:30", 1530), ("24:00:00", 1440)],
)
def test_time_means_the_same_for_study_and_news(given, minutes):
    """``--time`` is read as sbatch reads it, for both: study passes minutes to submitit, news HH:MM:SS."""
    from continuousbench.news.executors import _hms
    from continuousbench.news.slurm_options import slurm_minutes

    assert slurm_minutes(given) == minutes
    assert slurm_minutes(_hms(given)) == minutes


def _children(pid: int) -> list[int]:
    """The processes descending from ``pid`` (Linux /proc): a forked job is the fork server's child."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except OSError:  # ended meanwhile
            continue
    found = [child for child, parent in parents.items() if parent == pid]
    for child in found:  # grows while it is read: children's children
        found += [c for c, parent in parents.items() if parent == child]
    return found


@pytest.mark.slow
def test_sigterm_stops_the_study_like_ctrl_c_leaving_no_orphan(tmp_path):
    """SIGTERM to the study alone (a scheduler, `kill`): its running job (a `small` build, minutes long)
    is interrupted and waited for, and recorded as stopped, resumable; before, the study died and its
    job ran on as an orphan."""
    study = tmp_path / "s.yaml"
    study.write_text("name: s\nbuild: {track: geminon, options: {size: small, closed_book_models: none}}\n")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "continuousbench.cli", "study", "--config", str(study), "--out", str(out)]
    started = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    jobs: list[int] = []
    try:
        deadline = time.monotonic() + 180
        while not list((out / "releases" / ".work").glob("*/settings.json")):  # the build has begun
            if started.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the build never started: {started.communicate(timeout=5)[1][-2000:]}")
            time.sleep(0.1)
        jobs = _children(started.pid)
        assert jobs
        started.send_signal(signal.SIGTERM)
        _, err = started.communicate(timeout=180)
        assert started.returncode == 130, err[-2000:]
        assert err.strip().splitlines()[-1].startswith("interrupted: "), err[-2000:]
        for job in jobs:
            with pytest.raises(ProcessLookupError):  # the job ended with the study
                os.kill(job, 0)
    finally:
        for pid in [started.pid, *jobs]:  # whatever a failure left running
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        started.wait()
    assert read_json(out / "manifest.json")["jobs"]["build/geminon"]["status"] == "stopped"
    assert "interrupted" in (out / "logs" / "build--geminon.log").read_text()  # stopped as Ctrl-C stops it
