"""What naming a local base model by its contents costs a run, and what recomputing "canonical" costs the
leaderboard.

A folder holding a ``--size_mb`` weights file (random bytes) plus the demo base model's config and
tokenizer is named by :func:`continuousbench.training.identity.content_digest` (first call, then the
cached second call of the same run), beside ``hashlib.file_digest`` of the weights alone (the floor); then
:func:`continuousbench.results.canonical.standing` of a schema-4 record, per record. Runs alternate.

    python benchmarks/recipe_digest.py --size_mb 512 --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "continuousbench" / "demo" / "base"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size_mb", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from continuousbench.harness import recipe as recipes
    from continuousbench.results.canonical import standing
    from continuousbench.training import identity

    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        model.mkdir()
        for name in ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"):
            shutil.copy(BASE / name, model / name)
        with (model / "model.safetensors").open("wb") as out:
            for _ in range(args.size_mb):
                out.write(os.urandom(1 << 20))
        times: dict[str, list[float]] = {"file_digest (floor)": [], "content_digest": [], "cached": []}
        for _ in range(args.repeats):
            start = time.perf_counter()
            with (model / "model.safetensors").open("rb") as f:
                hashlib.file_digest(f, "sha256")
            times["file_digest (floor)"].append(time.perf_counter() - start)
            identity._digest.cache_clear()
            start = time.perf_counter()
            identity.content_digest(model, model=True)
            times["content_digest"].append(time.perf_counter() - start)
            start = time.perf_counter()
            identity.content_digest(model, model=True)
            times["cached"].append(time.perf_counter() - start)
    path = str(ROOT / "recipes" / "configs" / "geminon-tiny-demo.yaml")
    record = {"recipe": recipes.record(*recipes._parse_alone(path), path)}
    start, count = time.perf_counter(), 10_000
    for _ in range(count):
        standing(record)
    per_record = (time.perf_counter() - start) / count
    print(f"load average {os.getloadavg()[0]:.1f}; a {args.size_mb} MiB weights file, {args.repeats} runs")
    for name, values in times.items():
        rate = args.size_mb / min(values) if name != "cached" else float("nan")
        print(f"{name:<22} {min(values):8.3f}-{max(values):.3f} s  {rate:7.0f} MiB/s")
    print(f"{'standing (per record)':<22} {per_record * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
