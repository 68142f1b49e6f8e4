"""What a release gate returns: its checks (a figure against a threshold), the gate, and the failure that
carries the whole report (written before it is raised), one line each."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from continuousbench.errors import UserError


class GateFailure(UserError):
    """One or more gates failed; ``report`` is the whole gate report (written before raising)."""

    def __init__(self, message: str, report: dict[str, Any]):
        super().__init__(message)
        self.report = report


@dataclass
class Check:
    """One figure of a gate against its threshold; ``passed`` says which side it fell on."""

    what: str
    figure: float
    threshold: float
    passed: bool

    def __str__(self) -> str:
        figure = f"{self.figure:.4g}" if isinstance(self.figure, float) else self.figure
        return f"{self.what} {figure} (threshold {self.threshold:g})"


@dataclass
class Gate:
    name: str
    checks: list[Check] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def line(self) -> str:
        failed = "; ".join(str(c) for c in self.checks if not c.passed)
        return f"gate {self.name} failed: {failed}"

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [asdict(c) for c in self.checks], **self.details}


def check_lines(gates: dict[str, Any]) -> list[str]:
    """Every check of a gate report, one line each: the figure, its threshold and the verdict."""
    return [
        f"{name}: {c['what']} = {c['figure']:.4g} (threshold {c['threshold']:g}): "
        + ("pass" if c["passed"] else "FAIL")
        for name, gate in gates.items()
        for c in gate["checks"]
    ]
