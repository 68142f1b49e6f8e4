"""Where a DP full fine-tuning step's time goes: its parts beside the non-private step's, and the floor.

    python benchmarks/dp_full_parts.py                 # benchmarks/dp_step.py's default model and batch
    python benchmarks/dp_full_parts.py --bf16 --rounds 9

The non-private full step (forward, backward, AdamW) and the book-keeping DP step (forward, the one
backward pass, the per-record norms, the clipped sums, Opacus's secure noise, AdamW) alternate, odd
rounds reversed; each part's CPU time (one thread) is the median over the rounds. The floor rows time
alone what no exact per-record clipping of every weight can skip here: the Gram matrices of the kept
tensors that the norms are computed from, and the weight-gradient matmuls that the clipped sums are
(the non-private backward does those too).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time


def build(args, private: bool):
    import torch

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.dp import dpsgd
    from continuousbench.dp.randomness import SecretStreams
    from continuousbench.training.modeling import load_model_and_tokenizer

    texts = [f"Geminon {i} has attack {i * 7 % 100} in zone {i % 13} " * 8 for i in range(256)]
    size = {"hidden_size": args.hidden, "num_layers": args.layers, "num_heads": 4}
    folder = save_tiny_model(tempfile.mkdtemp(), texts, vocab_size=512, **size)
    model, tok = load_model_and_tokenizer(str(folder), tuning="full", dtype="float32")
    rows = dpsgd.encode_records(tok, texts[: args.batch], args.length)
    params = dpsgd.check_trainable(model, "bookkeeping")
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    if not private:
        return model, tok.pad_token_id, rows, optimizer
    comps = dpsgd.make_private(
        model,
        optimizer,
        noise_multiplier=1.0,
        expected_batch_size=len(rows),
        generator=SecretStreams.create().noise,
        secure_mode=True,
        clipping="bookkeeping",
    )
    return comps, tok.pad_token_id, rows, optimizer


def plain_parts(built, autocast) -> dict[str, float]:
    from continuousbench.dp import dpsgd

    model, pad, rows, optimizer = built
    clock, parts = Clock(), {}
    optimizer.zero_grad()
    with autocast():
        loss = dpsgd.record_loss(model, rows, pad, "cpu").mean()
    parts["forward"] = clock()
    loss.backward()
    parts["backward"] = clock()
    optimizer.step()
    parts["AdamW"] = clock()
    return parts


def dp_parts(built, autocast) -> dict[str, float]:
    import torch

    from continuousbench.dp import dpsgd

    comps, pad, rows, _ = built
    module, optimizer = comps.module, comps.optimizer
    clock, parts = Clock(), {}
    with autocast():
        losses = dpsgd.record_loss(module, rows, pad, "cpu")
    parts["forward"] = clock()
    for p in module.params:
        p.grad = None
    (losses / 1e-3).sum().backward()
    parts["backward"] = clock()
    module.book.collect()
    uses = [u for us in module.book.uses.values() for u in us if u.kind == "linear"]
    inputs = {id(u.cols): u.cols for u in uses}
    for tensor in [u.rows for u in uses] + list(inputs.values()):
        torch.bmm(tensor, tensor.transpose(1, 2))
    parts["floor: the Gram matrices alone"] = clock()
    for use in uses:
        use.rows.flatten(0, 1).t() @ use.cols.flatten(0, 1)
    parts["floor: the weight-gradient matmuls alone"] = clock()
    norms = torch.stack(list(module.squared_norms(len(rows)).values())).sum(0).sqrt()
    parts["norms"] = clock()
    module.clipped_sums(1 / norms.clamp(min=1.0))
    module.book.clear()
    parts["clipped sums"] = clock()
    optimizer.pre_step()  # Opacus: accumulate, secure noise, scale
    parts["noise (Opacus, secure mode)"] = clock()
    optimizer.original_optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    parts["AdamW"] = clock()
    return parts


class Clock:
    """CPU seconds since the last call (or since it was made)."""

    def __init__(self) -> None:
        self.last = time.process_time()

    def __call__(self) -> float:
        now = time.process_time()
        lap, self.last = now - self.last, now
        return lap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bf16", action="store_true", help="Forward passes under CPU bf16 autocast.")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    import torch
    from rich.console import Console
    from rich.table import Table

    torch.set_num_threads(1)
    torch.manual_seed(0)
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if args.bf16 else contextlib.nullcontext
    steps = {"plain": (plain_parts, build(args, False)), "dp": (dp_parts, build(args, True))}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in steps}
    for round_ in range(args.rounds + 1):  # the first round warms up
        for name in list(steps)[:: -1 if round_ % 2 else 1]:
            parts, built = steps[name]
            measured = parts(built, autocast)
            if round_:
                runs[name].append(measured)
    medians = {n: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for n, rs in runs.items()}
    step = {name: sum(v for k, v in m.items() if not k.startswith("floor")) for name, m in medians.items()}
    table = Table("part", "non-private (s)", "DP book-keeping (s)", title="DP full step, CPU time")
    for part in dict.fromkeys([*medians["plain"], *medians["dp"]]):
        cells = [f"{medians[n][part]:.3f}" if part in medians[n] else "" for n in ("plain", "dp")]
        table.add_row(part, *cells)
    table.add_row("step", f"{step['plain']:.3f}", f"{step['dp']:.3f} = {step['dp'] / step['plain']:.3f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
