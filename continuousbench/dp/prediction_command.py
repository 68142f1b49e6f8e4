"""``continuousbench private-prediction``: a DP corpus by private prediction (Amin et al. 2024), no training.

    continuousbench private-prediction --config recipes/configs/private-prediction-geminon.yaml \\
        --release geminon-small-2026q1 --model google/gemma-3-1b-pt --epsilon 10 --num_samples 2000 \\
        --max_new_tokens 256 --output_dir runs/pp-eps10

The private records are the corpus's train split. Each of the ``--num_samples`` records is decoded
from its own batch of about ``--batch_size`` private records (disjoint batches, secret assignment),
every token a DP choice (:mod:`continuousbench.dp.prediction`); the temperature is the lowest that
(``--epsilon``, ``--delta``) pays for ``--max_private_tokens`` private tokens per record
(:mod:`continuousbench.dp.prediction_accounting`), or one line says how many tokens it does pay for.

The output folder holds ``data/train-*.parquet`` and a dataset card (privacy statement included), which
``load_corpus`` and ``continuousbench evaluate --corpus`` read, ``prediction.json`` (the guarantee and
counts of the emitted tokens) and ``privacy.json`` (what the harness records with every result).
``--resume`` continues a killed job at its next chunk of batches, with the secret streams where they
were (kept in the hidden work folder, deleted on publishing).
"""

from __future__ import annotations

import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.dp.corpus import CorpusOutputArguments
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

PUBLISHED = ("data", "README.md", "prediction.json", "privacy.json")
CHUNK_BATCHES = 64  # batches decoded between two saves of the work (the unit --resume redoes)
STATE = "streams-{:05d}.pt"  # the secret streams at the start of a chunk
CHUNK = "chunk-{:05d}.parquet"
FLOOR_WARNING = 0.1  # share of the probability on the clip floor above which the run warns


@dataclass
class PredictionArguments(CorpusOutputArguments):
    model: str = field(metadata={"help": "Base model: a local folder or a Hub id (transformers, KV-cached)."})
    release: str | None = field(default=None, metadata={"help": "Release id or folder (its corpus)."})
    corpus: str | None = field(default=None, metadata={"help": "Private corpus instead of a release."})
    text_column: str = field(default="text", metadata={"help": "Column holding the records."})
    prompt_set: str = field(
        default="geminon",
        metadata={
            "help": "Public template (docs/private-prediction.md).",
            "choices": ["document", "geminon", "news"],
        },
    )
    epsilon: float = field(default=10.0, metadata=bounds("(0, inf)", "Epsilon of the whole corpus."))
    delta: float | None = field(default=None, metadata=bounds("(0, 1)", "Delta; default 1/n^1.1."))
    num_samples: int = field(default=1000, metadata=bounds("[1, inf)", "Records to write (one per batch)."))
    max_new_tokens: int = field(default=256, metadata=bounds("[1, 100000]", "Longest record in tokens."))
    max_private_tokens: int | None = field(
        default=None,
        metadata=bounds("[1, 100000]", "Private tokens per record (the budget); default --max_new_tokens."),
    )
    batch_size: int = field(default=32, metadata=bounds("[1, 100000]", "Expected prompts per batch (s)."))
    clip: float = field(default=10.0, metadata=bounds("(0, inf)", "Logits are clipped to [-c, c] (c)."))
    temperature: float | None = field(
        default=None,
        metadata=bounds("(0, inf)", "Sampling temperature; default the lowest the budget allows."),
    )
    max_temperature: float = field(default=1.0, metadata=bounds("(0, inf)", "Highest temperature chosen."))
    svt_threshold: float | None = field(
        default=None,
        metadata=bounds("(0, 2]", "Sparse vector test's L1 threshold (public tokens); default: no test."),
    )
    svt_noise: float = field(default=0.2, metadata=bounds("(0, inf)", "Its Laplace scale on the threshold."))
    max_record_tokens: int = field(default=256, metadata=bounds("[1, 100000]", "Records are cut to this."))
    batches_at_once: int = field(default=4, metadata=bounds("[1, 100000]", "Batches in one forward pass."))
    dtype: str = field(default="auto", metadata={"help": "bfloat16, float16, float32 or auto."})
    insecure_noise_seed: int | None = field(
        default=None,
        metadata=bounds(
            "[0, inf)", "TESTS ONLY: batches, noise and token draws from this public seed (no DP guarantee)."
        ),
    )
    resume: bool = field(default=False, metadata={"help": "Continue a killed job at its next chunk."})

    def settings(self) -> dict:
        """What determines the corpus (published, and pinned for --resume): all but where and how to write."""
        where = ("output_dir", "resume", "overwrite", "batches_at_once")
        return {k: v for k, v in asdict(self).items() if k not in where}

    @property
    def private_tokens(self) -> int:
        return self.max_private_tokens or self.max_new_tokens

    def __post_init__(self) -> None:
        if self.release and self.corpus:
            raise UserError(
                f"--release {self.release} and --corpus {self.corpus} both name the private records; pass one"
            )
        if self.max_private_tokens and self.max_private_tokens > self.max_new_tokens:
            raise UserError(
                f"--max_private_tokens {self.max_private_tokens} is above --max_new_tokens "
                f"{self.max_new_tokens}: a record cannot spend more private tokens than it has tokens"
            )
        fewer = self.max_private_tokens and self.max_private_tokens < self.max_new_tokens
        if fewer and self.svt_threshold is None:
            raise UserError(
                "--max_private_tokens below --max_new_tokens needs --svt_threshold: without the sparse "
                "vector test every token is private"
            )


