"""Whether a run used a canonical recipe, recomputed from its record rather than read from it.

A run's recipe is its ``recipe.settings`` (what decides the scores once the release and the candidate
corpus are fixed, as :mod:`continuousbench.harness.recipe` applies them); :func:`digest` is the one
digest of those settings, used by the harness, the leaderboard, ``report`` and ``compare``. The published
list of canonical digests (``canonical_recipes.json``, package data) keeps every digest a canonical recipe
ever had, with the dates it was canonical: a recipe changed on purpose gets a new entry, and the old one is
closed (``until``) rather than deleted, so a record made before says which version it used.

:func:`standing` never trusts the record's own ``canonical`` or ``name``: a record is canonical when the
digest of its settings equals the digest it records AND is a current entry of the list. Settings that do
not hash to their recorded digest (an edited record), a superseded digest and a digest that was never
canonical are each listed apart with their reason.

    python -m continuousbench.harness.recipe --update recipes/configs/*.yaml   # after a recipe changed
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LIST_FILE = Path(__file__).with_name("canonical_recipes.json")
OLD_SCHEMA = "recorded before recipes were named (schema < 4)"


def digest(settings: dict[str, Any]) -> str:
    """sha256 of the settings as canonical JSON (sorted keys): the recipe's identity."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()


def recipe_digest(record: dict) -> str:
    """The digest of a record's recipe, recomputed from its settings; records older than schema 4 have
    none, so their recorded ``recipe.sha256`` (every effective setting, hardware included) stands in."""
    recipe = record.get("recipe") or {}
    settings = recipe.get("settings")
    return digest(settings) if isinstance(settings, dict) else str(recipe.get("sha256"))


@cache
def published() -> tuple[dict, ...]:
    """Every entry of the published list: name, sha256, since (date), until (date; null: canonical now)."""
    return tuple(json.loads(LIST_FILE.read_text(encoding="utf-8"))["recipes"])


def current() -> dict[str, str]:
    """name -> digest of the recipes that are canonical now."""
    return {e["name"]: e["sha256"] for e in published() if e["until"] is None}


@dataclass(frozen=True)
class Standing:
    """Where a record's run belongs: the main table (``canonical``, under ``name``) or apart, and why."""

    canonical: bool
    name: str | None
    why_apart: str | None


def standing(record: dict) -> Standing:
    """The recomputed standing of ``record`` (see the module docstring)."""
    recipe = record.get("recipe") or {}
    if not isinstance(recipe.get("settings"), dict):
        return Standing(False, None, OLD_SCHEMA)
    found = digest(recipe["settings"])
    if found != recipe.get("sha256"):
        return Standing(False, None, "its recipe settings do not hash to the recipe digest it records")
    entries = [e for e in published() if e["sha256"] == found]
    now = next((e for e in entries if e["until"] is None), None)
    if now is not None:
        return Standing(True, now["name"], None)
    if entries:
        last = max(entries, key=lambda e: e["until"])
        dates = f"from {last['since']} until {last['until']}"
        return Standing(False, None, f"made with {last['name']} as it was canonical {dates} (superseded)")
    return Standing(False, None, recipe.get("why_not_canonical") or "not one of the canonical recipes")


def recipe_label(record: dict) -> str:
    """A run's recipe as rows show it: its canonical name (recomputed), else ``non-canonical <digest>``."""
    return standing(record).name or f"non-canonical {recipe_digest(record)[:8]}"
