"""DP-SGD step cost (Opacus ghost clipping) relative to a non-private step, and synthesis throughput.

    python benchmarks/dp_step.py --quick          # tiny Llama, CPU, seconds
    python benchmarks/dp_step.py --batch 32 --length 256 --hidden 512 --layers 8

Same model (tiny Llama + LoRA), same batch, same tokens: the non-private step is one mean-loss
backward + AdamW; the DP step is Opacus's two ghost-clipping backwards + noise + AdamW. Times are
medians of alternating repeats on one thread. Memory is what one step needs above its set-up: on CUDA
the allocator's peak, on CPU the peak RSS of a fresh process that builds only that kind of step.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build_step(args, kind: str):
    """(step function, model, tokenizer) for kind "plain" or "dp" on the benchmark's tiny model."""
    import torch

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.dp import dpsgd
    from continuousbench.dp.sampling import PoissonBatchSampler
    from continuousbench.harness.modeling import load_model_and_tokenizer

    torch.set_num_threads(1)  # CPU timings with several threads are dominated by scheduling noise
    torch.manual_seed(0)
    texts = [f"Geminon {i} has attack {i * 7 % 100} in zone {i % 13} " * 8 for i in range(256)]
    folder = save_tiny_model(
        tempfile.mkdtemp(),
        texts,
        vocab_size=512,
        hidden_size=args.hidden,
        num_layers=args.layers,
        num_heads=4,
    )
    model, tok = load_model_and_tokenizer(str(folder), lora_rank=args.rank, dtype="float32")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    rows = dpsgd.encode_records(tok, texts[: args.batch], args.length)
    params = dpsgd.check_trainable(model)
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    if kind == "dp":
        sampler = PoissonBatchSampler(len(rows), 0.5, 1)
        comps = dpsgd.make_private(
            model, optimizer, rows, sampler, noise_multiplier=1.0, expected_batch_size=len(rows)
        )
        return (
            lambda: dpsgd.dp_step(
                comps, rows, clip_norm=1e-3, micro_batch=len(rows), pad_id=tok.pad_token_id
            ),
            model,
            tok,
        )
    ce = torch.nn.CrossEntropyLoss(ignore_index=-100)

    def plain_step():
        optimizer.zero_grad()
        ids, mask, labels = dpsgd.pad_batch(rows, tok.pad_token_id, device)
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        ce(logits.reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1)).backward()
        optimizer.step()

    return plain_step, model, tok


def timed_pair(fn_a, fn_b, repeats: int) -> tuple[float, float]:
    """Median times of two steps measured alternately, so load on a shared CPU hits both alike."""
    fn_a(), fn_b()  # warm-up
    times_a, times_b = [], []
    for _ in range(repeats):
        for fn, times in ((fn_a, times_a), (fn_b, times_b)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.median(times_a), statistics.median(times_b)


def step_memory(args, kind: str, argv: list[str]) -> float:
    """MiB one step needs above its set-up (see the module docstring)."""
    import torch

    if torch.cuda.is_available():
        step, _, _ = build_step(args, kind)
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        return (torch.cuda.max_memory_allocated() - base) / 2**20
    out = subprocess.run(
        [sys.executable, __file__, *argv, "--memory-of", kind], capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def _memory_child(args, kind: str) -> None:
    step, _, _ = build_step(args, kind)
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # Linux: reset the peak-RSS counter to the current RSS
    base = _status_kib("VmRSS")
    step()
    print((_status_kib("VmHWM") - base) / 1024)


def _status_kib(field: str) -> int:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(field))
    return int(line.split()[1])


def run(args, argv: list[str]) -> list[tuple[str, str]]:
    import torch

    from continuousbench.llm import generate_batched

    plain_step, plain, tok = build_step(args, "plain")
    dp_step, _, _ = build_step(args, "dp")
    t_plain, t_dp = timed_pair(plain_step, dp_step, args.repeats)
    m_plain, m_dp = step_memory(args, "plain", argv), step_memory(args, "dp", argv)
    start = time.perf_counter()
    prompts = [""] * args.samples
    generate_batched(
        plain, tok, prompts, max_new_tokens=args.new_tokens, batch_size=args.samples, do_sample=True, seed=0
    )
    rate = args.samples / (time.perf_counter() - start)
    return [
        ("device", "cuda" if torch.cuda.is_available() else "cpu"),
        ("model", f"Llama h={args.hidden} L={args.layers}, LoRA r={args.rank}"),
        ("batch x tokens", f"{args.batch} x <= {args.length}"),
        ("non-private step (s)", f"{t_plain:.4f}"),
        ("DP ghost step (s)", f"{t_dp:.4f}"),
        ("DP / non-private time", f"{t_dp / t_plain:.2f}x"),
        ("step memory non-private / DP (MiB)", f"{m_plain:.0f} / {m_dp:.0f}"),
        ("DP / non-private memory", f"{m_dp / max(m_plain, 1e-9):.2f}x"),
        (f"synthesis ({args.new_tokens} new tokens)", f"{rate:.1f} samples/s"),
    ]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Tiny sizes, a few seconds on CPU.")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--new_tokens", type=int, default=64)
    parser.add_argument("--memory-of", choices=("plain", "dp"), help=argparse.SUPPRESS)  # child process
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.length, args.hidden, args.layers, args.rank = 8, 64, 64, 2, 8
        args.repeats, args.samples, args.new_tokens = 3, 8, 32
    if args.memory_of:
        return _memory_child(args, args.memory_of)
    from rich.console import Console
    from rich.table import Table

    table = Table("measure", "value", title="DP step vs non-private step")
    for key, value in run(args, argv):
        table.add_row(key, value)
    Console().print(table)


if __name__ == "__main__":
    main()
