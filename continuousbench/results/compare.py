"""``continuousbench compare RUN_A RUN_B [--matcher exact_match] [--json]``: is A better than B?

Both runs answered the same test questions (same release, same split), so the comparison is paired
question by question: the difference in accuracy with Newcombe's score 95% interval for paired
proportions (it keeps its coverage when few questions are discordant) and the exact McNemar p-value
on the questions exactly one run got right, overall and per support stratum
(``>=k`` thresholds and buckets, as in ``results.json``). Pairing removes the question-difficulty
variance that comparing two separate intervals would count twice. Runs scored on different question
sets are refused: their published accuracies are not the ones compared. ``--overlap`` compares them on
the questions both answered and says how many each run lost. Runs made with different recipes (the
``recipe.sha256`` digest of the harness's settings) are refused too: a difference would mix the corpus's
effect with the recipe's; ``--different_recipes`` compares them anyway and the output says so. A run
scored without training (``--steps 0``, the base model) is the baseline of every recipe and pairs with any.

    continuousbench compare runs/syn runs/dp-syn-eps10
    continuousbench compare runs/syn runs/dp-syn-eps10 --matcher contains --json
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command, listed, wide_console
from continuousbench.errors import UserError
from continuousbench.scoring.match import (
    MATCHERS,
    SCORES,
    SUPPORT_BUCKETS,
    THRESHOLDS,
    bucket_bounds,
    bucket_rows,
    threshold_rows,
)
from continuousbench.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE, paired_difference

KEY = ["part", "split", "id"]


@dataclass
class CompareArguments:
    runs: list[str] = listed("RUN_A RUN_B: two run folders on the same release and split.", positional=True)
    matcher: str = field(
        default="exact_match", metadata={"help": "Matcher (or mcq) compared.", "choices": list(SCORES)}
    )
    resamples: int = field(
        default=BOOTSTRAP_RESAMPLES, metadata=bounds("[1, 10000000]", "Bootstrap resamples.")
    )
    seed: int = field(default=BOOTSTRAP_SEED, metadata={"help": "Bootstrap seed."})
    json: bool = field(default=False, metadata={"help": "Print the comparison as JSON instead of a table."})
    different_judges: bool = field(
        default=False,
        metadata={"help": "Compare llm_match across different judges anyway (the output flags it)."},
    )
    overlap: bool = field(
        default=False,
        metadata={"help": "Compare runs scored on different question sets on the questions both answered."},
    )
    different_recipes: bool = field(
        default=False,
        metadata={"help": "Compare runs made with different harness recipes anyway (the output flags it)."},
    )


def _predictions(path: Path):
    import pandas as pd

    from continuousbench.results.record import PREDICTIONS

    file = path / PREDICTIONS
    if not file.is_file():
        raise FileNotFoundError(f"{path} has no {PREDICTIONS}: compare needs two finished harness runs")
    return pd.read_parquet(file)


def paired_strata(frame, *, resamples: int, seed: int) -> dict:
    """Per part: the paired difference overall, by ``>=k`` threshold and by support bucket.

    ``frame`` has one row per question answered by both runs: ``part``, ``support_count`` and the
    booleans ``a`` and ``b`` (correct or not). Empty strata are left out.
    """
    out = {}
    for part, rows in frame.groupby("part", sort=True):
        a, b = rows["a"].to_numpy(bool), rows["b"].to_numpy(bool)
        support = rows["support_count"].tolist()

        def diff(index: list[int], a=a, b=b) -> dict:
            return paired_difference(a[index], b[index], resamples=resamples, seed=seed)

        strata = {f">={k}": threshold_rows(support, k) for k in THRESHOLDS}
        buckets = [(lo, hi, bucket_rows(support, lo, hi)) for lo, hi in bucket_bounds(SUPPORT_BUCKETS)]
        out[part] = {
            "overall": diff(list(range(len(rows)))),
            "by_support": {name: diff(index) for name, index in strata.items() if index},
            "buckets": [{"low": lo, "high": hi, **diff(index)} for lo, hi, index in buckets if index],
        }
    return out


def _judges(a_dir: Path, rec_a: dict, b_dir: Path, rec_b: dict, matcher: str, allow: bool) -> dict | None:
    """For llm_match: both runs' judges and whether they are the same; refuses different ones unless
    ``allow`` (a record without a judge entry counts as an unknown judge)."""
    from continuousbench.errors import UserError
    from continuousbench.scoring.judge import label, same_judge

    ja, jb = rec_a.get("judge"), rec_b.get("judge")
    scored = all("llm_match" in rec.get("matchers", ()) for rec in (rec_a, rec_b))
    if matcher != "llm_match" or (ja is None and jb is None and not scored):
        return None  # a run not scored with llm_match is refused below, by name
    same = same_judge(ja, jb)
    if not same and not allow:
        raise UserError(
            f"{a_dir} was judged by {label(ja)}, {b_dir} by {label(jb)}: their llm_match verdicts are not "
            "comparable; rescore with one judge, or pass --different_judges to compare anyway (flagged)"
        )
    return {"a": label(ja), "b": label(jb), "same": same}


def _recipes(a_dir: Path, rec_a: dict, b_dir: Path, rec_b: dict, allow: bool) -> dict:
    """Both runs' recipes and whether they are the same; refuses different ones unless ``allow``."""
    from continuousbench.results.canonical import recipe_digest, recipe_label

    ra, rb = rec_a.get("recipe") or {}, rec_b.get("recipe") or {}
    same = recipe_digest(rec_a) == recipe_digest(rec_b)
    baseline = 0 in (rec_a.get("steps"), rec_b.get("steps"))  # the untrained base model: every recipe's
    if not (same or baseline or allow):
        sa, sb = ra.get("settings") or {}, rb.get("settings") or {}
        changed = [k for k in sorted(set(sa) | set(sb)) if sa.get(k) != sb.get(k)]
        shown = ", ".join(f"{k} {sa.get(k)} vs {sb.get(k)}" for k in changed[:3])
        raise UserError(
            f"{a_dir} was made with recipe {recipe_label(rec_a)}, {b_dir} with {recipe_label(rec_b)}"
            f"{f' ({shown})' if shown else ''}: a difference would mix the corpus with the recipe; evaluate "
            "both with one recipe, or pass --different_recipes to compare anyway (flagged)"
        )
    return {"a": recipe_label(rec_a), "b": recipe_label(rec_b), "same": same or baseline}


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    *,
    matcher: str = "exact_match",
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    different_judges: bool = False,
    overlap: bool = False,
    different_recipes: bool = False,
) -> dict:
    """The paired comparison of two run folders (see the module docstring); refuses unlike runs, and
    llm_match verdicts of different judges unless ``different_judges`` (then the result flags it), runs
    scored on different question sets unless ``overlap``, and runs of different recipes unless
    ``different_recipes`` (flagged too)."""
    from continuousbench.results.record import benchmark
    from continuousbench.results.record import load as load_record

    a_dir, b_dir = Path(run_a), Path(run_b)
    rec_a, rec_b = load_record(a_dir), load_record(b_dir)
    (on_a, digest_a), (on_b, digest_b) = benchmark(rec_a), benchmark(rec_b)
    if (on_a, digest_a) != (on_b, digest_b):
        raise UserError(
            f"{a_dir} is scored on {on_a} ({str(digest_a)[:12]}), {b_dir} on {on_b} ({str(digest_b)[:12]}): "
            "compare runs on the same release (or classification test set)"
        )
    recipes = _recipes(a_dir, rec_a, b_dir, rec_b, different_recipes)
    for path, rec in ((a_dir, rec_a), (b_dir, rec_b)):  # the cause first, before comparing judges
        if matcher == "llm_match" and rec.get("judge") is None and "llm_match" not in rec.get("matchers", ()):
            raise UserError(
                f"{path} was not judged (evaluated without --judge), so it has no llm_match; rerun it "
                "with --judge <spec>, or compare --matcher exact_match or contains"
            )
    judges = _judges(a_dir, rec_a, b_dir, rec_b, matcher, different_judges)
    pa, pb = _predictions(a_dir), _predictions(b_dir)
    for path, table in ((a_dir, pa), (b_dir, pb)):
        if matcher not in table.columns:
            raise UserError(f"{path} was not scored with {matcher}; pick --matcher from {MATCHERS[:2]}")
    splits_a, splits_b = set(pa["split"]), set(pb["split"])
    if splits_a != splits_b:
        raise UserError(
            f"{a_dir} is scored on split {sorted(splits_a)}, {b_dir} on {sorted(splits_b)}: "
            "compare runs scored on the same split"
        )
    both = pa[[*KEY, "support_count", matcher]].merge(
        pb[[*KEY, matcher]], on=KEY, suffixes=("_a", "_b"), validate="one_to_one"
    )
    if both.empty:
        raise UserError(f"{a_dir} and {b_dir} share no question: were they scored on different subsets?")
    only_a, only_b = len(pa) - len(both), len(pb) - len(both)
    if (only_a or only_b) and not overlap:
        raise UserError(
            f"{a_dir} and {b_dir} were scored on different question sets ({only_a} questions in A only, "
            f"{only_b} in B only): their published accuracies are not comparable; pass --overlap to "
            "compare them on the questions both answered"
        )
    frame = both.assign(
        a=both[f"{matcher}_a"].fillna(False).astype(bool), b=both[f"{matcher}_b"].fillna(False).astype(bool)
    )  # no judge verdict counts as wrong, as in scoring
    return {
        "run_a": str(a_dir),
        "run_b": str(b_dir),
        "release": on_a,
        "split": sorted(splits_a),
        "matcher": matcher,
        **({"judges": judges} if judges else {}),
        "recipes": recipes,
        "bootstrap": {
            "method": "percentile, paired",
            "resamples": resamples,
            "seed": seed,
            "confidence": CONFIDENCE,
        },
        "questions": {"paired": len(frame), "only_a": only_a, "only_b": only_b},
        "parts": paired_strata(frame, resamples=resamples, seed=seed),
    }


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def _lost(questions: dict) -> str:
    if not (questions["only_a"] or questions["only_b"]):
        return ""
    return (
        f"\nOVERLAP ONLY: A lost {questions['only_a']} questions B did not answer, B lost "
        f"{questions['only_b']}; accuracies here are not the published ones"
    )


