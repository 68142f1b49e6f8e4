"""Proxy metrics ranked against QA: does a cheap measure order a study's synthetic corpora the way the
harness does? (The DP synthetic-text recipe, App. L: a proxy is only useful through its rank
correlation with downstream quality.)

    continuousbench proxies --study demo-out --output proxies.json --plot proxies.png

For every corpus under ``<study>/synthetic/`` that an evaluator scored, the QA accuracy (mean over
seeds) is set beside each proxy it has: MAUVE against the real corpus (``mauve/<name>.json``), its
generator's validation loss (``generators/<name>/privacy.json``; perplexity is its exponential, so it
ranks the same), the FID of its embeddings against the real corpus (``--model``; the study's MAUVE job
already measured it where it used the same featuriser, ``mauve/<name>.json``), and singleton leakage
(facts of the release's sensitive entities repeated verbatim). Spearman's rho and Kendall's tau (scipy)
come with percentile bootstrap intervals over corpora, whose coverage is poor with a handful of corpora,
and beside them an exact permutation p-value (every pairing of the n corpora while n! is at most
``EXACT_PERMUTATIONS``, a seeded sample of them beyond), which holds at any n; n is stated with each.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

PROXIES = ("mauve", "validation_loss", "fid", "leakage")
MIN_CORPORA = 3  # below this a rank correlation says nothing


@dataclass
class ProxiesArguments:
    study: str = field(metadata={"help": "A study's output folder (synthetic/, runs/, mauve/, generators/)."})
    evaluator: str | None = field(
        default=None, metadata={"help": "Whose QA ranks the corpora (default: the first with runs)."}
    )
    part: str = field(
        default="qa_public", metadata={"help": "QA part.", "choices": ["qa_public", "qa_singleton"]}
    )
    matcher: str = field(
        default="exact_match",
        metadata={"help": "QA matcher.", "choices": ["exact_match", "contains", "llm_match"]},
    )
    release: str | None = field(
        default=None, metadata={"help": "Release folder or id (leakage, FID); default: the study's own."}
    )
    model: str | None = field(
        default=None,
        metadata={"help": "Embedding model folder for FID (else none); MAUVE's FID where it used this one."},
    )
    n_samples: int = field(default=500, metadata=bounds("[2, inf)", "Texts per side embedded for FID."))
    bootstrap: int = field(default=2000, metadata=bounds("[1, inf)", "Bootstrap resamples per interval."))
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of the bootstrap and the FID samples."))
    output: str | None = field(default=None, metadata={"help": "Write the table as JSON here."})
    plot: str | None = field(default=None, metadata={"help": "Draw proxy against QA, one point per corpus."})
    overwrite: bool = field(default=False, metadata={"help": "Replace existing --output/--plot files."})


EXACT_PERMUTATIONS = 40_320  # 8!: every pairing is enumerated up to 8 corpora
SAMPLED_PERMUTATIONS = 9_999  # beyond, a seeded sample of pairings (standard error 0.002 at p = 0.05)


def _spearman(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho along ``axis`` (average ranks for ties), for many pairings at once."""
    from scipy.stats import rankdata

    ra, rb = (rankdata(v, axis=axis) for v in (a, b))
    ra, rb = (r - r.mean(axis=axis, keepdims=True) for r in (ra, rb))
    return (ra * rb).sum(axis) / np.sqrt((ra * ra).sum(axis) * (rb * rb).sum(axis))


