"""A study job forked from the pre-imported server (continuousbench/study/forked.py) is the job a fresh
``python -m continuousbench.cli`` would be: the same exit status, log and kept standard output; its own
folder, environment, torch threads and log for every writer (print, logging, tqdm, native code); and a
stopped study interrupts it as Ctrl-C would."""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from continuousbench.study import executors, forked

# One worker runs this file's module fixtures once (make test: --dist loadgroup). Its jobs run on a fork
# server, whose start preloads torch & co. (~5 s): launches, so CI only, not the fast lane.
pytestmark = [pytest.mark.xdist_group("test_forked"), pytest.mark.slow]

PROBE = f"{Path(__file__).stem}:probe"  # tests/study is on sys.path: the forked job imports this file


@pytest.fixture(scope="module", autouse=True)
def server():
    """One fork server for the module (its start imports torch & co. once); none left running after."""
    yield
    forked.stop_server()


def probe(argv: list[str]) -> None:
    """A job that shows where it runs; ``wait`` makes it loop until it is interrupted."""
    import logging

    import numpy as np
    import torch
    from tqdm import tqdm
    from transformers.utils import logging as transformers_logging

    print(f"cwd {os.getcwd()} env {os.environ.get('PROBE_VALUE')} threads {torch.get_num_threads()}")
    print(f"argv {sys.argv[1:]} numpy draw {np.random.randint(1 << 62)}")
    transformers_logging.get_logger("transformers").warning("a transformers warning")
    logging.basicConfig(level=logging.INFO)
    logging.getLogger("probe").info("a logging line")
    for _ in tqdm(range(3), desc="a progress bar"):
        pass
    sys.stderr.flush()
    os.write(2, b"native bytes on fd 2\n")
    if argv == ["cuda"]:  # the GPU smoke test: the job's own device, CUDA untouched by the server's imports
        print(f"preload initialised CUDA: {forked.CUDA_AT_PRELOAD}")
        print(f"on {torch.cuda.get_device_name()}: {float(torch.ones(4, device='cuda').sum())}")
        raise SystemExit(0)
    if argv == ["segv"]:  # a crash in native code, after a progress bar
        import ctypes

        for _ in tqdm(range(3), desc="the last progress bar"):
            pass
        ctypes.string_at(0)
    if argv == ["wait"]:
        try:
            print("waiting for an interrupt", flush=True)
            while True:
                time.sleep(0.05)
        except KeyboardInterrupt:
            print("interrupted: work kept", file=sys.stderr)
            raise SystemExit(130) from None
    raise SystemExit(int(argv[0]))


def _without_times(text: str) -> str:
    return re.sub(r"\d+(\.\d+)?(it/s|s/it)|\d\d:\d\d", "T", text)


@pytest.mark.parametrize("argv", [["--version"], ["report", "--nope"], ["nope"], ["--help"]])
def test_a_forked_job_gives_the_status_log_and_output_of_a_child_interpreter(tmp_path, argv):
    ran = {}
    for fork in (False, True):
        log, kept = tmp_path / f"{fork}.log", tmp_path / f"{fork}.out"
        code = executors.execute(argv, str(log), str(kept), fork=fork)
        ran[fork] = (code, log.read_text(), kept.read_text() if kept.exists() else None)
    assert ran[True] == ran[False]
    assert (ran[True][0] == 0) == (ran[True][2] is not None)  # the output is kept only when it succeeded


def test_a_forked_job_has_its_own_folder_environment_threads_and_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the study's folder now, not the server's
    log, kept = tmp_path / "job.log", tmp_path / "job.out"
    code = executors.execute(
        ["3"], str(log), None, {"PROBE_VALUE": "seen", "OMP_NUM_THREADS": "1"}, fork=True, entry=PROBE
    )
    assert code == 3
    text = log.read_text()
    assert f"cwd {tmp_path} env seen threads 1" in text
    for line in ("a transformers warning", "INFO:probe:a logging line", "a progress bar", "native bytes"):
        assert line in text, line
    assert "argv ['3'] numpy draw" in text
    assert "PROBE_VALUE" not in os.environ  # the study's own environment is untouched
    assert executors.execute(["4"], str(log), str(kept), fork=True, entry=PROBE) == 4
    assert not kept.exists()  # a failed job keeps no output
    assert executors.execute(["0"], str(log), str(kept), fork=True, entry=PROBE) == 0
    assert kept.read_text().startswith(f"cwd {tmp_path} env None threads ")  # kept once it succeeded


def test_stopping_the_study_interrupts_a_forked_job_as_ctrl_c(tmp_path):
    log, live, codes = tmp_path / "job.log", set(), []
    runner = threading.Thread(
        target=lambda: codes.append(
            executors.execute(["wait"], str(log), None, live=live, fork=True, entry=PROBE)
        )
    )
    runner.start()
    _started(log, runner)  # inside its loop: an interrupt before it would end it by the signal instead
    executors.interrupt(live, grace=0)
    runner.join(30)
    assert codes == [130]
    assert log.read_text().splitlines()[-1] == "interrupted: work kept"


def test_forked_jobs_draw_their_own_unseeded_numpy_numbers(tmp_path):
    """numpy's global generator was seeded once in the server; each job reseeds it from the system's
    entropy, as a fresh interpreter would (a job that forgot a seed must not repeat another's draws)."""
    draws = set()
    for n in range(2):
        executors.execute(["0"], str(tmp_path / f"{n}.log"), None, fork=True, entry=PROBE)
        draws |= set(re.findall(r"numpy draw (\d+)", (tmp_path / f"{n}.log").read_text()))
    assert len(draws) == 2


