"""Private prediction's decoding speed: each batch's prompts KV-cached vs recomputed at every token, with
plain ``generate`` on the same rows (no privacy) as the peer's reference.

    python benchmarks/private_prediction.py --quick                 # a minute on a CPU
    python benchmarks/private_prediction.py                         # 8 batches of 16 prompts, 48 tokens
    python benchmarks/private_prediction.py --model /models/gemma-3-1b-pt --device cuda --batch_size 64 \\
        --release geminon-small-2026q1 --tokens 256 --batches 8    # a GPU

The records are a release's training documents (default: a tiny release built in a temporary folder),
cut to ``--record_tokens`` and put in the ``document`` template; the model defaults to the demo's
shipped base model. Both decoders run :class:`~continuousbench.dp.prediction.BatchDecoder` with the
same generator seed, so they emit the same tokens (checked), end-of-text disabled so every batch decodes
``--tokens`` tokens. ``generate`` samples ``--tokens`` tokens for every row (one prompt per row, s rows
per batch, KV-cached): what decoding costs without aggregation. Tokens/s counts the tokens of the
synthetic records (one per batch per step), wall and CPU time of this process; repeats alternate the
variants and the medians are shown.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

DEMO_BASE = Path(__file__).resolve().parents[1] / "continuousbench" / "demo" / "base"


def _records(release: str | None, folder: str) -> list[str]:
    from continuousbench.training.data import load_corpus

    if release is None:
        from continuousbench.geminon.build import GeminonBuildArguments, build_release

        release = str(build_release(GeminonBuildArguments(size="tiny", quarter="2026q1", seed=0, out=folder)))
    return list(load_corpus(release, "text", split="train", option="--release")["text"])


def main(argv: list[str] | None = None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEMO_BASE))
    parser.add_argument("--release", default=None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--batches", type=int, default=8, help="batches decoded together (one forward pass)")
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--record_tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="4 batches of 8, 16 tokens, 2 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch_size, args.batches, args.tokens, args.repeats = 8, 4, 16, 2
    torch.set_num_threads(1)  # CPU timings with several threads are dominated by scheduling noise

    from continuousbench.dp.prediction import BatchDecoder, Mechanism
    from continuousbench.dp.prediction_prompts import cut_records, prompts
    from continuousbench.loader import load_model

    model, tokenizer, _ = load_model(args.model, "--model")
    model.to(args.device)
    with tempfile.TemporaryDirectory() as folder:
        records = _records(args.release, folder)
    records = cut_records(records[: args.batches * args.batch_size], tokenizer, args.record_tokens)
    private, public, _ = prompts("document", records, tokenizer)
    batches = [private[b * args.batch_size : (b + 1) * args.batch_size] for b in range(args.batches)]
    mech = Mechanism(batch_size=args.batch_size, clip=5.0, temperature=1.0)
    made: dict[str, list] = {}

    def decode(kv_cache: bool) -> None:
        decoder = BatchDecoder(
            model, tokenizer, mech, max_new_tokens=args.tokens, private_tokens=args.tokens, kv_cache=kv_cache
        )
        decoder.eos = set()  # equal work: every batch decodes --tokens tokens
        generator = torch.Generator(device=args.device).manual_seed(0)
        made[str(kv_cache)] = decoder.decode(batches, public, generator)

    def generate() -> None:  # the same rows, each sampled on its own: decoding without aggregation
        tokenizer.padding_side = "left"
        rows = [p for batch in batches for p in batch]
        enc = tokenizer(rows, return_tensors="pt", padding=True).to(args.device)
        with torch.no_grad():
            model.generate(
                **enc,
                max_new_tokens=args.tokens,
                min_new_tokens=args.tokens,
                do_sample=True,
                use_cache=True,
                pad_token_id=tokenizer.pad_token_id,
            )

    variants = {
        "KV cache (ours)": lambda: decode(True),
        "recompute the prompts": lambda: decode(False),
        "generate, no privacy (peer)": generate,
    }
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, run in variants.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            run()
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    assert made["True"] == made["False"], "the two decoders emitted different tokens"
    tokens = args.batches * args.tokens
    rows = args.batches * args.batch_size
    print(
        f"model {args.model} on {args.device}: {args.batches} batches x {args.batch_size} prompts, "
        f"records cut at {args.record_tokens} tokens, {args.tokens} new tokens, "
        f"{args.repeats} repeats"
    )
    print(f"| decoder | synthetic tokens/s (wall) | tokens/s (CPU time) | row-tokens/s (wall, {rows} rows) |")
    print("| --- | ---: | ---: | ---: |")
    for name in variants:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"| {name} | {tokens / w:.1f} | {tokens / c:.1f} | {tokens * rows / args.batches / w:.0f} |")
    speedup = statistics.median(wall["recompute the prompts"]) / statistics.median(wall["KV cache (ours)"])
    print(f"KV cache vs recomputing: {speedup:.1f}x (wall)")


if __name__ == "__main__":
    main()
