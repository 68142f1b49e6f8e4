"""What a local study job pays to start: a fresh interpreter vs a fork of the pre-imported server.

    python benchmarks/study_overhead.py            # 3 rounds of 3 jobs each way, then the tiny study each way
    python benchmarks/study_overhead.py --rounds 1 --no-study

A tiny study (build the ``tiny`` release, evaluate the demo base model untrained and after two steps,
compare, report: tests/study's study) is run once to give the jobs their inputs. Then, in rounds that
alternate the two ways (load on a shared machine hits both alike), each of three of its jobs runs again
on a fresh copy of that folder through :func:`continuousbench.study.executors.execute`: ``compare`` and
``report`` (cheap: most of a fresh interpreter's time is imports) and the untrained ``evaluate`` (a real
job of the demo's kind). Wall is the call's; CPU is the job's own (for a child interpreter: the parent's
``RUSAGE_CHILDREN``; for a forked job: the fork server's children's CPU, from /proc). The fork server's
one-off start (its imports) is reported apart. Last, the whole tiny study (5 jobs, one at a time) each way,
wall and CPU of the whole process tree.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "continuousbench" / "demo"
STUDY = (ROOT / "tests" / "study" / "tiny_study.yaml").read_text().replace("DEMO_FOLDER", str(DEMO))
STUDY = STUDY.replace("EXTRA_OPTIONS", "")  # tests/study's study
JOBS = {
    "compare": "compare/tiny/real-vs-none-seed0",
    "report": "report/all",
    "evaluate": "evaluate/tiny/none-seed0",
}
OUTPUTS = {"compare": "compare", "report": "report", "evaluate": "runs/tiny/none-seed0"}  # removed first
WAYS = ("subprocess", "fork")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _server_cpu() -> tuple[float, float]:
    """The fork server's own CPU (its imports) and its reaped children's (the forked jobs), in seconds."""
    from multiprocessing import forkserver

    pid = forkserver._forkserver._forkserver_pid
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, (int(fields[13]) + int(fields[14])) / ticks


def _study(folder: Path, way: str) -> tuple[float, float]:
    """The tiny study in a fresh ``python -m continuousbench.cli study``: wall and the tree's CPU."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(STUDY)
    before, start = _children_cpu(), time.perf_counter()
    argv = ["study", "--config", str(folder / "tiny.yaml"), "--out", str(folder / "out"), "--jobs", "1"]
    subprocess.run(
        [sys.executable, "-m", "continuousbench.cli", *argv],
        check=True,
        stdout=subprocess.PIPE,
        env={**os.environ, "CONTINUOUSBENCH_JOB_START": way},
    )
    return time.perf_counter() - start, _children_cpu() - before


def _job(study: Path, scratch: Path, name: str, way: str) -> tuple[float, float]:
    """One job of the study, again, on a copy of its folder without that job's outputs."""
    from continuousbench.study.executors import execute

    manifest = json.loads((study / "manifest.json").read_text())["jobs"][JOBS[name]]
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(study, scratch)
    shutil.rmtree(scratch / OUTPUTS[name])
    argv = shlex.split(manifest["command"].replace(str(study), str(scratch)))[1:]
    env = {"OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}  # as the local executor gives a CPU job
    cpu = _server_cpu()[1] if way == "fork" else _children_cpu()
    start = time.perf_counter()
    code = execute(argv, str(scratch / "job.log"), None, env, fork=way == "fork")
    wall = time.perf_counter() - start
    if code:
        raise SystemExit(f"{name} exited with {code}; see {scratch / 'job.log'}")
    return wall, (_server_cpu()[1] if way == "fork" else _children_cpu()) - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-study", action="store_true", help="Skip the whole tiny study each way.")
    args = parser.parse_args()
    from continuousbench.study import forked

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"setting up: the tiny study ({_study(folder / 'inputs', 'subprocess')[0]:.1f} s)", flush=True)
        study = folder / "inputs" / "out"
        start = time.perf_counter()
        forked.ForkedJob(["--version"], str(folder / "warm.log"), None, dict(os.environ)).communicate()
        started, server = time.perf_counter() - start, _server_cpu()[0]
        print(f"fork server start (imports once per study): {started:.1f} s wall, {server:.1f} s CPU")
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(args.rounds):
            for name in JOBS:
                for way in WAYS if round_ % 2 == 0 else reversed(WAYS):
                    times.setdefault((name, way), []).append(_job(study, folder / "scratch", name, way))
        forked.stop_server()
        print(f"\nper job, medians of {args.rounds} (wall / CPU, seconds)")
        print(f"{'job':<10} {'subprocess':>16} {'fork':>16} {'saved':>16}")
        for name in JOBS:
            old, new = ([statistics.median(x[i] for x in times[name, way]) for i in (0, 1)] for way in WAYS)
            saved = [o - n for o, n in zip(old, new, strict=True)]
            print(f"{name:<10} " + " ".join(f"{w:7.2f} / {c:6.2f}" for w, c in (old, new, saved)))
        if not args.no_study:
            print("\nthe tiny study (5 jobs, one at a time; whole process tree, server start included)")
            for way in ("fork", "subprocess"):
                wall, cpu = _study(folder / way, way)
                print(f"{way:<10} {wall:7.1f} s wall {cpu:7.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
