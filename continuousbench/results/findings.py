"""The paper's four findings, checked on a report's rows (``continuousbench report --findings``).

Each finding names the runs it reads by role: ``none`` (the base model, no training), ``real`` (trained
on the real corpus), ``syn`` (on non-private synthetic data), ``dp_syn`` (on DP synthetic data, compared
with ``syn`` question by question) and ``dp_syn_mauve`` (the DP corpus whose form MAUVE judges: the
weakest privacy). The targets are the demo's (docs/demo.md); a verdict is data, never an error.
"""

from __future__ import annotations

from pathlib import Path

from continuousbench.errors import UserError

ROLES = ("none", "real", "syn", "dp_syn", "dp_syn_mauve")


def check(rows: list[dict], roles: dict[str, str], paired: dict) -> list[dict]:
    """``[{finding, holds, evidence}]`` for the rows named by ``roles``; ``paired``: ``syn`` vs ``dp_syn``
    (``continuousbench compare``)."""
    row = {role: next(r for r in rows if r["run"] == name) for role, name in roles.items()}
    em = {role: r["qa_public/exact_match"] for role, r in row.items()}
    single = row["real"]["qa_singleton/exact_match"]
    syn, weak = row["syn"], row["dp_syn_mauve"]
    overall = paired["parts"]["qa_public"]["overall"]
    name = roles
    checks = [
        (
            "training on the real corpus teaches its facts",
            em["real"] >= 0.5 and em["none"] <= 0.05,
            f"{name['real']} {em['real']:.1%} (>= 50%), {name['none']} {em['none']:.1%} (<= 5%)",
        ),
        (
            "facts seen once are rarely learned",
            single <= em["real"] / 3,
            f"singleton {single:.1%} <= a third of public {em['real']:.1%}",
        ),
        (
            "non-private synthetic data carries facts, DP synthetic data does not",
            em["syn"] >= 0.25 and overall["difference"] > 0 and overall["p_value"] < 0.01,
            f"{name['syn']} {em['syn']:.1%} (>= 25%) vs {name['dp_syn']} {em['dp_syn']:.1%}: "
            "paired difference "
            f"{overall['difference']:+.1%}, McNemar p = {overall['p_value']:.2g} (< 0.01)",
        ),
        (
            "MAUVE keeps the form while QA collapses",
            weak["mauve"] >= syn["mauve"] / 2 and em["dp_syn_mauve"] < em["syn"] / 4,
            f"{name['dp_syn_mauve']} MAUVE {weak['mauve']:.3f} "
            f"vs {name['syn']} {syn['mauve']:.3f} (>= half), "
            f"EM {em['dp_syn_mauve']:.1%} vs {em['syn']:.1%} (< a quarter)",
        ),
    ]
    return [{"finding": f, "holds": bool(ok), "evidence": e} for f, ok, e in checks]


def parse_roles(items: list[str], rows: list[dict]) -> dict[str, str]:
    """``ROLE=ROW`` items, every role of :data:`ROLES` once, each naming a row of the report."""
    roles = dict(item.partition("=")[::2] for item in items)
    names = {r["run"] for r in rows}
    missing, unknown = set(ROLES) - set(roles), set(roles) - set(ROLES)
    if missing or unknown or len(roles) != len(items):
        raise UserError(
            f"--finding_rows needs each of {', '.join(ROLES)} once as ROLE=ROW, got "
            f"{' '.join(items) or 'none'}"
        )
    absent = sorted(v for v in roles.values() if v not in names)
    if absent:
        raise UserError(
            f"--finding_rows names rows not in the report ({', '.join(absent)}); rows: "
            f"{', '.join(sorted(names))}"
        )
    return roles


def paired_for(comparisons: list[dict], a: Path, b: Path) -> dict:
    """The comparison of run folder ``a`` (A) with ``b`` (B) among ``compare --json`` outputs."""
    for c in comparisons:
        if Path(c["run_a"]).resolve() == a.resolve() and Path(c["run_b"]).resolve() == b.resolve():
            return c
    raise UserError(
        f"--findings needs the paired comparison {a} (A) vs {b} (B): pass its "
        "`continuousbench compare --json` output with --compare"
    )


def print_findings(checked: list[dict], console) -> None:
    for f in checked:
        console.print(
            f"{'[green]holds' if f['holds'] else '[red]does not hold'}[/]: {f['finding']}: {f['evidence']}"
        )
