"""MAUVE between a candidate corpus and the real corpus (paper §3, App. D: Fig. 4, Table 7).

    continuousbench mauve --candidate synth.parquet --reference geminon-small-2026q1 \\
        --model /models/gecko-110m --n-samples 1000 --seeds 0 1 2 3 4 --output mauve.json

Features are mean-pooled last hidden states (padding masked out) of any local encoder folder
(transformers or sentence-transformers) or causal LM folder. Each seed samples ``n`` texts per side
without replacement and seeds MAUVE's own clustering; we report mean and (population) std over seeds.
``reference_mauve`` scores two disjoint halves of the real corpus: the same-distribution ceiling.

``mauve-text`` is GPL-3.0 and an optional extra: it is imported only inside :func:`mauve_from_features`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from continuousbench.commands import bounds, command
from continuousbench.diagnostics.report_arguments import ReportFileArguments
from continuousbench.embeddings.encoders import embed_texts
from continuousbench.embeddings.fid import frechet_distance
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)


def mauve_from_features(p_features: np.ndarray, q_features: np.ndarray, seed: int, **mauve_kwargs) -> float:
    """MAUVE of two feature matrices (p: reference, q: candidate), clustering seeded by ``seed``."""
    try:
        import mauve  # GPL-3.0: only ever imported here
    except ImportError:
        raise ImportError("MAUVE needs the optional extra: pip install 'continuousbench[mauve]'") from None
    out = mauve.compute_mauve(
        p_features=p_features, q_features=q_features, seed=seed, verbose=False, **mauve_kwargs
    )
    return float(out.mauve)


def _embedder(texts: Sequence[str], index_sets, **embed_kwargs):
    """Embed every text some draw uses, once; return a function from indices to their feature matrix."""
    ids = sorted({int(i) for idx in index_sets for i in idx})
    feats = embed_texts([texts[i] for i in ids], **embed_kwargs)
    row = {i: k for k, i in enumerate(ids)}
    return lambda idx: feats[[row[int(i)] for i in idx]]


def _summary(scores: list[float], n: int, seeds: Sequence[int], model_path) -> dict:
    return {
        "mean": float(np.mean(scores)),
        "std": float(np.std(scores)),
        "scores": scores,
        "n": n,
        "seeds": list(seeds),
        "model": str(model_path),
    }


def _check(n_samples: int, seeds: Sequence[int]) -> None:
    if n_samples < 2:
        raise UserError(f"n_samples must be at least 2, got {n_samples}")
    if not seeds:
        raise UserError("seeds must name at least one seed")


def mauve_score(
    candidate_texts: Sequence[str],
    reference_texts: Sequence[str],
    *,
    model_path: str | Path,
    n_samples: int = 1000,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    batch_size: int = 32,
    max_length: int = 256,
    **mauve_kwargs,
) -> dict:
    """MAUVE of ``candidate_texts`` against ``reference_texts``: ``{mean, std, scores, n, seeds, model}``,
    and ``fid``, the Fréchet distance of the same features (mean over the seeds' draws).

    Each seed draws ``n = min(n_samples, len(candidate), len(reference))`` texts per side.
    """
    _check(n_samples, seeds)
    n = min(n_samples, len(candidate_texts), len(reference_texts))
    if 2 <= n < n_samples:  # stated, not silent: the score is over fewer texts than asked for
        logger.warning(
            "--n_samples %d is more than the corpora hold (%d candidate and %d reference texts): MAUVE uses "
            "n = %d per side (recorded as n)",
            n_samples,
            len(candidate_texts),
            len(reference_texts),
            n,
        )
    if n < 2:
        raise UserError(
            f"need at least 2 texts per side, got {len(candidate_texts)} and {len(reference_texts)}"
        )
    draws = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        draws.append(
            (
                rng.choice(len(candidate_texts), n, replace=False),
                rng.choice(len(reference_texts), n, replace=False),
            )
        )
    embed = {"model_path": model_path, "batch_size": batch_size, "max_length": max_length}
    cand = _embedder(candidate_texts, [c for c, _ in draws], **embed)
    ref = _embedder(reference_texts, [r for _, r in draws], **embed)
    scores = [
        mauve_from_features(ref(r), cand(c), seed, **mauve_kwargs)
        for seed, (c, r) in zip(seeds, draws, strict=True)
    ]
    # FID of the same features, mean over the draws: `proxies` reads it rather than embedding again
    fid = float(np.mean([frechet_distance(cand(c), ref(r)) for c, r in draws]))
    return _summary(scores, n, seeds, model_path) | {"n_samples_requested": n_samples, "fid": fid}


def reference_mauve(
    real_texts: Sequence[str],
    *,
    model_path: str | Path,
    n_samples: int = 1000,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    batch_size: int = 32,
    max_length: int = 256,
    **mauve_kwargs,
) -> dict:
    """MAUVE between two disjoint random halves of the real corpus (``n`` per half), per seed."""
    _check(n_samples, seeds)
    n = min(n_samples, len(real_texts) // 2)
    if n < 2:
        raise UserError(f"need at least 4 real texts for two disjoint halves, got {len(real_texts)}")
    splits = [np.random.default_rng(seed).permutation(len(real_texts))[: 2 * n] for seed in seeds]
    feats = _embedder(real_texts, splits, model_path=model_path, batch_size=batch_size, max_length=max_length)
    scores = [
        mauve_from_features(feats(s[:n]), feats(s[n:]), seed, **mauve_kwargs)
        for seed, s in zip(seeds, splits, strict=True)
    ]
    return _summary(scores, n, seeds, model_path)


@dataclass
class MauveArguments(ReportFileArguments):
    candidate: str = field(
        metadata={"help": "Candidate corpus: save_to_disk folder, parquet, jsonl, or release id."}
    )
    reference: str = field(
        metadata={"help": "Release folder or id; its corpus train split is the reference."}
    )
    model: str = field(metadata={"help": "Local embedding model folder (encoder or causal LM)."})
    n_samples: int = field(default=1000, metadata=bounds("[2, inf)", "Texts sampled per side and seed."))
    seeds: list[int] = field(
        default_factory=lambda: [0, 1, 2, 3, 4], metadata=bounds("[0, inf)", "One MAUVE run per seed.")
    )
    text_column: str = field(default="text", metadata={"help": "Text column of the candidate corpus."})
    batch_size: int = field(default=32, metadata=bounds("[1, inf)", "Embedding batch size."))
    max_length: int = field(default=256, metadata=bounds("[1, inf)", "Tokens embedded per text."))
    with_reference: bool = field(
        default=True, metadata={"help": "Also score disjoint halves of the reference."}
    )


def main(args: MauveArguments) -> dict:
    from continuousbench import __version__
    from continuousbench.files import check_output_files, write_json
    from continuousbench.training.data import load_corpus

    output = check_output_files({"--output": args.output}, overwrite=args.overwrite).get("--output")
    if not Path(args.model).expanduser().is_dir():  # before the corpora are read and embedded
        raise FileNotFoundError(
            f"--model {args.model} is not a folder: pass a local encoder or causal LM folder"
        )
    candidate = load_corpus(args.candidate, text_column=args.text_column, option="--candidate")["text"]
    reference = load_corpus(args.reference, split="train", option="--reference")["text"]
    common = {"model_path": args.model, "n_samples": args.n_samples, "seeds": args.seeds}
    common |= {"batch_size": args.batch_size, "max_length": args.max_length}
    results = {"version": __version__, "candidate": args.candidate, "reference": args.reference}
    results["candidate_vs_reference"] = mauve_score(candidate, reference, **common)
    if args.with_reference:
        results["reference_disjoint"] = reference_mauve(reference, **common)
    if output is not None:
        write_json(output, results)
    return results


def _print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"MAUVE (model {results['candidate_vs_reference']['model']})")
    for col in ("comparison", "n per side", "mean", "std", "runs"):
        table.add_column(col, justify="right")
    for key, label in (
        ("candidate_vs_reference", "candidate vs reference"),
        ("reference_disjoint", "disjoint halves"),
    ):
        if key in results:
            r = results[key]
            table.add_row(label, str(r["n"]), f"{r['mean']:.3f}", f"{r['std']:.3f}", str(len(r["scores"])))
    Console().print(table)


make_parser, cli = command(
    MauveArguments,
    "continuousbench mauve",
    "MAUVE between a candidate corpus and a reference corpus (needs the [mauve] extra).",
    main,
    report=_print_table,
)
