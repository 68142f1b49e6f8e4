"""The ranking as a sortable HTML table for the Space: every cell escaped, a click on a header sorts.

Gradio 6's Dataframe sorts only from a menu beside each header (⋮, then "Sort ascending"); a click on the
header's text selects the column instead. Researchers click the header itself, as on the Open LLM
Leaderboard, so the Space renders this table in a ``gr.HTML`` whose :data:`SORT_JS` (run once, on the
component) sorts the rows in the page: numbers numerically (epsilon by the requested budget, non-private
as infinite), text with its digit runs compared as numbers (an interval [9.7, ...] before [61.0, ...]),
a missing value last in either direction; a second click on the same header reverses the order, and
``aria-sort`` says which way it is sorted.

Nothing from a record reaches the page unescaped: cells are ``html.escape``-d text, and links have fixed
texts and URLs built from quoted parts (:func:`continuousbench.leaderboard.links`).
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from continuousbench import leaderboard as lb

# Relative widths (px at 1280) of the columns; the judge column shows only when ranked by LLM match, the
# MCQ columns ("MCQ %" sorts as a number) only when some record carries ranked-choice accuracy.
# Given as percentages of their sum, so that the table always fits its frame; long cells wrap.
WIDTHS = {
    "#": 36,
    "submission": 140,
    "method": 120,
    "run": 110,
    "recipe": 110,
    "not canonical": 160,
    "evaluator": 110,
    "tuning": 70,
    "kind": 92,
    "ε": 92,
    "%": 62,
    "95% CI": 100,
    "n": 44,
    "singleton %": 90,
    "MCQ 95% CI": 100,
    "vs. row above": 184,
    "judge": 150,
    "links": 130,
}
NUMERIC = {"#", "n", "singleton %"}  # and the primary metric's "... %" column; ε sorts by its budget

SORT_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('th button.cb-sort');
  if (!button || !element.contains(button)) return;
  const th = button.closest('th');
  const body = th.closest('table').tBodies[0];
  const column = Array.prototype.indexOf.call(th.parentElement.children, th);
  const ascending = th.getAttribute('aria-sort') !== 'ascending';
  const numeric = th.dataset.type === 'number';
  const key = (row) => row.cells[column].dataset.value ?? row.cells[column].textContent.trim();
  const rows = Array.from(body.rows).sort((a, b) => {
    const x = key(a), y = key(b);
    if (x === '' || y === '') return (x === '') - (y === '');
    const order = numeric ? Number(x) - Number(y) : x.localeCompare(y, undefined, {numeric: true});
    return ascending ? order : -order;
  });
  for (const other of th.parentElement.children) other.setAttribute('aria-sort', 'none');
  th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  body.append(...rows);
});
"""

CSS = """
#ranking table.cb-ranking { width: 100%; table-layout: fixed; border-collapse: collapse; font-size: 0.85rem; }
#ranking .cb-ranking th, #ranking .cb-ranking td { padding: 4px 6px; vertical-align: top; text-align: left;
  border-bottom: 1px solid var(--border-color-primary); word-break: normal; overflow-wrap: break-word; }
#ranking .cb-ranking td.num { text-align: right; font-variant-numeric: tabular-nums; }
#ranking button.cb-sort { all: unset; cursor: pointer; font-weight: 600; }
#ranking button.cb-sort:focus-visible { outline: 2px solid var(--color-accent); }
#ranking th[aria-sort=ascending] button.cb-sort::after { content: " ▲"; }
#ranking th[aria-sort=descending] button.cb-sort::after { content: " ▼"; }
"""


def _width(name: str) -> int:
    return WIDTHS.get(name, WIDTHS["%"])  # the primary metric's column: "EM %" or "LLM match %"


def _numeric(name: str) -> bool:
    return name in NUMERIC or name.endswith(" %") or name == "ε"


def _number(value) -> tuple[str, str]:
    """(shown, sort value) of a number; None or NaN: ("-", "") - sorted last."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-", ""
    return (f"{value:g}" if isinstance(value, float) else str(value)), repr(float(value))


def _epsilon(record: dict) -> str:
    """The sort value of the ε column: the requested budget, non-private as infinite, no statement last."""
    bucket = lb.epsilon_bucket(record)
    special = {lb.NON_PRIVATE: "Infinity", lb.NOT_DP: "Infinity", lb.NO_STATEMENT: ""}
    return special[bucket] if bucket in special else repr(float(bucket))


def _cell(shown: str, sort: str | None = None) -> str:
    """A ``<td>`` of escaped text; a sortable number also carries its sort value (``data-value``)."""
    if sort is None:
        return f"<td>{html.escape(shown)}</td>"
    return f'<td class="num" data-value="{html.escape(sort)}">{html.escape(shown)}</td>'


def _row(row: dict, names: list[str], values) -> str:
    cells = []
    for name, value in zip(names, values, strict=True):
        if name == "ε":
            cells.append(_cell(str(value), _epsilon(row["record"])))
        elif _numeric(name):
            cells.append(_cell(*_number(value)))
        else:
            cells.append(_cell(str(value)))
    return "".join(cells)


def _links(urls: dict[str, str]) -> str:
    """Fixed link texts; the URLs are quoted already and escaped once more for the attribute."""
    anchors = [
        f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">{name}</a>'
        for name, url in urls.items()
        if url
    ]
    return f"<td>{' · '.join(anchors)}</td>"


def table_html(rows: list[dict], metric: str, source: str | Path = "", *, static: bool = False) -> str:
    """The ranked ``rows`` (:func:`continuousbench.leaderboard.rank`) as one ``<table>``; ``static``: for
    a page read without the Space (local files as ``file:`` URLs)."""
    frame = lb.table(rows, metric)
    names = [*frame.columns, "links"]
    total = sum(_width(n) for n in names)
    cols = "".join(f'<col style="width: {100 * _width(n) / total:.2f}%">' for n in names)
    head = (
        "".join(
            f'<th scope="col" data-type="{"number" if _numeric(n) else "text"}" aria-sort="none">'
            f'<button type="button" class="cb-sort">{html.escape(n)}</button></th>'
            for n in frame.columns
        )
        + '<th scope="col">links</th>'
    )
    body = "".join(
        f"<tr>{_row(row, list(frame.columns), values)}"
        f"{_links(lb.links(row['sub'], source, static=static))}</tr>"
        for row, values in zip(rows, frame.itertuples(index=False), strict=True)
    )
    return (
        f'<table class="cb-ranking"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )
