"""DP-SGD step cost (Opacus ghost clipping) relative to a non-private step, and synthesis throughput.

    python benchmarks/dp_step.py --quick          # tiny Llama, CPU, seconds
    python benchmarks/dp_step.py --batch 32 --length 256 --hidden 512 --layers 8

Same model (tiny Llama + LoRA), same batch, same tokens: the non-private step is one mean-loss
backward + AdamW; the DP step is Opacus's two ghost-clipping backwards + noise + AdamW.
"""

from __future__ import annotations

import argparse
import copy
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def _timed_pair(fn_a, fn_b, repeats: int) -> tuple[float, float]:
    """Median step times of two steps measured alternately, so load on a shared CPU hits both alike."""
    fn_a(), fn_b()  # warm-up
    times_a, times_b = [], []
    for _ in range(repeats):
        for fn, times in ((fn_a, times_a), (fn_b, times_b)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.median(times_a), statistics.median(times_b)


def _peak(fn, mode: str, argv: list[str]) -> float:
    """Peak memory of a step in MiB: CUDA's allocator peak, or on CPU the peak RSS of a fresh process
    that does the same set-up and then runs only that step (the set-ups are identical, so the
    difference between the two modes is the step's own)."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
        fn()
        return torch.cuda.max_memory_allocated() / 2**20
    out = subprocess.run(
        [sys.executable, __file__, *argv, "--only", mode], capture_output=True, text=True, check=True
    ).stdout
    return float(out.split()[-1])


def run(args) -> list[tuple[str, str]]:
    import torch

    from continuousbench.dp import dpsgd
    from continuousbench.dp.sampling import PoissonBatchSampler
    from continuousbench.harness.modeling import load_model_and_tokenizer
    from continuousbench.llm import generate_batched
    from continuousbench.tinymodel import save_tiny_model

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
    plain = copy.deepcopy(model)
    plain_params = [p for p in plain.parameters() if p.requires_grad]
    plain_opt = torch.optim.AdamW(plain_params, lr=1e-4)
    ce = torch.nn.CrossEntropyLoss(ignore_index=-100)

    def plain_step():
        plain_opt.zero_grad()
        ids, mask, labels = dpsgd.pad_batch(rows, tok.pad_token_id, device)
        logits = plain(input_ids=ids, attention_mask=mask).logits[:, :-1]
        ce(logits.reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1)).backward()
        plain_opt.step()

    params = dpsgd.check_trainable(model)
    sampler = PoissonBatchSampler(len(rows), 0.5, 1)
    comps = dpsgd.make_private(
        model,
        torch.optim.AdamW(params, lr=1e-4),
        rows,
        sampler,
        noise_multiplier=1.0,
        expected_batch_size=len(rows),
    )

    def dp_step():
        dpsgd.dp_step(comps, rows, clip_norm=1e-3, micro_batch=len(rows), pad_id=tok.pad_token_id)

    if args.only:  # child process of _peak: one kind of step, then the peak RSS in MiB
        for _ in range(args.repeats):
            (plain_step if args.only == "plain" else dp_step)()
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        return []
    t_plain, t_dp = _timed_pair(plain_step, dp_step, args.repeats)
    m_plain, m_dp = _peak(plain_step, "plain", args.argv), _peak(dp_step, "dp", args.argv)
    start = time.perf_counter()
    generate_batched(
        plain,
        tok,
        [""] * args.samples,
        max_new_tokens=args.new_tokens,
        batch_size=args.samples,
        do_sample=True,
        seed=0,
    )
    rate = args.samples / (time.perf_counter() - start)
    rows_out = [
        ("device", device),
        ("model", f"Llama h={args.hidden} L={args.layers}, LoRA r={args.rank}"),
        ("batch x tokens", f"{len(rows)} x <= {args.length}"),
        ("non-private step (s)", f"{t_plain:.4f}"),
        ("DP ghost step (s)", f"{t_dp:.4f}"),
        ("DP / non-private time", f"{t_dp / t_plain:.2f}x"),
    ]
    rows_out += [
        (
            f"peak {'GPU' if device == 'cuda' else 'RSS'} non-private / DP (MiB)",
            f"{m_plain:.0f} / {m_dp:.0f}",
        ),
        ("DP / non-private memory", f"{m_dp / m_plain:.2f}x"),
    ]
    rows_out.append((f"synthesis ({args.new_tokens} new tokens)", f"{rate:.1f} samples/s"))
    return rows_out


def main(argv: list[str] | None = None) -> None:
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
    parser.add_argument("--only", choices=("plain", "dp"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.argv = [a for a in (sys.argv[1:] if argv is None else argv) if a not in ("--only", "plain", "dp")]
    if args.quick:
        args.batch, args.length, args.hidden, args.layers, args.rank = 8, 64, 64, 2, 8
        args.repeats, args.samples, args.new_tokens = 3, 8, 32
    from rich.console import Console
    from rich.table import Table

    rows = run(args)
    if args.only:
        return
    table = Table("measure", "value", title="DP step vs non-private step")
    for k, v in rows:
        table.add_row(k, v)
    Console().print(table)


if __name__ == "__main__":
    main()