def _records(args: PredictionArguments) -> tuple[str, list[str]]:
    from continuousbench.training.data import load_corpus

    source = args.corpus or args.release
    if not source:
        raise UserError("no private records: pass --release <id or folder> or --corpus <source>")
    option = "--corpus" if args.corpus else "--release"
    return source, list(load_corpus(source, args.text_column, split="train", option=option)["text"])


def _guarantee(args: PredictionArguments, n: int):
    from continuousbench.dp.accounting import check_delta, default_delta
    from continuousbench.dp.prediction_accounting import Settings, account_prediction

    delta = check_delta(args.delta, n) if args.delta is not None else default_delta(n)
    settings = Settings(
        args.private_tokens,
        args.batch_size,
        args.clip,
        args.temperature,
        args.max_temperature,
        args.svt_threshold,
        args.svt_noise if args.svt_threshold is not None else None,
    )
    return account_prediction(args.epsilon, delta, settings, dataset_size=n, batches=args.num_samples)


def main(args: PredictionArguments) -> Path:
    """Decode every batch in a staged folder (resumable by chunks); publish the corpus; return its folder."""
    from continuousbench.dp.prediction import check_batches
    from continuousbench.staged_output import StagedOutput
    from continuousbench.training.data import corpus_fingerprint

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise UserError(
            "private-prediction runs in one process; launch it with --num_processes 1 (or without torchrun)"
        )
    source, records = _records(args)
    check_batches(len(records), args.num_samples, args.batch_size)
    guarantee = _guarantee(args, len(records))
    inputs = [args.corpus, args.release, args.model]
    staged = StagedOutput(
        args.output_dir, "private-prediction", overwrite=args.overwrite, resume=args.resume, inputs=inputs
    )
    staged.pin_config(args.settings() | {"private_fingerprint": corpus_fingerprint({"text": records})})
    texts, counts = _decode(args, records, guarantee, staged.work)
    _write_outputs(staged.work, args, texts, counts, guarantee, source=source)
    return staged.publish(list(PUBLISHED))