def _kendall(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Kendall's tau-b along ``axis`` (scipy's default, ties corrected), for many pairings at once."""
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    da = np.sign(a[..., :, None] - a[..., None, :])
    db = np.sign(b[..., :, None] - b[..., None, :])
    return (da * db).sum((-2, -1)) / np.sqrt((da * da).sum((-2, -1)) * (db * db).sum((-2, -1)))


def permutation_p(x: np.ndarray, y: np.ndarray, statistic, seed: int) -> dict[str, Any]:
    """Two-sided permutation p-value of a correlation ``statistic`` between ``x`` and ``y`` (scipy's
    ``permutation_test`` over pairings, vectorised): exact while n! <= ``EXACT_PERMUTATIONS``."""
    from scipy.stats import permutation_test

    exact = math.factorial(len(x)) <= EXACT_PERMUTATIONS
    test = permutation_test(
        (x, y),
        statistic,
        vectorized=True,
        permutation_type="pairings",
        alternative="two-sided",
        n_resamples=EXACT_PERMUTATIONS if exact else SAMPLED_PERMUTATIONS,
        batch=2_000,
        rng=np.random.default_rng(seed),
    )
    return {"p_value": float(test.pvalue), "permutations": "all" if exact else SAMPLED_PERMUTATIONS}


def rank_correlations(qa: list[float], proxy: list[float], *, resamples: int, seed: int) -> dict[str, Any]:
    """Spearman and Kendall between ``qa`` and ``proxy`` with 95% percentile bootstrap intervals and
    permutation p-values (:func:`permutation_p`).

    Hand-rolled resampling rather than ``scipy.stats.bootstrap``: a resample of a few corpora often
    repeats one corpus throughout, whose correlation is undefined (NaN); those are dropped here, where
    scipy would return a NaN interval. The resamples are computed at once (:func:`_spearman`,
    :func:`_kendall`: scipy's statistics, vectorised; a loop of scipy calls took seconds).
    """
    from scipy.stats import kendalltau, spearmanr

    x, y = np.asarray(qa, dtype=float), np.asarray(proxy, dtype=float)
    out: dict[str, Any] = {"n": len(x)}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(x), size=(resamples, len(x)))
    xs, ys = x[draws], y[draws]
    varied = (xs.max(1) > xs.min(1)) & (ys.max(1) > ys.min(1))  # a constant side has no correlation
    for name, fn, statistic in (("spearman", spearmanr, _spearman), ("kendall", kendalltau, _kendall)):
        value = float(fn(x, y).statistic)
        boot = statistic(xs[varied], ys[varied]) if varied.any() else np.array([])
        boot = boot[~np.isnan(boot)]
        low, high = np.percentile(boot, [2.5, 97.5]) if boot.size else (math.nan, math.nan)
        p = permutation_p(x, y, statistic, seed)
        out[name] = {"value": value, "ci95": [float(low), float(high)], **p}
    return out


def _qa(study: Path, evaluator: str | None, part: str, matcher: str) -> tuple[str, dict[str, float]]:
    """(evaluator, corpus -> mean QA accuracy over its seeds) from ``runs/<evaluator>/<corpus>-seed*``."""
    from continuousbench.files import read_json

    evaluators = sorted(p.name for p in (study / "runs").glob("*") if p.is_dir())
    if evaluator is None:
        evaluator = evaluators[0] if evaluators else ""
    if evaluator not in evaluators:
        raise UserError(
            f"--study {study} has no runs of evaluator {evaluator or 'any'} under runs/; "
            f"its evaluators: {', '.join(evaluators) or 'none'}"
        )
    scores: dict[str, list[float]] = {}
    for file in sorted((study / "runs" / evaluator).glob("*-seed*/results.json")):
        corpus = file.parent.name.rsplit("-seed", 1)[0]
        metric = read_json(file)["metrics"].get(part, {}).get("metrics", {}).get(matcher, {})
        if metric.get("accuracy") is not None:
            scores.setdefault(corpus, []).append(metric["accuracy"])
    return evaluator, {k: float(np.mean(v)) for k, v in scores.items()}


def _mauve_file(study: Path, name: str) -> dict[str, Any] | None:
    """Corpus ``name``'s MAUVE result in the study (``candidate_vs_reference``), if it has one."""
    from continuousbench.files import read_json

    file = study / "mauve" / f"{name}.json"
    return read_json(file)["candidate_vs_reference"] if file.is_file() else None


def _mauve(study: Path, name: str) -> float | None:
    found = _mauve_file(study, name)
    return found["mean"] if found else None


def _validation_loss(study: Path, name: str) -> float | None:
    from continuousbench.files import read_json

    file = study / "generators" / name / "privacy.json"
    return read_json(file).get("validation", {}).get("loss") if file.is_file() else None


def _release(study: Path, given: str | None) -> str | None:
    """``--release``, else the one release the study built (None: no leakage, no FID)."""
    if given:
        return given
    found = sorted(p for p in (study / "releases").glob("*") if (p / "release.json").is_file())
    return str(found[0]) if len(found) == 1 else None


def collect(args: ProxiesArguments) -> tuple[str, dict[str, dict[str, float | None]]]:
    """(evaluator, corpus -> {"qa": ..., proxy: value or None}) for every scored synthetic corpus."""
    from continuousbench.training.data import load_corpus

    study = Path(args.study).expanduser()
    if not (study / "synthetic").is_dir():
        if (study / "manifest.json").is_file():  # a study of a participant's own corpora alone
            raise UserError(
                f"--study {args.study} made no corpus (no synthetic/): proxies ranks the "
                "corpora a study's generators and PE made, not a participant's own"
            )
        raise UserError(
            f"--study {args.study} has no synthetic/ folder: pass a `continuousbench study` output folder"
        )
    evaluator, qa = _qa(study, args.evaluator, args.part, args.matcher)
    names = sorted(p.name for p in (study / "synthetic").iterdir() if p.name in qa)
    if len(names) < MIN_CORPORA:
        raise UserError(
            f"--study {args.study} has {len(names)} synthetic corpora scored by evaluator {evaluator}; rank "
            f"correlations need at least {MIN_CORPORA}"
        )
    release = _release(study, args.release)
    texts = {n: list(load_corpus(str(study / "synthetic" / n))["text"]) for n in names}
    table = {
        n: {"qa": qa[n], "mauve": _mauve(study, n), "validation_loss": _validation_loss(study, n)}
        for n in names
    }
    for n, value in _leakage(release, texts).items():
        table[n]["leakage"] = value
    for n, value in _fid(args, release, texts, study).items():
        table[n]["fid"] = value
    return evaluator, table


def _leakage(release: str | None, texts: dict[str, list[str]]) -> dict[str, float | None]:
    """Share of the release's singleton facts each corpus repeats verbatim (None without one release)."""
    from continuousbench.diagnostics.leakage import singleton_facts, summary

    if release is None:
        return dict.fromkeys(texts)
    facts = singleton_facts(release)
    return {n: summary(facts, t)["share_leaked"] if facts else None for n, t in texts.items()}


def _mauve_fid(study: Path, name: str, model: str) -> float | None:
    """The FID the study's MAUVE job measured for corpus ``name`` with the featuriser ``model``, if any."""
    found = _mauve_file(study, name) or {}
    same = Path(str(found.get("model"))).expanduser().absolute() == Path(model).expanduser().absolute()
    return found.get("fid") if same else None


def _fid(args: ProxiesArguments, release: str | None, texts: dict[str, list[str]], study: Path) -> dict:
    """FID of each corpus's embeddings against the real training corpus's: the study's MAUVE job's where
    it used the same featuriser (``--model``; the same features, so nothing is embedded twice), else
    embedded here (seeded samples)."""
    if args.model is None or release is None:
        return dict.fromkeys(texts)
    measured = {n: _mauve_fid(study, n, args.model) for n in texts}
    missing = {n: t for n, t in texts.items() if measured[n] is None}
    if not missing:
        return measured
    from continuousbench.embeddings.encoders import embed_texts
    from continuousbench.embeddings.fid import frechet_distance
    from continuousbench.training.data import load_corpus

    rng = np.random.default_rng(args.seed)

    def sample(rows: list[str]) -> list[str]:
        picked = rng.choice(len(rows), size=min(args.n_samples, len(rows)), replace=False)
        return [rows[i] for i in sorted(picked)]

    real = embed_texts(sample(list(load_corpus(release, split="train")["text"])), args.model)
    embedded = {n: frechet_distance(embed_texts(sample(t), args.model), real) for n, t in missing.items()}
    return measured | embedded


def correlate(table: dict[str, dict], resamples: int, seed: int) -> dict[str, dict[str, Any]]:
    """Each proxy's rank correlations with QA over the corpora that have it (a note when too few)."""
    out = {}
    for proxy in PROXIES:
        have = [(row["qa"], row[proxy]) for row in table.values() if row.get(proxy) is not None]
        if len(have) < MIN_CORPORA:
            out[proxy] = {"n": len(have), "note": f"fewer than {MIN_CORPORA} corpora have it"}
            continue
        if len({v for _, v in have}) == 1 or len({q for q, _ in have}) == 1:  # no ranks to correlate
            out[proxy] = {"n": len(have), "note": "the same for every corpus: no ranking"}
            continue
        qa, values = zip(*have, strict=True)
        out[proxy] = rank_correlations(list(qa), list(values), resamples=resamples, seed=seed)
    return out


def format_table(result: dict[str, Any]) -> str:
    """The correlations as a plain-text table (the report's proxy table)."""
    corpora = len(result["corpora"])
    lines = [
        f"Proxies ranked against {result['qa']} ({result['evaluator']}), {corpora} corpora "
        "(p: permutation test)",
        f"{'proxy':<16}{'n':>3}  {'Spearman [95% CI] p':<36}{'Kendall [95% CI] p':<36}",
    ]
    for proxy, r in result["correlations"].items():
        if "note" in r:
            lines.append(f"{proxy:<16}{r['n']:>3}  {r['note']}")
            continue
        cells = [
            f"{r[k]['value']:+.2f} [{r[k]['ci95'][0]:+.2f}, {r[k]['ci95'][1]:+.2f}] p={r[k]['p_value']:.3g}"
            for k in ("spearman", "kendall")
        ]
        lines.append(f"{proxy:<16}{r['n']:>3}  {cells[0]:<36}{cells[1]:<36}")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    """One panel per proxy: the proxy against QA accuracy, one labelled point per corpus."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from continuousbench.files import atomic_write

    fig, axes = plt.subplots(1, len(PROXIES), figsize=(4 * len(PROXIES), 3.6), squeeze=False)
    for ax, proxy in zip(axes[0], PROXIES, strict=True):
        rows = result["corpora"].items()
        points = [(row[proxy], row["qa"], n) for n, row in rows if row.get(proxy) is not None]
        for x, y, name in points:
            ax.scatter(x, y, color="tab:blue")
            ax.annotate(name, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        r = result["correlations"][proxy]
        ax.set_title(f"{proxy}: rho {r['spearman']['value']:+.2f}" if "spearman" in r else f"{proxy}: n/a")
        ax.set_xlabel(proxy)
        ax.set_ylabel(result["qa"])
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120))
    plt.close(fig)


def main(args: ProxiesArguments) -> dict[str, Any]:
    from continuousbench.files import check_output_files, write_json

    outputs = check_output_files({"--output": args.output, "--plot": args.plot}, overwrite=args.overwrite)
    evaluator, table = collect(args)
    result = {
        "evaluator": evaluator,
        "qa": f"{args.part} {args.matcher}",
        "corpora": table,
        "correlations": correlate(table, args.bootstrap, args.seed),
    }
    if outputs.get("--output") is not None:
        write_json(outputs["--output"], result)
    if outputs.get("--plot") is not None:
        plot(result, outputs["--plot"])
    return result


make_parser, cli = command(
    ProxiesArguments,
    "continuousbench proxies",
    "Rank correlations (Spearman, Kendall, bootstrap intervals) between QA and proxy metrics over a study.",
    main,
    report=lambda result: print(format_table(result)),
)
