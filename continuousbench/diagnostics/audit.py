"""``continuousbench audit``: an empirical lower bound on the epsilon of the generator recipe, in one run.

    continuousbench audit --config recipes/configs/generator-geminon-1b-dp.yaml --release <release> \\
        --epsilon 10 --canaries 1000 --output_dir runs/audit-eps10

1. ``--canaries`` m canary records are drawn: strings of ``--canary_tokens`` random tokens, uniform over
   the tokens the training corpus uses (so every canary token has a trained embedding; a model's
   unused vocabulary slots would make canaries that no LoRA can learn), from OS entropy.
2. Each canary joins the training split with probability 1/2, by a secret draw. In the audit game the
   draw stays hidden from the attacker; ``audit.json`` records it because the audit is a test.
3. A generator is trained with ``train-generator``'s own recipe and every option given here
   (``--epsilon`` finite: DP-SGD; unset: the non-private recipe), on the corpus plus the included
   canaries, into ``--output_dir``.
4. Every canary is scored by its loss (``--score loss``: minus its mean token loss under the generator)
   or by how much training lowered it (``loss_drop``: base model's loss minus the generator's). The
   score is fixed before training; included canaries should score higher.
5. The one-run bound of Steinke, Nasr and Jagielski (2023) (:mod:`.one_run`) turns the guesses into
   a lower bound on epsilon at ``--confidence``, written beside the claimed epsilon in
   ``<output_dir>/audit.json``. A bound above the claim means the implementation leaks more than its
   statement allows; a bound far below it is expected (the bound is loose for black-box scores).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from continuousbench import processes
from continuousbench.commands import bounds, command
from continuousbench.dp.train import GeneratorArguments, generator_config, load_data, open_generator_output
from continuousbench.errors import UserError
from continuousbench.staged_output import work_folder
from continuousbench.training.arguments import GeneratorOptions, ModelArguments
from continuousbench.training.options import DPOptions

logger = logging.getLogger(__name__)

COMMAND = "audit"
AUDIT_FILE = "audit.json"
CANARY_FILE = "canaries.json"
TRAINED = "trained.json"


@dataclass
class AuditArguments:
    canaries: int = field(
        default=256, metadata=bounds("[2, inf)", "Canary records m, each trained on with probability 1/2.")
    )
    canary_tokens: int = field(
        default=32, metadata=bounds("[1, inf)", "Random vocabulary tokens per canary.")
    )
    confidence: float = field(default=0.95, metadata=bounds("(0, 1)", "Confidence of the lower bound."))
    score: str = field(
        default="loss",
        metadata={
            "help": "loss (minus the generator's loss) or loss_drop (base loss minus generator loss).",
            "choices": ["loss", "loss_drop"],
        },
    )


def draw_canaries(tokenizer, m: int, length: int, corpus: list[str]) -> list[dict[str, Any]]:
    """m distinct canaries of random corpus tokens, each with a secret fair coin for inclusion."""
    rng = np.random.default_rng(secrets.randbits(128))
    special = set(tokenizer.all_special_ids)
    used = {i for ids in tokenizer(corpus[:10_000], add_special_tokens=False)["input_ids"] for i in ids}
    vocabulary = np.array(sorted(used - special))
    if len(vocabulary) < 2:
        raise UserError("the corpus uses fewer than 2 distinct tokens: no canary can be drawn from it")
    texts: dict[str, None] = {}
    while len(texts) < m:
        text = tokenizer.decode(rng.choice(vocabulary, size=length).tolist()).strip()
        if text:
            texts[text] = None
    included = rng.random(m) < 0.5
    return [{"text": t, "included": bool(i)} for t, i in zip(texts, included, strict=True)]


def _prepare(work: Path, audit_args: AuditArguments, model_args, train, val) -> list[dict[str, Any]]:
    """The canaries and the audit corpus (train + included canaries, validation as is), made once."""
    from datasets import Dataset

    from continuousbench.files import read_json, write_json
    from continuousbench.loader import load_tokenizer

    if (work / CANARY_FILE).is_file():  # a resumed audit keeps its canaries and coins
        return read_json(work / CANARY_FILE)
    tokenizer = load_tokenizer(model_args.model)
    canaries = draw_canaries(tokenizer, audit_args.canaries, audit_args.canary_tokens, train)
    corpus = work / "corpus" / "data"
    corpus.mkdir(parents=True, exist_ok=True)
    rows = train + [c["text"] for c in canaries if c["included"]]
    Dataset.from_dict({"text": rows}).to_parquet(str(corpus / "train-00000-of-00001.parquet"))
    Dataset.from_dict({"text": val}).to_parquet(str(corpus / "validation-00000-of-00001.parquet"))
    write_json(work / CANARY_FILE, canaries)
    return canaries


def score(generator: Path, canaries: list[dict[str, Any]], max_length: int, kind: str) -> list[float]:
    """Per canary: minus the generator's loss, or (``loss_drop``) base loss minus generator loss."""
    from continuousbench.dp.dpsgd import encode_records
    from continuousbench.loader import load_model

    model, tokenizer, _ = load_model(str(generator), "the audited generator", merge=False)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    records = encode_records(tokenizer, [c["text"] for c in canaries], max_length)
    trained = _losses(model, records, pad, "audit: scoring canaries under the generator")
    if kind == "loss":
        return [-t for t in trained]
    with model.disable_adapter():
        base = _losses(model, records, pad, "audit: scoring canaries under the base model")
    return [b - t for b, t in zip(base, trained, strict=True)]


