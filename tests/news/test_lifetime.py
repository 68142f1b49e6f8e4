"""A SIGKILL of ``news extract`` ends every process it started (manager, forkserver, pool, sandboxes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from newspages import event_records, write_warc

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def long_warcs(tmp_path_factory) -> Path:
    """Two WARC files of 320 pages each: a minute of extraction, far longer than the test waits."""
    folder = tmp_path_factory.mktemp("long")
    records, _ = event_records(per_event=8)
    for name in ("a", "b"):
        write_warc(
            folder / f"{name}.warc.gz",
            [dict(r, url=f"{r['url']}-{name}{k}") for k in range(10) for r in records],
        )
    return folder


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(
    "workers, started",
    [
        pytest.param(1, 2, id="one-worker"),  # the executor's manager and the task's sandbox
        # + the resource tracker, the forkserver, two workers and their sandboxes
        pytest.param(2, 6, id="pool", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_killing_the_command_ends_its_processes(long_warcs, tmp_path, workers, started):
    argv = [
        sys.executable,
        "-m",
        "continuousbench.cli",
        "news",
        "extract",
        "--warc",
        str(long_warcs / "*.warc.gz"),
        "--output",
        str(tmp_path / "out"),
        "--tasks",
        "2",
        "--workers",
        str(workers),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[psutil.Process] = []
    try:
        me = psutil.Process(command.pid)
        assert _wait(lambda: len(me.children(recursive=True)) >= started, 60), "the extraction never started"
        children = me.children(recursive=True)
        os.kill(command.pid, signal.SIGKILL)
        command.wait()

        def all_ended() -> bool:
            return not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]

        assert _wait(all_ended, 10), [" ".join(c.cmdline())[:120] for c in children if c.is_running()]
    finally:
        for process in [*children, psutil.Process(command.pid) if command.poll() is None else None]:
            if process is not None and process.is_running():
                process.kill()  # only what this test started
