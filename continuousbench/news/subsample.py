"""``continuousbench news subsample``: a seeded sample of the deduplicated articles (paper App. H.1).

    continuousbench news subsample --input work/dedup --output work/subsample --size small --seed 0

``small`` keeps 200k articles, ``medium`` 600k, ``large`` all of them (``tiny``, 2k, is for smoke
runs). The sample is drawn over the sorted article ids, so it does not depend on how the input was
sharded; each input shard becomes one output shard with the columns it had.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from continuousbench.commands import bounds, command
from continuousbench.errors import UserError
from continuousbench.news.stage_arguments import StageArguments

SIZES: dict[str, int | None] = {"tiny": 2_000, "small": 200_000, "medium": 600_000, "large": None}


@dataclass
class SubsampleArguments(StageArguments):
    input: str = field(metadata={"help": "Articles: the dedup stage's output folder (or shards)."})
    size: str = field(
        default="small",
        metadata={"help": "tiny (2k), small (200k), medium (600k) or large (all).", "choices": list(SIZES)},
    )
    count: int | None = field(
        default=None, metadata=bounds("[1, inf)", "Articles to keep (overrides --size).")
    )
    seed: int = field(default=0, metadata=bounds("[0, 9.2e18]", "Seed of the sample."))


def choose(ids: Sequence[str], count: int | None, seed: int) -> set[str]:
    """``count`` of ``ids`` (all when ``count`` is None or too large), drawn over the sorted ids."""
    import numpy as np

    ordered = sorted(ids)
    if count is None or count >= len(ordered):
        return set(ordered)
    picked = np.random.default_rng(seed).choice(len(ordered), size=count, replace=False)
    return {ordered[i] for i in picked}


def main(args: SubsampleArguments) -> Path:
    import pyarrow as pa
    import pyarrow.compute as pc

    from continuousbench.news.shards import StageOutput, input_files, read_rows, read_shard, shard_name

    paths = input_files(args.input)
    count = args.count if args.count is not None else SIZES[args.size]
    config = {"paths": [str(p) for p in paths], "count": count, "seed": args.seed}
    out = StageOutput(
        args.output, "subsample", config, overwrite=args.overwrite, resume=args.resume, inputs=[args.input]
    )
    ids = read_rows(paths, ["id"]).column("id").cast(pa.string()).to_pylist()
    if len(set(ids)) != len(ids):
        raise UserError(f"--input {args.input} has repeated article ids; run news dedup on it first")
    keep = pa.array(sorted(choose(ids, count, args.seed)), pa.string())
    for index, path in enumerate(paths):
        name = f"data/{shard_name(index)}"
        if not out.done(name):
            table = read_shard(path)
            out.write(name, table.filter(pc.is_in(table.column("id").cast(pa.string()), value_set=keep)))
    counts = {"dropped_not_sampled": len(ids) - len(keep)}
    return out.finish(len(ids), len(keep), counts, size=args.size, count=count, seed=args.seed)


make_parser, cli = command(
    SubsampleArguments,
    "continuousbench news subsample",
    "Keep a seeded sample of the articles: small 200k, medium 600k, large all.",
    main,
    report=print,
)
