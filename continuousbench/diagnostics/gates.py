"""Release gates: a quarter's release is published only when it is unsolvable without its corpus,
learnable from it, and fresh against every earlier release (paper: abstract, contribution 1).

    continuousbench gate --release geminon-small-2026q2 --previous geminon-small-2026q1 \\
        --models google/gemma-3-1b-pt --output gates.json

* **unsolvable** (:mod:`~continuousbench.diagnostics.gate_unsolvable`): closed-book accuracy's Wilson
  upper bound under ``--max_accuracy``;
* **learnable** (:mod:`~continuousbench.diagnostics.gate_learnable`): every question supported by enough
  training documents (singletons by exactly one);
* **fresh** (:mod:`~continuousbench.diagnostics.gate_fresh`): no question or (name, answer) pair of an
  earlier release again, and the corpus's word 13-gram overlap with earlier corpora under ``--max_overlap``.

A failed gate is one line naming the gate, its figure and its threshold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.commands import bounds, command, listed
from continuousbench.diagnostics.gate_fresh import MAX_OVERLAP, check_previous, earlier_releases, fresh_gate
from continuousbench.diagnostics.gate_learnable import learnable_gate
from continuousbench.diagnostics.gate_report import Gate, GateFailure, check_lines
from continuousbench.diagnostics.gate_unsolvable import (
    MAX_ACCURACY,
    NO_MODEL,
    screened_models,
    unsolvable_gate,
)
from continuousbench.diagnostics.report_arguments import ReportArguments, options
from continuousbench.errors import UserError

log = logging.getLogger(__name__)

GATES = ("unsolvable", "learnable", "fresh")


def run_gates(
    release: str | Path,
    *,
    previous: Sequence[str | Path],
    models: Sequence[str],
    gates: Sequence[str] = GATES,
    max_accuracy: float = MAX_ACCURACY,
    min_support: int | None = None,
    max_overlap: float = MAX_OVERLAP,
    batch_size: int = 32,
    max_new_tokens: int = 32,
    root: Path | None = None,
) -> dict[str, Any]:
    """The gate report: ``{"release", "previous", "passed", "failed": [lines], "gates": {name: ...}}``."""
    from continuousbench.release.load import read_manifest, resolve_release, verify_release

    kw = {"root": root}
    unknown = [g for g in gates if g not in GATES]
    if unknown:
        raise UserError(f"unknown gate {unknown[0]!r}: choose from {', '.join(GATES)}")
    manifest = verify_release(release, **kw)
    if "unsolvable" in gates and not (models or screened_models(release, **kw)):
        raise UserError(NO_MODEL)
    check_previous(manifest["id"], previous, **kw)
    for earlier in previous if "fresh" in gates else ():  # every input checked before the first gate runs
        verify_release(earlier, **kw)
    ran: list[Gate] = []
    for name in gates:
        started = time.perf_counter()
        if name == "unsolvable":
            ran.append(
                unsolvable_gate(
                    release,
                    models,
                    max_accuracy=max_accuracy,
                    batch_size=batch_size,
                    max_new_tokens=max_new_tokens,
                    **kw,
                )
            )
        elif name == "learnable":
            ran.append(learnable_gate(release, min_support=min_support, **kw))
        else:
            ran.append(fresh_gate(release, previous, max_overlap=max_overlap, verify=False, **kw))
        ran[-1].details["seconds"] = time.perf_counter() - started
        log.info("%s: gate %s %s", manifest["id"], name, "passed" if ran[-1].passed else "FAILED")
    return {
        "release": manifest["id"],
        "previous": [read_manifest(resolve_release(p, **kw))["id"] for p in previous],
        "passed": all(g.passed for g in ran),
        "failed": [g.line() for g in ran if not g.passed],
        "gates": {g.name: g.to_json() for g in ran},
    }


@dataclass
class GateArguments:
    release: str = field(default="", metadata={"help": "Release id (under --root) or release folder."})
    previous: list[str] = listed(
        "Earlier releases to be fresh against (default: every other release under --root).", distinct=True
    )
    models: list[str] = listed("Closed-book models (ids or folders) for the unsolvable gate.")
    gates: list[str] = field(default_factory=lambda: list(GATES), metadata={"help": "Gates to run."})
    max_accuracy: float = field(default=MAX_ACCURACY, metadata=bounds("(0, 1]", "Closed-book upper bound."))
    min_support: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Least public support (default: the release's).")
    )
    max_overlap: float = field(default=MAX_OVERLAP, metadata=bounds("(0, 1]", "Corpus 13-gram overlap."))
    batch_size: int = field(default=32, metadata=bounds("[1, inf)", "Closed-book decoding batch size."))
    max_new_tokens: int = field(default=32, metadata=bounds("[1, inf)", "Closed-book answer length."))


def main(args: GateArguments, out: ReportArguments) -> dict[str, Any]:
    if not args.release:
        raise UserError("no release given: continuousbench gate --release <id or folder>")

    def work(root: Path | None) -> dict[str, Any]:
        previous = args.previous or earlier_releases(args.release, root)
        report = run_gates(args.release, **options(args, "release", "previous"), previous=previous, root=root)
        if not report["passed"]:
            raise GateFailure(f"{report['release']}: " + " | ".join(report["failed"]), report)
        return report

    return out.run(work)


def _report(report: dict[str, Any]) -> None:
    print(f"{report['release']}: every gate passed ({', '.join(report['gates'])})")
    print(f"gated against: {', '.join(report['previous']) or 'no earlier release'}")
    for line in check_lines(report["gates"]):
        print(f"  {line}")


make_parser, cli = command(
    (GateArguments, ReportArguments),
    "continuousbench gate",
    "Release gates: unsolvable without the corpus, learnable from it, fresh against earlier releases.",
    main,
    report=_report,
    resume_hint=None,
)
