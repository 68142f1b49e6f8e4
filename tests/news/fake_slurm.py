"""A one-machine stand-in for Slurm: ``sbatch`` queues jobs, :meth:`FakeSlurm.run` runs the queue.

datatrove's Slurm executor talks to Slurm through ``sbatch`` (submit a script, read the job id),
``srun`` inside the script and ``scontrol show hostnames`` (the job's nodes); submitit (``study
--executor slurm``) submits its own scripts the same way, with ``--dependency=afterok:<id>:<id>``; our
executors ask ``squeue`` whether a stage's jobs still wait. The job scripts run the pickled pipeline for
``$SLURM_ARRAY_TASK_ID``. Here ``sbatch`` records each job (script, array size, ``--export`` and
``--dependency``, from ``#SBATCH`` lines or the command line) and prints ``Submitted batch job <id>`` as
Slurm does; ``squeue`` lists the jobs not run yet. ``run()`` is the cluster: it runs the queued jobs in
order, every array task with Slurm's environment, after checking that each job's ``afterok``
dependencies succeeded. So the scripts datatrove writes really run, and the command that queued them
is checked to finish on ``--resume`` as it would on a cluster.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

SBATCH = """#!{python}
import json, os, re, sys
from pathlib import Path

queue = Path(os.environ["FAKE_SLURM_QUEUE"])
*options, script = sys.argv[1:]
text = Path(script).read_text()
job = len(list(queue.glob("*.json"))) + 1
array = re.search(r"^#SBATCH --array=0-(\\d+)", text, re.M)
options = re.findall(r"^#SBATCH (--\\S+)", text, re.M) + options  # the command line comes last and wins
option = lambda name: next((o.split("=", 1)[1] for o in reversed(options) if o.startswith(name + "=")), "")
(queue / f"{{job:04d}}.sh").write_text(text)
record = {{"id": job, "tasks": int(array.group(1)) + 1 if array else 1, "array": bool(array),
          "export": option("--export"),
          "dependency": option("--dependency")}}
(queue / f"{{job:04d}}.json").write_text(json.dumps(record))
print(f"Submitted batch job {{job}}")
"""

SRUN = """#!{python}
import os, sys

args = sys.argv[1:]
while args and args[0].startswith("-"):  # srun's own options; these take a value (submitit: --output)
    if args.pop(0) in ("-n", "-N", "-o", "-e", "--output", "--error"):
        args.pop(0)
os.execvp(args[0], args)
"""

SQUEUE = """#!{python}
import os, sys
from pathlib import Path

queue = Path(os.environ["FAKE_SLURM_QUEUE"])
asked = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--jobs=")).split(",")
for job in asked:  # a job is pending until the cluster ran it
    if (queue / f"{{int(job):04d}}.json").is_file() and not (queue / f"{{int(job):04d}}.done").is_file():
        print(job)
"""

SCONTROL = """#!{python}
import sys

if sys.argv[1:3] == ["show", "hostnames"]:  # this one machine is the whole node list
    print("\\n".join(sys.argv[3].split(",")))
"""


class FakeSlurm:
    def __init__(self, root: Path):
        self.bin, self.queue = root / "bin", root / "queue"
        self.bin.mkdir(parents=True)
        self.queue.mkdir()
        for name, text in (("sbatch", SBATCH), ("srun", SRUN), ("squeue", SQUEUE), ("scontrol", SCONTROL)):
            (self.bin / name).write_text(text.format(python=sys.executable))
            (self.bin / name).chmod(0o755)
        self.done: dict[int, bool] = {}

    @property
    def path(self) -> str:
        """PATH with ``sbatch``/``srun`` and this Python's scripts (``launch_pickled_pipeline``)."""
        return os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), os.environ["PATH"]])

    def run(self) -> list[dict]:
        """Run every job queued since the last call, in order; returns their records (with the script)."""
        jobs = [json.loads(p.read_text()) for p in sorted(self.queue.glob("*.json"))]
        jobs = [job for job in jobs if job["id"] not in self.done]
        for job in jobs:
            job["script"] = (self.queue / f"{job['id']:04d}.sh").read_text()
        for job in jobs:
            for after in re.findall(r"\d+", job["dependency"].partition("afterok:")[2]):  # afterok:1:2
                assert self.done.get(int(after)), f"job {job['id']} ran before job {after} succeeded"
            exported = dict(item.split("=", 1) for item in job["export"].split(",") if "=" in item)
            for task in range(job["tasks"]):
                array = {"SLURM_ARRAY_JOB_ID": str(job["id"]), "SLURM_ARRAY_TASK_ID": str(task)}
                env = {
                    **os.environ,
                    **exported,
                    "PATH": self.path,
                    "SLURM_JOB_ID": str(job["id"]),
                    **(array if job["array"] else {}),  # as Slurm: only an array job's tasks have them
                    "SLURM_NODELIST": "localhost",
                    "SLURM_JOB_NODELIST": "localhost",
                    "SLURM_PROCID": "0",
                    "SLURM_NTASKS": "1",
                    "SLURM_LOCALID": "0",
                    "SLURM_NODEID": "0",
                    "SLURM_JOB_NUM_NODES": "1",
                }  # submitit's job environment reads them
                done = subprocess.run(["bash", "-c", job["script"]], env=env, capture_output=True, text=True)
                assert done.returncode == 0, f"job {job['id']} task {task} failed:\n{done.stderr[-3000:]}"
            self.done[job["id"]] = True
            (self.queue / f"{job['id']:04d}.done").touch()
        return jobs
