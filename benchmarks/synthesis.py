"""Synthesis throughput: local sampling batched vs one at a time, and an endpoint at 1 vs 32 in flight.

    python benchmarks/synthesis.py --quick      # seconds
    python benchmarks/synthesis.py              # 256 local samples, 512 endpoint samples

Local: the tiny Llama of the tests (1M parameters, CPU, one thread) samples documents from an empty
prompt with ``generate_batched``, ``--batch`` at a time vs one at a time, the same tokens either way.
Endpoint: ``EndpointGenerator`` (raw completions) against ``FakeOpenAIServer`` answering every request
after a fixed ``--latency``, so the figure isolates the client's concurrency; each run gets a fresh
cache folder (a cache hit would be free). Repeats alternate the settings compared; medians are shown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def _tiny_generator(folder: str):
    import torch

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.dp.synthesize import load_generator, start_prompt

    torch.set_num_threads(1)  # CPU timings with several threads are dominated by scheduling noise
    texts = [f"Geminon {i} has attack {i * 7 % 100} and lives in zone {i % 13}." for i in range(400)]
    save_tiny_model(folder, texts, vocab_size=512)
    model, tokenizer = load_generator(folder)
    return model, tokenizer, start_prompt(tokenizer)


def local_runs(args, folder: str) -> dict[str, Callable[[], int]]:
    from continuousbench.llm.local import generate_batched

    model, tokenizer, prompt = _tiny_generator(folder)
    model.generation_config.eos_token_id = None  # every sample runs to max_new_tokens: equal work

    def run(batch: int) -> int:
        texts = generate_batched(
            model,
            tokenizer,
            [prompt] * args.local_samples,
            max_new_tokens=args.new_tokens,
            batch_size=batch,
            do_sample=True,
            temperature=1.0,
            seed=0,
        )
        return len(texts)

    return {f"local, batch {args.batch}": lambda: run(args.batch), "local, one at a time": lambda: run(1)}


def endpoint_runs(args, url: str) -> dict[str, Callable[[], int]]:
    from continuousbench.llm import make_generator

    def run(in_flight: int) -> int:
        with tempfile.TemporaryDirectory() as cache:
            generator = make_generator(f"completions:{url}#gen", max_in_flight=in_flight, cache_dir=cache)
            texts = generator.generate(
                [""] * args.endpoint_samples, max_new_tokens=64, temperature=1.0, seed=0
            )
        return len(texts)

    return {f"endpoint, {n} in flight": (lambda n=n: run(n)) for n in (1, 32)}


def measure(runs: dict[str, Callable[[], int]], repeats: int) -> dict[str, list[float]]:
    """samples/s of every run, repeats alternating between them."""
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            n = run()
            rates[name].append(n / (time.perf_counter() - start))
    return rates


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--local-samples", type=int, default=256)
    parser.add_argument("--endpoint-samples", type=int, default=512)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument(
        "--latency", type=float, default=0.05, help="seconds the fake server takes per request"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="64 local and 128 endpoint samples, 1 repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.local_samples, args.endpoint_samples, args.repeats = 64, 128, 1

    from rich.console import Console
    from rich.table import Table

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test server
    from fake_endpoint import FakeOpenAIServer

    with tempfile.TemporaryDirectory() as folder:
        local = measure(local_runs(args, folder), args.repeats)
    with FakeOpenAIServer(reply=lambda body: "Geminon 7 has attack 49.", latency=args.latency) as server:
        remote = measure(endpoint_runs(args, server.url), args.repeats)
    table = Table(title=f"synthesis throughput (median of {args.repeats}, samples/s)")
    for col in ("setting", "samples", "samples / s", "runs"):
        table.add_column(col, justify="right")
    for name, rates in (local | remote).items():
        n = args.local_samples if name.startswith("local") else args.endpoint_samples
        table.add_row(name, str(n), f"{statistics.median(rates):.1f}", " ".join(f"{r:.1f}" for r in rates))
    Console().print(table)
    print(
        f"local: {args.new_tokens} new tokens per sample, tiny Llama, 1 thread; endpoint: fake server, "
        f"{args.latency * 1000:.0f} ms per request"
    )


if __name__ == "__main__":
    main()
