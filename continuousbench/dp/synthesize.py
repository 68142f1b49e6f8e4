"""Sample a synthetic corpus from a generator folder and write it as a dataset folder.

Every document is sampled from an empty prompt (BOS only), the same way the generator was trained
(``inputs: ""``). Empty outputs are dropped and counted. The folder holds
``data/train-00000-of-00001.parquet`` (one ``text`` column) and a dataset card whose YAML ``configs:``
makes ``load_dataset(folder)`` and the harness's ``load_corpus(folder)`` work, with the generator's
provenance and privacy statement. It is written to a temp folder and renamed into place.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

PARQUET = "data/train-00000-of-00001.parquet"


@dataclass
class SynthesisArguments:
    generator: str = field(
        metadata={"help": "Generator folder (LoRA adapter + tokenizer, or a merged model)."}
    )
    output_dir: str = field(metadata={"help": "Where the synthetic corpus folder goes."})
    num_samples: int = field(
        default=1000, metadata={"help": "Documents to sample (before dropping empties)."}
    )
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature (paper default 1)."})
    top_k: int | None = field(default=None, metadata={"help": "Top-k (default: none, i.e. infinity)."})
    top_p: float | None = field(default=None, metadata={"help": "Nucleus sampling mass (default: none)."})
    max_new_tokens: int = field(default=256, metadata={"help": "Longest document in tokens."})
    batch_size: int = field(default=32, metadata={"help": "Documents per generation batch."})
    seed: int = field(default=0, metadata={"help": "Same seed, same corpus."})
    overwrite: bool = field(default=False, metadata={"help": "Replace an existing output folder."})


def make_parser():
    from continuousbench.commands import CommandParser

    return CommandParser(
        (SynthesisArguments,),
        prog="continuousbench synthesize",
        description="Sample a synthetic corpus from a generator folder.",
    )


def load_generator(folder: str):
    """(model, tokenizer) from a LoRA adapter folder (merged into its base) or a full model folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"generator {folder} does not exist: pass a folder from train-generator")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if (path / "adapter_config.json").is_file():
        from peft import AutoPeftModelForCausalLM

        model = AutoPeftModelForCausalLM.from_pretrained(folder).merge_and_unload()
    else:
        model = AutoModelForCausalLM.from_pretrained(folder)
    return model, tokenizer


def _sampling(args: SynthesisArguments) -> dict:
    return {
        k: getattr(args, k)
        for k in ("num_samples", "temperature", "top_k", "top_p", "max_new_tokens", "seed")
    }


def _card(args: SynthesisArguments, kept: int, dropped: int) -> str:
    gen = Path(args.generator)
    statement = "No privacy statement was found in the generator folder."
    readme = gen / "README.md"
    if readme.is_file():
        text = readme.read_text()
        start = text.find("## Privacy statement")
        statement = text[start:] if start >= 0 else statement
    privacy = json.loads((gen / "privacy.json").read_text()) if (gen / "privacy.json").is_file() else {}
    sampling = _sampling(args)
    return (
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: train\n    path: data/train-*.parquet\n"
        "tags:\n- continuousbench\n- synthetic\n"
        + ("- differential-privacy\n" if privacy.get("private") else "")
        + "---\n\n# Synthetic corpus\n\n"
        f"{kept} documents sampled from the generator `{gen.resolve()}` "
        f"({dropped} empty samples dropped).\n\n"
        f"## Sampling\n\n```json\n{json.dumps(sampling, indent=2)}\n```\n\n"
        "## Generator provenance and privacy\n\n"
        "Everything here is post-processing of the generator, so the generator's guarantee applies to this "
        f"corpus as a whole.\n\n{statement.replace('## Privacy statement', '### Privacy statement', 1)}"
    )


def _guarantee(generator: Path) -> dict | None:
    """The generator's privacy guarantee without its training losses (computed on private records)."""
    file = generator / "privacy.json"
    if not file.is_file():
        return None
    stated = json.loads(file.read_text())
    return {k: v for k, v in stated.items() if k not in ("history", "validation_loss", "truncated_batches")}


def main(args: SynthesisArguments) -> Path:
    """Sample, drop empties, write the corpus folder atomically; return it."""
    from datasets import Dataset

    from continuousbench.llm import generate_batched

    out = Path(args.output_dir)
    if out.exists() and not args.overwrite:
        raise FileExistsError(f"{out} already exists: pass --overwrite to replace it")
    if args.num_samples < 1:
        raise ValueError(f"--num_samples must be positive, got {args.num_samples}")
    model, tokenizer = load_generator(args.generator)
    # An empty prompt tokenises to BOS alone: the training examples' empty `inputs`.
    texts = generate_batched(
        model,
        tokenizer,
        [""] * args.num_samples,
        max_new_tokens=args.max_new_tokens,
        batch_size=args.batch_size,
        do_sample=True,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
    )
    kept = [t.strip() for t in texts if t.strip()]
    dropped = len(texts) - len(kept)
    if not kept:
        raise ValueError(f"all {len(texts)} samples were empty: check the generator and --max_new_tokens")
    tmp = out.with_name(f".{out.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "data").mkdir(parents=True)
    Dataset.from_dict({"text": kept}).to_parquet(str(tmp / PARQUET))
    (tmp / "README.md").write_text(_card(args, len(kept), dropped))
    sampling = _sampling(args)
    (tmp / "synthesis.json").write_text(
        json.dumps({"kept": len(kept), "dropped_empty": dropped, "sampling": sampling}, indent=2)
    )
    guarantee = _guarantee(Path(args.generator))
    if guarantee is not None:  # the harness records it with every result on this corpus
        (tmp / "privacy.json").write_text(json.dumps(guarantee, indent=2))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


def cli(argv: list[str] | None = None) -> Path:
    from continuousbench.commands import run

    return run(lambda: main(*make_parser().parse(argv)), report=print)