def _decode(args: PredictionArguments, records: list[str], guarantee, work: Path) -> tuple[list[str], dict]:
    """Every batch's record (resuming at the first unfinished chunk), and counts of what was emitted."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from accelerate import PartialState

    from continuousbench.dp.prediction import BatchDecoder, Mechanism, floor_share
    from continuousbench.dp.prediction_prompts import cut_records, prompts
    from continuousbench.files import atomic_write
    from continuousbench.loader import load_model
    from continuousbench.stages import ProgressLog

    model, tokenizer, _ = load_model(args.model, "--model", dtype=args.dtype)
    device = PartialState().device
    model.to(device)
    _check_length(args, model, tokenizer)
    private, public, stop = prompts(
        args.prompt_set, cut_records(records, tokenizer, args.max_record_tokens), tokenizer
    )
    assignment, streams = _streams(args, len(records), work, device)
    floored = floor_share(len(tokenizer), args.clip, guarantee.temperature)
    if floored > FLOOR_WARNING:
        logger.warning(
            "at clip %g and temperature %.3g up to %.0f%% of a token's probability sits on the clip floor "
            "(tokens drawn about uniformly from %d): raise --clip with --batch_size, or --epsilon",
            args.clip,
            guarantee.temperature,
            100 * floored,
            len(tokenizer),
        )
    mech = Mechanism(args.batch_size, args.clip, guarantee.temperature, args.svt_threshold, args.svt_noise)
    decoder = BatchDecoder(
        model,
        tokenizer,
        mech,
        max_new_tokens=args.max_new_tokens,
        private_tokens=args.private_tokens,
        stop=stop,
    )
    progress = ProgressLog("private-prediction", args.num_samples, "records")
    chunks = range(0, args.num_samples, CHUNK_BATCHES)
    for k, start in enumerate(chunks):
        path = work / CHUNK.format(k)
        if path.is_file():
            progress.advance(min(CHUNK_BATCHES, args.num_samples - start))
            continue
        streams.load_state_dict(_read_state(work / STATE.format(k)))
        rows: dict[str, list] = {"text": [], "private": [], "public": [], "stop": []}
        end = min(start + CHUNK_BATCHES, args.num_samples)
        for first in range(start, end, args.batches_at_once):
            group = [
                [private[i] for i in batch]
                for batch in assignment[first : min(first + args.batches_at_once, end)]
            ]
            for made in decoder.decode(group, public, streams.noise):
                rows["text"].append(_text(tokenizer, made.tokens, stop))
                rows["private"].append(made.private)
                rows["public"].append(made.public)
                rows["stop"].append(made.stop)
            progress.advance(len(group))
        _save_state(work / STATE.format(k + 1), streams)  # before the chunk: a redo starts where this one did
        atomic_write(path, lambda tmp, rows=rows: pq.write_table(pa.table(rows), tmp))
    table = pa.concat_tables([pq.read_table(work / CHUNK.format(k)) for k in range(len(chunks))])
    return table.column("text").to_pylist(), _counts(table)


def _text(tokenizer, tokens: list[int], stop: str | None) -> str:
    text = tokenizer.decode(tokens, skip_special_tokens=True)
    return (text.split(stop, 1)[0] if stop else text).strip()


def _counts(table) -> dict:
    """What was emitted, summed over records: all of it is the mechanism's output (which token, and
    whether the sparse vector test made it private), never a statistic of the private records."""
    stops = table.column("stop").to_pylist()
    return {
        "records": table.num_rows,
        "private_tokens": sum(table.column("private").to_pylist()),
        "public_tokens": sum(table.column("public").to_pylist()),
        "stopped_by": {reason: stops.count(reason) for reason in sorted(set(stops))},
    }


def _streams(args: PredictionArguments, n: int, work: Path, device):
    """(the batches, the secret streams): drawn on a new run (and kept in the work folder, secret),
    read back on a resumed one."""
    import numpy as np

    from continuousbench.dp.prediction import assign_batches
    from continuousbench.dp.randomness import SecretStreams
    from continuousbench.files import secret_file

    streams = SecretStreams.create(insecure_seed=args.insecure_noise_seed, device=str(device))
    file = work / "batches.npz"
    if not file.is_file():
        groups = assign_batches(n, args.num_samples, args.batch_size, streams.batches)
        _save_state(work / STATE.format(0), streams)
        with secret_file(file) as f:
            np.savez(f, *groups)
    with np.load(file) as saved:
        return [saved[f"arr_{j}"] for j in range(args.num_samples)], streams


def _save_state(path: Path, streams) -> None:
    import torch

    from continuousbench.files import atomic_write, secret_file

    def save(tmp: Path) -> None:
        with secret_file(tmp) as f:
            torch.save(streams.state_dict(), f)

    atomic_write(path, save)


def _read_state(path: Path) -> dict:
    import torch

    return torch.load(path, weights_only=False)


def _check_length(args: PredictionArguments, model, tokenizer) -> None:
    """One line when a prompt (the template around ``--max_record_tokens`` tokens) plus ``--max_new_tokens``
    may exceed the model's positions: from the settings alone, never from the records' lengths."""
    from continuousbench.dp.prediction_prompts import prompts

    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is None:
        return
    empty, public, _ = prompts(args.prompt_set, [""], tokenizer)
    template = max(len(tokenizer(text, add_special_tokens=True)["input_ids"]) for text in (*empty, public))
    if template + args.max_record_tokens + args.max_new_tokens > limit:
        raise UserError(
            f"the template ({template} tokens), --max_record_tokens {args.max_record_tokens} and "
            f"--max_new_tokens {args.max_new_tokens} exceed the model's {limit} positions: lower "
            "--max_record_tokens or --max_new_tokens"
        )


def _write_outputs(
    folder: Path, args: PredictionArguments, texts: list[str], counts: dict, guarantee, *, source: str
) -> None:
    """The corpus with its card (privacy statement included), ``prediction.json`` and ``privacy.json``
    into the staged folder."""
    from continuousbench import __version__
    from continuousbench.dp.corpus import corpus_card, write_corpus
    from continuousbench.dp.prediction_statement import prediction_statement
    from continuousbench.dp.published import publishable
    from continuousbench.files import write_json

    kept = [t for t in texts if t]
    if not kept:
        raise UserError(f"all {len(texts)} records came out empty: check --model and --prompt_set")
    counts = {**counts, "dropped_empty": len(texts) - len(kept)}
    settings = args.settings()
    description = (
        f"{len(kept)} records made by private prediction from `{source}` with the base model `{args.model}` "
        f"(template `{args.prompt_set}`): each decoded from its own batch of about {args.batch_size} private "
        f"records, every token a DP choice at temperature {guarantee.temperature:.4g}. Tokens emitted: "
        f"{counts['private_tokens']} private, {counts['public_tokens']} public; {counts['dropped_empty']} "
        "empty records dropped. Details: `prediction.json`."
    )
    secret = args.insecure_noise_seed is None
    card = corpus_card(
        title="Private prediction corpus",
        description=description,
        settings=settings,
        statement=prediction_statement(guarantee, secret=secret, args=args),
        private=secret,
    )
    write_corpus(folder, kept, card)
    record = {
        "version": __version__,
        "private_corpus": source,
        "settings": settings,
        "guarantee": guarantee.to_dict(),
        "emitted": counts,
    }
    write_json(folder / "prediction.json", record)
    write_json(folder / "privacy.json", publishable(privacy_record(guarantee, args.epsilon, secret)))


def privacy_record(guarantee, target_epsilon: float, secret: bool) -> dict:
    """``privacy.json``: the guarantee the harness records with every result on this corpus (the schema
    of the other generators': epsilon, delta, the epsilon asked for, unit, adjacency, accountant)."""
    stated = {k: v for k, v in guarantee.to_dict().items() if k != "event_json"}
    return {
        "private": secret,
        "kind": "private-prediction",
        **stated,
        "target_epsilon": target_epsilon,
        "unit": "record",
        "adjacency": "add-or-remove",
        "accountant": "rdp",
    }


make_parser, cli = command(
    PredictionArguments,
    "continuousbench private-prediction",
    "Private prediction: a DP corpus decoded token by token from batches of private prompts.",
    main,
    report=print,
)
