"""The plan's CPU model against the jobs' own CPU time, per job kind; and the decode floor it uses.

    python tests/demo/one_process_demo.py --out /tmp/demo-full --threads 1   # the demo, CPU per job kept
    python benchmarks/study_plan.py --demo /tmp/demo-full                       # the table below
    python benchmarks/study_plan.py --floor                                     # eager decode's floor

``--demo``: a demo folder run by tests/demo/one_process_demo.py, which keeps each job's CPU seconds in
``<folder>.job-cpu.json`` (one process, one torch thread: CPU time, not wall, so load on a shared machine
does not count); its ``study.yaml`` is planned on one CPU thread (``study --plan``'s CPU model) and each
kind's measured total is set beside the estimate. ``--floor``: the CPU time of one decode step of
transformers' eager ``generate`` on Llama models too small to compute (hidden 64), 2, 4 and 8 layers,
batch 8, and of a batch of 64 on the demo's base model: the fixed and per-layer cost the plan charges a
decode step at least, and the per-sequence cost of a CPU step.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def calibrate(folder: Path) -> None:
    from continuousbench.study.plan import calibration

    measured = json.loads(Path(f"{folder}.job-cpu.json").read_text())
    kinds = calibration(folder / "study.yaml", measured)
    print("| job kind | jobs | measured CPU s | plan's CPU estimate s | measured / estimate |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for kind, (took, guessed, count) in sorted(kinds.items()):
        print(f"| {kind} | {count} | {took:.1f} | {guessed:.1f} | {took / guessed:.2f} |")
    took, guessed, jobs = (sum(v[i] for v in kinds.values()) for i in range(3))
    print(f"| all | {jobs} | {took:.1f} | {guessed:.1f} | {took / guessed:.2f} |")


def _step_ms(model, batch: int, rounds: int = 3) -> float:
    import torch

    x = torch.full((batch, 8), 5)
    best = float("inf")
    with torch.inference_mode():
        model.generate(input_ids=x, max_new_tokens=4, min_new_tokens=4, do_sample=True)
        for _ in range(rounds):
            start = time.process_time()
            model.generate(input_ids=x, max_new_tokens=64, min_new_tokens=64, do_sample=True, temperature=0.7)
            best = min(best, (time.process_time() - start) / 64 * 1e3)
    return best


def floor() -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from continuousbench.demo.demo import SHIPPED_BASE
    from continuousbench.loader import load_model

    torch.set_num_threads(1)
    print("| model | batch | CPU ms per decode step |")
    print("| --- | ---: | ---: |")
    for layers in (2, 4, 8):
        config = LlamaConfig(vocab_size=1024, hidden_size=64, intermediate_size=128, num_hidden_layers=layers,
                             num_attention_heads=4, num_key_value_heads=4)  # fmt: skip
        print(f"| Llama h=64, {layers} layers | 8 | {_step_ms(LlamaForCausalLM(config).eval(), 8):.2f} |")
    base = load_model(str(SHIPPED_BASE), dtype=torch.float32, device="cpu")[0]
    for batch in (8, 64):
        print(f"| the demo's base model (4 layers, h=128) | {batch} | {_step_ms(base, batch):.2f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, help="a demo folder run by tests/demo/one_process_demo.py")
    parser.add_argument("--floor", action="store_true", help="measure eager decode's floor")
    args = parser.parse_args()
    if args.floor:
        floor()
    if args.demo:
        calibrate(args.demo)
