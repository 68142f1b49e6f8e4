"""Harness speed on CPU with a tiny model: training tokens/s, QA questions/s, and what stop-at-newline buys.

    .venv/bin/python benchmarks/harness.py --quick     # ~1 minute on one core
    .venv/bin/python benchmarks/harness.py             # larger samples

Builds a tiny release and a 1M-parameter Llama in a temporary folder, times ``continued_pretraining``
on the release corpus (128-token blocks, 8 per step), teaches the model the answer format (untimed:
QA-formatted validation lines, so that it ends answers with a newline as a trained evaluator does),
then times (a) the harness's batched greedy decoding that
stops each row at its first newline and (b) the naive alternative: one question at a time, 256 new
tokens (EOS suppressed, as a base model continuing a few-shot prompt would run on), truncated after.
Figures are indicative: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def naive_answers(model, tokenizer, prompts, max_new_tokens: int) -> list[str]:
    """One prompt at a time, exactly ``max_new_tokens`` greedy tokens, then cut at the first newline."""
    import torch

    out = []
    for prompt in prompts:
        enc = tokenizer(prompt, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(
                **enc, max_new_tokens=max_new_tokens, min_new_tokens=max_new_tokens, do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )  # fmt: skip
        text = tokenizer.decode(ids[0, enc["input_ids"].shape[1] :], skip_special_tokens=True)
        out.append(text.split("\n", 1)[0].strip())
    return out


def main(quick: bool, threads: int) -> dict:
    import torch
    from datasets import Dataset, load_dataset
    from rich.console import Console
    from rich.table import Table

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.harness.config import EvaluatorConfig
    from continuousbench.harness.modeling import load_model_and_tokenizer
    from continuousbench.harness.prompts import qa_prompt
    from continuousbench.harness.qa_eval import generate_answers
    from continuousbench.harness.train import continued_pretraining

    torch.set_num_threads(threads)
    steps, batched_n, naive_n = (20, 64, 4) if quick else (100, 234, 16)
    tmp = Path(tempfile.mkdtemp(prefix="cb-bench-"))
    release = build_release(GeminonBuildArguments(size="tiny", out=str(tmp)), progress=False)
    corpus = load_dataset(str(release), "corpus", split="train")
    val = load_dataset(str(release), "qa_public", split="validation")
    test = load_dataset(str(release), "qa_public", split="test")
    model_dir = save_tiny_model(tmp / "model", corpus["text"], vocab_size=1024, max_positions=1024)
    model, tokenizer = load_model_and_tokenizer(str(model_dir), tuning="full")

    def config(name: str, max_steps: int, max_length: int, lr: float) -> EvaluatorConfig:
        return EvaluatorConfig(
            output_dir=str(tmp / name), max_steps=max_steps, per_device_train_batch_size=8,
            samples_per_step=8,
            max_length=max_length, learning_rate=lr, eval_strategy="no", save_strategy="no",
            load_best_model_at_end=False, logging_steps=max_steps, disable_tqdm=True,
        )  # fmt: skip

    # (1) training throughput: the release corpus in 128-token blocks
    start = time.perf_counter()
    continued_pretraining(
        model, tokenizer, corpus.select_columns(["text"]), config("corpus", steps, 128, 1e-3)
    )
    train_s = time.perf_counter() - start
    tokens = steps * 8 * 128
    # (2) untimed: teach the answer format (QA lines), so answers end at a newline as a trained evaluator's do
    lines = [f"Q: {q}\nA: {a}\n" for q, a in zip(val["question"], val["answer"], strict=True)]
    continued_pretraining(
        model, tokenizer, Dataset.from_dict({"text": lines * 4}), config("format", 80, 32, 3e-3)
    )

    questions = test["question"][:batched_n]
    start = time.perf_counter()
    batched = generate_answers(model, tokenizer, questions, batch_size=32, max_new_tokens=256)
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    naive = naive_answers(model, tokenizer, [qa_prompt(q) for q in questions[:naive_n]], 256)
    naive_s = time.perf_counter() - start
    agree = sum(a == b for a, b in zip(batched[:naive_n], naive, strict=True))

    figures = {
        "threads": threads,
        "training tokens/s": tokens / train_s,
        "training steps": steps,
        "QA questions/s (batched, stop at newline)": batched_n / batched_s,
        "QA questions/s (one at a time, 256 tokens)": naive_n / naive_s,
        "speedup": (batched_n / batched_s) / (naive_n / naive_s),
        "same answers (naive sample)": f"{agree}/{naive_n}",
        "mean answer length (chars)": sum(map(len, batched)) / len(batched),
    }
    table = Table(title=f"Harness on CPU, tiny Llama ({'quick' if quick else 'full'})")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, f"{value:,.1f}" if isinstance(value, float) else str(value))
    Console().print(table)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Small samples (about a minute).")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1).")
    cli_args = parser.parse_args()
    main(cli_args.quick, cli_args.threads)
