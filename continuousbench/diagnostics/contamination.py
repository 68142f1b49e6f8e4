"""Has a model seen a release's corpus? Membership scores on the corpus against unseen controls.

    continuousbench contamination --model google/gemma-3-1b-pt --release geminon-small-2026q1

Each document gets two membership scores, both the mean over its ``k``% least likely tokens:

* **Min-K%** (Shi et al. 2023): the token's log-probability ``log p(x_t | x_<t)``.
* **Min-K%++** (Zhang et al. 2024): that log-probability standardised by the model's next-token
  distribution at that position, ``(log p(x_t) - mu_t) / sigma_t`` with ``mu_t = E_z[log p(z)]`` and
  ``sigma_t^2 = Var_z[log p(z)]``, ``z ~ p(. | x_<t)``: a trained-on text sits near a local maximum of
  the likelihood, so its tokens stand out against the other tokens the model could have predicted.

**Geminon: the unit is the world.** The entities and documents of one world share its generator draw
(its names, its phrasing), so they are not independent draws, and a test that counts them as such flags
models that saw nothing (a pretrained base, 30 ordered pairs of unseen worlds: p < 0.01 in 4). What
varies independently is the world: the release is compared with ``--controls`` worlds built fresh from
the same generator with other seeds (same size, quarter and realizer; seeds derived from the release's,
never a published one). Under the null, the model saw none of them, so the release's score (the mean
over its entities of their documents' mean) is one more exchangeable draw from the distribution of
world scores: a one-sided prediction t-test (the release against the controls' mean and spread, M - 1
degrees of freedom) gives the p-value, and the release's rank among the M + 1 worlds is reported beside
it. ``benchmarks/contamination_null.py`` measures the false-positive rate on worlds the model never saw.

**NEWS: the unit is the document, against a date-matched control.** A NEWS release is a uniform sample
of the deduplicated articles of its weeks; the articles its sample dropped (or that were never sampled,
from the same weeks) are the control, drawn week by week to match the release's weeks. Under the null
the two are exchangeable documents, and a one-sided Mann-Whitney test compares them. Topic and date
alone can separate two sets of articles (Duan et al. 2024; Das et al. 2024), so a blind baseline (a
bag-of-words classifier, cross-validated) is run first: when it tells release from control apart, the
verdict is withheld and the report says why.

Every report carries each document's and each unit's scores, so that anyone can recompute the test.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.commands import bounds, command, listed
from continuousbench.diagnostics.report_arguments import ReportArguments, options
from continuousbench.errors import UserError

log = logging.getLogger(__name__)

SCORES = ("min_k_plus_plus", "min_k")  # the first gives the verdict
CONTROLS = 10  # Geminon control worlds: a t-test on 9 degrees of freedom
MAX_UNKNOWN = 0.01  # share of <unk> tokens above which the tokenizer cannot score the corpus
BLIND_ALPHA = 0.05  # NEWS: a bag-of-words classifier separating release and control at this level withholds


def min_k(values: np.ndarray, k: float) -> float:
    """Mean of the ``k`` share (at least one) of the lowest ``values``."""
    count = max(1, math.ceil(k * len(values)))
    return float(np.sort(values)[:count].mean())


def token_statistics(model, tokenizer, texts: Sequence[str], *, batch_size: int = 8, max_length: int = 256):
    """Per document: (log p of each next token, mu_t, sigma_t) as float64 arrays."""
    import torch

    encoded = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
    check_tokens(tokenizer, encoded, len(model.get_input_embeddings().weight))
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [None] * len(encoded)  # type: ignore[list-item]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    device = next(model.parameters()).device
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(encoded[i]) for i in rows)
            ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for j, i in enumerate(rows):
                ids[j, : len(encoded[i])] = torch.tensor(encoded[i])
                mask[j, : len(encoded[i])] = 1
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits[:, :-1].float()
            logp = torch.log_softmax(logits, dim=-1)
            probs = logp.exp()
            mu = (probs * logp).sum(-1)
            sigma = ((probs * logp.square()).sum(-1) - mu.square()).clamp_min(1e-12).sqrt()
            target = logp.gather(-1, ids[:, 1:].to(device).unsqueeze(-1)).squeeze(-1)
            for j, i in enumerate(rows):
                n = len(encoded[i]) - 1
                out[i] = tuple(t[j, :n].double().cpu().numpy() for t in (target, mu, sigma))
    return out


def check_tokens(tokenizer, encoded: list[list[int]], vocab: int) -> None:
    """A tokenizer that cannot score the corpus (unknown tokens, ids past the model's vocabulary, empty
    documents) would give scores of nothing; refuse it in one line."""
    total = sum(len(e) for e in encoded)
    short = sum(len(e) < 2 for e in encoded)
    if short:
        raise UserError(
            f"the model's tokenizer gives {short} of {len(encoded)} documents fewer than 2 tokens: it cannot "
            "score this corpus; use the model's own tokenizer"
        )
    unknown = tokenizer.unk_token_id
    share = sum(t == unknown for e in encoded for t in e) / total if unknown is not None else 0.0
    if share > MAX_UNKNOWN:
        raise UserError(
            f"the model's tokenizer maps {share:.1%} of the corpus's tokens to {tokenizer.unk_token!r}: it "
            "cannot score this corpus (use a byte-level tokenizer, e.g. the model's own)"
        )
    if max(max(e) for e in encoded) >= vocab:
        raise UserError(
            f"the tokenizer yields ids past the model's vocabulary ({vocab}): tokenizer and model do not "
            "belong together; pass a folder holding both"
        )


def membership_scores(stats, k: float) -> dict[str, np.ndarray]:
    """Min-K%++ and Min-K% of every document (higher: more likely a member)."""
    return {
        "min_k_plus_plus": np.array([min_k((lp - mu) / sigma, k) for lp, mu, sigma in stats]),
        "min_k": np.array([min_k(lp, k) for lp, _, _ in stats]),
    }


# -- samples and their scores -------------------------------------------------------------------------


@dataclass
class Sample:
    """Documents of one corpus to score: their ids, texts and units (Geminon: the subject entity)."""

    ids: list[str]
    texts: list[str]
    units: list[int | str]


def sample_corpus(release: str | Path, documents: int, seed: int, **kw: Any) -> Sample:
    """A seeded sample of ``documents`` rows of the release's ``corpus/train``; each one's unit is its
    first (subject) entity for Geminon, itself for NEWS."""
    from continuousbench.release.load import load_release

    corpus = load_release(release, "corpus", "train", **kw)
    if len(corpus) > documents:
        rows = np.random.default_rng(seed).choice(len(corpus), size=documents, replace=False)
        corpus = corpus.select(sorted(int(r) for r in rows))
    ids = [str(i) for i in corpus["id"]]
    units = [int(e[0]) for e in corpus["entities"]] if "entities" in corpus.column_names else list(ids)
    return Sample(ids, list(corpus["text"]), units)


def unit_means(scores: np.ndarray, units: Sequence) -> tuple[list, np.ndarray]:
    """(the units in sorted order, each one's mean score)."""
    keys, inverse = np.unique(np.asarray(units), return_inverse=True)
    return keys.tolist(), np.bincount(inverse, weights=scores) / np.bincount(inverse, minlength=len(keys))


@dataclass
class Scored:
    """One corpus's membership scores: per document, per unit, and the corpus's mean over units."""

    name: str
    sample: Sample
    documents: dict[str, np.ndarray]
    units: list
    unit_scores: dict[str, np.ndarray]

    @property
    def world(self) -> dict[str, float]:
        return {s: float(v.mean()) for s, v in self.unit_scores.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "world": self.world,
            "units": [
                {"unit": u, **{s: float(self.unit_scores[s][i]) for s in SCORES}}
                for i, u in enumerate(self.units)
            ],
            "documents": [
                {"id": d, "unit": u, **{s: float(self.documents[s][i]) for s in SCORES}}
                for i, (d, u) in enumerate(zip(self.sample.ids, self.sample.units, strict=True))
            ],
        }


def score_sample(
    net, tokenizer, name: str, sample: Sample, *, k: float, batch_size: int = 8, max_length: int = 256
) -> Scored:
    stats = token_statistics(net, tokenizer, sample.texts, batch_size=batch_size, max_length=max_length)
    documents = membership_scores(stats, k)
    per_unit = {s: unit_means(v, sample.units) for s, v in documents.items()}
    units = per_unit[SCORES[0]][0]
    return Scored(name, sample, documents, units, {s: v for s, (_, v) in per_unit.items()})


# -- the tests ----------------------------------------------------------------------------------------


def world_test(release: float, controls: Sequence[float]) -> dict[str, Any]:
    """One-sided prediction t-test of one world's score against ``controls`` (the others' scores):
    ``t = (x - mean) / (sd * sqrt(1 + 1/M))`` on ``M - 1`` degrees of freedom, exact when world scores
    are normal; and the release's rank among all ``M + 1`` worlds (1: the highest)."""
    from scipy.stats import t as student

    c = np.asarray(controls, dtype=float)
    m = len(c)
    if m < 2:
        raise UserError(f"the world test needs at least 2 control worlds, got {m}: raise --controls")
    mean, sd = float(c.mean()), float(c.std(ddof=1))
    if sd > 0:
        stat = (release - mean) / (sd * math.sqrt(1 + 1 / m))
        p = float(student.sf(stat, m - 1))
    else:  # every control alike: only a release above them all is evidence
        stat, p = (math.inf, 0.0) if release > mean else (0.0, 1.0)
    rank = 1 + int((c >= release).sum())
    return {
        "p_value": p,
        "t": stat,
        "df": m - 1,
        "rank": rank,
        "worlds": m + 1,
        "release_score": float(release),
        "control_mean": mean,
        "control_sd": sd,
    }


def one_sided_test(members: np.ndarray, control: np.ndarray) -> dict[str, float]:
    """Mann-Whitney U, alternative: members score higher. AUC = U / (n_members * n_control)."""
    from scipy.stats import mannwhitneyu

    test = mannwhitneyu(members, control, alternative="greater")
    return {"p_value": float(test.pvalue), "auc": float(test.statistic) / (len(members) * len(control))}


def blind_baseline(members: Sequence[str], control: Sequence[str], seed: int) -> dict[str, Any]:
    """How well a bag-of-words classifier (TF-IDF, logistic regression) tells the release's documents from
    the control's without any model: what dates and topics alone give away. It is fitted on a seeded
    half of each side and scored on the other half, whose AUC and one-sided Mann-Whitney p are then
    those of untouched documents (pooled cross-validation folds are not: on random texts they read an
    AUC of 0.55-0.64 and p < 0.05 one time in 13)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    texts, labels = [*members, *control], np.r_[np.ones(len(members)), np.zeros(len(control))]
    if min(len(members), len(control)) < 4:
        raise UserError("the blind baseline needs at least 4 documents on each side: raise --documents")
    split = train_test_split(texts, labels, test_size=0.5, stratify=labels, random_state=seed)
    fit_x, test_x, fit_y, test_y = split
    model = make_pipeline(TfidfVectorizer(min_df=2, sublinear_tf=True), LogisticRegression(max_iter=1000))
    scores = model.fit(fit_x, fit_y).predict_proba(test_x)[:, 1]
    return {**one_sided_test(scores[test_y == 1], scores[test_y == 0]), "scored": len(test_x)}


# -- controls -----------------------------------------------------------------------------------------


def control_seed(seed: int, index: int) -> int:
    """The seed of the release's ``index``-th control world: derived from the release's seed by a hash,
    so that no control is a published world (seed + small offsets are) nor another release's control."""
    digest = hashlib.sha256(f"continuousbench-control:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def world_of(manifest: dict[str, Any]) -> tuple:
    """What makes two releases the same world: Geminon's world seed (a ``--heldout`` variant shares it);
    NEWS's quarter (the same weeks' articles)."""
    if manifest["track"] == "geminon":
        seeds = (manifest.get("generator") or {}).get("seeds") or {}
        return ("geminon", seeds.get("world", (manifest["seed"], manifest["year"], manifest["quarter"])))
    return (manifest["track"], manifest["year"], manifest["quarter"])


def check_control(manifest: dict[str, Any], other: dict[str, Any], given: str | Path) -> None:
    """Refuse a control that the model could have seen with the release: another track or size, or the
    same world (the release itself, a ``--heldout`` variant of it, the same seed)."""
    if (other["track"], other["size"]) != (manifest["track"], manifest["size"]):
        raise UserError(
            f"--control {given} is a {other['track']}-{other['size']} release, {manifest['id']} a "
            f"{manifest['track']}-{manifest['size']} one; pass a control of the same track and size"
        )
    if other["manifest_sha256"] == manifest["manifest_sha256"]:
        raise UserError(f"--control {given} is the release itself; pass another release as the control")
    if world_of(other) == world_of(manifest):
        raise UserError(
            f"--control {given} ({other['id']}) is the same world as {manifest['id']} (same seed and "
            "lineage: its documents are the release's); pass a world of another seed, or leave --control "
            "out to build fresh ones"
        )


def control_worlds(manifest: dict[str, Any], root: Path, count: int) -> list[Path]:
    """``count`` Geminon worlds from the release's generator with derived seeds, each built once under
    ``<root>/.controls/seed-<seed>``. Only their corpora are read, so their questions are not screened
    closed-book (the screening drops questions, never documents): no screening model to load, and a tiny
    control world builds in a third of the time."""
    from continuousbench.geminon import closed_book as CB
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.release.layout import release_dir

    base_id = "-".join(manifest["id"].split("-")[:3])  # a --heldout release's world is the plain one's
    generator = manifest.get("generator", {})
    folders = []
    for index in range(count):
        seed = control_seed(int(manifest["seed"]), index)
        out = root / ".controls" / f"seed-{seed}"
        if not release_dir(base_id, out).is_dir():
            log.info("building control world %d of %s (seed %d) under %s", index + 1, base_id, seed, out)
            build_release(
                GeminonBuildArguments(
                    size=manifest["size"],
                    quarter=f"{manifest['year']}q{manifest['quarter']}",
                    seed=seed,
                    out=str(out),
                    namer=generator.get("namer", "offline"),
                    realizer=generator.get("realizer", "template"),
                    closed_book_models=[CB.NONE],
                ),
                progress=False,
            )
        folders.append(release_dir(base_id, out))
    return folders


ARTICLE_FIELDS = ("id", "text", "date", "crawl_date")


def control_articles(articles: str | Path, **kw: Any) -> list[dict[str, Any]]:
    """The rows (id, text, date, crawl_date) of ``articles``: a NEWS release's corpus, or a folder of
    article shards (the ``dedup`` stage's output: the pool a release's sample was drawn from)."""
    from continuousbench.news.shards import input_files, read_rows
    from continuousbench.release.load import load_release

    if (Path(articles).expanduser() / "release.json").is_file():
        return load_release(articles, "corpus", "train", **kw).select_columns(list(ARTICLE_FIELDS)).to_list()
    return read_rows(input_files(str(articles), "--control"), list(ARTICLE_FIELDS)).to_pylist()


def date_matched_control(
    release: Sample,
    dates: Sequence[str | None],
    pool_rows: Sequence[dict[str, Any]],
    exclude: set[str],
    seed: int,
) -> tuple[Sample, Sample, dict[str, Any]]:
    """(the release documents that have a week and a control partner, the control: articles of
    ``pool_rows`` not in ``exclude`` drawn week by week, as many per week as the release has there)."""
    pool: dict[str, list[dict]] = {}
    for row in pool_rows:
        week = iso_week(row.get("date") or row.get("crawl_date"))
        if week and str(row["id"]) not in exclude:
            pool.setdefault(week, []).append(row)
    rng = np.random.default_rng(seed)
    keep, chosen, short = [], [], 0
    weeks = [iso_week(d) for d in dates]
    for week in sorted({w for w in weeks if w}):
        mine = [i for i, w in enumerate(weeks) if w == week]
        available = sorted(pool.get(week, []), key=lambda r: str(r["id"]))
        take = min(len(mine), len(available))
        short += len(mine) - take
        keep += mine[:take]  # a week with too few control articles keeps as many release documents
        chosen += [available[i] for i in sorted(rng.choice(len(available), size=take, replace=False))]
    kept = [release.ids[i] for i in keep]
    members = Sample(kept, [release.texts[i] for i in keep], kept)
    ids = [str(r["id"]) for r in chosen]
    control = Sample(ids, [r["text"] for r in chosen], ids)
    info = {
        "weeks": len({w for w in weeks if w}),
        "undated": sum(w is None for w in weeks),
        "unmatched": short,
        "pool": sum(map(len, pool.values())),
    }
    return members, control, info


def iso_week(day: str | None) -> str | None:
    """``2026-W07`` of an ISO day (``2026-02-14``); None when there is no readable day."""
    import datetime as dt

    try:
        year, week, _ = dt.date.fromisoformat(str(day)[:10]).isocalendar()
    except ValueError:
        return None
    return f"{year}-W{week:02d}"


# -- the command --------------------------------------------------------------------------------------


def contamination(
    model: str,
    release: str | Path,
    *,
    control: Sequence[str | Path] = (),
    controls: int = CONTROLS,
    documents: int = 500,
    k: float = 0.2,
    alpha: float = 0.01,
    seed: int = 0,
    batch_size: int = 8,
    max_length: int = 256,
    **kw: Any,
) -> dict[str, Any]:
    """The contamination report: the test on Min-K%++ and Min-K%, the verdict (Min-K%++), what was
    loaded and compared, and every document's and unit's scores (``scores``)."""
    from continuousbench.loader import load_model
    from continuousbench.release.load import read_manifest, resolve_release

    folder = resolve_release(release, **kw)
    manifest = read_manifest(folder)
    if manifest["track"] == "news":
        if len(control) != 1:
            raise UserError(
                f"{manifest['id']} is a NEWS release: pass one --control, the articles its build sampled "
                "from (the dedup stage's output folder), for a control from the same weeks"
            )
    else:
        for given in control:  # every control checked before the model is loaded or a world built
            check_control(manifest, read_manifest(resolve_release(given, **kw)), given)
    net, tokenizer, loaded = load_model(model)
    report: dict[str, Any] = {
        "model": model,
        "loaded": loaded,
        "release": manifest["id"],
        "k": k,
        "alpha": alpha,
        "seed": seed,
    }
    sample = sample_corpus(folder, documents, seed)
    score = {"k": k, "batch_size": batch_size, "max_length": max_length}
    if manifest["track"] == "news":
        return {
            **report,
            **news_test(
                net, tokenizer, folder, sample, control[0], alpha=alpha, seed=seed, score=score, **kw
            ),
        }
    scored = score_sample(net, tokenizer, manifest["id"], sample, **score)  # a tokenizer that cannot
    # score the release stops the command here, before any control world is built
    folders = (
        [resolve_release(c, **kw) for c in control]
        if control
        else control_worlds(manifest, folder.parent, controls)
    )
    others = [
        score_sample(net, tokenizer, str(f), sample_corpus(f, documents, seed), **score) for f in folders
    ]
    tests = {s: world_test(scored.world[s], [o.world[s] for o in others]) for s in SCORES}
    for s in SCORES:  # descriptive: release units against every control unit (not independent draws)
        pooled = np.concatenate([o.unit_scores[s] for o in others])
        tests[s]["unit_auc"] = one_sided_test(scored.unit_scores[s], pooled)["auc"]
    return {
        **report,
        "unit": "world",
        "controls": [
            {"folder": str(f), "release": read_manifest(f)["id"], "seed": read_manifest(f)["seed"]}
            for f in folders
        ],
        "documents": len(sample.ids),
        "tests": tests,
        "verdict": "contaminated" if tests[SCORES[0]]["p_value"] < alpha else "not detected",
        "scores": {"release": scored.to_json(), "controls": [o.to_json() for o in others]},
    }


def news_test(
    net,
    tokenizer,
    folder: Path,
    sample: Sample,
    articles: str | Path,
    *,
    alpha: float,
    seed: int,
    score: dict[str, Any],
    **kw: Any,
) -> dict[str, Any]:
    """The NEWS part of the report: date-matched control, blind baseline, document-level test."""
    from continuousbench.release.load import load_release

    corpus = load_release(folder, "corpus", "train", **kw)
    by_id = {
        str(i): (d or c) for i, d, c in zip(corpus["id"], corpus["date"], corpus["crawl_date"], strict=True)
    }
    exclude = {str(i) for split in load_release(folder, "corpus", **kw).values() for i in split["id"]}
    members, control, matched = date_matched_control(
        sample, [by_id[i] for i in sample.ids], control_articles(articles, **kw), exclude, seed
    )
    if len(control.ids) < 2:
        raise UserError(
            f"--control {articles} has {len(control.ids)} articles from the release's weeks that the release "
            "does not hold; pass the dedup stage's output of the release's build (the pool it sampled)"
        )
    blind = blind_baseline(members.texts, control.texts, seed)
    scored = score_sample(net, tokenizer, "release", members, **score)
    others = score_sample(net, tokenizer, str(articles), control, **score)
    tests = {s: one_sided_test(scored.documents[s], others.documents[s]) for s in SCORES}
    if blind["p_value"] < BLIND_ALPHA:
        verdict = "withheld"
        reason = (
            f"a bag-of-words classifier tells the release's documents from the date-matched control's "
            f"without any model (AUC {blind['auc']:.3f}, p={blind['p_value']:.2g} < {BLIND_ALPHA}): "
            "membership scores cannot be told from what the two sets are about"
        )
    else:
        verdict = "contaminated" if tests[SCORES[0]]["p_value"] < alpha else "not detected"
        reason = None
    return {
        "unit": "document",
        "controls": [{"folder": str(articles), "matched": matched}],
        "documents": len(members.ids),
        "blind_baseline": blind,
        "tests": tests,
        "verdict": verdict,
        **({"withheld_because": reason} if reason else {}),
        "scores": {"release": scored.to_json(), "controls": [others.to_json()]},
    }


@dataclass
class ContaminationArguments:
    model: str = field(
        default="", metadata={"help": "An evaluate run folder, a trained folder or a model id."}
    )
    release: str = field(default="", metadata={"help": "Release id (under --root) or release folder."})
    control: list[str] = listed(
        "Geminon: control releases (other worlds of the same size; default: build "
        "--controls fresh ones). NEWS: the articles its build sampled from."
    )
    controls: int = field(default=CONTROLS, metadata=bounds("[2, 1000]", "Geminon control worlds built."))
    documents: int = field(default=500, metadata=bounds("[2, inf)", "Documents scored per corpus."))
    k: float = field(default=0.2, metadata=bounds("(0, 1]", "Share of least likely tokens averaged."))
    alpha: float = field(default=0.01, metadata=bounds("(0, 1)", "Significance level of the verdict."))
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of the document samples."))
    batch_size: int = field(default=8, metadata=bounds("[1, inf)", "Documents per forward pass."))
    max_length: int = field(default=256, metadata=bounds("[2, inf)", "Tokens scored per document."))
    results: str | None = field(
        default=None,
        metadata={"help": "A results folder whose timeline.json gets the verdict (the leaderboard's flag)."},
    )


def main(args: ContaminationArguments, out: ReportArguments) -> dict[str, Any]:
    if not args.model or not args.release:
        raise UserError("continuousbench contamination --model <id|folder> --release <id|folder>: give both")
    report = out.run(lambda root: contamination(**options(args, "results"), root=root))
    if args.results:
        from continuousbench.results.timeline import record_contamination

        report["timeline"] = str(record_contamination(args.results, report))
    return report


def _report(report: dict[str, Any]) -> None:
    head = report["tests"][SCORES[0]]
    if report["unit"] == "world":
        where = f"rank {head['rank']} of {head['worlds']} worlds, t={head['t']:.2f}"
    else:
        where = f"AUC={head['auc']:.3f}, blind AUC={report['blind_baseline']['auc']:.3f}"
    line = f"{report['model']} on {report['release']}: {report['verdict']} (Min-K%++ p={head['p_value']:.3g}"
    print(f"{line}, {where})" + (f"; {report['withheld_because']}" if "withheld_because" in report else ""))


make_parser, cli = command(
    (ContaminationArguments, ReportArguments),
    "continuousbench contamination",
    "Membership test (Min-K%++, Min-K%) of a model on a release's corpus against unseen controls.",
    main,
    report=_report,
    resume_hint=None,
)
