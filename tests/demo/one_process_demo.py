"""``continuousbench demo`` with its jobs run one after another in this process (the quick demo test).

    <venv>/bin/python tests/demo/one_process_demo.py --out <folder> --quick --threads 1

The demo's arguments are passed on unchanged; only the study's local executor is replaced: each job calls
``continuousbench.cli.main(argv)`` here instead of in a child Python, which would import torch,
transformers and trl again (~7 s of CPU each: most of a quick job's cost). The child-process
executor itself is tested by tests/study and by the test's rerun through the installed console script.
Run by a wheel's venv, it imports the wheel's ``continuousbench`` (this folder is on ``sys.path``, the
source tree is not) and prints where it was imported from, last. Each job's CPU seconds (this process's,
one torch thread) are kept in ``<out>.job-cpu.json`` beside the demo's folder: the plan's CPU estimates
are checked against them (tests/demo/test_demo.py), and the top-level modules it imported are listed in
``<out>.modules.json``: each must come with what `make demo` installs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

os.environ.update(OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")  # what the local executor gives a job


class OneProcessExecutor:
    """The local executor's interface; ``start`` runs the job to its end before returning."""

    name = "one-process"
    parallel = 1  # the runner starts one job, waits for it, records it, then starts the next

    def __init__(self, parallel: int | None = None):
        pass

    def start(self, job, argv: Sequence[str]) -> tuple[Future, str]:
        from continuousbench.cli import main

        future: Future = Future()
        job.log.parent.mkdir(parents=True, exist_ok=True)
        cpu = time.process_time()
        with open(job.log, "a", encoding="utf-8") as log:
            log.write(f"$ continuousbench {' '.join(argv)}\n")
            code, kept = 0, io.StringIO()  # kept: the standard output a job keeps (compare's JSON)
            with contextlib.redirect_stdout(kept if job.stdout else log), contextlib.redirect_stderr(log):
                try:
                    main(list(argv))
                except SystemExit as stop:
                    code = stop.code if isinstance(stop.code, int) else 1
                except Exception:  # a crash: the job fails with its traceback in its log, as a child's would
                    traceback.print_exc()
                    code = 1
        if job.stdout and code == 0:  # as the local executor's child writes it: once it succeeded
            Path(job.stdout).parent.mkdir(parents=True, exist_ok=True)
            Path(job.stdout).write_text(kept.getvalue(), encoding="utf-8")
        times = Path(f"{job.log.parents[1]}.job-cpu.json")  # <out>/logs/<job>.log -> <out>.job-cpu.json
        spent = json.loads(times.read_text()) if times.is_file() else {}
        times.write_text(json.dumps({**spent, job.name: round(time.process_time() - cpu, 2)}, indent=1))
        future.set_result(code)
        return future, f"pid-{os.getpid()}"

    def close(self) -> None:
        pass


def main(argv: list[str]) -> None:
    import torch
    from datasets.utils import logging as datasets_logging
    from transformers.utils import logging as transformers_logging

    import continuousbench
    from continuousbench.demo import demo
    from continuousbench.study import executors

    torch.set_num_threads(1)
    # These libraries bind their log handler to sys.stderr on first use: bind it to the real one now, not
    # to a job's log (closed once the job ends).
    datasets_logging.get_verbosity(), transformers_logging.get_verbosity()
    executors.LocalExecutor = OneProcessExecutor  # run_demo imports it by name when it starts
    demo.cli(argv)
    out = Path(argv[argv.index("--out") + 1])  # the modules the demo imported: `make demo` installs them
    Path(f"{out}.modules.json").write_text(json.dumps(sorted({m.partition(".")[0] for m in sys.modules})))
    print(continuousbench.__file__)


if __name__ == "__main__":
    main(sys.argv[1:])
