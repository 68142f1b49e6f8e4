"""A study job forked from the pre-imported server (continuousbench/study/forked.py) is the job a fresh
``python -m continuousbench.cli`` would be: the same exit status, log and kept standard output; its own
folder, environment, torch threads and log for every writer (print, logging, tqdm, native code); and a
stopped study interrupts it as Ctrl-C would."""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from continuousbench.study import executors, forked

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
    if argv == ["wait"]:
        try:
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
    code = executors.execute(["3"], str(log), None, {"PROBE_VALUE": "seen", "OMP_NUM_THREADS": "1"},
                             fork=True, entry=PROBE)  # fmt: skip
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
    runner = threading.Thread(target=lambda: codes.append(
        executors.execute(["wait"], str(log), None, live=live, fork=True, entry=PROBE)))  # fmt: skip
    runner.start()
    deadline = time.monotonic() + 60
    while "native bytes" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline and runner.is_alive(), "the job never started"
        time.sleep(0.05)
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
