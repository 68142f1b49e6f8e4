"""Sample a synthetic corpus from a generator folder and write it as a dataset folder.

    continuousbench synthesize --generator runs/gen-eps10 --output_dir runs/syn-eps10 --num_samples 200000
    torchrun --nproc_per_node 8 recipes/synthesize.py --generator runs/gen-eps10 --output_dir runs/syn-eps10
    continuousbench synthesize --generator runs/gen-eps10 --output_dir runs/syn-eps10 \\
        --backend completions:http://127.0.0.1:8000/v1#gen --max_in_flight 64

Every document is sampled from an empty prompt, the way the generator was trained (``inputs: ""``): the
tokenizer's own start token if it adds one, else its BOS token, else its EOS token. Empty outputs are
dropped and counted. The folder (:mod:`continuousbench.dp.corpus`) carries the generator's provenance and
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
from continuousbench.errors import UserError

logger = logging.getLogger(__name__)

SHARD = "shards/rank-{:05d}.parquet"


@dataclass
class SynthesisArguments:
    generator: str = field(
        metadata={"help": "Generator folder (LoRA adapter + tokenizer, or a merged model)."}
    )
    output_dir: str = field(metadata={"help": "Where the synthetic corpus folder goes."})
    backend: str = field(
        default="local",
        metadata={
            "help": "local (transformers here), completions:<url>#<model> (raw completions, e.g. vLLM with "
            "the LoRA adapter) or endpoint:<url>#<model> (chat completions)."
        },
    )
    num_samples: int = field(default=1000, metadata=bounds("[1, inf)", "Documents to sample."))
    temperature: float = field(default=1.0, metadata=bounds("(0, inf)", "Sampling temperature (paper: 1)."))
    top_k: int | None = field(default=None, metadata=bounds("[1, inf)", "Top-k (default: none, i.e. all)."))
    top_p: float | None = field(default=None, metadata=bounds("(0, 1]", "Nucleus mass (default: none)."))
    max_new_tokens: int = field(default=256, metadata=bounds("[1, 1000000]", "Longest document in tokens."))
    batch_size: int = field(default=32, metadata=bounds("[1, 1000000]", "Documents per local batch."))
    max_in_flight: int = field(default=32, metadata=bounds("[1, 100000]", "Endpoint requests at once."))
    request_timeout: float = field(default=300.0, metadata=bounds(
        "(0, inf)", "Seconds one endpoint answer may take in all (connect, queue, generation, stalls)."))
    cache_dir: str | None = field(
        default=None, metadata={"help": "Endpoint answer cache (default: the work folder, kept by --resume)."}
    )
    seed: int = field(default=0, metadata={"help": "Same seed, same corpus."})
    resume: bool = field(default=False, metadata={"help": "Continue a killed run (finished shards, cache)."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing output folder."})


def load_generator(folder: str, *, with_model: bool = True):
    """(model or None, tokenizer) from a LoRA adapter folder (merged into its base) or a full model folder."""
    from continuousbench.training.modeling import load_trained

    return load_trained(folder, "--generator", with_model=with_model)


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
    return {k: getattr(args, k) for k in keys}


def _guarantee(generator: Path) -> dict | None:
    """The generator's privacy guarantee, restricted to what a DP run may publish (an older generator's
    file may hold keys no longer published)."""
    from continuousbench.dp.published import publishable

    file = generator / "privacy.json"
    if not file.is_file():
        return None
    return publishable(json.loads(file.read_text()), strict=False)


def _card(args: SynthesisArguments, kept: int, dropped: int) -> str:
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
        statement=statement.replace("## Privacy statement", "### Privacy statement", 1),
        private=bool(privacy.get("private")),
    )


def _sample_local(args: SynthesisArguments, procs: processes.Processes, shard: Path) -> None:
    """This process's share of the batches (``b % processes == index``), written to ``shard``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from accelerate import PartialState

    from continuousbench.files import atomic_write
    from continuousbench.llm.local import generate_batched

    model, tokenizer = load_generator(args.generator)
    model.to(PartialState().device)  # this process's accelerator under torchrun, else the first one
    prompt = start_prompt(tokenizer)
    batches = range(procs.rank, -(-args.num_samples // args.batch_size), procs.world_size)
    rows: dict[str, list] = {"batch": [], "text": []}
    for done, b in enumerate(batches, 1):
        size = min(args.batch_size, args.num_samples - b * args.batch_size)
        texts = generate_batched(
            model, tokenizer, [prompt] * size, max_new_tokens=args.max_new_tokens, batch_size=size,
            do_sample=True, temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
            seed=args.seed + b * args.batch_size,
        )  # fmt: skip
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


def _sample_endpoint(args: SynthesisArguments, staged) -> list[str]:
    from continuousbench.files import check_writable_dir
    from continuousbench.llm import GenerationError, make_generator
    from continuousbench.training.identity import content_digest

    _, tokenizer = load_generator(args.generator, with_model=False)
    cache = staged.work / "cache"
    if args.cache_dir:  # shared between runs: checked before any request
        cache = check_writable_dir(Path(args.cache_dir), "--cache_dir")
    weights = {"generator_sha256": content_digest(args.generator, model=True)}  # what the server samples
    generator = make_generator(args.backend, max_in_flight=args.max_in_flight, cache_dir=cache,
                               cache_identity=weights, request_timeout=args.request_timeout)  # fmt: skip
    try:
        generator.check()
    except GenerationError:
        if not args.resume:  # nothing was done: leave no unfinished run behind
            staged.discard()
        raise
    sampling = {"temperature": args.temperature, "top_p": args.top_p, "top_k": args.top_k}
    prompt = start_prompt(tokenizer)
    if args.backend.startswith("completions:") and not prompt:  # llama.cpp fails on an empty prompt
        prompt = tokenizer.bos_token or tokenizer.eos_token or ""
    return generator.generate(
        [prompt] * args.num_samples,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        **{k: v for k, v in sampling.items() if v is not None},
    )


def _check_not_audited(generator: Path) -> None:
    """Refuse a generator ``audit`` trained, finished or stopped (Ctrl-C leaves its ``.audit-work``): it
    learnt the audit's canaries, half of them slipped into its training data, so what it writes is the
    audit's measurement, not a synthetic corpus of the private one."""
    from continuousbench.files import OWNED_FILE

    found = next((n for n in (OWNED_FILE.format(command="audit"), ".audit-work") if (generator / n).exists()),
                 None)  # fmt: skip
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


def _staged(args: SynthesisArguments, procs: processes.Processes):
    """The staged output, its configuration pinned (run on process 0 only: :func:`processes.on_main`)."""
    from continuousbench.files import StagedOutput

    _check_not_audited(Path(args.generator))

    staged = StagedOutput(args.output_dir, "synthesize", overwrite=args.overwrite, resume=args.resume,
                          inputs=[args.generator])  # fmt: skip
    config = {k: v for k, v in vars(args).items() if k not in ("output_dir", "resume", "overwrite")}
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
    staged = processes.on_main(lambda: _staged(args, procs), procs)  # every process gets its work folder
    if local:
        shard = staged.work / SHARD.format(procs.rank)
        if not shard.is_file():
            _sample_local(args, procs, shard)
        processes.barrier(procs)
    if not procs.main:
        return None
    texts = _merge_shards(staged.work, procs.world_size) if local else _sample_endpoint(args, staged)
    kept = [t.strip() for t in texts if t.strip()]
    dropped = len(texts) - len(kept)
    if not kept:
        raise UserError(f"all {len(texts)} samples were empty: check the generator and --max_new_tokens")
    write_corpus(staged.work, kept, _card(args, len(kept), dropped))
    write_json(
        staged.work / "synthesis.json",
        {"kept": len(kept), "dropped_empty": dropped, "sampling": _sampling(args)},
    )
    outputs = ["data", "README.md", "synthesis.json"]
    guarantee = _guarantee(Path(args.generator))
    if guarantee is not None:  # the harness records it with every result on this corpus
        write_json(staged.work / "privacy.json", guarantee)
        outputs.append("privacy.json")
    return staged.publish(outputs)


make_parser, cli = command(
    SynthesisArguments,
    "continuousbench synthesize",
    "Sample a synthetic corpus from a generator folder.",
    main,
    report=lambda path: path and print(path),
)
