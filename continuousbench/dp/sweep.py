"""A grid of training settings, one run each, and the rule that picks the published run (App. F: the
learning rate and the clipping norm must be swept).

``--sweep learning_rate=1e-4,2e-4,clip_norm=1e-3,1e-2`` is a 2 x 2 grid: a ``key=`` starts a setting and
the values after it are its choices. Every run reads the private corpus, so ``--epsilon`` is the budget of
the whole sweep: the noise is calibrated for all runs composed (:func:`~continuousbench.dp.plan.make_plan`
with ``runs``), and that composition is the published generator's guarantee. Only settings that leave the
DP plan's noise unchanged may be swept. ``--lr_sweep`` is the learning-rate-only grid.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

from continuousbench.errors import UserError

# Settings a sweep may vary: the noise multiplier does not depend on them (clipping is normalised).
SWEEPABLE = ("learning_rate", "clip_norm", "weight_decay", "warmup_steps", "adam_beta1", "adam_beta2")
SELECTION_RULE = "lowest validation loss (computed without noise on the validation split)"
SHORT = {"learning_rate": "lr"}  # run folders keep --lr_sweep's names


def parse(text: str, options: set[str], option: str = "--sweep") -> dict[str, list[float]]:
    """``key=v1,v2,key2=v3`` -> {key: [v1, v2], key2: [v3]}, keys checked against the command's options."""
    grid: dict[str, list[float]] = {}
    key = None
    for token in (t.strip() for t in text.split(",")):
        if "=" in token:
            key, token = (s.strip() for s in token.split("=", 1))
            if key not in options:
                raise UserError(
                    f"{option} key {key!r} is not an option of train-generator; sweep one of "
                    f"{', '.join(SWEEPABLE)}"
                )
            if key not in SWEEPABLE:
                raise UserError(
                    f"{option} key {key!r} cannot be swept (it changes the DP plan or the data); "
                    f"sweep one of {', '.join(SWEEPABLE)}"
                )
            if key in grid:
                raise UserError(f"{option} names {key} twice; list its values once: {key}=a,b")
            grid[key] = []
        if key is None:
            raise UserError(f"{option} {text!r} must start with a setting, e.g. learning_rate=1e-4,2e-4")
        if token:
            grid[key].append(_number(token, key, option))
    empty = [k for k, v in grid.items() if not v]
    if not grid or empty:
        raise UserError(f"{option} {text!r} gives no values for {', '.join(empty) or 'any setting'}")
    return grid


def _number(token: str, key: str, option: str) -> float:
    try:
        value = float(token)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise UserError(f"{option} value {token!r} of {key} must be a positive number")
    return value


def runs(grid: dict[str, list[float]]) -> list[dict[str, float]]:
    """Every combination, in the grid's order (the first key varies slowest)."""
    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


def run_name(settings: dict[str, float]) -> str:
    """The run's folder in the work folder, e.g. ``lr-0.0001`` or ``lr-0.0001_clip_norm-0.01``."""
    return "_".join(f"{SHORT.get(k, k)}-{v:g}" for k, v in settings.items()) or "run"


def configure(config, plan, settings: dict[str, float]):
    """(trainer config, DP plan) of one run: the swept settings replace the given ones."""
    run_config = dataclasses.replace(config, **settings)
    if plan is not None and "clip_norm" in settings:
        plan = dataclasses.replace(plan, clip_norm=settings["clip_norm"])
    return run_config, plan


def record(grid: dict[str, list[float]], results: dict[str, dict[str, Any]], chosen: str) -> dict[str, Any]:
    """The selection as ``privacy.json`` states it: the grid, the rule, every run's score, the choice."""
    return {
        "grid": grid,
        "rule": SELECTION_RULE,
        "runs": [{**r["settings"], "validation_loss": r["validation_loss"]} for r in results.values()],
        "selected": results[chosen]["settings"],
    }
