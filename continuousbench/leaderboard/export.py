"""``continuousbench leaderboard --results DIR --html out.html``: the leaderboard as one static page.

The same ranking as the Space (:mod:`.ranking`), with no server and no script needed to read it: per
release, the main table of canonical-recipe runs, then the runs made with other recipes ranked apart
with why, then the records left out and why. Every cell is escaped text in a plain ``<table>`` (a
script or ``pandas.read_html`` reads it as it is; a click on a header sorts it in a browser); links are
the release's Hub page when it is published, else its local manifest (``file:`` URLs). ``--json``
writes the same rows as data.

    continuousbench leaderboard --results ./results --html leaderboard.html
    python leaderboard/app.py --html leaderboard.html   # the Space's own results (CONTINUOUSBENCH_RESULTS)
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import command
from continuousbench.errors import UserError
from continuousbench.files import check_output_files, write_text
from continuousbench.leaderboard import page, timeline
from continuousbench.leaderboard.ranking import CANONICAL, OTHER, PART, load_submissions, rank, releases
from continuousbench.leaderboard.releases import ReleaseIndex

STYLE = ":root { --border-color-primary: #ccc; --color-accent: #0072B2; } body { font-family: system-ui; }"
PLAIN = ("record", "sub", "separation")  # row keys that are objects, not table values


def ranked(source: str | Path, index: ReleaseIndex | None = None) -> dict:
    """Per release (newest first): the metric, its build date, the main table's rows and the rows apart
    (each with the flag of the results' timeline, as the Space shows them); and the lines of the records
    left out."""
    subs, problems = load_submissions(source, index)
    dates = timeline.load_timeline(source)
    out = {}
    for release in releases(subs):
        metric, main = rank(subs, release, recipes=CANONICAL)
        _, apart = rank(subs, release, recipes=OTHER)
        timeline.annotate(main, release, dates)
        timeline.annotate(apart, release, dates)
        out[release] = {
            "metric": metric,
            "built": timeline.built(dates, release),
            "canonical": main,
            "other": apart,
        }
    return {"releases": out, "left_out": problems}


def _section(release: str, tables: dict, source: str | Path) -> str:
    metric, main, apart = tables["metric"], tables["canonical"], tables["other"]
    built = f" Built {html.escape(tables['built'])}." if tables.get("built") else ""
    parts = [
        f"<h2>{html.escape(release)}</h2>",
        f"<p>{len(main)} run(s) made with a canonical recipe, ranked by {metric} on {PART}.{built}</p>",
        page.table_html(main, metric, source, static=True) if main else "<p>No canonical run yet.</p>",
    ]
    if apart:
        parts += [
            f"<h3>Other recipes ({len(apart)}): ranked apart, not comparable with the table above</h3>",
            page.table_html(apart, metric, source, static=True),
        ]
    return "".join(parts)


def render(source: str | Path, index: ReleaseIndex | None = None) -> tuple[str, dict]:
    """(the page, the ranking it shows)."""
    from continuousbench.leaderboard.ranking import left_out_html

    data = ranked(source, index)
    sections = [_section(r, t, source) for r, t in data["releases"].items()]
    body = "".join(sections) or "<p>No valid submission yet.</p>"
    script = f"document.querySelectorAll('.cb-board').forEach((element) => {{{page.SORT_JS}}});"
    text = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>ContinuousBench leaderboard</title><style>{STYLE}{page.CSS}</style></head>"
        "<body><h1>ContinuousBench leaderboard</h1>"
        f'<div id="ranking" class="cb-board">{body}</div>{left_out_html(data["left_out"])}'
        f"<script>{script}</script></body></html>\n"
    )
    return text, data


def as_data(data: dict) -> dict:
    """The ranking as JSON values (each row without its record)."""

    def rows(values: list[dict]) -> list[dict]:
        return [{c: v for c, v in row.items() if c not in PLAIN} for row in values]

    plain = {
        release: {
            "metric": t["metric"],
            "built": t.get("built"),
            "canonical": rows(t["canonical"]),
            "other": rows(t["other"]),
        }
        for release, t in data["releases"].items()
    }
    return {"releases": plain, "left_out": data["left_out"]}


@dataclass
class LeaderboardArguments:
    results: str | None = field(
        default=None, metadata={"help": "The results dataset: a folder or a Hub dataset repo org/name."}
    )
    html: str | None = field(
        default=None, metadata={"help": "Write the leaderboard as one static page here."}
    )
    json: str | None = field(default=None, metadata={"help": "Write the same ranking as JSON here."})
    releases: str | None = field(
        default=None,
        metadata={
            "help": "Release root the records' releases are looked up in (default: "
            "$CONTINUOUSBENCH_HOME, else ~/.cache/continuousbench)."
        },
    )
    overwrite: bool = field(default=False, metadata={"help": "Replace existing output files."})


def main(args: LeaderboardArguments) -> dict:
    """Rank, write the page (and JSON); return ``{"releases": {...}, "left_out": [...]}`` as data."""
    if args.results is None or not (args.html or args.json):
        raise UserError(
            "leaderboard needs --results <folder | org/name> and --html <file> (or --json <file>)"
        )
    outputs = check_output_files(
        {"--html": args.html, "--json": args.json},
        overwrite=args.overwrite,
        keep_out=[args.results] if Path(args.results).exists() else [],
    )
    text, data = render(args.results, ReleaseIndex(root=args.releases))
    if "--html" in outputs:
        write_text(outputs["--html"], text)
    result = as_data(data)
    if "--json" in outputs:
        write_text(outputs["--json"], json.dumps(result, indent=1) + "\n")
    return result


def _report(result: dict) -> None:
    for release, tables in result["releases"].items():
        print(f"{release}: {len(tables['canonical'])} canonical, {len(tables['other'])} other recipes")
    if result["left_out"]:
        print(f"left out: {len(result['left_out'])} record(s)")


make_parser, cli = command(
    LeaderboardArguments, "continuousbench leaderboard", __doc__.splitlines()[0], main, report=_report
)
