"""Generation on a CPU: transformers' default (growing) KV cache against a static one, alternated.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 PYTHONPATH=. python benchmarks/generation_cache.py

The demo's shipped base model, one thread, each cache twice: sampling as ``synthesize`` does (documents
from the start token, 160 new tokens, temperature 0.7) at batch sizes 64 and 192, and greedy one-line
answers as the harness's QA (left-padded prompts of different lengths). Prints each one's best CPU
seconds and checks that both caches give the same texts. ``generate_batched`` keeps the default cache:
see docs/performance.md.
"""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import torch

from continuousbench.llm import local
from continuousbench.loader import load_model

BASE = Path(__file__).resolve().parents[1] / "continuousbench" / "demo" / "base"
CASES = {
    "sample 192 x 160, batch 64": dict(n=192, batch_size=64, max_new_tokens=160, do_sample=True),
    "sample 192 x 160, batch 192": dict(n=192, batch_size=192, max_new_tokens=160, do_sample=True),
    "greedy answers 128, batch 64": dict(n=128, batch_size=64, max_new_tokens=24, stop_at_newline=True),
}


def run(model, tokenizer, cache: str | None, n: int, **options) -> tuple[float, list[str]]:
    """(CPU seconds, texts) of one ``generate_batched`` call, generating with ``cache`` (None: default)."""
    greedy = "stop_at_newline" in options
    prompts = [("Q: Who keeps the " * (i % 5) + "Geminon?\nA:") if greedy else "" for i in range(n)]
    sampling = {} if greedy else {"temperature": 0.7, "seed": 0}
    generate = model.generate

    def with_cache(*args, **kwargs):
        return generate(*args, **kwargs, cache_implementation=cache)

    with mock.patch.object(model, "generate", with_cache):
        start = time.process_time()
        texts = local.generate_batched(model, tokenizer, prompts, **options, **sampling)
        return time.process_time() - start, texts


def main() -> None:
    torch.set_num_threads(1)
    model, tokenizer = load_model(str(BASE))[:2]
    print("case                            dynamic CPU-s   static CPU-s   same texts")
    for name, options in CASES.items():
        times: dict[str | None, list[float]] = {None: [], "static": []}
        texts: dict[str | None, list[str]] = {}
        for _ in range(2):
            for cache in (None, "static"):
                seconds, texts[cache] = run(model, tokenizer, cache, **options)
                times[cache].append(seconds)
        same = texts[None] == texts["static"]
        print(f"{name:<32}{min(times[None]):>10.2f}{min(times['static']):>15.2f}   {same}")


if __name__ == "__main__":
    main()
