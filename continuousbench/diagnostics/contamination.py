"""Has a model seen a release's corpus? Membership scores on the corpus against an unseen control.

    continuousbench contamination --model google/gemma-3-1b-pt --release geminon-small-2026q1

Each document gets two membership scores, both the mean over its ``k``% least likely tokens:

* **Min-K%** (Shi et al. 2023): the token's log-probability ``log p(x_t | x_<t)``.
* **Min-K%++** (Zhang et al. 2024): that log-probability standardised by the model's next-token
  distribution at that position, ``(log p(x_t) - mu_t) / sigma_t`` with ``mu_t = E_z[log p(z)]`` and
  ``sigma_t^2 = Var_z[log p(z)]``, ``z ~ p(. | x_<t)``: a trained-on text sits near a local maximum of
  the likelihood, so its tokens stand out against the other tokens the model could have predicted.

The control is a corpus the model cannot have seen: for Geminon a fresh world from the same generator
with another seed (identically distributed, unseen by construction; built once under the root's
``.controls`` folder when ``--control`` is omitted), for NEWS a release the user names. A one-sided
Mann-Whitney test asks whether release units score higher than control units; the effect size is the
AUC (the probability that a release unit outscores a control one; 0.5 = no difference).

The unit is the entity for Geminon (the mean score of the sampled documents about it), the document for
NEWS. Documents about one entity share its name's tokens, so they are not independent draws: on a
tiny world (18 names) even an untrained model's scores tell two worlds apart document by document
(p ~ 0.002 in our test), while the worlds' entities are exchangeable draws of one generator.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench.commands import bounds, command
from continuousbench.diagnostics.gates import ReportArguments, load_scoring_model, options
from continuousbench.errors import UserError

log = logging.getLogger(__name__)

SCORES = ("min_k_plus_plus", "min_k")  # the first gives the verdict
CONTROL_SEED_OFFSET = 1_000_003  # a control world's seed: the release's plus this (never a published one)
MAX_UNKNOWN = 0.01  # share of <unk> tokens above which the tokenizer cannot score the corpus


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


def one_sided_test(members: np.ndarray, control: np.ndarray) -> dict[str, float]:
    """Mann-Whitney U, alternative: members score higher. AUC = U / (n_members * n_control)."""
    from scipy.stats import mannwhitneyu

    test = mannwhitneyu(members, control, alternative="greater")
    return {"p_value": float(test.pvalue), "auc": float(test.statistic) / (len(members) * len(control))}


def sample_texts(release: str | Path, documents: int, seed: int, **kw: Any) -> tuple[list[str], list[int]]:
    """A seeded sample of ``documents`` texts of the release's ``corpus/train`` and each one's unit: its
    first (subject) entity for Geminon, itself for NEWS."""
    from continuousbench.release.load import load_release

    corpus = load_release(release, "corpus", "train", **kw)
    if len(corpus) > documents:
        rows = np.random.default_rng(seed).choice(len(corpus), size=documents, replace=False)
        corpus = corpus.select(sorted(int(r) for r in rows))
    if "entities" in corpus.column_names:
        return list(corpus["text"]), [int(e[0]) for e in corpus["entities"]]
    return list(corpus["text"]), list(range(len(corpus)))


def unit_means(scores: np.ndarray, units: Sequence[int]) -> np.ndarray:
    """The mean score of each unit, in the order of the units' ids."""
    keys, inverse = np.unique(np.asarray(units), return_inverse=True)
    return np.bincount(inverse, weights=scores) / np.bincount(inverse, minlength=len(keys))


def control_release(release: str | Path, control: str | Path | None, **kw: Any) -> Path:
    """The control release's folder: ``control`` checked against the release, or a Geminon world with
    another seed built (once) under ``<root>/.controls``."""
    from continuousbench.release.load import read_manifest, resolve_release

    folder = resolve_release(release, **kw)
    manifest = read_manifest(folder)
    if control is None:
        if manifest["track"] != "geminon":
            raise UserError(
                f"{manifest['id']} is a {manifest['track']} release: it has no control world; pass --control "
                "<a release of the same track and size that the model cannot have seen>"
            )
        return build_control(manifest, folder.parent)
    other = read_manifest(resolve_release(control, **kw))
    if (other["track"], other["size"]) != (manifest["track"], manifest["size"]):
        raise UserError(
            f"--control {control} is a {other['track']}-{other['size']} release, {manifest['id']} a "
            f"{manifest['track']}-{manifest['size']} one; pass a control of the same track and size"
        )
    if other["manifest_sha256"] == manifest["manifest_sha256"]:
        raise UserError(f"--control {control} is the release itself; pass another release as the control")
    return resolve_release(control, **kw)


