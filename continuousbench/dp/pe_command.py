"""``continuousbench pe``: a Private Evolution corpus (Aug-PE; paper App. D.3) through public commands.

    continuousbench pe --config recipes/configs/private_evolution.yaml --release geminon-small-2026q1 \\
        --api transformers:/models/gemma-3-1b-pt --embedding_model /models/sentence-t5-base \\
        --output_dir runs/pe-eps10

The private records are the corpus's train split; its validation split is the FID reference after every
iteration and picks the temperature (so no un-noised statistic of the private records is published; the
privacy statement says the validation split is not protected). With several ``--temperatures`` a sweep
of ``--sweep_num_samples`` texts per temperature runs first; the temperature whose final population has
the lowest FID then makes the ``--num_samples`` corpus. ``--sweep_voters private`` lets the private
records vote in the sweep too and accounts every sweep run; ``validation`` lets the validation records
vote there instead, so only the final run reads private records.

The output folder holds ``data/train-*.parquet`` and a dataset card (privacy statement included), which
``load_corpus`` and ``continuousbench evaluate --corpus`` read, ``pe.json`` (guarantee, per-iteration
FID and population sizes of every run) and ``privacy.json`` (the guarantee with the epsilon asked for,
which the harness records with every result on the corpus). ``--resume`` continues a killed job at its
next iteration; an endpoint API's answers are cached in the work folder, so the killed iteration's calls
are not paid twice.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from continuousbench.commands import bounds, command
from continuousbench.dp.corpus import CorpusOutputArguments
from continuousbench.dp.published import publishable
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

SWEEP_VOTERS = ("private", "validation")
PUBLISHED = ("data", "README.md", "pe.json", "privacy.json")


@dataclass
class PEArguments(CorpusOutputArguments):
    api: str = field(
        metadata={
            "help": "Text generator for RANDOM_API and VARIATION_API: transformers:<folder>, "
            "endpoint:<url>#<model>, completions:<url>#<model> or offline:<name>."
        }
    )
    embedding_model: str = field(
        metadata={
            "help": "Local sentence-transformers folder, or an encoder / causal LM folder (mean-pooled)."
        }
    )
    release: str | None = field(default=None, metadata={"help": "Release id or folder (its corpus)."})
    corpus: str | None = field(
        default=None, metadata={"help": "Private corpus instead of a release (needs a validation split)."}
    )
    text_column: str = field(default="text", metadata={"help": "Column holding the records."})
    prompt_set: str = field(
        default="geminon", metadata={"help": "RANDOM_API domain prompt.", "choices": ["geminon", "news"]}
    )
    epsilon: float = field(
        default=10.0, metadata=bounds("(0, inf]", "Epsilon of the whole job; inf: no noise (non-private).")
    )
    delta: float | None = field(default=None, metadata=bounds("(0, 1)", "Delta; default 1/n^1.1."))
    iterations: int = field(default=10, metadata=bounds("[1, 1000]", "PE iterations (histograms) per run."))
    variations: int = field(default=6, metadata=bounds("[1, 100]", "Rewrites per sample per iteration."))
    num_samples: int = field(default=2000, metadata=bounds("[1, inf)", "Texts in the final corpus."))
    temperatures: list[float] = field(
        default_factory=lambda: [1.0], metadata={"help": "API sampling temperatures; several: a sweep."}
    )
    sweep_num_samples: int = field(default=2000, metadata=bounds("[2, inf)", "Texts per sweep run."))
    sweep_voters: str = field(
        default="private",
        metadata={"help": "Who votes in the sweep runs (see the module doc).", "choices": list(SWEEP_VOTERS)},
    )
    threshold: float = field(default=0.0, metadata=bounds("[0, inf)", "Subtracted from noisy counts."))
    max_new_tokens: int = field(default=256, metadata=bounds("[1, 100000]", "Longest API answer in tokens."))
    max_in_flight: int = field(default=32, metadata=bounds("[1, 100000]", "Endpoint API requests at once."))
    request_timeout: float = field(
        default=300.0,
        metadata=bounds(
            "(0, inf)", "Seconds one endpoint answer may take in all (connect, queue, generation, stalls)."
        ),
    )
    embed_batch_size: int = field(default=32, metadata=bounds("[1, 100000]", "Embedding batch size."))
    embed_max_length: int = field(default=256, metadata=bounds("[1, 100000]", "Tokens embedded per text."))
    seed: int = field(default=0, metadata={"help": "Seed of the public choices (styles, tones, API seeds)."})
    resume: bool = field(default=False, metadata={"help": "Continue a killed job at its next iteration."})

    def settings(self) -> dict:
        """What determines the corpus (published, and pinned for --resume): all but where and how to write."""
        where = ("output_dir", "resume", "overwrite", "request_timeout")
        return {k: v for k, v in asdict(self).items() if k not in where}

    def __post_init__(self) -> None:
        if self.release and self.corpus:
            raise UserError(
                f"--release {self.release} and --corpus {self.corpus} both name the private records; pass one"
            )
        if not self.temperatures or any(not (0 < t < math.inf) for t in self.temperatures):
            raise UserError(f"--temperatures {self.temperatures} must be positive numbers, e.g. 0.8 1.0 1.2")
        if len(set(self.temperatures)) != len(self.temperatures):
            raise UserError(f"--temperatures {self.temperatures} repeats a value; list each once")


def _load(args: PEArguments):
    from continuousbench.training.data import train_and_validation

    source = args.corpus or args.release
    if not source:
        raise UserError("no private records: pass --release <id or folder> or --corpus <source>")
    purpose = "PE measures FID and picks the temperature on it"
    option = "--corpus" if args.corpus else "--release"
    private, validation = train_and_validation(source, args.text_column, purpose=purpose, option=option)
    if len(validation) < 2:
        raise UserError(f"corpus {source} has {len(validation)} validation record(s); FID needs at least 2")
    return source, private["text"], validation["text"]


def _cached_embeddings(path: Path, texts: list[str], embed) -> np.ndarray:
    """Embeddings kept in the work folder, so a resumed job does not embed again (never published)."""
    from continuousbench.files import atomic_write

    if path.is_file():
        return np.load(path)
    rows = embed(texts)

    def save(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            np.save(handle, rows)

    atomic_write(path, save)
    return rows


def main(args: PEArguments) -> Path:
    """Run the job (sweep, then the final run) in a staged folder; publish the corpus; return its folder."""
    from continuousbench.dp.accounting import account_evolution, check_delta, default_delta
    from continuousbench.dp.pe import Evolution, PEApi, run_seed
    from continuousbench.embeddings.encoders import make_embedder
    from continuousbench.llm import GenerationError, make_generator
    from continuousbench.staged_output import StagedOutput
    from continuousbench.training.data import corpus_fingerprint

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise UserError("pe runs in one process; launch it with --num_processes 1 (or without torchrun)")
    source, private, validation = _load(args)
    sweep = len(args.temperatures) > 1
    private_runs = 1 + (len(args.temperatures) if sweep and args.sweep_voters == "private" else 0)
    delta = check_delta(args.delta, len(private)) if args.delta is not None else default_delta(len(private))
    guarantee = account_evolution(
        args.epsilon, delta, iterations=args.iterations, private_runs=private_runs, dataset_size=len(private)
    )
    inputs = [args.corpus, args.release, args.embedding_model]
    staged = StagedOutput(args.output_dir, "pe", overwrite=args.overwrite, resume=args.resume, inputs=inputs)
    staged.pin_config(args.settings() | {"private_fingerprint": corpus_fingerprint({"text": private})})
    generator = make_generator(
        args.api,
        max_in_flight=args.max_in_flight,
        cache_dir=staged.work / "cache",
        request_timeout=args.request_timeout,
    )
    try:
        if hasattr(generator, "check"):  # an endpoint: fail now, not after embedding the corpus
            generator.check()
    except GenerationError:
        if not args.resume:  # nothing was done: leave no unfinished run behind
            staged.discard()
        raise
    embed = make_embedder(args.embedding_model, args.embed_batch_size, args.embed_max_length)
    voters = _cached_embeddings(staged.work / "embeddings" / "private.npy", private, embed)
    reference = _cached_embeddings(staged.work / "embeddings" / "validation.npy", validation, embed)

    def evolve(run: int, temperature: float, n: int, run_voters: np.ndarray, name: str):
        api = PEApi(generator, args.prompt_set, temperature, args.max_new_tokens)
        evolution = Evolution(n, args.iterations, args.variations, args.threshold, run_seed(args.seed, run))
        sigma = guarantee.noise_multiplier
        return evolution.run(
            api, embed, run_voters, reference, sigma, staged.work / "runs" / name, label=name
        )

    sweep_runs = []
    if sweep:
        sweep_voters = voters if args.sweep_voters == "private" else reference
        for k, temperature in enumerate(args.temperatures):
            _, history = evolve(k, temperature, args.sweep_num_samples, sweep_voters, f"sweep-{k}")
            sweep_runs.append({"temperature": temperature, "history": history})
        best = min(sweep_runs, key=lambda r: _final_fid(r["history"]))["temperature"]
    else:
        best = args.temperatures[0]
    texts, history = evolve(len(args.temperatures), best, args.num_samples, voters, "final")

    result = {
        "sweep": sweep_runs,
        "selected_temperature": best,
        "final": {"temperature": best, "history": history},
    }
    _write_outputs(staged.work, args, texts, guarantee, result, source=source, validation=len(validation))
    return staged.publish(list(PUBLISHED))


def _write_outputs(
    folder: Path, args: PEArguments, texts: list[str], guarantee, result: dict, *, source, validation
):
    """The corpus with its card (privacy statement included), ``pe.json`` and ``privacy.json`` into the
    staged folder."""
    from continuousbench import __version__
    from continuousbench.dp.corpus import corpus_card, write_corpus
    from continuousbench.dp.statement import evolution_statement
    from continuousbench.files import write_json

    settings = args.settings()
    best, history = result["selected_temperature"], result["final"]["history"]
    description = (
        f"{len(texts)} texts made by Private Evolution from `{source}` with the API `{args.api}` at "
        f"temperature {best:g}, {args.iterations} iterations of {args.variations} rewrites per sample, "
        f"embeddings from `{args.embedding_model}`. Final FID against the validation split: "
        f"{_final_fid(history):.4g}. Per-iteration history: `pe.json`."
    )
    statement = evolution_statement(guarantee, temperatures=args.temperatures, sweep_voters=args.sweep_voters)
    card = corpus_card(
        title="Private Evolution corpus",
        description=description,
        settings=settings,
        statement=statement,
        private=not math.isinf(guarantee.epsilon),
    )
    write_corpus(folder, texts, card)
    record = {"version": __version__, "private_corpus": source, "validation_records": validation}
    record |= {"settings": settings, "guarantee": guarantee.to_dict(), **result}
    write_json(folder / "pe.json", record)
    write_json(folder / "privacy.json", publishable(privacy_record(guarantee, args.epsilon)))


def privacy_record(guarantee, target_epsilon: float) -> dict:
    """``privacy.json``: the guarantee the harness records with every result on this corpus, and the
    epsilon asked for (calibration lands just below it; the leaderboard groups budgets by it)."""
    if math.isinf(guarantee.epsilon):
        return {"private": False}
    stated = {k: v for k, v in guarantee.to_dict().items() if k != "event_json"}
    return {
        "private": True,
        **stated,
        "target_epsilon": target_epsilon,
        "unit": "record",
        "adjacency": "add-or-remove",
        "accountant": "pld",
    }


def _final_fid(history: list[dict]) -> float:
    fid = history[-1].get("fid")
    return math.inf if fid is None else float(fid)


make_parser, cli = command(
    PEArguments,
    "continuousbench pe",
    "Private Evolution: a DP corpus from API calls and noisy nearest-neighbour votes.",
    main,
    report=print,
)
