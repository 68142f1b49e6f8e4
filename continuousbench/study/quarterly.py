"""``continuousbench release --quarter 2027q1``: the quarter's releases, gated, reported, then published.

    continuousbench release --quarter 2027q1 --tracks geminon --models google/gemma-3-1b-pt --plan
    continuousbench release --quarter 2027q1 --tracks geminon news --warc 'cc-news/2027/0[1-3]/*.warc.gz' \\
        --llm endpoint:http://localhost:8000/v1#google/gemma-3-27b-it --models google/gemma-3-1b-pt \\
        --publish my-org/continuousbench
    continuousbench release --quarter 2027q1 --size tiny --publish ./rehearsal   # a local git repository

The publishing target is checked first (the Hub answers and the token can write there; a local folder is
a git repository or can become one), before anything is built. Every track is then built (a release
already under the root is kept: a rerun resumes): a Geminon world avoids every name an earlier quarter
used and drops the questions its closed-book models answer (``--models``; the size's default otherwise).
Every release passes through the three gates of :mod:`continuousbench.diagnostics.gates` against every
strictly earlier quarter of its track (any size); ``--skip_gates`` leaves one out, and says so in the
report and in the published card. Each attempt writes its own report,
``<root>/.quarterly/<quarter>/attempt-<n>/report.{json,md}`` (sizes, support histograms, gate figures,
the earlier releases gated against, models and endpoints with credentials removed, timings), before
anything is published. Only when every gate of every release passes is anything published: one commit
and one tag per release, with its gate report beside it; a failed gate writes neither and stops with one
line naming it, its figure and its threshold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuousbench.commands import bounds, command, listed
from continuousbench.credentials import redact
from continuousbench.diagnostics.gate_fresh import MAX_OVERLAP, check_previous, earlier_releases
from continuousbench.diagnostics.gate_report import GateFailure, check_lines
from continuousbench.diagnostics.gate_unsolvable import MAX_ACCURACY, NO_MODEL
from continuousbench.diagnostics.gates import GATES, run_gates
from continuousbench.errors import UserError
from continuousbench.release.ids import TRACKS, release_id

if TYPE_CHECKING:
    from continuousbench.release.targets import Target

log = logging.getLogger(__name__)

REPORT_DIR = ".quarterly"


@dataclass
class QuarterArguments:
    quarter: str = field(default="", metadata={"help": "The quarter, YYYYqN (NEWS: one that has ended)."})
    tracks: list[str] = field(
        default_factory=lambda: ["geminon"], metadata={"help": "geminon and/or news.", "distinct": True}
    )
    size: str = field(default="small", metadata={"help": "Release size of every track."})
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of every build."))
    root: str | None = field(default=None, metadata={"help": "Release root (default $CONTINUOUSBENCH_HOME)."})
    warc: list[str] | None = field(default=None, metadata={"help": "NEWS: CC-News WARC files or globs."})
    articles: list[str] | None = field(default=None, metadata={"help": "NEWS: extracted articles instead."})
    llm: str | None = field(default=None, metadata={"help": "NEWS: the LLM stages' model spec."})
    news_config: str | None = field(
        default=None, metadata={"help": "NEWS: a `build news` recipe (builders/configs/news-*.yaml)."}
    )
    models: list[str] = listed(
        "Closed-book models: Geminon drops the questions they answer, and the unsolvable gate "
        "asks them again (default: the size's, see build geminon --closed_book_models)."
    )
    previous: list[str] = listed(
        "Earlier releases to gate against (default: every strictly earlier quarter of the "
        "track under the root, any size)."
    )
    skip_gates: list[str] = listed(
        "Gates left out, by name; written into the report and the published card.", choices=list(GATES)
    )
    max_accuracy: float = field(default=MAX_ACCURACY, metadata=bounds("(0, 1]", "Closed-book bound."))
    min_support: int | None = field(default=None, metadata=bounds("[1, inf)", "Least public support."))
    max_overlap: float = field(default=MAX_OVERLAP, metadata=bounds("(0, 1]", "Corpus 13-gram overlap."))
    publish: str | None = field(
        default=None,
        metadata={
            "help": "Where to publish once every gate passes: a Hub dataset repo org/name, or a local "
            "folder (./path: a git repository, to rehearse)."
        },
    )
    dry_run: bool = field(
        default=False,
        metadata={
            "help": "With --publish: write the commit and tag it would make into the attempt's folder "
            "(publish.json), and publish nothing."
        },
    )
    results: str | None = field(
        default=None, metadata={"help": "A results folder whose timeline.json gets the build dates."}
    )
    plan: bool = field(
        default=False, metadata={"help": "Print the quarter's jobs and GPU-hours; run nothing."}
    )
    executor: str = field(
        default="inprocess",
        metadata={
            "help": "Where the gates run: this process, or study's local or ray executor.",
            "choices": ["inprocess", "local", "ray"],
        },
    )


def check_quarter(quarter: str, tracks: list[str], today: date | None = None) -> list[str]:
    """The release ids of the quarter; a malformed quarter, an unknown track, or (NEWS) a quarter that has
    not ended yet are refused in one line."""
    unknown = [t for t in tracks if t not in TRACKS]
    if unknown or not tracks:
        raise UserError(f"--tracks {' '.join(unknown) or '(none)'}: choose from {', '.join(TRACKS)}")
    rid = release_id("geminon", "tiny", quarter)  # the quarter's format, before any track's size
    last = rid.days[1]
    today = today or date.today()
    if "news" in tracks and last >= today:
        raise UserError(
            f"--quarter {quarter} ends on {last}: NEWS holds a quarter's news only once it has ended; "
            "build it from the day after"
        )
    return [rid.period for _ in tracks]


def gate_questions(track: str, size: str) -> int:
    """Closed-book questions a gate asks, for the plan: Geminon at tiny's 156 test questions per 18 entities;
    NEWS at its cap (12 questions for each of the 500 largest clusters, 80% of them in test)."""
    if track == "news":
        return 12 * 500 * 4 // 5
    from continuousbench.geminon.sizes import get_size

    return round(get_size(size).n_entities * 156 / 18)


def closed_book_answers(track: str, size: str, models: Sequence[str]) -> tuple[str | None, int]:
    """(the first closed-book model, how many answers the quarter asks of such models): a Geminon build
    screens every question (13 an entity) blind with each model and informed with the first, and the gate
    asks the test questions again; NEWS screens on its endpoint, so only the gate counts."""
    from continuousbench.geminon.closed_book import screening_answers, screening_models

    model, screened = screening_answers(track, size, models)
    if model is None:
        return None, 0

    count = len(screening_models(list(models), size)) if track == "geminon" else max(len(models), 1)
    return model, screened + count * gate_questions(track, size)


def plan_jobs(args: QuarterArguments) -> list:
    """The quarter's jobs as study jobs (for ``study``'s plan table): builds, then one gate per release; the
    gate's row carries every closed-book answer of the quarter (the build's screening and its own)."""
    from continuousbench.study.graph import Job

    jobs, root = [], Path(args.root or ".")
    for track in args.tracks:
        rid = str(release_id(track, args.size, args.quarter))
        build = Job(
            f"build/{rid}", "build", ("build", track), root / rid, root / rid / "release.json", gpus=0
        )
        model, answers = closed_book_answers(track, args.size, args.models)
        recipe = {"model": model, "max_new_tokens": 32, "questions": answers, "models": 1}
        gate = Job(
            f"gate/{rid}",
            "gate",
            ("gate", "--release", rid),
            root,
            root,
            after=(build.name,),
            gpus=1 if model else 0,
            recipe=recipe,
        )
        jobs += [build, gate]
    return jobs


def build(track: str, args: QuarterArguments, root: Path, timings: dict[str, float]) -> Path:
    """One track's release for the quarter; kept as it is when already built (the rerun resumes). Names
    (Geminon) and questions (NEWS) of earlier quarters under the root, and tagged in the ``--publish``
    target, are avoided."""
    from continuousbench.release.layout import release_dir

    rid = release_id(track, args.size, args.quarter)
    folder = release_dir(rid, root)
    if folder.is_dir():
        log.info("%s: built before, kept", rid)
        return folder
    if track == "geminon":
        from continuousbench.geminon.build import GeminonBuildArguments, build_release

        build_args = GeminonBuildArguments(
            size=args.size,
            quarter=args.quarter,
            seed=args.seed,
            out=str(root),
            closed_book_models=args.models or None,
            avoid_repo=args.publish,
        )
        return build_release(build_args, progress=False, timings=timings)
    from continuousbench.news.build import main as build_news
    from continuousbench.news.build import make_parser as news_parser

    argv = [
        *(["--config", args.news_config] if args.news_config else []),
        "--size",
        args.size,
        "--quarter",
        args.quarter,
        "--seed",
        str(args.seed),
        "--out",
        str(root),
    ]
    argv += ["--warc", *args.warc] if args.warc else ["--articles", *(args.articles or [])]
    argv += ["--llm", args.llm] if args.llm else []
    argv += ["--avoid_repo", args.publish] if args.publish else []
    result = build_news(*news_parser().parse(argv))  # the recipe's settings, ours on top
    if not isinstance(result, Path):
        raise UserError(f"NEWS is queued on Slurm ({result}); rerun the same release command once it is done")
    return result


def markdown(report: dict[str, Any]) -> str:
    """The release report as a page: one table of releases, then every gate's checks."""
    published = report["published_to"] or "nothing"
    skipped = ", ".join(report["skipped_gates"]) or "none"
    lines = [
        f"# Quarterly release {report['quarter']} (attempt {report['attempt']})",
        "",
        f"Every gate passed: {'yes' if report['passed'] else 'no'}. Gates skipped: {skipped}. "
        f"Published to: {published}.",
        "",
        "| release | documents (train) | questions | build s | gates s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for rid, r in report["releases"].items():
        rows = r["rows"]
        questions = sum(sum(v.values()) for k, v in rows.items() if k.startswith("qa_"))
        lines.append(
            f"| {rid} | {rows['corpus']['train']} | {questions} | {r['seconds']['build']:.1f} | "
            f"{r['seconds']['gates']:.1f} |"
        )
    for rid, r in report["releases"].items():
        lines += ["", f"## {rid}", "", f"- gated against: {', '.join(r['previous']) or 'no earlier release'}"]
        lines += [f"- {line}" for line in check_lines(r["gates"]["gates"])]
        for part, hist in r["gates"]["gates"].get("learnable", {}).get("histograms", {}).items():
            lines.append(f"- support of {part}: " + ", ".join(f"{k}: {v}" for k, v in hist.items()))
        if r.get("url"):
            lines.append(f"- published: {r['url']}")
    lines += ["", "Models and endpoints: " + ", ".join(f"{k} = {v}" for k, v in report["models"].items()), ""]
    return "\n".join(lines)


def gate_models(args: QuarterArguments) -> list[str]:
    """The unsolvable gate's models: ``--models`` (``none``: none), else those that screened the release."""
    return [] if args.models == ["none"] else list(args.models)


def gate_names(args: QuarterArguments) -> tuple[str, ...]:
    """The gates that run: all three unless ``--skip_gates`` names some."""
    return tuple(g for g in GATES if g not in args.skip_gates)


def previous_of(
    args: QuarterArguments, built: dict[str, tuple[Path, float]], root: Path
) -> dict[str, list[str]]:
    """Per release, the releases it is gated against: ``--previous`` (each checked to be strictly earlier),
    else every strictly earlier quarter of its track under the root, any size."""
    previous = {}
    for rid, (folder, _) in built.items():
        previous[rid] = list(args.previous) or earlier_releases(folder, root)
        check_previous(rid, previous[rid], root=root)
    return previous


def gate_all(
    args: QuarterArguments,
    built: dict[str, tuple[Path, float]],
    previous: dict[str, list[str]],
    root: Path,
    out: Path,
) -> tuple[dict[str, dict], dict[str, float]]:
    """Every release's gate report and seconds: in this process, or as ``gate`` jobs on ``study``'s
    local or Ray executor (``--executor``; the closed-book answers get a GPU each there)."""
    names = gate_names(args)
    if args.executor != "inprocess":
        return gate_jobs(args, built, previous, names, root, out)
    reports, seconds = {}, {}
    for rid, (folder, _) in built.items():
        started = time.monotonic()
        reports[rid] = run_gates(
            folder,
            previous=previous[rid],
            models=gate_models(args),
            gates=names,
            max_accuracy=args.max_accuracy,
            min_support=args.min_support,
            max_overlap=args.max_overlap,
            root=root,
        )
        seconds[rid] = time.monotonic() - started
    return reports, seconds


def gate_jobs(
    args: QuarterArguments,
    built: dict[str, tuple[Path, float]],
    previous: dict[str, list[str]],
    names: Sequence[str],
    root: Path,
    out: Path,
) -> tuple[dict[str, dict], dict[str, float]]:
    """The gates as ``continuousbench gate`` jobs of a study under ``<out>/gates`` (the attempt's folder:
    each attempt gates what it built); a failed gate still writes its report, which is what is read back."""
    from continuousbench.files import read_json
    from continuousbench.study import executors
    from continuousbench.study.graph import Job
    from continuousbench.study.runner import Study, run_jobs

    jobs = []
    for rid, (folder, _) in built.items():
        result = out / "gates" / f"{rid}.json"
        argv = [
            "gate",
            "--release",
            str(folder),
            "--root",
            str(root),
            "--gates",
            *names,
            "--output",
            str(result),
            "--max_accuracy",
            str(args.max_accuracy),
            "--max_overlap",
            str(args.max_overlap),
        ]
        argv += ["--models", *gate_models(args)] if gate_models(args) else []
        argv += ["--previous", *previous[rid]] if previous[rid] else []
        argv += ["--min_support", str(args.min_support)] if args.min_support else []
        log_file = out / "logs" / f"gate--{rid}.log"
        gpus = 1 if "unsolvable" in names else 0
        jobs.append(Job(f"gate/{rid}", "gate", tuple(argv), result.parent, result, gpus=gpus, log=log_file))
    study = Study(jobs, out / "gates")
    study.check(resume=True)
    executor = executors.LocalExecutor() if args.executor == "local" else executors.RayExecutor()
    try:
        run_jobs(study, executor)
    finally:
        executor.close()
    reports, seconds = {}, {}
    for job in jobs:
        rid = job.name.split("/", 1)[1]
        if not job.done.is_file():
            raise UserError(f"the gate job of {rid} wrote no report; its log {job.log} says why")
        reports[rid] = read_json(job.done)
        seconds[rid] = float(study.manifest["jobs"].get(job.name, {}).get("wall_s", 0.0))
    return reports, seconds


def new_attempt(quarter_dir: Path) -> Path:
    """``attempt-<n>``, the next free number: every attempt keeps its own report."""
    quarter_dir.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        folder = quarter_dir / f"attempt-{n:03d}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise UserError(f"{quarter_dir} holds 9999 attempts; move old ones away")


def check_options(args: QuarterArguments) -> None:
    """What can be refused before any work, in one line each."""
    check_quarter(args.quarter, args.tracks)
    if "news" in args.tracks and (not (args.warc or args.articles) or not (args.llm or args.news_config)):
        raise UserError(
            "the news track needs --warc (or --articles) and --llm <model spec> (or a --news_config)"
        )
    if "news" in args.tracks and not args.models and "unsolvable" not in args.skip_gates:
        raise UserError(NO_MODEL)  # NEWS screens with its endpoint: the gate's local model is named here
    if args.dry_run and not args.publish:
        raise UserError("--dry_run shows what --publish would write: give --publish <org/name | ./folder>")
    if args.models == ["none"] and "unsolvable" not in args.skip_gates:
        raise UserError(
            "--models none leaves the unsolvable gate without a model, and no gate is left out silently "
            "(--publish needs all three): give --models, or --skip_gates unsolvable (the report and the "
            "published card say so)"
        )


def publish(report: dict[str, Any], target: Target, write: Callable[[], None]) -> None:
    """Publish every release (its gate report beside it), writing the report after each: a failure leaves
    a report that says what was published and what was not."""
    from continuousbench.release.push import publish_release

    report["published_to"] = target.name
    for rid, r in report["releases"].items():
        gates = {**r["gates"], "skipped": report["skipped_gates"], "previous": r["previous"]}
        try:
            r["url"] = publish_release(r["folder"], target, gates)
        except FileExistsError:  # tagged by an earlier attempt that stopped after it
            r["url"] = f"already tagged {rid} in {target.name}"
        except UserError as err:
            r["url"] = None
            report["publish_error"] = str(err)
            write()
            raise UserError(f"{report['quarter']}: publishing {rid} failed: {err}") from None
        log.info("%s: published (%s)", rid, r["url"])
        write()


def run_quarter(args: QuarterArguments) -> dict[str, Any]:
    """Check the target, build, gate, report and (only when every gate passes) publish; returns the report."""
    from continuousbench.files import check_writable_dir, write_json, write_text
    from continuousbench.release.layout import HOME_ENV, default_root
    from continuousbench.release.load import read_manifest

    check_options(args)
    root = check_writable_dir(
        Path(args.root).expanduser() if args.root else default_root(),
        "--root" if args.root else f"${HOME_ENV}",
    )
    out = new_attempt(root / REPORT_DIR / args.quarter)
    target = None
    if args.publish:  # reachable and writable before any build: no work is lost to a bad token
        from continuousbench.release.targets import make_target

        target = make_target(args.publish, dry_run=out / "publish.json" if args.dry_run else None)
        target.check()
    report: dict[str, Any] = {
        "quarter": args.quarter,
        "attempt": out.name,
        "models": {"closed_book": args.models, "llm": args.llm and redact(args.llm)},
        "skipped_gates": list(args.skip_gates),
        "releases": {},
        "passed": False,
        "published_to": None,
    }

    def write() -> None:
        write_json(out / "report.json", report)
        write_text(out / "report.md", markdown(report))

    built: dict[str, tuple[Path, float]] = {}
    stages: dict[str, dict[str, float]] = {}
    for track in args.tracks:
        started, timings = time.monotonic(), {}
        folder = build(track, args, root, timings)
        rid = read_manifest(folder)["id"]
        built[rid], stages[rid] = (folder, time.monotonic() - started), timings
    previous = previous_of(args, built, root)
    gated, seconds = gate_all(args, built, previous, root, out)
    for rid, (folder, build_s) in built.items():
        report["releases"][rid] = {
            "folder": str(folder),
            "built": date.fromtimestamp((folder / "release.json").stat().st_mtime).isoformat(),
            "rows": read_manifest(folder)["rows"],
            "previous": previous[rid],
            "gates": gated[rid],
            "seconds": {"build": build_s, "build_stages": stages[rid], "gates": seconds[rid]},
        }
    report["passed"] = all(r["gates"]["passed"] for r in report["releases"].values())
    report["report"] = str(out / "report.md")
    write()  # before anything is published
    if args.results:
        from continuousbench.results.timeline import record_built

        record_built(args.results, {rid: r["built"] for rid, r in report["releases"].items()})
    failed = [line for r in report["releases"].values() for line in r["gates"]["failed"]]
    if failed:
        raise GateFailure(f"{args.quarter}: nothing published; " + " | ".join(failed), report)
    if target is not None:
        publish(report, target, write)
    return report


def main(args: QuarterArguments) -> dict[str, Any] | float:
    if not args.quarter:
        raise UserError("no quarter given: continuousbench release --quarter YYYYqN")
    if args.plan:
        from continuousbench.study.plan import print_plan

        check_quarter(args.quarter, args.tracks)
        return print_plan(plan_jobs(args), {})
    return run_quarter(args)


def _report(result: dict[str, Any] | float) -> None:
    if isinstance(result, dict):
        where = f"; published to {result['published_to']}" if result["published_to"] else ""
        skipped = f"; skipped: {', '.join(result['skipped_gates'])}" if result["skipped_gates"] else ""
        print(f"{result['quarter']}: every gate passed ({', '.join(result['releases'])}){skipped}{where}")
        for rid, r in result["releases"].items():
            print(f"{rid}: gated against {', '.join(r['previous']) or 'no earlier release'}")
            for line in check_lines(r["gates"]["gates"]):
                print(f"  {line}")
        print(f"report: {result['report']}")


make_parser, cli = command(
    QuarterArguments,
    "continuousbench release",
    "The quarter's releases: build every track, gate them, write the release report, publish if all pass.",
    main,
    report=_report,
    resume_hint="built releases are kept; rerun the same command to continue",
)