def build_control(manifest: dict[str, Any], root: Path) -> Path:
    """The release's generator, another seed: same size, quarter and realizer, a world nobody has seen."""
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.release.layout import release_dir

    seed = int(manifest["seed"]) + CONTROL_SEED_OFFSET
    out = root / ".controls" / f"seed-{seed}"
    if release_dir(manifest["id"], out).is_dir():
        return release_dir(manifest["id"], out)
    generator = manifest.get("generator", {})
    log.info("building the control world of %s with seed %d under %s", manifest["id"], seed, out)
    args = GeminonBuildArguments(
        size=manifest["size"],
        quarter=f"{manifest['year']}q{manifest['quarter']}",
        seed=seed,
        out=str(out),
        namer=generator.get("namer", "offline"),
        realizer=generator.get("realizer", "template"),
    )
    return build_release(args, progress=False)


def contamination(
    model: str,
    release: str | Path,
    *,
    control: str | Path | None = None,
    documents: int = 500,
    k: float = 0.2,
    alpha: float = 0.01,
    seed: int = 0,
    batch_size: int = 8,
    max_length: int = 256,
    **kw: Any,
) -> dict[str, Any]:
    """The contamination report: per score the test's p-value and AUC, and the verdict (Min-K%++)."""
    from continuousbench.release.load import read_manifest, resolve_release

    # a control given is checked first; a control world is built only once the release's own documents
    # have been scored (a tokenizer that cannot score them stops the command before that build)
    control_folder = control_release(release, control, **kw) if control is not None else None
    net, tokenizer = load_scoring_model(model)
    samples, scored = {}, {}
    for name in ("release", "control"):
        if name == "release":
            samples[name] = sample_texts(release, documents, seed, **kw)
        else:
            control_folder = control_folder or control_release(release, None, **kw)
            samples[name] = sample_texts(control_folder, documents, seed)
        texts, units = samples[name]
        stats = token_statistics(net, tokenizer, texts, batch_size=batch_size, max_length=max_length)
        scored[name] = {s: unit_means(v, units) for s, v in membership_scores(stats, k).items()}
    tests = {s: one_sided_test(scored["release"][s], scored["control"][s]) for s in SCORES}
    p = tests[SCORES[0]]["p_value"]
    return {
        "model": model,
        "release": read_manifest(resolve_release(release, **kw))["id"],
        "control": str(control_folder),
        "documents": {name: len(texts) for name, (texts, _) in samples.items()},
        "units": {name: len(scored[name][SCORES[0]]) for name in samples},
        "k": k,
        "alpha": alpha,
        "tests": tests,
        "verdict": "contaminated" if p < alpha else "not detected",
    }


@dataclass
class ContaminationArguments:
    model: str = field(default="", metadata={"help": "Model id or folder (a LoRA folder is merged)."})
    release: str = field(default="", metadata={"help": "Release id (under --root) or release folder."})
    control: str | None = field(
        default=None,
        metadata={"help": "Control release of the same track and size (Geminon: built when omitted)."},
    )
    documents: int = field(default=500, metadata=bounds("[2, inf)", "Documents scored per corpus."))
    k: float = field(default=0.2, metadata=bounds("(0, 1]", "Share of least likely tokens averaged."))
    alpha: float = field(default=0.01, metadata=bounds("(0, 1)", "Significance level of the verdict."))
    seed: int = field(default=0, metadata=bounds("[0, inf)", "Seed of the document sample."))
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
    figures = ", ".join(
        f"{name}: p={t['p_value']:.3g}, AUC={t['auc']:.3f}" for name, t in report["tests"].items()
    )
    print(f"{report['model']} on {report['release']}: {report['verdict']} ({figures})")


make_parser, cli = command(
    (ContaminationArguments, ReportArguments),
    "continuousbench contamination",
    "Membership test (Min-K%++, Min-K%) of a model on a release's corpus against an unseen control.",
    main,
    report=_report,
    resume_hint=None,
)
