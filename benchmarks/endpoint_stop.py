"""How long an endpoint call takes to give up: after its first failure, and after Ctrl-C, while the other
requests wait on a server that never answers them.

A child process samples through :class:`continuousbench.llm.endpoint.EndpointGenerator` from the test
suite's fake server (``tests/fake_endpoint.py``): in ``failure`` the first request is refused (HTTP 400,
not retried) and every other one hangs; in ``ctrl-c`` every request hangs and the child gets SIGINT once
its requests are in flight. The figure is the time from the refusal (its arrival at the server) or the
signal to the child's exit. ``before`` is the module as it was at ``--before`` (read from git), ``now``
the working tree's; the variants alternate.

    python benchmarks/endpoint_stop.py --request_timeout 3 --in_flight 4 16 --repeats 2
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]

CHILD = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("endpoint_variant", sys.argv[1])
module = sys.modules["endpoint_variant"] = importlib.util.module_from_spec(spec)  # dataclasses look it up
spec.loader.exec_module(module)
gen = module.EndpointGenerator(sys.argv[2], "fake", api="completions", max_in_flight=int(sys.argv[3]),
                               request_timeout=float(sys.argv[4]))
gen.generate(["p"] * (4 * int(sys.argv[3])))
"""


def run(module: Path, scenario: str, in_flight: int, timeout: float) -> float:
    """Seconds from the refusal (or SIGINT) to the child's exit."""
    from fake_endpoint import FakeOpenAIServer

    hang = threading.Event()
    refuse = {"fail_first": 1, "fail_status": 400} if scenario == "failure" else {}
    with FakeOpenAIServer(reply=lambda body: "late" if hang.wait(600) else "", **refuse) as server:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        argv = [sys.executable, "-c", CHILD, str(module), server.url, str(in_flight), str(timeout)]
        child = subprocess.Popen(argv, env=env, stderr=subprocess.DEVNULL)
        while len(server.requests) < (1 if scenario == "failure" else in_flight):
            if child.poll() is not None:
                raise RuntimeError(f"the child exited with {child.returncode} before its requests were sent")
            time.sleep(0.01)
        start = time.monotonic()
        if scenario == "ctrl-c":
            child.send_signal(signal.SIGINT)
        child.wait(timeout=600)
        elapsed = time.monotonic() - start
        hang.set()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="978ae25", help="git revision of the module to compare with")
    parser.add_argument("--request_timeout", type=float, default=3.0)
    parser.add_argument("--in_flight", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    show = ["git", "-C", str(ROOT), "show", f"{args.before}:continuousbench/llm/endpoint.py"]
    old = subprocess.run(show, capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "endpoint_before.py"
        before.write_text(old)
        variants = {"before": before, "now": ROOT / "continuousbench" / "llm" / "endpoint.py"}
        print(f"load average {os.getloadavg()[0]:.1f}; request_timeout {args.request_timeout:g} s, 4 tries")
        print(f"{'scenario':<9} {'in flight':>9} {'before (s)':>11} {'now (s)':>8}")
        for scenario in ("failure", "ctrl-c"):
            for in_flight in args.in_flight:
                times: dict[str, list[float]] = {name: [] for name in variants}
                for _ in range(args.repeats):
                    for name, module in variants.items():  # alternated
                        times[name].append(run(module, scenario, in_flight, args.request_timeout))
                shown = [f"{min(v):.2f}-{max(v):.2f}" for v in times.values()]
                print(f"{scenario:<9} {in_flight:>9} {shown[0]:>11} {shown[1]:>8}")


if __name__ == "__main__":
    main()
