"""The GPU figures `study --plan` assumes, measured on a Gemma 3 1B-shaped model (random weights, bf16):
a decode step of transformers' ``generate`` by batch size (against the plan's floor of 1.8 ms + 0.47 ms a
layer and its bandwidth term), prefill MFU, and a training step's MFU for full fine-tuning and LoRA
rank 128 (the plan assumes costs.Device.mfu, measured here on an H200).

    python benchmarks/study_plan_gpu.py          # needs a CUDA GPU; about two minutes on an H100

No Hub download: the model is built from its published shape. Prints one line per measurement.
"""

from __future__ import annotations

import time


def main() -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from continuousbench.study import costs

    config = Gemma3TextConfig(
        vocab_size=262144,
        hidden_size=1152,
        intermediate_size=6912,
        num_hidden_layers=26,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=256,
        sliding_window=512,
    )
    with torch.device("cuda"):
        model = Gemma3ForCausalLM(config).to(torch.bfloat16).eval()
    n = sum(p.numel() for p in model.parameters())
    peak = 989.4e12 if "H" in torch.cuda.get_device_name() else 312e12  # H100/H200 or A100 dense bf16
    print(f"{torch.cuda.get_device_name()}: {n / 1e9:.2f}B parameters")

    def now() -> float:
        torch.cuda.synchronize()
        return time.perf_counter()

    floor = (costs.STEP_S + costs.GPUS["h200"].layer_s * config.num_hidden_layers) * 1e3
    for batch in (1, 8, 32, 128, 512):
        ids = torch.randint(5, 1000, (batch, 8), device="cuda")
        model.generate(ids, max_new_tokens=4, min_new_tokens=4, do_sample=True)
        start = now()
        model.generate(ids, max_new_tokens=64, min_new_tokens=64, do_sample=True, top_k=0)
        step = (now() - start) / 64 * 1e3
        print(f"decode, batch {batch}: {step:.2f} ms a step (the plan's floor: {floor:.1f} ms)")
    with torch.inference_mode():
        ids = torch.randint(5, 1000, (32, 512), device="cuda")
        model(input_ids=ids)
        start = now()
        for _ in range(5):
            model(input_ids=ids)
        took = (now() - start) / 5
    print(f"prefill 32 x 512: {took:.4f} s, MFU {2 * n * 32 * 512 / took / peak:.3f}")
    ids = torch.randint(5, 1000, (32, 256), device="cuda")

    def step_time(net, optimizer, repeats: int = 4) -> float:
        def step() -> None:
            net(input_ids=ids, labels=ids).loss.backward()
            optimizer.step()
            optimizer.zero_grad()

        step()
        start = now()
        for _ in range(repeats):
            step()
        return (now() - start) / repeats

    model.train()
    took = step_time(model, torch.optim.AdamW(model.parameters(), lr=1e-6))
    print(f"full fine-tuning step 32 x 256: {took:.4f} s, MFU {6 * n * 32 * 256 / took / peak:.3f} (6N)")
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    lora = get_peft_model(model, LoraConfig(r=128, lora_alpha=128, target_modules=targets))
    trainable = [p for p in lora.parameters() if p.requires_grad]
    took = step_time(lora, torch.optim.AdamW(trainable, lr=1e-6))
    print(f"LoRA r128 step 32 x 256: {took:.4f} s, MFU {4 * n * 32 * 256 / took / peak:.3f} (4N)")


if __name__ == "__main__":
    main()
