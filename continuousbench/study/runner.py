"""Run a study's jobs in dependency order on an executor, keeping ``manifest.json`` up to date.

A job whose done marker exists is finished and skipped; a failed job fails its dependants with one
line naming it and its log; ``--resume`` reruns only what failed or never ran, each job that was
stopped mid-way through its own command's ``--resume``.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path

from continuousbench.errors import UserError
from continuousbench.files import read_json, sha256_file, write_json
from continuousbench.study.graph import Job

MANIFEST = "manifest.json"
SLURM_JOBS = "slurm_jobs.json"  # the Slurm job ids of the last submission (news' rule: no second copy)


def command_of(job: Job) -> list[str]:
    """The job's argv, with ``--resume`` when its folder holds a command's unfinished work folder."""
    out = job.out if job.out.is_dir() else None
    stopped = out is not None and any(p.is_dir() and p.name.startswith(".") and p.name.endswith("-work")
                                      for p in out.iterdir())  # fmt: skip
    return [*job.argv, "--resume"] if stopped else list(job.argv)


def _inputs(job: Job, jobs: dict[str, Job]) -> dict[str, str]:
    """Digests of the job's recipes and of its inputs' done markers."""
    files = [*job.inputs, *(str(jobs[a].done) for a in job.after)]
    return {f: sha256_file(f) for f in files if Path(f).is_file()}


class Study:
    """The jobs of one study under ``out`` and their manifest."""

    def __init__(self, jobs: Sequence[Job], out: Path):
        self.jobs = {job.name: job for job in jobs}
        self.out = out
        self.file = out / MANIFEST
        self.manifest: dict = read_json(self.file) if self.file.is_file() else {"jobs": {}}

    def check(self, resume: bool) -> None:
        """Refuse a second start over a study's folder (``--resume`` continues it), and a finished job
        whose recorded command differs from the study file's (its output answers another question)."""
        if self.manifest["jobs"] and not resume:
            raise UserError(
                f"{self.out} holds a study already ({MANIFEST}); pass --resume to run what failed or never "
                "ran (finished jobs are kept), or choose another --out"
            )
        for name, entry in self.manifest["jobs"].items():
            job = self.jobs.get(name)
            if job is not None and job.done.exists():
                recorded = entry["command"].removesuffix(" --resume")
                if recorded != _line(job.argv):
                    raise UserError(
                        f"job {name} finished with another command than the study file gives now "
                        f"({changed_options(recorded, _line(job.argv))}); remove {job.out} to run it again, "
                        "or use another --out"
                    )
                self._check_recipes(job, entry.get("inputs", {}))

    @staticmethod
    def _check_recipes(job: Job, recorded: dict[str, str]) -> None:
        """A finished job's recipe files must still be the ones it ran with (their sha256 is in the
        manifest): a changed recipe would leave its runs answering another question, unseen."""
        for recipe in job.inputs:
            before = recorded.get(recipe)
            if before is None:
                continue
            now = sha256_file(recipe) if Path(recipe).is_file() else "missing"
            if now != before:
                raise UserError(
                    f"{recipe} changed since job {job.name} ran with it (sha256 {before[:12]} in "
                    f"{MANIFEST}, {now[:12]} now); restore it, or remove {job.out} to run the job again "
                    "with the new recipe, or use another --out"
                )

    def record(self, job: Job, **entry) -> None:
        self.manifest["jobs"].setdefault(job.name, {}).update(entry)
        write_json(self.file, self.manifest)

    def status(self, name: str) -> str:
        return self.manifest["jobs"].get(name, {}).get("status", "queued")

    def progress(self, line: str) -> None:
        counts = {s: 0 for s in ("done", "running", "queued", "failed")}
        for name, job in self.jobs.items():
            state = "done" if job.done.exists() else self.status(name)
            counts[state if state in counts else "queued"] += 1
        summary = " / ".join(f"{n} {s}" for s, n in counts.items())
        print(f"[{summary}] {line}", flush=True)


def _line(argv: Sequence[str]) -> str:
    """The command as the manifest and the logs show it (credentials redacted)."""
    from continuousbench.credentials import redact

    return redact("continuousbench " + shlex.join(argv))


def _options(line: str) -> dict[str, str]:
    """``--key value...`` of a recorded command line, each key's values joined; positionals under ''."""
    found: dict[str, list[str]] = {}
    key = ""
    for word in shlex.split(line)[2:]:
        if word.startswith("--"):
            key = word
            found.setdefault(key, [])
        else:
            found.setdefault(key, []).append(word)
    return {k: " ".join(v) or "(set)" for k, v in found.items()}


def changed_options(before: str, now: str) -> str:
    """What differs between two command lines of a job, option by option: ``--steps: 50 -> 100``."""
    old, new = _options(before), _options(now)
    changes = [f"{k or 'arguments'}: {old.get(k, '(not given)')} -> {new.get(k, '(not given)')}"
               for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]  # fmt: skip
    return "; ".join(changes) or f"was: {before}"