def print_comparison(result: dict, console=None, names: Sequence[str] | None = None) -> None:
    """A rich table: one row per part x stratum, the difference in points with its interval; the runs
    are called ``names`` (default: their folders' names)."""
    from rich.table import Table

    names = names or (Path(result["run_a"]).name, Path(result["run_b"]).name)
    boot = result["bootstrap"]
    table = Table(
        title=f"{names[0]} (A) vs {names[1]} (B): {result['matcher']} on {result['release']} "
        f"{'/'.join(result['split'])}, {result['questions']['paired']} paired questions",
        caption="A-B in points; 95% Newcombe score interval for paired proportions; exact McNemar p on "
        f"questions only one run got right; percentile paired bootstrap ({boot['resamples']} resamples, "
        f"seed {boot['seed']}) in --json only" + _lost(result["questions"]),
    )
    for col in ("part", "stratum", "n", "A %", "B %", "A-B", "95% CI", "A only", "B only", "McNemar p"):
        table.add_column(col, justify="left" if col in ("part", "stratum") else "right")
    for part, strata in result["parts"].items():
        by_support = [(k, v) for k, v in strata["by_support"].items() if k != ">=0"]  # >=0 is "all"
        rows = [("all", strata["overall"]), *by_support]
        rows += [(f"[{b['low']}, {b['high'] or 'inf'})", b) for b in strata["buckets"]]
        for name, d in rows:
            low, high = d["ci95"]
            table.add_row(
                part,
                name,
                str(d["n"]),
                _pct(d["accuracy_a"]),
                _pct(d["accuracy_b"]),
                f"{100 * d['difference']:+.1f}",
                f"[{100 * low:+.1f}, {100 * high:+.1f}]",
                str(d["a_only"]),
                str(d["b_only"]),
                f"{d['p_value']:.3g}",
            )
    judges = result.get("judges")
    if judges and not judges["same"]:
        table.caption += f"\nDIFFERENT JUDGES: A by {judges['a']}, B by {judges['b']} (--different_judges)"
    recipes = result.get("recipes")
    if recipes and not recipes["same"]:
        table.caption += f"\nDIFFERENT RECIPES: A {recipes['a']}, B {recipes['b']} (--different_recipes)"
    (console or wide_console(140)).print(table)


def main(args: CompareArguments) -> dict:
    """Compare and print (a table, or JSON with ``--json``); return the comparison."""
    if len(args.runs) != 2:
        raise UserError(
            f"compare takes two run folders, got {len(args.runs)} ({' '.join(args.runs) or 'none'}): "
            "continuousbench compare RUN_A RUN_B"
        )
    result = compare_runs(
        *args.runs,
        matcher=args.matcher,
        resamples=args.resamples,
        seed=args.seed,
        different_judges=args.different_judges,
        overlap=args.overlap,
        different_recipes=args.different_recipes,
    )
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_comparison(result)
    return result


make_parser, cli = command(
    CompareArguments,
    "continuousbench compare",
    __doc__.splitlines()[0],
    main,
)
