"""``continuousbench study`` in miniature on CPU: a tiny study (build a tiny release, score the shipped
demo base model untrained and after two steps on the real corpus, report, compare) runs to the same
results table on local processes, a local two-CPU Ray cluster and the one-machine Slurm stand-in; a
killed study resumes; a failing job is named with its log; ``--plan`` of a paper study runs nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_slurm import FakeSlurm

from continuousbench.files import read_json
from continuousbench.study import command

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "continuousbench" / "demo"
TINY = f"""name: tiny
build: {{track: geminon, options: {{size: tiny, quarter: 2026q1, seed: 0}}}}
evaluators:
  - name: tiny
    config: {DEMO / "configs" / "geminon-tiny-demo.yaml"}
    corpora: [none, real]
    options: {{model: {DEMO / "base"}, steps: 2, eval_steps: 2, save_steps: 2, qa_eval_limit: 8,
              qa_test_limit: 8{{extra}}}}
compare: [[real, none]]
"""
METRICS = ("qa_public/exact_match", "qa_public/contains", "qa_singleton/exact_match", "steps", "seed")


def _study(folder: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(TINY.replace("{extra}", extra))
    return folder / "tiny.yaml"


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
    assert set(manifest) == {"build/geminon", "evaluate/tiny/none-seed0", "evaluate/tiny/real-seed0",
                             "report/all", "compare/tiny/real-vs-none-seed0"}  # fmt: skip
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
    command.cli(["--config", str(_study(tmp_path)), "--out", str(tmp_path / "out"), "--executor", "ray",
                 "--ray_cpus", "2"])  # fmt: skip
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
    argv = ["--config", str(_study(tmp_path)), "--out", str(tmp_path / "out"), "--executor", "slurm",
            "--partition", "cpu", "--gpus_per_job", "0"]  # fmt: skip
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
    study = _study(tmp_path, extra=", qa_batch_size: 0")  # out of range: evaluate refuses it
    with pytest.raises(SystemExit) as failed:
        command.cli(["--config", str(study), "--out", str(tmp_path / "out")])
    assert failed.value.code == 2
    out = capsys.readouterr()
    log = tmp_path / "out" / "logs" / "evaluate--tiny--real-seed0.log"
    assert f"evaluate/tiny/real-seed0 FAILED (exit status 2): see its log {log}" in out.out
    assert "--qa_batch_size 0 is out of range" in log.read_text()
    assert "report/all not run: it needs evaluate/tiny/" in out.out
    assert "jobs failed" in out.err and "rerun with --resume" in out.err
    manifest = read_json(tmp_path / "out" / "manifest.json")["jobs"]
    assert manifest["build/geminon"]["status"] == "done"
    assert manifest["report/all"]["status"] == "failed"


@pytest.mark.slow
def test_a_killed_study_resumes_its_stopped_job_through_the_jobs_own_resume(local_study, tmp_path):
    """Killed (the whole process group, as Ctrl-C would) while an evaluation trains; --resume runs
    what never finished, the stopped evaluation with ``evaluate --resume``, to the same table."""
    study, out = _study(tmp_path), tmp_path / "out"
    argv = [sys.executable, "-m", "continuousbench.cli", "study", "--config", str(study), "--out", str(out),
            "--jobs", "1"]  # fmt: skip
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    started = subprocess.Popen(argv, start_new_session=True, **quiet)
    work = out / "runs" / "tiny" / "none-seed0" / ".evaluate-work"
    deadline = time.monotonic() + 120
    while not work.is_dir() and time.monotonic() < deadline and started.poll() is None:
        time.sleep(0.2)
    os.killpg(started.pid, signal.SIGKILL)
    started.wait()
    assert work.is_dir(), "the evaluation never started"
    done = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "evaluate/tiny/none-seed0 started (resuming)" in done.stdout
    assert "build/geminon" not in done.stdout.split("to run")[1]  # finished already: not run again
    manifest = read_json(out / "manifest.json")["jobs"]
    assert manifest["evaluate/tiny/none-seed0"]["command"].endswith("--resume")
    assert _table(out) == _table(local_study)


def test_plan_lists_every_job_of_fig3_with_gpu_hours_and_runs_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = command.cli(["--config", str(ROOT / "recipes" / "paper" / "fig3-geminon-1b.yaml"), "--plan"])
    jobs = set(plan["jobs"])
    for gen in ("syn", "dp-syn-eps100", "dp-syn-eps10"):
        assert {f"train-generator/{gen}", f"synthesize/{gen}", f"evaluate/1b-full/{gen}-seed0"} <= jobs
    assert {"evaluate/1b-full/none-seed0", "evaluate/1b-full/real-seed0", "report/all", "proxies/all"} <= jobs
    text = capsys.readouterr().out
    assert "6·N·tokens" in text and "445 TFLOP/s" in text
    # the full-parameter evaluator (the paper's GEMINON regime), 10,000 steps x 32 x 256 tokens:
    # 6 x 1e9 x 8.19e7 / 445e12 / 3600 = 0.31 GPU-hours; the LoRA generator's 4·N·T: 0.20
    assert "0.31" in text and "0.20" in text and f"total: {plan['gpu_hours']:.1f} GPU-hours" in text
    assert 3 < plan["gpu_hours"] < 4.5
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "recipes" / "paper").glob("*.yaml")))
def test_every_paper_study_expands_with_known_model_sizes(name):
    from continuousbench.study.graph import expand
    from continuousbench.study.plan import gpu_hours
    from continuousbench.study.schema import load_study

    study = load_study(ROOT / "recipes" / "paper" / name)
    jobs = expand(study, Path("/tmp/plan"))
    assert jobs and all(gpu_hours(j, study.parameters) is not None for j in jobs)
    for job in jobs:  # every recipe a job names exists
        assert all(Path(p).is_file() for p in job.inputs), job.name


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

    jobs = [Job(name=f"j/{i}", kind="j", argv=("x",), out=tmp_path, done=tmp_path / f"{i}.done",
                log=tmp_path / f"{i}.log") for i in range(8)]  # fmt: skip
    executor = Counting()
    assert set(run_jobs(Study(jobs, tmp_path), executor).values()) == {"done"}
    assert executor.peak == 2
