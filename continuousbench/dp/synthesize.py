"""Sample a synthetic corpus from a generator folder and write it as a dataset folder.

    continuousbench synthesize --generator runs/gen-eps10 --output_dir runs/syn-eps10 --num_samples 200000
    torchrun --nproc_per_node 8 recipes/synthesize.py --generator runs/gen-eps10 --output_dir runs/syn-eps10
    continuousbench synthesize --generator runs/gen-eps10 --output_dir runs/syn-eps10 \\
        --backend completions:http://127.0.0.1:8000/v1#gen --max_in_flight 64

Every document is sampled from an empty prompt, the way the generator was trained (``inputs: ""``): the
tokenizer's own start token if it adds one, else its BOS token, else its EOS token. A label-conditioned
generator (``train-generator --label_column``) is sampled with ``--per_class N``: each document starts
from its class's label line, N documents per class on average split by ``--class_prior``, and the corpus
keeps a ``label`` column (:mod:`continuousbench.dp.labels`). Empty outputs are dropped and counted.
The folder (:mod:`continuousbench.dp.corpus`) carries the generator's provenance and
privacy statement. Everything is staged in a hidden work folder and published once complete.

Backends. ``local`` (default) samples with ``transformers`` in this process. Under ``torchrun`` /
``accelerate launch`` the batches are dealt round-robin to the processes, each process writes its shard
into the work folder, and process 0 merges them in batch order; batch ``b`` is always seeded
``seed + b * batch_size``, so the corpus is the same for any number of processes. An endpoint
(``completions:<url>#<model>``, e.g. vLLM serving the base model with the LoRA adapter, or
``endpoint:<url>#<model>`` for chat) is sampled from process 0 only: the server does the parallel work,
with ``--max_in_flight`` requests at once and an on-disk cache that ``--resume`` reuses.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench import processes
from continuousbench.commands import bounds, command
from continuousbench.dp.corpus import CorpusOutputArguments
from continuousbench.dp.labels import Prior
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

SHARD = "shards/rank-{:05d}.parquet"


@dataclass
class SynthesisArguments(CorpusOutputArguments):
    generator: str = field(
        metadata={"help": "Generator folder (LoRA adapter + tokenizer, or a merged model)."}
    )
    backend: str = field(
        default="local",
        metadata={
            "help": "local (transformers here), completions:<url>#<model> (raw completions, e.g. vLLM with "
            "the LoRA adapter) or endpoint:<url>#<model> (chat completions)."
        },
    )
    num_samples: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Documents to sample (default 1000; not with --per_class).")
    )
    per_class: int | None = field(
        default=None,
        metadata=bounds(
            "[1, inf)", "Label-conditioned generator: documents per class on average, split by --class_prior."
        ),
    )
    class_prior: str = field(
        default="uniform",
        metadata={
            "help": "With --per_class: uniform, name=weight,... (a stated prior), or a class-counts JSON "
            "file (public or DP counts; docs/saturation.md)."
        },
    )
    temperature: float = field(default=1.0, metadata=bounds("(0, inf)", "Sampling temperature (paper: 1)."))
    top_k: int | None = field(default=None, metadata=bounds("[1, inf)", "Top-k (default: none, i.e. all)."))
    top_p: float | None = field(default=None, metadata=bounds("(0, 1]", "Nucleus mass (default: none)."))
    max_new_tokens: int = field(default=256, metadata=bounds("[1, 1000000]", "Longest document in tokens."))
    batch_size: int = field(default=32, metadata=bounds("[1, 1000000]", "Documents per local batch."))
    max_in_flight: int = field(default=32, metadata=bounds("[1, 100000]", "Endpoint requests at once."))
    request_timeout: float = field(
        default=300.0,
        metadata=bounds(
            "(0, inf)", "Seconds one endpoint answer may take in all (connect, queue, generation, stalls)."
        ),
    )
    cache_dir: str | None = field(
        default=None, metadata={"help": "Endpoint answer cache (default: the work folder, kept by --resume)."}
    )
    seed: int = field(default=0, metadata={"help": "Same seed, same corpus."})
    resume: bool = field(default=False, metadata={"help": "Continue a killed run (finished shards, cache)."})


def load_generator(folder: str, *, with_model: bool = True):
    """(model or None, tokenizer) from a LoRA adapter folder (merged into its base) or a full model folder."""
    from continuousbench.loader import load_model

    return load_model(folder, "--generator", with_model=with_model)[:2]


def start_prompt(tokenizer) -> str:
    """The text of an empty document's prompt: "" when the tokenizer adds its own start token, else the
    BOS token, else the EOS token (as a special-token string, which tokenises to that one token)."""
    if tokenizer("", add_special_tokens=True)["input_ids"]:
        return ""
    token = tokenizer.bos_token or tokenizer.eos_token
    if token is None:
        raise UserError(
            "the generator's tokenizer has no BOS and no EOS token, so an empty prompt cannot start a "
            "document; set tokenizer.bos_token in the generator folder's tokenizer_config.json"
        )
    return token


def _sampling(args: SynthesisArguments) -> dict:
    keys = ("backend", "num_samples", "temperature", "top_k", "top_p", "max_new_tokens", "seed")
    labelled = {"per_class": args.per_class, "class_prior": args.class_prior} if args.per_class else {}
    return {k: getattr(args, k) for k in keys} | labelled


def _plan(args: SynthesisArguments) -> tuple[list[str | None], Prior | None]:
    """The class of every document to sample, in order (None: unconditioned), and the prior behind it.
    Sets ``args.num_samples`` to their number."""
    from continuousbench.dp.labels import allocate, class_prior, read_spec

    names = read_spec(args.generator)
    if args.per_class is None:
        if args.class_prior != "uniform":
            raise UserError("--class_prior applies to --per_class sampling; pass --per_class N")
        args.num_samples = args.num_samples or 1000
        return [None] * args.num_samples, None
    if names is None:
        raise UserError(
            f"--per_class needs a label-conditioned generator; {args.generator} has no labels.json (train it "
            "with train-generator --label_column)"
        )
    if args.num_samples is not None:
        raise UserError("--num_samples and --per_class both set the corpus size; pass one")
    prior = class_prior(args.class_prior, names)
    counts = allocate(args.per_class * len(names), prior.weights)
    args.num_samples = sum(counts.values())
    return [n for n in names for _ in range(counts[n])], prior


def _guarantee(generator: Path) -> dict | None:
    """The generator's privacy guarantee, restricted to what a DP run may publish (an older generator's
    file may hold keys no longer published)."""
    from continuousbench.dp.published import publishable

    file = generator / "privacy.json"
    if not file.is_file():
        return None
    return publishable(json.loads(file.read_text()), strict=False)


def _card(args: SynthesisArguments, kept: int, dropped: int, balance: str | None = None) -> str:
    from continuousbench.dp.corpus import corpus_card

    gen = Path(args.generator)
    statement = "No privacy statement was found in the generator folder."
    readme = gen / "README.md"
    if readme.is_file():
        text = readme.read_text()
        start = text.find("## Privacy statement")
        statement = text[start:] if start >= 0 else statement
    privacy = json.loads((gen / "privacy.json").read_text()) if (gen / "privacy.json").is_file() else {}
    sampling = _sampling(args)
    return corpus_card(
        title="Synthetic corpus",
        description=(
            f"{kept} documents sampled from the generator `{gen.resolve()}` ({dropped} empty samples "
            "dropped).\n\n## Generator provenance and privacy\n\nEverything here is post-processing of the "
            "generator, so the generator's guarantee applies to this corpus as a whole."
        ),
        settings=sampling,
        statement=statement.replace("## Privacy statement", "### Privacy statement", 1)
        + (f"\n{balance}" if balance else ""),
        private=bool(privacy.get("private")),
    )


def _prompts(tokenizer, classes: list[str | None]) -> list[str]:
    """Each document's prompt: the start prompt, and its class's label line for a conditioned one."""
    from continuousbench.dp.labels import prefix

    start = start_prompt(tokenizer)
    return [start + (prefix(c) if c is not None else "") for c in classes]


def _sample_local(
    args: SynthesisArguments, procs: processes.Processes, shard: Path, classes: list[str | None] | None = None
) -> None:
    """This process's share of the batches (``b % processes == index``), written to ``shard``;
    ``classes``: each document's class (``--per_class``), else None for all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from continuousbench.files import atomic_write
    from continuousbench.llm.local import generate_batched

    model, tokenizer = load_generator(args.generator)
    prompts = _prompts(tokenizer, classes or [None] * args.num_samples)
    batches = range(procs.rank, -(-args.num_samples // args.batch_size), procs.world_size)
    rows: dict[str, list] = {"batch": [], "text": []}
    for done, b in enumerate(batches, 1):
        size = min(args.batch_size, args.num_samples - b * args.batch_size)
        start = b * args.batch_size
        texts = generate_batched(
            model,
            tokenizer,
            prompts[start : start + size],
            max_new_tokens=args.max_new_tokens,
            batch_size=size,
            do_sample=True,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            seed=args.seed + b * args.batch_size,
        )
        rows["batch"] += [b] * size
        rows["text"] += texts
        if done % 10 == 0:  # reported by process 0 only (processes.current)
            logger.info("sampled %d of %d batches (process 0)", done, len(batches))
    atomic_write(shard, lambda tmp: pq.write_table(pa.table(rows, schema=SHARD_SCHEMA()), tmp))


def SHARD_SCHEMA():  # noqa: N802 - a constant, built lazily (pyarrow is imported on use)
    """Every shard's columns, typed: a process with no batch (more processes than batches) writes an
    empty shard, whose inferred columns would be null-typed and could not be merged with the others."""
    import pyarrow as pa

    return pa.schema([("batch", pa.int64()), ("text", pa.string())])


def _merge_shards(work: Path, processes: int) -> list[str]:
    """Every shard's texts in batch order (a stable sort keeps each batch's own order)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.concat_tables([pq.read_table(work / SHARD.format(r)) for r in range(processes)])
    return table.sort_by("batch").column("text").to_pylist()


def _sample_endpoint(args: SynthesisArguments, staged, classes: list[str | None]) -> list[str]:
    from continuousbench.files import check_writable_dir
    from continuousbench.llm import GenerationError, make_generator
    from continuousbench.training.identity import content_digest

    _, tokenizer = load_generator(args.generator, with_model=False)
    cache = staged.work / "cache"
    if args.cache_dir:  # shared between runs: checked before any request
        cache = check_writable_dir(Path(args.cache_dir), "--cache_dir")
    weights = {"generator_sha256": content_digest(args.generator, model=True)}  # what the server samples
    generator = make_generator(
        args.backend,
        max_in_flight=args.max_in_flight,
        cache_dir=cache,
        cache_identity=weights,
        request_timeout=args.request_timeout,
    )
    try:
        generator.check()
    except GenerationError:
        if not args.resume:  # nothing was done: leave no unfinished run behind
            staged.discard()
        raise
    sampling = {"temperature": args.temperature, "top_p": args.top_p, "top_k": args.top_k}
    prompts = _prompts(tokenizer, classes)
    if args.backend.startswith("completions:"):  # llama.cpp fails on an empty prompt
        prompts = [p or tokenizer.bos_token or tokenizer.eos_token or "" for p in prompts]
    return generator.generate(
        prompts,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        **{k: v for k, v in sampling.items() if v is not None},
    )


def _check_not_audited(generator: Path) -> None:
    """Refuse a generator ``audit`` trained, finished or stopped (Ctrl-C leaves its ``.audit-work``): it
    learnt the audit's canaries, half of them slipped into its training data, so what it writes is the
    audit's measurement, not a synthetic corpus of the private one."""
    from continuousbench.files import OWNED_FILE

    found = next(
        (n for n in (OWNED_FILE.format(command="audit"), ".audit-work") if (generator / n).exists()), None
    )
    if found is not None:
        raise UserError(
            f"--generator {generator} was trained by `continuousbench audit` ({found} is there), on canary "
            "records as well as the corpus; sample from a `train-generator` folder instead"
        )


def refuse_soft_prompt(generator: str) -> None:
    """One line, before any request, for a prompt-tuned generator on a server: the soft prompt is a table
    of embeddings, and servers here receive text. vLLM can take prompt embeddings (``--enable-prompt-
    embeds``, its ``prompt_embeds`` completions input); this backend does not send them."""
    config = Path(generator).expanduser() / "adapter_config.json"
    if config.is_file() and json.loads(config.read_text()).get("peft_type") == "PROMPT_TUNING":
        raise UserError(
            f"--generator {generator} is prompt-tuned: its soft prompt is embeddings, which a text "
            "completions/chat server cannot receive (vLLM accepts them only as prompt_embeds with "
            "--enable-prompt-embeds, which this backend does not send); sample with --backend local"
        )


def _staged(args: SynthesisArguments, procs: processes.Processes, prior: Prior | None):
    """The staged output, its configuration pinned (run on process 0 only: :func:`processes.on_main`)."""
    from continuousbench.staged_output import StagedOutput

    _check_not_audited(Path(args.generator))

    staged = StagedOutput(
        args.output_dir, "synthesize", overwrite=args.overwrite, resume=args.resume, inputs=[args.generator]
    )
    config = {k: v for k, v in vars(args).items() if k not in ("output_dir", "resume", "overwrite")}
    config["class_weights"] = prior and prior.weights  # a counts file rewritten in place is a change
    # requests in flight change no sample: a resume may send more at once
    staged.pin_config(config | {"processes": procs.world_size}, ignore=("max_in_flight", "request_timeout"))
    return staged


def main(args: SynthesisArguments) -> Path | None:
    """Sample, drop empties, publish the corpus folder; return it (None on processes other than 0)."""
    from continuousbench.dp.corpus import write_corpus
    from continuousbench.files import write_json

    procs = processes.current()
    local = args.backend == "local"
    if not local:
        refuse_soft_prompt(args.generator)
    classes, prior = _plan(args)
    staged = processes.on_main(lambda: _staged(args, procs, prior), procs)  # every process: its work folder
    if local:
        shard = staged.work / SHARD.format(procs.rank)
        if not shard.is_file():
            _sample_local(args, procs, shard, classes)
        processes.barrier(procs)
    if not procs.main:
        return None
    texts = _merge_shards(staged.work, procs.world_size) if local else _sample_endpoint(args, staged, classes)
    rows = [(t.strip(), c) for t, c in zip(texts, classes, strict=True) if t.strip()]
    dropped = len(texts) - len(rows)
    if not rows:
        raise UserError(f"all {len(texts)} samples were empty: check the generator and --max_new_tokens")
    labels = [c for _, c in rows] if prior is not None else None
    guarantee = _guarantee(Path(args.generator))
    balance = class_balance(prior, guarantee)
    write_corpus(staged.work, [t for t, _ in rows], _card(args, len(rows), dropped, balance), labels=labels)
    record = {"kept": len(rows), "dropped_empty": dropped, "sampling": _sampling(args)}
    if prior is not None:
        asked = {n: classes.count(n) for n in dict.fromkeys(classes)}
        record["per_class"] = {n: {"asked": k, "kept": labels.count(n)} for n, k in asked.items()}
    write_json(staged.work / "synthesis.json", record)
    outputs = ["data", "README.md", "synthesis.json"]
    if guarantee is not None:  # the harness records it with every result on this corpus
        write_json(staged.work / "privacy.json", with_class_balance(guarantee, prior, balance))
        outputs.append("privacy.json")
    return staged.publish(outputs)


def class_balance(prior: Prior | None, guarantee: dict | None) -> str | None:
    """The card's paragraph on where the class balance of a ``--per_class`` corpus came from."""
    if prior is None:
        return None
    weights = ", ".join(f"{n} {w:g}" for n, w in prior.weights.items())
    text = {
        "uniform": "the same number of documents of each class: no private data was used to choose them.",
        "stated": f"a prior stated by the user ({weights}): no private data was used to choose it.",
        "public counts": f"the training split's class counts ({weights}), **declared public** by the data "
        "owner: they are published as they are and are not covered by any DP guarantee.",
        "dp counts": f"the training split's class counts released with Gaussian noise (std "
        f"{(prior.counts or {}).get('noise_multiplier', 0):.4g}, L2 sensitivity 1): noisy counts "
        f"{weights}. That release is **spent from the budget**: the guarantee of this corpus is the "
        "generator's composed with it (PLD), as `privacy.json` states.",
    }[prior.source]
    if prior.source == "dp counts" and guarantee is None:
        text += " The generator states no DP guarantee, so neither does this corpus."
    lead = "Each document was prompted with its class's label line; the classes follow"
    return f"### Class balance\n\n{lead} {text}\n"


def with_class_balance(guarantee: dict, prior: Prior | None, balance: str | None) -> dict:
    """The corpus's guarantee: the generator's, composed with DP class counts when those were spent."""
    from continuousbench.dp.labels import compose

    if prior is None:
        return guarantee
    record = dict(guarantee)
    if prior.source == "dp counts" and guarantee.get("private") is not None and guarantee.get("event_json"):
        record = compose(guarantee, prior.counts)
        if prior.counts.get("target_epsilon"):  # the budget split between generator and counts
            record["target_epsilon"] = prior.counts["target_epsilon"]
    record["class_balance"] = {
        "source": prior.source,
        "weights": prior.weights,
        **({"noise_multiplier": prior.counts["noise_multiplier"]} if prior.source == "dp counts" else {}),
    }
    return record


make_parser, cli = command(
    SynthesisArguments,
    "continuousbench synthesize",
    "Sample a synthetic corpus from a generator folder.",
    main,
    report=lambda path: path and print(path),
)
