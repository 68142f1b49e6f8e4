"""Hostile input to ``continuousbench evaluate``: one case a line, each one ``error: ...`` line, exit 2.

(Progress bars that libraries print before the failure may precede it; the error is the last line.)

A case is (id, setup, expected fragment of the error line). ``setup`` is a list of extra arguments for a
tiny run, or a function of :class:`Case` returning the full argv (to build a damaged file first). Every
case must fail before training: no traceback, no checkpoint, and a new run leaves no work folder.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Case:
    """What a setup function may use: a fresh folder, the tiny release and model, the tiny run's argv."""

    tmp: Path
    release: Path
    model: Path
    run_argv: object
    monkeypatch: object = None
    interrupt_training: object = None

    def interrupt(self, evaluation: int) -> None:
        self.interrupt_training(evaluation, self.monkeypatch)

    @property
    def out(self) -> Path:
        return self.tmp / "run"

    def argv(self, *extra: str, drop: tuple[str, ...] = ()) -> list[str]:
        args = self.run_argv(self.release, self.model, self.out, *extra, steps=1)
        for option in drop:
            i = args.index(option)
            del args[i : i + 2]
        return args

    def file(self, name: str, data: bytes | str) -> Path:
        path = self.tmp / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def model_copy(self, name: str) -> Path:
        return Path(shutil.copytree(self.model, self.tmp / name))


def table(names: str, cases: list[tuple]):
    """``pytest.mark.parametrize`` over rows ``(id, *values)``."""
    return pytest.mark.parametrize(names, [c[1:] for c in cases], ids=[c[0] for c in cases])


def corpus(name: str, data: bytes | str):
    return lambda c: c.argv("--corpus", str(c.file(name, data)))


def parquet_corpus(columns: dict):
    def setup(c: Case) -> list[str]:
        from datasets import Dataset, Features, Value

        features = Features({k: Value("string") for k in columns})
        Dataset.from_dict(columns, features=features).to_parquet(str(c.tmp / "c.parquet"))
        return c.argv("--corpus", str(c.tmp / "c.parquet"))

    return setup


def model_without_tokenizer(c: Case) -> list[str]:
    folder = c.model_copy("no-tokenizer")
    for file in folder.iterdir():
        if "token" in file.name:
            file.unlink()
    return c.argv("--model", str(folder))


def model_with_damaged_weights(c: Case) -> list[str]:
    folder = c.model_copy("damaged")
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    return c.argv("--model", str(folder))


def encoder_model(c: Case) -> list[str]:
    from transformers import BertConfig, BertModel

    folder = c.model_copy("bert")
    (folder / "model.safetensors").unlink()
    config = BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertModel(config).save_pretrained(folder)
    return c.argv("--model", str(folder), "--tuning", "full")


def seq2seq_model(c: Case) -> list[str]:
    from transformers import T5Config, T5Model

    folder = c.model_copy("t5")
    (folder / "model.safetensors").unlink()
    T5Model(T5Config(d_model=16, d_ff=32, num_layers=1, num_heads=2, d_kv=8)).save_pretrained(folder)
    return c.argv("--model", str(folder))


def short_context_model(c: Case) -> list[str]:
    folder = c.model_copy("short")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"max_position_embeddings": 128}))
    return c.argv("--model", str(folder))


def output_dir_is_a_file(c: Case) -> list[str]:
    c.file("run", "not a folder")
    return c.argv()


def foreign_results(c: Case) -> list[str]:
    c.out.mkdir()
    (c.out / "results.json").write_text("{}")  # e.g. a run of an older version, or the user's own file
    return c.argv()


