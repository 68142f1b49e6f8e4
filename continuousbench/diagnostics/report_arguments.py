"""The options of the diagnostics that write one JSON report: where it goes (``leakage``, ``mauve``) and,
for ``gate`` and ``contamination``, where releases are looked up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.diagnostics.gate_report import GateFailure


@dataclass(kw_only=True)
class ReportFileArguments:
    """Where a report goes; keyword-only, so that a command's own fields keep their order."""

    output: str | None = field(default=None, metadata={"help": "Write the report as JSON here."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing --output file."})


@dataclass
class ReportArguments(ReportFileArguments):
    """Where releases are looked up and where a report goes (``gate`` and ``contamination``)."""

    root: str | None = field(default=None, metadata={"help": "Release root (default $CONTINUOUSBENCH_HOME)."})

    def run(self, work: Callable[[Path | None], dict[str, Any]]) -> dict[str, Any]:
        """``work(root)``, its report written to ``--output`` (checked before any work), even when it failed
        a gate (:class:`GateFailure` carries the report)."""
        from continuousbench.files import check_output_files, write_json

        output = check_output_files({"--output": self.output}, overwrite=self.overwrite).get("--output")
        try:
            report = work(Path(self.root).expanduser() if self.root else None)
        except GateFailure as failure:
            if output is not None:
                write_json(output, failure.report)
            raise
        if output is not None:
            write_json(output, report)
        return report


def options(args: Any, *left_out: str) -> dict[str, Any]:
    """A command's parsed options as keyword arguments of its library function."""
    return {k: v for k, v in vars(args).items() if k not in left_out}