SCORE_CHUNK = 1024  # canaries scored between two progress lines (a multiple of record_losses' batches)


def _losses(model, records: list[list[int]], pad: int, label: str) -> list[float]:
    """Each record's loss, in chunks with a progress line between them (many canaries take long)."""
    from continuousbench.dp.dpsgd import record_losses
    from continuousbench.stages import ProgressLog

    progress, losses = ProgressLog(label, len(records), "canaries"), []
    for start in range(0, len(records), SCORE_CHUNK):
        losses += record_losses(model, records[start : start + SCORE_CHUNK], pad)
        progress.advance(len(records[start : start + SCORE_CHUNK]))
    return losses


def _finish(staged, canaries, audit_args, config, n_train: int) -> dict[str, Any]:
    from continuousbench.diagnostics.one_run import audit
    from continuousbench.dp.accounting import default_delta
    from continuousbench.files import read_json, write_json

    privacy = read_json(staged.out / "privacy.json")
    claimed = privacy["epsilon"] if privacy.get("dp_sgd") else math.inf
    # a DP generator is audited at its own delta; a non-private one at --delta, else 1/n^1.1
    delta = privacy.get("delta") or config.delta or default_delta(n_train)
    scores = score(staged.out, canaries, config.max_length or 256, audit_args.score)
    result = audit(scores, [c["included"] for c in canaries], delta, audit_args.confidence)
    detectable = result.largest_reachable_bound > claimed
    powerless = (
        ""
        if detectable or math.isinf(claimed)
        else (
            f", not above the claim {claimed:.4g}: this audit could not have detected a violation (use more "
            "canaries or a smaller --delta)"
        )
    )
    record = {
        "claimed_epsilon": claimed,
        "within_claim": result.epsilon_lower_bound <= claimed,
        "can_refute_claim": detectable,
        "power": (
            f"with {result.canaries} canaries at delta {delta:.3g} the largest bound any run could get is "
            f"{result.largest_reachable_bound:.3g}{powerless}"
        ),
        **result.to_dict(),
        "score": {
            "loss": "minus the mean token loss under the generator",
            "loss_drop": "mean token loss under the base model minus under the generator",
        }[audit_args.score],
        "bound": "Steinke, Nasr and Jagielski 2023 (arXiv:2305.08846), Cor. 5.4; Bonferroni over the grid",
        "note": "the inclusion coins are secret during the audit; recorded here because the audit is a test",
        "canary_records": [{**c, "score": s} for c, s in zip(canaries, scores, strict=True)],
    }
    write_json(staged.work / AUDIT_FILE, record)
    staged.publish([AUDIT_FILE])
    return record


def main(audit_args: AuditArguments, args: GeneratorArguments, model_args: ModelArguments, config) -> dict:
    """Draw canaries, train with the generator recipe, score, bound; return the audit record."""
    from continuousbench.dp.train import main as train_generator
    from continuousbench.files import write_json

    procs = processes.current()
    staged = open_generator_output(COMMAND, config, args, model_args, procs, also=["train-generator"])
    _, train, val = processes.main_first(lambda: load_data(args), procs)
    canaries = processes.on_main(lambda: _prepare(staged.work, audit_args, model_args, train, val), procs)
    n_train = len(train) + sum(c["included"] for c in canaries)
    if not (staged.work / TRAINED).is_file():
        resume = args.resume and work_folder(staged.out, "train-generator").is_dir()
        corpus = str(staged.work / "corpus")
        generator_args = dataclasses.replace(
            args, corpus=corpus, release=None, text_column="text", resume=resume
        )
        logger.info(
            "audit: %d canaries, %d of them in the training data", len(canaries), n_train - len(train)
        )
        train_generator(generator_args, model_args, config)
        processes.on_main(lambda: write_json(staged.work / TRAINED, {"records": n_train}), procs)
    record = processes.on_main(lambda: _finish(staged, canaries, audit_args, config, n_train), procs)
    return record


def _report(record: dict) -> None:
    if processes.current().main:
        print(
            f"empirical epsilon >= {record['epsilon_lower_bound']:.3g} at {record['confidence']:.0%} "
            f"confidence ({record['correct']} of {record['guesses']} guesses right, {record['canaries']} "
            f"canaries); claimed epsilon {record['claimed_epsilon']:.4g}"
        )
        if not record["can_refute_claim"] and math.isfinite(record["claimed_epsilon"]):
            print(f"warning: {record['power']}")


make_parser, cli = command(
    lambda: (AuditArguments, GeneratorArguments, ModelArguments, generator_config()),
    "continuousbench audit",
    "Empirical lower bound on a generator recipe's epsilon from one training run "
    "(Steinke, Nasr and Jagielski 2023).",
    main,
    report=_report,
    brief=(AuditArguments, GeneratorArguments, ModelArguments, GeneratorOptions, DPOptions),
)
