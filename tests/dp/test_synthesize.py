"""`continuousbench synthesize`: start tokens, sampling settings, several processes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from continuousbench.dp.synthesize import cli, start_prompt
from continuousbench.training.data import load_corpus

ROOT = Path(__file__).resolve().parents[2]
PARQUET = "data/train-00000-of-00001.parquet"


def _tokenizer(*, bos: bool, eos: bool = True):
    from tokenizers import processors

    from continuousbench.demo.tinymodel import train_tokenizer

    tok = train_tokenizer([f"Geminon {i} has attack {i * 7 % 100}." for i in range(100)], vocab_size=300)
    if not bos:  # GPT-2 style: nothing added around the text, no BOS token at all
        tok.backend_tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
        tok.bos_token = None
    if not eos:
        tok.eos_token = None
    return tok


@pytest.fixture(scope="module")
def no_bos_generator(tmp_path_factory):
    """A tiny model whose tokenizer adds no start token and has no BOS (empty prompts used to crash)."""
    from continuousbench.demo.tinymodel import make_tiny_model

    out = tmp_path_factory.mktemp("no-bos")
    tok = _tokenizer(bos=False)
    tok.save_pretrained(out)
    make_tiny_model(tok, hidden_size=32, num_layers=1).save_pretrained(out)
    return out


def test_empty_prompt_starts_with_bos_else_eos_else_fails():
    assert start_prompt(_tokenizer(bos=True)) == ""  # the tokenizer adds <bos> itself
    no_bos = _tokenizer(bos=False)
    assert no_bos("")["input_ids"] == [] and start_prompt(no_bos) == "<eos>"
    assert no_bos(start_prompt(no_bos))["input_ids"] == [no_bos.eos_token_id]
    with pytest.raises(ValueError, match="no BOS and no EOS token"):
        start_prompt(_tokenizer(bos=False, eos=False))


def test_generator_without_bos_samples(no_bos_generator, tmp_path):
    out = cli(
        [
            "--generator",
            str(no_bos_generator),
            "--output_dir",
            str(tmp_path / "s"),
            "--num_samples",
            "3",
            "--max_new_tokens",
            "6",
            "--batch_size",
            "2",
        ]
    )
    assert out == tmp_path / "s" and 1 <= len(load_corpus(str(out))) <= 3


@pytest.mark.slow
def test_torchrun_two_processes_write_one_corpus_equal_to_one_process(dp_model_dir, tmp_path):
    args = [
        "--generator",
        str(dp_model_dir),
        "--num_samples",
        "10",
        "--batch_size",
        "3",
        "--max_new_tokens",
        "8",
    ]
    env = os.environ | {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    two = subprocess.run(
        [*torchrun, str(ROOT / "recipes/synthesize.py"), *args, "--output_dir", str(tmp_path / "two")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert two.returncode == 0, two.stderr[-3000:]
    assert two.stdout.strip() == str(tmp_path / "two")  # process 0 alone reports the folder
    cli([*args, "--output_dir", str(tmp_path / "one")])
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == sorted(
        p.name for p in (tmp_path / "one").iterdir()
    )
    assert (tmp_path / "two" / PARQUET).read_bytes() == (tmp_path / "one" / PARQUET).read_bytes()
    again = subprocess.run(
        [*torchrun, str(ROOT / "recipes/synthesize.py"), *args, "--output_dir", str(tmp_path / "two")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in again.stderr.splitlines() if line.startswith("error:")]
    assert again.returncode != 0 and len(errors) == 1 and "--overwrite" in errors[0]


def test_endpoint_backend_samples_through_the_server_with_its_cache(
    no_bos_generator, fake_openai_server, tmp_path, invoke
):
    server = fake_openai_server(reply=lambda body: f"Geminon {body['seed']} has attack 7.", latency=0.01)
    cache = tmp_path / "cache"
    args = [
        "synthesize",
        "--generator",
        no_bos_generator,
        "--backend",
        f"completions:{server.url}#fake",
        "--num_samples",
        "20",
        "--max_in_flight",
        "8",
        "--temperature",
        "0.9",
        "--top_p",
        "0.95",
        "--seed",
        "5",
        "--cache_dir",
        cache,
    ]
    first = invoke([*args, "--output_dir", tmp_path / "a"])
    assert first.exit_code == 0, first.output
    requests = [r for r in server.requests if "prompt" in r]
    assert len(requests) == 20 and {r["prompt"] for r in requests} == {"<eos>"}  # no BOS: EOS starts
    assert {r["model"] for r in requests} == {"fake"} and sorted(r["seed"] for r in requests) == list(
        range(5, 25)
    )
    assert {(r["temperature"], r["top_p"], r["max_tokens"]) for r in requests} == {(0.9, 0.95, 256)}
    texts = load_corpus(str(tmp_path / "a"))["text"]
    assert texts == [f"Geminon {s} has attack 7." for s in range(5, 25)]  # prompt order, not arrival order
    card = (tmp_path / "a" / "README.md").read_text()
    assert f"completions:{server.url}#fake" in card
    again = invoke([*args, "--output_dir", tmp_path / "b"])
    assert again.exit_code == 0 and len([r for r in server.requests if "prompt" in r]) == 20  # all cached
    assert (tmp_path / "a" / PARQUET).read_bytes() == (tmp_path / "b" / PARQUET).read_bytes()
    # retrained weights served under the same name: the cache knows the generator by its sha256
    import shutil

    from safetensors.torch import load_file, save_file

    retrained = shutil.copytree(no_bos_generator, tmp_path / "retrained")
    weights = load_file(retrained / "model.safetensors")
    weights = {k: v + 1 for k, v in weights.items()}
    save_file(weights, retrained / "model.safetensors", metadata={"format": "pt"})
    other = [str(retrained) if a == no_bos_generator else a for a in args]
    third = invoke([*other, "--output_dir", tmp_path / "c"])
    assert third.exit_code == 0 and len([r for r in server.requests if "prompt" in r]) == 40  # asked again


def test_chat_endpoint(dp_model_dir, fake_openai_server, tmp_path, invoke):
    server = fake_openai_server(reply=lambda body: "A chat answer.")
    args = ["synthesize", "--generator", dp_model_dir, "--num_samples", "3"]
    result = invoke([*args, "--backend", f"endpoint:{server.url}#fake", "--output_dir", tmp_path / "chat"])
    assert result.exit_code == 0 and all(r["messages"][0]["content"] == "" for r in server.requests[1:])


def test_a_process_with_no_batch_writes_a_shard_that_merges(dp_model_dir, tmp_path):
    """torchrun with more processes than batches (16 samples in one batch of 16, 2 processes): process 1
    samples nothing, and its empty shard must still merge with process 0's."""
    from continuousbench.dp.synthesize import SHARD, SynthesisArguments, _merge_shards, _sample_local
    from continuousbench.processes import Processes

    args = SynthesisArguments(
        generator=str(dp_model_dir), output_dir=str(tmp_path), num_samples=2, batch_size=16, max_new_tokens=4
    )
    (tmp_path / "shards").mkdir()
    for rank in (0, 1):
        _sample_local(args, Processes(rank=rank, world_size=2), tmp_path / SHARD.format(rank))
    assert len(_merge_shards(tmp_path, 2)) == 2