def test_an_unknown_way_to_start_jobs_is_refused_in_one_line(monkeypatch):
    from continuousbench.errors import UserError

    monkeypatch.setenv(forked.START_ENV, "spawn")
    with pytest.raises(UserError, match="CONTINUOUSBENCH_JOB_START='spawn' is not a way to start a job"):
        executors.LocalExecutor(1)
    monkeypatch.setenv(forked.START_ENV, "subprocess")
    assert not executors.LocalExecutor(1).fork


def _started(log: Path, runner: threading.Thread) -> None:
    deadline = time.monotonic() + 60
    while "waiting for an interrupt" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline and runner.is_alive(), "the job never started"
        time.sleep(0.05)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, and the parent-death signal")
def test_a_killed_fork_server_leaves_no_job_running_and_the_study_waits_for_it(tmp_path):
    """SIGKILL of the fork server: its running job is interrupted as Ctrl-C (it keeps its work) and waited
    for before the study goes on, so no next job starts beside it. Before: the job ran on as an orphan
    and the next one started at once, despite --jobs 1."""
    log, live, codes = tmp_path / "job.log", set(), []
    runner = threading.Thread(
        target=lambda: codes.append(
            executors.execute(["wait"], str(log), None, live=live, fork=True, entry=PROBE)
        )
    )
    runner.start()
    _started(log, runner)
    (job,) = live
    os.kill(_parent(job.pid), signal.SIGKILL)  # the fork server
    runner.join(60)
    assert not runner.is_alive() and codes
    stat = Path(f"/proc/{job.pid}/stat")  # gone by the time execute returned (or a zombie its new parent
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"  # has yet to reap)
    lines = log.read_text().splitlines()
    assert lines[-2] == "interrupted: work kept", log.read_text()  # stopped as Ctrl-C stops it
    assert lines[-1].startswith("[continuousbench study] the study's fork server ended while this job ran")
    assert executors.execute(["0"], str(log), None, fork=True, entry=PROBE) == 0  # a new server serves


def test_a_job_killed_by_a_signal_says_so_last_in_its_log_with_the_python_stack(tmp_path):
    """Before: "exit status -11", and the log ended in a progress bar."""
    from continuousbench.study.graph import Job
    from continuousbench.study.runner import failure, last_words

    log = tmp_path / "job.log"
    code = executors.execute(["segv"], str(log), None, fork=True, entry=PROBE)
    assert code == -signal.SIGSEGV
    text = log.read_text()
    assert "Fatal Python error: Segmentation fault" in text and "in probe" in text  # faulthandler's stack
    last = text.splitlines()[-1]
    assert last.startswith("[continuousbench study] killed by SIGSEGV: a crash in native code")
    assert oct(log.stat().st_mode & 0o777) == "0o600"  # a job's stderr may hold what it read
    job = Job(name="j", kind="j", argv=("x",), out=tmp_path, done=tmp_path / "done", log=log)
    assert failure(code, job).startswith("killed by SIGSEGV: a crash in native code")
    ends = last_words(log)
    assert ends.startswith('; it ends: "') and "progress bar" not in ends and "%|" not in ends


def test_a_job_whose_recipe_sets_env_is_started_as_a_fresh_interpreter(tmp_path, monkeypatch):
    """The server imported the libraries before a recipe's ``env:`` could reach them (HF_HUB_OFFLINE,
    OMP_NUM_THREADS, ... read at import); before, a forked job silently ignored it."""
    from continuousbench.study.graph import Job

    forks = []
    monkeypatch.setattr(executors, "execute", lambda *args: forks.append(args[5]) or 0)
    executor = executors.LocalExecutor(1, fork=True)
    for recipe in ({}, {"env": {"HF_HUB_OFFLINE": "1"}}):
        job = Job(
            name="j",
            kind="report",
            argv=("x",),
            out=tmp_path,
            done=tmp_path / "d",
            gpus=0,
            recipe=recipe,
            log=tmp_path / "log",
        )
        executor._run(job, job.argv)
    executor.pool.shutdown()
    assert forks == [executor.fork, False] and executor.fork == forked.available()


def test_a_server_whose_imports_initialised_cuda_forks_no_job(tmp_path, monkeypatch):
    """A library that probes the GPU at import would leave every forked job unable to choose or use its
    GPU: each job refuses in one line. (CPU torch: a preloaded module stands in for such a library.)"""
    forked.stop_server()
    monkeypatch.setattr(forked, "PRELOAD", ["torch", "cuda_at_import"])  # tests/study/cuda_at_import.py
    path = os.pathsep.join([str(Path(__file__).parent), *filter(None, [os.environ.get("PYTHONPATH")])])
    monkeypatch.setenv("PYTHONPATH", path)  # the server's own sys.path (Python < 3.12 gives it no other)
    try:
        log = tmp_path / "job.log"
        assert executors.execute(["0"], str(log), None, fork=True, entry=PROBE) == 1
        last = log.read_text().splitlines()[-1]
        assert last.startswith("error: the study's fork server initialised CUDA while importing torch")
        assert "CONTINUOUSBENCH_JOB_START=subprocess" in last
    finally:
        forked.stop_server()


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_a_forked_job_uses_the_gpu_the_study_gave_it(tmp_path):
    """GPU smoke test: the server's imports left CUDA alone, and a forked job computes on its own GPU."""
    log = tmp_path / "job.log"
    assert not forked.CUDA_AT_PRELOAD
    code = executors.execute(["cuda"], str(log), None, {"CUDA_VISIBLE_DEVICES": "0"}, fork=True, entry=PROBE)
    text = log.read_text()
    assert code == 0, text[-2000:]
    assert "preload initialised CUDA: False" in text and ": 4.0" in text
