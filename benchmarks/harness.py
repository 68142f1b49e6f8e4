"""Harness speed on CPU with a tiny model: training tokens/s, QA questions/s, and what stop-at-newline buys.

    .venv/bin/python benchmarks/harness.py --quick     # ~1 minute on one core
    .venv/bin/python benchmarks/harness.py             # larger samples
    .venv/bin/python benchmarks/harness.py --stop-ids  # only the newline stop ids on a 262k vocabulary
    .venv/bin/python benchmarks/harness.py --long-document 8   # peak memory, one 8 MB line, cut or not

Builds a tiny release and a 1M-parameter Llama in a temporary folder, times ``continued_pretraining``
on the release corpus (128-token blocks, 8 per step), teaches the model the answer format (untimed:
QA-formatted validation lines, so that it ends answers with a newline as a trained evaluator does),
then times (a) the harness's batched greedy decoding that
stops each row at its first newline and (b) the naive alternative: one question at a time, 256 new
tokens (EOS suppressed, as a base model continuing a few-shot prompt would run on), truncated after.
Figures are indicative: the machine is shared.

``--stop-ids`` (also part of the full run) times what stopping at a newline costs before generation on
a Gemma-3-sized vocabulary (262,144 entries, built offline from a seeded vocabulary with Gemma's
byte-fallback decoder): the old per-call scan (one ``decode`` per id on every generation call), the
cached scan (one batched decode per tokenizer, then a lookup) and ``transformers``' own
``StopStringCriteria`` set-up, which ``generate(stop_strings=...)`` runs on every call.

``--long-document MB`` trains one step on a corpus holding one single-line document of MB megabytes,
in a fresh process each (peak RSS), with the harness's cut (``--max_document_blocks`` 64) and without.
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
                **enc,
                max_new_tokens=max_new_tokens,
                min_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )
        text = tokenizer.decode(ids[0, enc["input_ids"].shape[1] :], skip_special_tokens=True)
        out.append(text.split("\n", 1)[0].strip())
    return out


def large_vocab_tokenizer(size: int = 262_144, seed: int = 0):
    """A fast tokenizer with ``size`` entries shaped like Gemma 3's: SentencePiece-style pieces
    (``▁word``), 256 byte-fallback tokens, some pieces holding line breaks; no download."""
    import random

    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    rng = random.Random(seed)
    vocab = {tok: i for i, tok in enumerate(["<pad>", "<eos>", "<bos>", "<unk>"])}
    vocab.update({f"<0x{b:02X}>": len(vocab) + b for b in range(256)})
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüß0123456789"
    while len(vocab) < size:
        piece = "".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))
        roll = rng.random()
        piece = ("▁" + piece) if roll < 0.6 else (piece + "\n" * rng.randint(1, 3)) if roll < 0.62 else piece
        vocab.setdefault(piece, len(vocab))
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True))
    pieces = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]  # Gemma's decoder
    backend.decoder = decoders.Sequence(pieces)
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>", pad_token="<pad>")


def stop_ids_figures() -> dict:
    """Seconds spent before generation to stop at a newline, per generation call, on 262k entries."""
    from transformers import StopStringCriteria

    from continuousbench.llm.local import newline_token_ids

    tokenizer = large_vocab_tokenizer()
    timings: dict[str, list[float]] = {"old": [], "first": [], "cached": [], "stop_strings": []}
    for _ in range(3):  # alternate the methods, so that load on the shared machine hits each alike
        start = time.perf_counter()
        old = [i for i in range(len(tokenizer)) if "\n" in tokenizer.decode([i])]
        timings["old"].append(time.perf_counter() - start)
        from continuousbench.llm import local as llm

        llm._NEWLINE_IDS.clear()
        start = time.perf_counter()
        first = newline_token_ids(tokenizer)
        timings["first"].append(time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(100):
            cached = newline_token_ids(tokenizer)
        timings["cached"].append((time.perf_counter() - start) / 100)
        start = time.perf_counter()
        StopStringCriteria(tokenizer, ["\n"])
        timings["stop_strings"].append(time.perf_counter() - start)
        assert old == first == cached, "the cached scan must find exactly the old scan's ids"
    best = {k: min(v) for k, v in timings.items()}
    return {
        "vocabulary": len(tokenizer),
        "newline ids": len(first),
        "stop ids per call, before (s)": best["old"],
        "stop ids first call, after (s)": best["first"],
        "stop ids later calls, after (s)": best["cached"],
        "StopStringCriteria per call (s)": best["stop_strings"],
    }


LONG_DOCUMENT_STEP = """
import random, resource, sys
from datasets import Dataset
from continuousbench.training.config import EvaluatorConfig
from continuousbench.training.data import CHARS_PER_TOKEN, cap_documents
from continuousbench.training.modeling import load_model_and_tokenizer
from continuousbench.training.sft import continued_pretraining
from continuousbench.demo.tinymodel import save_tiny_model
megabytes, blocks, folder = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(0)
words = [rng.choice("abcdefghij") * rng.randint(1, 8) for _ in range(4000)]
line = " ".join(rng.choice(words) for _ in range(int(megabytes * 1e6 / 5.5)))
docs = Dataset.from_dict({"text": [line] + words[:200]})
docs, cut = cap_documents(docs, blocks * 64 * CHARS_PER_TOKEN)
model, tok = load_model_and_tokenizer(str(save_tiny_model(folder, words, vocab_size=512)), tuning="full")
args = EvaluatorConfig(output_dir=folder + "/run", max_steps=1, per_device_train_batch_size=8,
    samples_per_step=8, max_length=64, eval_strategy="no", save_strategy="no",
    load_best_model_at_end=False, disable_tqdm=True)
