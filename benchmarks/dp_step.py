"""DP-SGD step cost relative to a non-private step, per clipping mode and precision, and synthesis throughput.

    python benchmarks/dp_step.py --quick          # tiny Llama, CPU, seconds
    python benchmarks/dp_step.py                  # Llama h=256 L=4, LoRA r=16, batch 32 x 128 tokens
    python benchmarks/dp_step.py --kinds plain ghost --bf16
    python benchmarks/dp_step.py --kinds plain per_sample prompt_plain prompt_per_sample   # prompt tuning
    python benchmarks/dp_step.py --kinds full_plain full_bookkeeping full_opacus_hooks full_opacus_ghost \
        --bf16                                    # full fine-tuning: ours beside Opacus's two engines
    python benchmarks/dp_step.py --glibc_default  # glibc's own malloc thresholds: faults in every DP step

Same model (tiny Llama + LoRA), same batch, same tokens. ``plain`` is one mean-loss backward + AdamW;
``per_sample`` is the DP step with Opacus hooks (one backward that keeps every record's LoRA gradient);
``ghost`` is the DP step with Opacus ghost clipping (norms without per-record gradients, then a second
backward). Both DP steps add secure-mode noise from a secret generator, as training does.
``prompt_plain`` / ``prompt_per_sample`` are the same two steps training a soft prompt of
``--virtual_tokens`` instead of LoRA (PEFT's batch-wide lookup for the plain step, the DP loop's
per-record lookup for the DP one); prompt kinds are compared with ``prompt_plain``. ``full_*`` kinds
train every weight: ``full_bookkeeping`` is ours (continuousbench.dp.bookkeeping), ``full_opacus_hooks``
and ``full_opacus_ghost`` Opacus's own engines on the same model (ghost clipping refuses tied weights,
so it runs on an untied copy: the output layer's 131k more parameters), ``full_plain_twice`` the
two-pass floor; all compared with ``full_plain``. ``--bf16``
adds the same kinds under CPU/GPU bf16 autocast. Times are medians of repeats in which the kinds
alternate (load on a shared machine hits them alike). Memory is what one step needs above its set-up:
on CUDA the allocator's peak in a second step, on CPU the peak RSS of the first step of a fresh
process that builds only that kind, with glibc's mmap threshold fixed so that RSS follows live memory.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KINDS = ("plain", "per_sample", "ghost")
# "two_backwards": ghost clipping's two backward passes with materialised per-record norms (Opacus's fast
# gradient clipping) whatever the length
# "opacus_hooks": per_sample as it was before continuousbench.dp.record_grads, with Opacus's own
# GradSampleModule hooks (the before of that change, measured in the same run)
# "plain_twice": the non-private step with a second backward pass over the same graph: the floor of any
# two-pass clipping (ghost), with no norms at all
# "opacus_ghost": ghost as it was before continuousbench.dp.ghost_passes, Opacus's own two passes (the
# first computing weight gradients it discards)
# "ghost_gram": ghost with Gram norms whatever the length ("ghost" picks the cheaper norms each step)
EXTRA = ("two_backwards", "opacus_hooks", "plain_twice", "opacus_ghost", "ghost_gram")
PROMPT_KINDS = ("prompt_plain", "prompt_per_sample", "prompt_ghost")  # a soft prompt instead of LoRA
# Full fine-tuning (every weight trains): the non-private step, ours (book-keeping), Opacus's per-sample
# hooks (GradSampleModule: every record's gradient of every weight) and Opacus's ghost clipping (two
# backward passes), the two-pass floor; compared with full_plain
FULL_KINDS = ("full_plain", "full_bookkeeping", "full_opacus_hooks", "full_opacus_ghost", "full_plain_twice")


CLIPPING_OF = {
    "two_backwards": "ghost",
    "ghost_gram": "ghost",
    "opacus_hooks": "per_sample",
    "opacus_ghost": "ghost",
}


def _before(base: str):
    """The patch that makes ``make_private`` build a step as it was before our change to it."""
    from unittest import mock

    from continuousbench.dp import ghost_passes, record_grads

    if base == "opacus_hooks":
        from opacus.grad_sample import GradSampleModule

        return mock.patch.object(record_grads, "RecordGradModule", GradSampleModule)
    return mock.patch.object(ghost_passes, "attach", lambda *args: None)


def build_step(args, kind: str):
    """(step function, model, tokenizer) for kind plain / per_sample / ghost, optionally "-bf16"."""
    import torch

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.dp import dpsgd
    from continuousbench.dp.randomness import SecretStreams
    from continuousbench.training.adapters import PromptSpec, look_up_per_record
    from continuousbench.training.modeling import load_model_and_tokenizer

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
    base, _, precision = kind.partition("-")
    prompt, full = base.startswith("prompt_"), base.startswith("full_")
    base = base.removeprefix("prompt_").removeprefix("full_")
    tuning = {"tuning": "prompt", "prompt": PromptSpec(args.virtual_tokens)} if prompt else {}
    tuning = {"tuning": "full"} if full else tuning
    model, tok = load_model_and_tokenizer(str(folder), lora_rank=args.rank, dtype="float32", **tuning)
    if prompt and base != "plain":  # what the DP loop does: one lookup per record
        look_up_per_record(model)
    if full and base == "opacus_ghost":  # "Parameter tying is not supported with Ghost Clipping": untie
        model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
        model.config.tie_word_embeddings = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()  # Opacus's hooks record nothing in eval mode
    rows = dpsgd.encode_records(tok, texts[: args.batch], args.length)
    params = dpsgd.check_trainable(model, "bookkeeping" if full else "per_sample")
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    dtype = torch.bfloat16 if precision == "bf16" else None
    if base not in ("plain", "plain_twice"):
        hooks = _before(base) if base.startswith("opacus_") else contextlib.nullcontext()
        with hooks:
            comps = dpsgd.make_private(
                model,
                optimizer,
                noise_multiplier=1.0,
                expected_batch_size=len(rows),
                generator=SecretStreams.create(device=device).noise,
                secure_mode=True,
                clipping=CLIPPING_OF.get(base, base),
            )
        # ghost picks Gram or materialised norms each step; these kinds force one
        forced = {"two_backwards": False, "ghost_gram": True}.get(base)

        def dp_step():
            from unittest import mock

            from continuousbench.dp import ghost_passes

            pick = ghost_passes.gram_norms_cheaper if forced is None else (lambda *args: forced)
            with mock.patch.object(ghost_passes, "gram_norms_cheaper", pick):
                dp_once()

        def dp_once():
            dpsgd.dp_step(
                comps,
                rows,
                clip_norm=1e-3,
                micro_batch=len(rows),
                pad_id=tok.pad_token_id,
                autocast_dtype=dtype,
            )

        return dp_step, model, tok

    def plain_step():
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=dtype) if dtype else contextlib.nullcontext():
            loss = dpsgd.record_loss(model, rows, tok.pad_token_id, device).mean()
        if base == "plain_twice":
            loss.backward(retain_graph=True)
        loss.backward()
        optimizer.step()

    return plain_step, model, tok


def timed(steps: dict, repeats: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each step, the steps taken in turn (odd rounds in reverse order) so
    that load on a shared machine hits all alike. CPU time (one thread) leaves out the time the process
    waits for a core, which wall time on a busy machine is mostly made of. On CUDA each step is waited
    for (its kernels run asynchronously), and wall time is the measure."""
    import torch

    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for step in steps.values():
        step()  # warm-up
    times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in steps}
    for round_ in range(repeats):
        for kind in list(steps)[:: -1 if round_ % 2 else 1]:
            sync()
            wall, cpu = time.perf_counter(), time.process_time()
            steps[kind]()
            sync()
            times[kind].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {kind: tuple(statistics.median(x[i] for x in t) for i in (0, 1)) for kind, t in times.items()}


