"""A candidate corpus's privacy statement: the ``--corpus_privacy`` file, its ``privacy.json`` or its card.

What a record republishes is the guarantee alone (epsilon, delta, unit, accounting), never training losses
or histories; a malformed statement file is one line naming it."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from continuousbench.errors import UserError

# The privacy fields a corpus record republishes: the guarantee, never training losses or histories.
_GUARANTEE = (
    "private",
    "epsilon",
    "target_epsilon",
    "delta",
    "unit",
    "adjacency",
    "accountant",
    "noise_multiplier",
    "steps",
    "sampling",
    "sampling_probability",
    "expected_batch_size",
    "dataset_size",
    "clip_norm",
    "physical_batch",
    "truncation_analysis",
    "truncation_probability",
    "runs_accounted",
    "steps_per_run",
    "epsilon_per_run",
)
# A sweep's privacy.json written before its figures were all the composed ones: per-run, not copied.
_PER_RUN_BEFORE = ("steps", "truncation_probability")


def corpus_privacy(source: str | Path) -> dict | None:
    """The guarantee a candidate corpus folder states (``privacy.json``, else its card); None if none."""
    return stated_privacy(source)[0]


def stated_privacy(source: str | Path, statement: str | Path | None = None) -> tuple[dict | None, str | None]:
    """(the corpus's guarantee, where it was stated): the ``statement`` file (``evaluate
    --corpus_privacy``), else ``privacy.json`` in a corpus folder, else its card; (None, None) if none.

    A statement file follows docs/results-format.md ("A corpus's privacy statement"); a malformed one is
    one line naming it. Our DP generators protect one record (document) under add-or-remove adjacency;
    that is the unit unless the statement names another.
    """
    folder = Path(str(source)).expanduser()
    if statement is not None:
        file = Path(statement).expanduser()
        stated = _read_statement(file, f"--corpus_privacy {statement}")
        where = f"--corpus_privacy {file.resolve()}"
    elif (folder / "privacy.json").is_file():
        stated, where = json.loads((folder / "privacy.json").read_text(encoding="utf-8")), "privacy.json"
    elif (folder / "README.md").is_file():
        stated, where = _privacy_from_card((folder / "README.md").read_text(encoding="utf-8")), "README.md"
    else:
        return None, None
    if not isinstance(stated, dict) or "private" not in stated:
        return None, None
    privacy = {k: stated[k] for k in _GUARANTEE if stated.get(k) is not None}
    if (stated.get("runs_accounted") or 1) > 1 and "steps_per_run" not in stated:
        privacy = {k: v for k, v in privacy.items() if k not in _PER_RUN_BEFORE}
    if privacy["private"]:
        privacy.setdefault("unit", "record")
        privacy.setdefault("adjacency", "add-or-remove")
    return privacy, where


def _read_statement(file: Path, option: str) -> dict:
    """A privacy statement file, checked: ``private`` (bool); when private, a finite ``epsilon`` > 0 and
    a ``delta`` in [0, 1); ``unit``, ``adjacency``, ``accountant`` text when given."""
    try:
        stated = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{option} does not exist; pass a JSON file stating the corpus's guarantee") from None
    except (json.JSONDecodeError, UnicodeDecodeError, IsADirectoryError):
        raise UserError(f"{option} is not a JSON file; see docs/results-format.md for its keys") from None
    fix = "see docs/results-format.md (a corpus's privacy statement)"
    if not isinstance(stated, dict) or not isinstance(stated.get("private"), bool):
        raise UserError(f'{option} must be a JSON object with "private": true or false; {fix}')
    if stated["private"]:
        eps, delta = stated.get("epsilon"), stated.get("delta")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < math.inf:
            raise UserError(f'{option} states "private": true without a finite "epsilon" > 0; {fix}')
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise UserError(f'{option} states "private": true without a "delta" in [0, 1); {fix}')
    for key in ("unit", "adjacency", "accountant"):
        if key in stated and not isinstance(stated[key], str):
            raise UserError(f'{option}: "{key}" must be text; {fix}')
    return stated


def _privacy_from_card(card: str) -> dict | None:
    """The guarantee of a synthetic corpus card written before corpora carried ``privacy.json``."""
    if "without differential privacy" in card:
        return {"private": False}
    rows = dict(re.findall(r"^\| (epsilon|delta) \| ([0-9.eE+-]+) \|$", card, flags=re.MULTILINE))
    if {"epsilon", "delta"} <= rows.keys():
        return {"private": True, "epsilon": float(rows["epsilon"]), "delta": float(rows["delta"])}
    return None