def run_to_end(study: Study, executor, rerun: str) -> dict[str, str]:
    """Run every unfinished job, close the executor, and fail in one line naming the failed jobs (their
    logs say why) and how to continue (``rerun``); returns each job's final status."""
    import signal
    import threading

    alone = []  # set when SIGTERM came: sent to the study alone, its jobs have not been told

    def stop(signum, frame):  # SIGTERM (a scheduler, `kill`) stops the study as Ctrl-C does
        alone.append(signum)
        raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()  # signals go to the main thread only
    previous = signal.signal(signal.SIGTERM, stop) if main else None
    try:
        statuses = run_jobs(study, executor)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM turned into the same by `stop`
        executor.stop(grace=0.0 if alone else 5.0)  # each running job interrupted as Ctrl-C would, waited for
        for name in study.jobs:
            if study.status(name) == "running" and not study.jobs[name].done.exists():
                study.record(study.jobs[name], status="stopped")
        raise
    finally:
        executor.close()
        if main:
            signal.signal(signal.SIGTERM, previous)
    failed = [name for name, status in statuses.items() if status != "done"]
    if failed:
        more = ", ..." if len(failed) > 5 else ""
        raise UserError(
            f"{len(failed)} of {len(statuses)} jobs failed ({', '.join(failed[:5])}{more}); fix the cause "
            f"named in the first failed job's log, then {rerun}"
        )
    return statuses


def run_jobs(study: Study, executor) -> dict[str, str]:
    """Run every unfinished job on a local or Ray ``executor``; returns each job's final status."""
    jobs, running, failed = study.jobs, {}, {}
    pending = [j for j in jobs.values() if not j.done.exists()]
    for job in jobs.values():
        if job.done.exists() and study.status(job.name) != "done":
            study.record(job, command=_line(job.argv), status="done")
    study.progress(f"{len(jobs) - len(pending)} jobs finished already, {len(pending)} to run")
    # A local pool starts no more than it can run: a job's wall time and "running" then mean running,
    # not waiting for a free worker (Ray queues on its own cluster, so it has no cap here).
    capacity = getattr(executor, "parallel", None) or len(jobs)
    while pending or running:
        for job in list(pending):
            if len(running) >= capacity:
                break
            broken = next((a for a in job.after if a in failed), None)
            if broken is not None:
                pending.remove(job)
                failed[job.name] = failed[broken]
                study.record(job, status="failed", error=f"needs {broken}, which failed")
                study.progress(f"{job.name} not run: it needs {broken}, which failed (log: {failed[broken]})")
            elif all(jobs[a].done.exists() for a in job.after):
                pending.remove(job)
                argv = command_of(job)
                future, ident = executor.start(job, argv)
                running[future] = (job, time.monotonic())
                study.record(job, command=_line(argv), inputs=_inputs(job, jobs), status="running",
                             executor=executor.name, executor_id=ident, log=str(job.log))  # fmt: skip
                study.progress(f"{job.name} started{' (resuming)' if argv[-1] == '--resume' else ''}")
        if not running:
            for job in pending:  # inputs that no job makes: a mistake in the graph
                study.record(job, status="failed", error="its inputs never appeared")
                failed[job.name] = str(job.log)
            break
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            job, start = running.pop(future)
            error = future.exception()
            code = 1 if error is not None else future.result()
            wall = round(time.monotonic() - start, 1)
            ok = code == 0 and job.done.exists()
            study.record(job, status="done" if ok else "failed", wall_s=wall, exit_status=code)
            if ok:
                study.progress(f"{job.name} done in {wall:.0f} s")
            else:
                failed[job.name] = str(job.log)
                why = f"exit status {code}" if code else f"no {job.done.name} written"
                study.progress(f"{job.name} FAILED ({why}): see its log {job.log}")
    return {name: study.status(name) for name in jobs}


def submit_slurm(study: Study, executor) -> dict[str, str]:
    """Queue every unfinished job on Slurm, each after its unfinished inputs; returns their job ids.

    A second submission while the last one is still queued or running would run every job twice:
    refused, as ``news --executor slurm`` does."""
    from continuousbench.news.executors import check_none_queued

    check_none_queued(study.out, SLURM_JOBS, what="this study")
    ids: dict[str, str] = {}
    for job in study.jobs.values():
        if job.done.exists():
            study.record(job, command=_line(job.argv), status="done")
            continue
        if study.manifest["jobs"].get(job.name, {}).get("status") in ("queued", "running"):
            study.record(job, status="failed")
            study.progress(f"{job.name} FAILED on Slurm: see its log {job.log}")
        argv = command_of(job)
        ids[job.name] = executor.submit(job, argv, [ids[a] for a in job.after if a in ids])
        study.record(job, command=_line(argv), inputs=_inputs(job, study.jobs), status="queued",
                     executor="slurm", executor_id=ids[job.name], log=str(job.log))  # fmt: skip
    write_json(study.out / SLURM_JOBS, ids)
    study.progress(f"{len(ids)} jobs queued on Slurm ({', '.join(ids.values()) or 'none'})")
    return ids
