"""Verbatim memorisation: does a model recite the release's training documents more than unseen ones?

    continuousbench memorization --model runs/eval-real --release geminon-small-2026q1 --output memo.json

``--model`` is an ``evaluate`` run folder, a generator folder (LoRA adapters are merged on load) or a
model id. Documents of the release's training split and of its held-out split are cut after
``--prefix_tokens`` tokens and continued greedily for ``--suffix_tokens`` (:mod:`.verbatim`). The
held-out figures are the floor that the format alone explains (a model that learned how Geminon
articles read completes them partly right without having seen them); what the training split adds
above it is memorisation of those documents.

The floor is the *probe half* of ``corpus.validation`` (:func:`continuousbench.release.layout.in_probe_half`):
no recipe trains on that split, and generators select their checkpoints on its other half only, so no
model was chosen for doing well on the floor (selecting on it would pull the floor down towards the
training figures). The output's ``floor`` names its documents. A release built with ``--heldout``
holds exactly its held-out documents in ``corpus.validation`` (``release.heldout`` names the split), so
the floor is the probe half of the unseen entity, document or style.

The difference train minus held-out is *paired*: each held-out document is matched with a training
document of the same style (drawn with the seed), so the style mix, which moves every figure, cancels;
a style with no training document (``--heldout style``) gets random public mates, and ``paired_by``
then says so. The ``train`` figures are those of the paired training documents; sensitive training
documents (one per sensitive entity) are probed too and reported apart (``sensitive``).
Under ``torchrun`` / ``accelerate launch`` the documents are shared out and one process writes.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuousbench.commands import bounds, command
from continuousbench.diagnostics.verbatim import Probe, cut, decode_greedy, score, unknown_share
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

HELDOUT = "validation"  # the corpus split no recipe trains on
MAX_UNKNOWN_SHARE = 0.05  # probes holding an unknown token above which the tokenizer does not fit
CHUNK = 256  # training documents cut at a time while looking for long-enough ones of a style


@dataclass
class MemorizationArguments:
    model: str = field(metadata={"help": "An evaluate run folder, a generator folder or a model id."})
    release: str = field(metadata={"help": "Release id or folder (its corpus train and validation)."})
    output: str = field(metadata={"help": "Write the figures as JSON here (not inside a release or run)."})
    prefix_tokens: int = field(
        default=32, metadata=bounds("[1, 100000]", "Prompt: a document's first k tokens.")
    )
    suffix_tokens: int = field(default=32, metadata=bounds("[1, 100000]", "Tokens decoded and compared."))
    docs: int = field(default=500, metadata=bounds("[1, 10000000]", "Documents probed per split."))
    batch_size: int = field(default=16, metadata=bounds("[1, 100000]", "Documents decoded at once."))
    dtype: str = field(default="auto", metadata={"help": "bfloat16, float16, float32 or auto."})
    train_split: str = field(
        default="train",
        metadata={
            "help": "The part of corpus.train the model saw, e.g. train[:64] (as evaluate's --corpus_split)."
        },
    )
    seed: int = field(default=0, metadata={"help": "Which documents are drawn and paired."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing --output file."})


def _take(data, indices: Sequence[int], need: int, split: str, tokenizer, k: int, m: int):
    """Up to ``need`` probes from ``data`` rows in the order of ``indices``; and how many rows before the
    last one taken were too short (rows looked at beyond it are not counted)."""
    probes: list[Probe] = []
    short, start = 0, 0
    while len(probes) < need and start < len(indices):
        rows = data.select(indices[start : start + CHUNK]).to_list()
        kept = {p.id: p for p in cut(tokenizer, rows, split, k, m)[0]}
        for row in rows:
            if len(probes) == need:
                break
            if row["id"] in kept:
                probes.append(kept[row["id"]])
            else:
                short += 1
        start += CHUNK
    return probes, short


Pairs = list[tuple[Probe, Probe]]


def draw(corpus, tokenizer, args: MemorizationArguments) -> tuple[list[Probe], Pairs, list[Probe], dict]:
    """(held-out probes, (training, held-out) pairs of one style, sensitive training probes, notes)."""
    k, m, rng = args.prefix_tokens, args.suffix_tokens, random.Random(args.seed)
    heldout = corpus[HELDOUT]  # its probe half (see _corpus)
    order = list(range(len(heldout)))
    rng.shuffle(order)
    held, short = _take(heldout, order, args.docs, "heldout", tokenizer, k, m)
    notes = {"heldout_short": short, "train_short": 0, "random_mates": []}
    train = corpus["train"]
    columns = set(train.column_names)
    styles = train["style"] if "style" in columns else ["all"] * len(train)
    subsets = train["subset"] if "subset" in columns else ["public"] * len(train)
    pools: dict[str, list[int]] = defaultdict(list)
    for i, (style, subset) in enumerate(zip(styles, subsets, strict=True)):
        pools[style if subset == "public" else "sensitive"].append(i)
    by_style: dict[str, list[Probe]] = defaultdict(list)
    for p in held:
        by_style[p.style].append(p)
    pairs: Pairs = []
    public = sorted(i for style, pool in pools.items() if style != "sensitive" for i in pool)
    for style in sorted(by_style):
        # a style held out whole (build --heldout style) has no training document: any public one
        pool = pools.get(style) or list(public)
        if not pools.get(style):
            notes["random_mates"].append(style)
        rng.shuffle(pool)
        mates, skipped = _take(train, pool, len(by_style[style]), "train", tokenizer, k, m)
        notes["train_short"] += skipped
        pairs += list(zip(mates, by_style[style], strict=False))
    sensitive, skipped = _take(train, sorted(pools.get("sensitive", [])), args.docs, "train", tokenizer, k, m)
    notes["train_short"] += skipped
    return (
        held,
        pairs,
        sensitive,
        {**notes, "heldout_available": len(heldout), "unpaired": len(held) - len(pairs)},
    )


def _mean(values: Sequence[float]) -> dict:
    from continuousbench.stats import mean_interval

    figure = mean_interval(values)
    return {"value": figure["mean"], "ci95": figure["ci95"]}


def summarise(rows: Sequence[dict]) -> dict[str, Any]:
    """n, the exact-suffix rate (Wilson 95% interval), mean common prefix and ROUGE-L (bootstrap 95%)."""
    from continuousbench.stats import wilson_interval

    exact = sum(r["exact"] for r in rows)
    ci = wilson_interval(exact, len(rows))
    return {
        "n": len(rows),
        "exact_suffix_rate": {"value": exact / len(rows) if rows else None, "ci95": list(ci) if ci else None},
        "common_prefix": _mean([r["common_prefix"] for r in rows]),
        "rouge_l": _mean([r["rouge_l"] for r in rows]),
    }


def breakdown(rows: Sequence[dict]) -> dict[str, Any]:
    """:func:`summarise` of all ``rows``, and per document style and per subset (public / sensitive)."""
    groups: dict[str, dict[str, list[dict]]] = {"by_style": defaultdict(list), "by_subset": defaultdict(list)}
    for r in rows:
        groups["by_style"][r["style"]].append(r)
        groups["by_subset"][r["subset"]].append(r)
    parts = {g: {k: summarise(v) for k, v in sorted(d.items())} for g, d in groups.items()}
    return {**summarise(rows), **parts}


def difference(pairs: Sequence[tuple[dict, dict]], random_mates: Sequence[str] = ()) -> dict[str, Any]:
    """Train minus held-out over the pairs: exact rate with Newcombe's paired interval and McNemar p;
    common prefix and ROUGE-L with a paired bootstrap interval. ``random_mates``: the held-out styles
    whose mates were random public documents (no training document of their style)."""
    from continuousbench.stats import paired_difference

    exact = paired_difference([a["exact"] for a, _ in pairs], [b["exact"] for _, b in pairs])
    paired_by = "style" if not random_mates else {"style": "except", "random": sorted(random_mates)}
    return {
        "pairs": len(pairs),
        "paired_by": paired_by,
        "exact_suffix_rate": {k: exact[k] for k in ("difference", "ci95", "p_value")},
        **{
            name: {"difference": d["value"], "ci95": d["ci95"]}
            for name in ("common_prefix", "rouge_l")
            for d in [_mean([a[name] - b[name] for a, b in pairs])]
        },
    }


def _release(source: str) -> tuple[Path, dict]:
    from continuousbench.files import sha256_file
    from continuousbench.release.layout import MANIFEST
    from continuousbench.release.load import read_manifest, resolve_release

    folder = Path(resolve_release(source))
    manifest = read_manifest(folder)
    held = {"heldout": manifest["heldout"]} if manifest.get("heldout") else {}  # build --heldout's split
    return folder, {
        "id": manifest["id"],
        "path": str(folder.resolve()),
        "manifest_sha256": sha256_file(folder / MANIFEST),
        **held,
    }


def _corpus(folder: Path, train_split: str) -> dict:
    """The held-out split and the (part of the) training split the model saw."""
    from continuousbench.release.layout import in_probe_half
    from continuousbench.release.load import load_release

    if train_split.split("[")[0].strip() != "train":
        raise UserError(f"--train_split {train_split} is not a part of train; write e.g. train or train[:64]")
    heldout = load_release(folder, "corpus", split=HELDOUT)  # checks the whole release's files
    train = load_release(folder, "corpus", split=train_split, verify=False)
    if len(train) == 0:
        raise UserError(
            f"--train_split {train_split} holds no document: there is nothing to probe; name the part of "
            "corpus.train the model saw, e.g. train or train[:64]"
        )
    probe = heldout.filter(in_probe_half, input_columns="text")
    if len(probe) == 0:
        raise UserError(f"the probe half of corpus.{HELDOUT} is empty ({len(heldout)} documents): no floor")
    return {HELDOUT: probe, "train": train}


def _check(tokenizer, probes: Sequence[Probe], notes: dict, args: MemorizationArguments) -> None:
    held = sum(p.split == "heldout" for p in probes)
    if not held:
        raise UserError(
            f"no held-out document has {args.prefix_tokens} + {args.suffix_tokens} tokens "
            f"({notes['heldout_short']} too short); lower --prefix_tokens or --suffix_tokens"
        )
    share = unknown_share(tokenizer, probes)
    if share > MAX_UNKNOWN_SHARE:
        raise UserError(
            f"--model {args.model}'s tokenizer cannot encode the release: {share:.0%} of the documents hold "
            f"its unknown token {tokenizer.unk_token!r}; probe a model whose tokenizer covers the text"
        )
    if notes["heldout_short"] or notes["train_short"]:
        logger.warning(
            "skipped %d held-out and %d training documents shorter than %d + %d tokens",
            notes["heldout_short"],
            notes["train_short"],
            args.prefix_tokens,
            args.suffix_tokens,
        )
    if held < args.docs:
        logger.warning(
            "--docs %d: the held-out split has %d long enough; probing all of them", args.docs, held
        )


def main(args: MemorizationArguments) -> dict[str, Any]:
    import continuousbench
    from continuousbench import processes
    from continuousbench.files import check_output_files, write_json
    from continuousbench.loader import load_model

    procs = processes.current()
    folder, release = _release(args.release)
    inputs = [folder, *([args.model] if Path(args.model).expanduser().exists() else [])]
    output = processes.on_main(
        lambda: check_output_files({"--output": args.output}, overwrite=args.overwrite, keep_out=inputs),
        procs,
    )["--output"]
    model, tokenizer, record = load_model(args.model, dtype=args.dtype)
    corpus = processes.main_first(lambda: _corpus(folder, args.train_split), procs)
    held, pairs, sensitive, notes = draw(corpus, tokenizer, args)
    probes = held + [mate for mate, _ in pairs] + sensitive
    _check(tokenizer, probes, notes, args)

    def work(share: list[Probe]) -> list[dict]:
        return score(
            tokenizer, share, decode_greedy(model, tokenizer, share, args.suffix_tokens, args.batch_size)
        )

    rows = processes.share_out(probes, work)
    if not procs.main:
        return {}
    by_id = {(r["split"], r["id"]): r for r in rows}
    result = {
        "model": record,
        "release": release,
        "settings": {
            k: getattr(args, k) for k in ("prefix_tokens", "suffix_tokens", "docs", "train_split", "seed")
        },
        "documents": notes,
        "floor": {
            "split": f"corpus.{HELDOUT}",
            "half": "probe (release.layout.in_probe_half)",
            "documents": [p.id for p in held],
        },
        "train": breakdown([by_id["train", a.id] for a, _ in pairs]),  # what the difference compares
        "sensitive": breakdown([by_id["train", p.id] for p in sensitive]),
        "heldout": breakdown([r for r in rows if r["split"] == "heldout"]),
        "train_minus_heldout": difference(
            [(by_id["train", a.id], by_id["heldout", b.id]) for a, b in pairs], notes["random_mates"]
        ),
        "package_version": continuousbench.__version__,
    }
    write_json(output, result)
    return result


def _report(result: dict[str, Any]) -> None:
    d = result.get("train_minus_heldout")
    if not d or not d["pairs"]:
        return
    parts = []
    for name in ("exact_suffix_rate", "rouge_l"):
        t, h = result["train"][name]["value"], result["heldout"][name]["value"]
        lo, hi = d[name]["ci95"] or (float("nan"),) * 2
        parts.append(
            f"{name} train {t:.3f} held-out {h:.3f} (difference {d[name]['difference']:+.3f}, "
            f"95% CI [{lo:+.3f}, {hi:+.3f}], {d['pairs']} pairs)"
        )
    print("; ".join(parts))


make_parser, cli = command(
    MemorizationArguments,
    "continuousbench memorization",
    "Verbatim memorisation: greedy suffixes of training vs held-out release documents.",
    main,
    report=_report,
)