def noise_cost(model) -> str:
    """Time to draw one step's noise for the model's LoRA parameters, plain and in Opacus's secure mode."""
    import torch
    from opacus.optimizers.optimizer import _generate_noise

    reference = torch.zeros(sum(p.numel() for p in model.parameters() if p.requires_grad))
    generator = torch.Generator(device=reference.device)
    spent = {}
    for secure in (False, True, False, True):  # alternating, best of each
        start = time.perf_counter()
        for _ in range(10):
            _generate_noise(1.0, reference, generator, secure)
        spent[secure] = min(spent.get(secure, float("inf")), (time.perf_counter() - start) / 10)
    return f"{spent[False] * 1e3:.2f} / {spent[True] * 1e3:.2f} ms ({reference.numel():,} LoRA parameters)"


def step_memory(args, kind: str, argv: list[str]) -> float:
    """MiB one step needs above its set-up (see the module docstring)."""
    import torch

    if torch.cuda.is_available():
        step, _, _ = build_step(args, kind)
        step()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        return (torch.cuda.max_memory_allocated() - base) / 2**20
    # glibc keeps large freed blocks in its heap once its mmap threshold has grown, which inflates peak
    # RSS with memory no longer in use; a fixed threshold returns them at once, so RSS follows live memory.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536"}
    out = subprocess.run(
        [sys.executable, __file__, *argv, "--memory-of", kind],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return float(out.stdout.split()[-1])


def _memory_child(args, kind: str) -> None:
    step, _, _ = build_step(args, kind)
    # The first step: a later one would reuse what the allocator kept from it and look free.
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

    from continuousbench.llm.local import generate_batched

    kinds = [k for k in args.kinds] + ([f"{k}-bf16" for k in args.kinds] if args.bf16 else [])
    built = {kind: build_step(args, kind) for kind in kinds}
    times = timed({kind: b[0] for kind, b in built.items()}, args.repeats)
    memory = {kind: step_memory(args, kind, argv) for kind in kinds}
    rows = [
        ("device", "cuda" if torch.cuda.is_available() else "cpu (shared machine: timings are noisy)"),
        (
            "model",
            f"Llama h={args.hidden} L={args.layers}, LoRA r={args.rank} / prompt of {args.virtual_tokens}",
        ),
        ("batch x tokens", f"{args.batch} x <= {args.length}"),
    ]
    for kind in kinds:
        ref = next((f"{x}plain" for x in ("prompt_", "full_") if kind.startswith(x)), "plain")
        reference = f"{ref}-bf16" if kind.endswith("-bf16") and f"{ref}-bf16" in times else ref
        (wall, cpu), ratio = times[kind], ""
        if reference in times and kind != reference and memory[reference] >= 8:  # RSS is coarse below
            if torch.cuda.is_available():  # the GPU's time: the host's CPU time only launches kernels
                ratio = f" = {wall / times[reference][0]:.3f}x wall time, "
            else:
                ratio = f" = {cpu / times[reference][1]:.3f}x CPU time "
                ratio += f"({wall / times[reference][0]:.2f}x wall), "
            ratio += f"{memory[kind] / memory[reference]:.2f}x memory"
        rows.append((f"{kind} step", f"{wall:.3f} s wall, {cpu:.3f} s CPU, {memory[kind]:.0f} MiB{ratio}"))
    _, plain, tok = built[kinds[0]]
    rows.append(("noise per step, one draw / secure mode", noise_cost(plain)))
    start = time.perf_counter()
    prompts = [""] * args.samples
    generate_batched(
        plain, tok, prompts, max_new_tokens=args.new_tokens, batch_size=args.samples, do_sample=True, seed=0
    )
    rate = args.samples / (time.perf_counter() - start)
    rows.append((f"synthesis ({args.new_tokens} new tokens)", f"{rate:.1f} samples/s"))
    return rows


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Tiny sizes, a few seconds on CPU.")
    parser.add_argument(
        "--kinds", nargs="+", choices=KINDS + EXTRA + PROMPT_KINDS + FULL_KINDS, default=list(KINDS)
    )
    parser.add_argument("--bf16", action="store_true", help="Also every kind under bf16 autocast.")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--virtual_tokens", type=int, default=20, help="Soft-prompt length (prompt kinds).")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--new_tokens", type=int, default=64)
    parser.add_argument(
        "--glibc_default",
        action="store_true",
        help="Leave glibc's malloc thresholds as they are (the before of continuousbench.dp.host_memory).",
    )
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)  # child process
    args = parser.parse_args(argv)
    if args.glibc_default:
        from continuousbench.dp import host_memory

        host_memory.keep_freed_memory = lambda: False
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