CASES = [
    # numeric ranges, checked where they are parsed
    ("qa_test_limit negative", ["--qa_test_limit", "-5"], "--qa_test_limit -5 is out of range"),
    ("qa_eval_limit zero", ["--qa_eval_limit", "0"], "--qa_eval_limit 0 is out of range"),
    ("replay_fraction one", ["--replay_fraction", "1"], "--replay_fraction 1.0 is out of range"),
    ("steps negative", ["--steps", "-1"], "--max_steps -1 is out of range"),
    ("learning rate zero", ["--learning_rate", "0"], "--learning_rate 0.0 is out of range"),
    ("lora rank zero", ["--lora_r", "0"], "--lora_r 0 is out of range"),
    ("max_new_tokens zero", ["--max_new_tokens", "0"], "--max_new_tokens 0 is out of range"),
    ("adam beta2 one", ["--adam_beta2", "1"], "--adam_beta2 1.0 is out of range"),
    ("document blocks zero", ["--max_document_blocks", "0"], "--max_document_blocks 0 is out of range"),
    # the run folder
    ("no output_dir", lambda c: c.argv(drop=("--output_dir",)), "--output_dir is missing"),
    ("output_dir is a file", output_dir_is_a_file, "is a file, not a folder"),
    ("results.json not ours", foreign_results, "was not written by `continuousbench evaluate`"),
    ("resume with nothing to resume", ["--resume"], "nothing to resume"),
    # the corpus
    ("corpus empty", parquet_corpus({"text": []}), "is empty"),
    ("corpus without text column", parquet_corpus({"body": ["a", "b"]}), "pass --text_column"),
    ("corpus txt not UTF-8", corpus("c.txt", b"Alpha.\n\nBeta \xff.\n"), "c.txt is not UTF-8 text: line 3"),
    ("corpus jsonl not UTF-8", corpus("c.jsonl", b'{"text": "a"}\n{"text": "\xe9"}\n'), "line 2"),
    ("corpus unknown Hub id offline", ["--corpus", "nobody/no-such-corpus"], "the Hub is off"),
    ("replay corpus missing", ["--replay_corpus", "missing.parquet"], "--replay_corpus missing.parquet"),
    # the model
    ("model without tokenizer", model_without_tokenizer, "has no tokenizer"),
    ("model weights damaged", model_with_damaged_weights, "model.safetensors is damaged"),
    ("model is an encoder", encoder_model, "is not a causal language model checkpoint"),
    ("model is seq2seq", seq2seq_model, "is a t5 model, not a causal language model"),
    ("prompt longer than the context", short_context_model, "reads at most 128"),
    # the judge, found before training
    ("judge endpoint down", ["--judge", "endpoint:http://127.0.0.1:9/v1#judge"], "does not answer"),
    ("judge unknown backend", ["--judge", "offline:nobody"], "cannot make a text generator"),
]


@table("setup, expected", CASES)
def test_bad_input_is_one_line(invoke, run_argv, tmp_path, tiny_release, tiny_model_dir, setup, expected):
    case = Case(tmp_path, tiny_release, tiny_model_dir, run_argv)
    argv = setup(case) if callable(setup) else case.argv(*setup)
    result = invoke(["evaluate", *argv])
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.exit_code == 2, result.output
    assert len(errors) == 1 and result.stderr.strip().endswith(errors[0]), result.stderr[-2000:]
    assert "Traceback" not in result.output and expected in errors[0]
    if case.out.is_dir():  # a new run that fails leaves no work folder and trained nothing
        assert not (case.out / ".evaluate-work").exists() and not list(case.out.glob("checkpoint-*"))


def test_judge_that_answers_nonsense_is_found_before_training(
    invoke, run_argv, tmp_path, tiny_release, tiny_model_dir, fake_openai_server
):
    server = fake_openai_server(reply=lambda body: "Perhaps, it depends.")
    out = tmp_path / "run"
    judge = f"endpoint:{server.url}#judge"
    result = invoke(["evaluate", *run_argv(tiny_release, tiny_model_dir, out, "--judge", judge)])
    assert result.exit_code == 2 and "instead of 0 or 1" in result.stderr
    assert len([r for r in server.requests if "messages" in r]) == 1 and not (out / ".evaluate-work").exists()


# --- an --overwrite whose new attempt fails keeps the finished run ---------------------------------------


OVERWRITE_FAILURES = [
    # (id, setup -> argv of the new attempt, exit status, expected fragment on stderr)
    ("damaged model", model_with_damaged_weights, 2, "model.safetensors is damaged"),
    ("empty corpus", parquet_corpus({"text": []}), 2, "is empty"),
    ("judge down", lambda c: c.argv("--judge", "endpoint:http://127.0.0.1:9/v1#j"), 2, "does not answer"),
    ("Ctrl-C in training", lambda c: c.interrupt(2) or c.argv("--steps", "3"), 130,
     "interrupted: a previous run in --output_dir is untouched"),
]  # fmt: skip


def tree(folder: Path) -> dict[str, bytes]:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files}


@table("setup, status, expected", OVERWRITE_FAILURES)
def test_failed_overwrite_keeps_the_finished_run(
    invoke, run_argv, tmp_path, tiny_release, tiny_model_dir, finished_run, monkeypatch, interrupt_training,
    setup, status, expected,
):  # fmt: skip
    case = Case(tmp_path, tiny_release, tiny_model_dir, run_argv, monkeypatch, interrupt_training)
    shutil.copytree(finished_run, case.out)
    before = tree(case.out)
    assert {"results.json", "predictions.parquet", "model/adapter_model.safetensors"} <= set(before)
    assert any(name.startswith("checkpoint-") for name in before)
    result = invoke(["evaluate", *setup(case), "--overwrite"])
    assert result.exit_code == status and expected in result.stderr, result.stderr[-2000:]
    after = {k: v for k, v in tree(case.out).items() if not k.startswith(".evaluate-work/")}
    assert after == before
