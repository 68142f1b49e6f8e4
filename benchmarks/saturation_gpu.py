"""The shares of a GPU's bf16 peak that ``saturation --plan`` assumes, measured (needs a CUDA GPU).

    python benchmarks/saturation_gpu.py --peak 989e12     # H100/H200 dense bf16

Randomly initialised Gemma 3 text models of the real 1B and 4B shapes (nothing is downloaded; the
weights do not change the speed): full fine-tuning of 1B and LoRA (r 32, alpha 64) of 4B on batches of
16 x 512 tokens under bf16 autocast with AdamW, a prefill of 16 x 1024 tokens, and greedy decoding of 64
tokens for 32 prompts. Each figure is a median of timed repetitions after a warm-up; the table gives the
tokens per second and the share of ``--peak`` to put in ``continuousbench/classification/plan.py``.
"""

from __future__ import annotations

import argparse
import statistics
import time

SHAPES = {  # Gemma 3 1B and 4B text towers
    "gemma-3-1b": {
        "hidden_size": 1152,
        "intermediate_size": 6912,
        "num_hidden_layers": 26,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "vocab_size": 262144,
    },
    "gemma-3-4b": {
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_hidden_layers": 34,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "vocab_size": 262208,
    },
}


def timed(work, repeats: int = 5) -> float:
    import torch

    work()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        work()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(name: str, lora: bool) -> list[tuple[str, str, float, float]]:
    """(model, work, tokens per second, FLOP/s) of one model's training, prefill and decoding."""
    import torch
    from transformers import AutoModelForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(**SHAPES[name], sliding_window=512, max_position_embeddings=4096)
    net = AutoModelForCausalLM.from_config(config).cuda()
    params = sum(p.numel() for p in net.parameters())
    if lora:
        from peft import LoraConfig, get_peft_model

        targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
        net = get_peft_model(net, LoraConfig(r=32, lora_alpha=64, target_modules=targets))
    optimizer = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-5)
    ids = torch.randint(0, 32000, (16, 512), device="cuda")

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = net(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    per_token = 4 if lora else 6  # LoRA: no weight gradients of the frozen base
    seconds = timed(step)
    rows = [(name, "train", ids.numel() / seconds, per_token * params * ids.numel() / seconds)]
    net.eval()
    prompt = torch.randint(0, 32000, (16, 1024), device="cuda")
    short = torch.randint(0, 32000, (32, 256), device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        seconds = timed(lambda: net(input_ids=prompt))
        rows.append((name, "prefill", prompt.numel() / seconds, 2 * params * prompt.numel() / seconds))
        decode = {"max_new_tokens": 64, "min_new_tokens": 64, "do_sample": False}
        seconds = timed(lambda: net.generate(input_ids=short, **decode), repeats=3)
        rows.append((name, "decode", 32 * 64 / seconds, 2 * params * 32 * 64 / seconds))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peak", type=float, default=989e12, help="the GPU's dense bf16 FLOP/s")
    args = parser.parse_args(argv)
    import torch

    rows = []
    for name, lora in (("gemma-3-1b", False), ("gemma-3-4b", True)):
        rows += measure(name, lora)
        torch.cuda.empty_cache()
    print(f"{'model':<12} {'work':<8} {'tokens/s':>12} {'share of peak':>14}")
    for name, work, tokens, flops in rows:
        print(f"{name:<12} {work:<8} {tokens:>12,.0f} {flops / args.peak:>14.3f}")


if __name__ == "__main__":
    main()