continued_pretraining(model, tok, docs, args)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, cut["documents_cut"])
"""


def long_document_figures(megabytes: float) -> dict:
    """Peak RSS (GiB) of one training step on a corpus with one ``megabytes``-long line, cut or not."""
    import subprocess
    import sys

    figures = {}
    for name, blocks in (("not cut", 10**9), ("cut at 64 blocks", 64)):
        with tempfile.TemporaryDirectory() as folder:
            done = subprocess.run(
                [sys.executable, "-c", LONG_DOCUMENT_STEP, str(megabytes), str(blocks), folder],
                capture_output=True,
                text=True,
                check=True,
            )
        peak, _ = done.stdout.split()[-2:]
        figures[f"peak RSS, {megabytes:g} MB line {name} (GiB)"] = float(peak)
    return figures


def _cell(value) -> str:
    if not isinstance(value, float):
        return str(value)
    return f"{value:.3g}" if value < 1 else f"{value:,.1f}"


def print_table(title: str, figures: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, _cell(value))
    Console().print(table)


def main(quick: bool, threads: int) -> dict:
    import torch
    from datasets import Dataset, load_dataset

    from continuousbench.demo.tinymodel import save_tiny_model
    from continuousbench.geminon.build import GeminonBuildArguments, build_release
    from continuousbench.harness.qa_eval import generate_answers
    from continuousbench.scoring.prompts import qa_prompt
    from continuousbench.training.config import EvaluatorConfig
    from continuousbench.training.modeling import load_model_and_tokenizer
    from continuousbench.training.sft import continued_pretraining

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
            output_dir=str(tmp / name),
            max_steps=max_steps,
            per_device_train_batch_size=8,
            samples_per_step=8,
            max_length=max_length,
            learning_rate=lr,
            eval_strategy="no",
            save_strategy="no",
            load_best_model_at_end=False,
            logging_steps=max_steps,
            disable_tqdm=True,
        )

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
    print_table(f"Harness on CPU, tiny Llama ({'quick' if quick else 'full'})", figures)
    if not quick:
        stops = stop_ids_figures()
        print_table("Stopping at a newline, 262k vocabulary (best of 3)", stops)
        figures |= stops
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Small samples (about a minute).")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1).")
    parser.add_argument("--stop-ids", action="store_true", help="Only the 262k-vocabulary stop-id timings.")
    parser.add_argument("--long-document", type=float, metavar="MB", help="Only the long-document memory.")
    cli_args = parser.parse_args()
    if cli_args.stop_ids:
        print_table("Stopping at a newline, 262k vocabulary (best of 3)", stop_ids_figures())
    elif cli_args.long_document:
        print_table("One training step, one long line", long_document_figures(cli_args.long_document))
    else:
        main(cli_args.quick, cli_args.threads)
