"""Run a study's jobs in dependency order on an executor, keeping ``manifest.json`` up to date.

A job whose done marker exists is finished and skipped; a failed job fails its dependants with one
line naming it and its log; ``--resume`` reruns only what failed or never ran, each job that was
stopped mid-way through its own command's ``--resume``.
"""

from __future__ import annotations

import os
import re
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
    stopped = out is not None and any(
        p.is_dir() and p.name.startswith(".") and p.name.endswith("-work") for p in out.iterdir()
    )
    return [*job.argv, "--resume"] if stopped else list(job.argv)


def digest(path: str | Path) -> str:
    """sha256 of a file, or of a folder's files (each one's path in it and sha256, in order); "missing"."""
    import hashlib

    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    if not path.is_dir():
        return "missing"
    files = sorted(p for p in path.rglob("*") if p.is_file())
    lines = "".join(f"{p.relative_to(path).as_posix()}\0{sha256_file(p)}\n" for p in files)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _inputs(job: Job, jobs: dict[str, Job]) -> dict[str, str]:
    """Digests of what the job reads: its recipe, a participant's corpus and statement, and its inputs'
    done markers."""
    files = [*job.inputs, *(str(jobs[a].done) for a in job.after)]
    return {f: digest(f) for f in files if Path(f).exists()}


class Study:
    """The jobs of one study under ``out`` and their manifest."""

    def __init__(self, jobs: Sequence[Job], out: Path):
        self.jobs = {job.name: job for job in jobs}
        self.out = out
        self.file = out / MANIFEST
        self.manifest: dict = read_json(self.file) if self.file.is_file() else {"jobs": {}}

    def check(self, resume: bool) -> None:
        """Refuse a second start over a study's folder (``--resume`` continues it), and a finished job
        that would no longer answer the study file's question: its recorded command differs from the
        file's, a file it read changed since (a recipe, a corpus, a statement, an input's output), or a
        job it was made from runs again. Each is one line naming what changed and what to remove."""
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
                self._check_inputs(job, entry.get("inputs", {}))
        for job in self.jobs.values():
            stale = [] if job.done.exists() else self._made_from(job.name)
            if stale:
                raise UserError(
                    f"job {job.name} will run again (no {job.done.name} in {job.out}) but {stale[0].name}, "
                    f"made from its old output, finished; {self._remove(stale)} to run them again too, or "
                    f"restore {job.out}"
                )

    def _check_inputs(self, job: Job, recorded: dict[str, str]) -> None:
        """A finished job's inputs must still be the files it ran with (their sha256 is in the manifest):
        a changed recipe or an edited corpus would leave its runs answering another question, unseen."""
        for file, before in recorded.items():
            now = digest(file)
            if now != before:
                raise UserError(
                    f"{file} changed since job {job.name} ran with it (sha256 {before[:12]} in {MANIFEST}, "
                    f"{now[:12]} now); restore it, or {self._remove([job, *self._made_from(job.name)])} to "
                    "run it and what was made from it again with the new file, or use another --out"
                )

    def _made_from(self, name: str) -> list[Job]:
        """The finished jobs that read ``name``'s output, directly or through others (the jobs are in
        the order they run: a job's inputs come before it)."""
        found: list[Job] = []
        for job in self.jobs.values():
            if job.done.exists() and (name in job.after or any(f.name in job.after for f in found)):
                found.append(job)
        return found

    def _remove(self, jobs: list[Job]) -> str:
        """``remove <the jobs' outputs>``, relative to the study folder, the first four named."""
        outs = list(dict.fromkeys(os.path.relpath(j.out, self.out) for j in jobs))
        more = f" and {len(outs) - 4} more" if len(outs) > 4 else ""
        return f"remove {', '.join(outs[:4])}{more}"

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
    changes = [
        f"{k or 'arguments'}: {old.get(k, '(not given)')} -> {new.get(k, '(not given)')}"
        for k in dict.fromkeys([*old, *new])
        if old.get(k) != new.get(k)
    ]
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
        first = next((n for n in failed if study.jobs[n].log.is_file()), failed[0])
        why = study.manifest["jobs"].get(first, {}).get("error", "failed")
        raise UserError(
            f"{len(failed)} of {len(statuses)} jobs failed ({', '.join(failed[:5])}{more}); the first, "
            f"{first}: {why}, see its log {study.jobs[first].log}{last_words(study.jobs[first].log)}; fix "
            f"the cause, then {rerun}"
        )
    return statuses


def failure(code: int | None, job: Job) -> str:
    """Why a job failed, for its progress line and the manifest: a signal by its name and likely cause,
    an exit status, or a command that ended well without writing its done marker."""
    from continuousbench.study.executors import exit_line

    if code:
        return exit_line(code) or f"exit status {code}"
    return f"no {job.done.name} written"


PROGRESS = re.compile(r"\d+%\||\d+(\.\d+)?(it/s|s/it)\]|^\[continuousbench study\]")


def last_words(log: Path, width: int = 240) -> str:
    """``; it ends: "<line>"``: the last line of a job's log that is not a progress bar (a tqdm bar
    redraws itself with carriage returns) nor the study's own note, cut to ``width``; "" if none."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - 64_000))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.rsplit("\r", 1)[-1].strip() for line in text.splitlines()]
    words = next((line for line in reversed(lines) if line and not PROGRESS.search(line)), "")
    return f'; it ends: "{words[:width]}"' if words else ""


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
                study.record(
                    job,
                    command=_line(argv),
                    inputs=_inputs(job, jobs),
                    status="running",
                    executor=executor.name,
                    executor_id=ident,
                    log=str(job.log),
                )
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
                why = failure(code, job)
                study.record(job, error=why)
                study.progress(f"{job.name} FAILED ({why}): see its log {job.log}{last_words(job.log)}")
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
        study.record(
            job,
            command=_line(argv),
            inputs=_inputs(job, study.jobs),
            status="queued",
            executor="slurm",
            executor_id=ids[job.name],
            log=str(job.log),
        )
    write_json(study.out / SLURM_JOBS, ids)
    study.progress(f"{len(ids)} jobs queued on Slurm ({', '.join(ids.values()) or 'none'})")
    return ids
