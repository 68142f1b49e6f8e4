"""Shared fixtures: everything is built locally in the test session, nothing is downloaded."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# pytest-xdist workers inherit COLUMNS=80 / LINES=24; commands should see what CI logs see, a pipe
# with no terminal size (tests of a set width set COLUMNS themselves).
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

import pytest
import torch

pytest_plugins = ["real_llm"]  # the session's real OpenAI-compatible server (tests/real_llm.py)

torch.set_num_threads(1)

# transformers and datasets give their loggers a handler bound to sys.stderr when first used; bound
# inside a test that captures output, it would write into that test's closed stream ever after.
from datasets.utils import logging as _datasets_logging  # noqa: E402
from transformers.utils import logging as _transformers_logging  # noqa: E402

_datasets_logging.get_verbosity(), _transformers_logging.get_verbosity()


# The PokeAPI reference CSVs the priors derive from (not in the repository): the shared folder beside the
# clone (CI checks the clone out next to it), or $CONTINUOUSBENCH_REFERENCE.
REFERENCE = Path(
    os.environ.get("CONTINUOUSBENCH_REFERENCE") or Path(__file__).resolve().parents[2] / "shared/reference"
)


@pytest.fixture(scope="session")
def pokeapi_csvs() -> Path:
    """The PokeAPI CSV folder; skipped (with where to put it) only on a machine without the shared folder."""
    folder = REFERENCE / "pokeapi"
    if not folder.is_dir():
        pytest.skip(f"PokeAPI reference CSVs not found at {folder}: set CONTINUOUSBENCH_REFERENCE")
    return folder


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(root)``'s folder (under ``root``), built once for the whole test run and copied into a root of
    this session's own: under pytest-xdist the first worker to ask builds it under a file lock and the
    others copy it, so each worker still writes beside it apart from the other."""
    import json
    import shutil

    from filelock import FileLock

    own = tmp_path_factory.mktemp(name)
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(own)
    shared = tmp_path_factory.getbasetemp().parent / f"built-once-{name}"  # the run's, above the workers'
    with FileLock(f"{shared}.lock"):
        made = Path(f"{shared}.json")
        if not made.is_file():
            made.write_text(json.dumps(str(build(shared).relative_to(shared))))
        folder = json.loads(made.read_text())
    shutil.copytree(shared, own, dirs_exist_ok=True)
    return own / folder


@pytest.fixture(scope="session")
def tiny_release(tmp_path_factory):
    """A `tiny` Geminon release built once for the test run (a copy per xdist worker); returns its folder."""
    from continuousbench.geminon.build import GeminonBuildArguments, build_release

    def build(root: Path) -> Path:
        return build_release(GeminonBuildArguments(size="tiny", quarter="2026q1", seed=0, out=str(root)))

    return built_once(tmp_path_factory, "cb-home", build)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_release):
    """A 1M-parameter Llama with a tokenizer trained on the tiny release's corpus."""
    from datasets import load_dataset

    from continuousbench.demo.tinymodel import save_tiny_model

    corpus = load_dataset(str(tiny_release), "corpus", split="train")
    return save_tiny_model(
        tmp_path_factory.mktemp("tiny-llama"), corpus["text"], arch="llama", vocab_size=1024
    )


def tiny_run_argv(release, model, output_dir, *extra: str, steps: int = 2, tuning: str = "lora") -> list[str]:
    """Arguments of a tiny run: 8 blocks of 64 tokens per step, 4 validation and 6 test questions per part."""
    return [
        "--release",
        str(release),
        "--model",
        str(model),
        "--tuning",
        tuning,
        "--lora_r",
        "8",
        "--output_dir",
        str(output_dir),
        "--steps",
        str(steps),
        "--eval_steps",
        "1",
        "--save_steps",
        "1",
        "--per_device_train_batch_size",
        "8",
        "--samples_per_step",
        "8",
        "--max_length",
        "64",
        "--learning_rate",
        "1e-3",
        "--logging_steps",
        "1",
        "--qa-eval-limit",
        "4",
        "--qa-test-limit",
        "6",
        "--max-new-tokens",
        "8",
        "--dataloader_num_workers",
        "0",
        *extra,
    ]


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory, tiny_release, tiny_model_dir):
    """A finished LoRA run on the tiny release (output, report, compare, submit and leaderboard tests)."""
    from continuousbench.harness.run import cli

    out = tmp_path_factory.mktemp("runs") / "llama-lora"
    cli(tiny_run_argv(tiny_release, tiny_model_dir, out))
    return out


@pytest.fixture(scope="session")
def canonical_recipe() -> dict:
    """results.json ``recipe`` of a run made with the demo's canonical evaluator recipe, as the harness
    records it (a record given it ranks in the leaderboard's main table: its settings hash to a digest
    of the published list)."""
    from continuousbench.harness import recipe as recipes

    path = str(Path(__file__).resolve().parents[1] / "recipes" / "configs" / "geminon-tiny-demo.yaml")
    record = recipes.record(*recipes._parse_alone(path), path)
    assert record["canonical"]
    return record


@pytest.fixture(scope="session")
def run_argv():
    """:func:`tiny_run_argv`, for tests (conftest modules are not importable)."""
    return tiny_run_argv


# evaluate --epsilon on the tiny run: Poisson batches of 8 documents (exact accounting in seconds).
DP_EVALUATE_ARGS = tuple(
    shlex.split(
        "--epsilon 10 --sampling poisson --expected_batch_size 8 --warmup_steps 0 --micro_batch_size 4"
    )
)


@dataclass
class DPModelRun:
    path: Path  # the published run folder
    private_stats: list[float]  # every raw training statistic the DP steps computed (never to be published)


@pytest.fixture(scope="session")
def dp_model_run(tmp_path_factory, tiny_release, tiny_model_dir):
    """A finished ``evaluate --epsilon 10`` run (secret noise) and the raw training losses it computed."""
    from recording import recorded_dp_steps

    from continuousbench.harness.run import cli

    out = tmp_path_factory.mktemp("runs-dp") / "dp-direct"
    with recorded_dp_steps() as seen:
        cli(tiny_run_argv(tiny_release, tiny_model_dir, out, *DP_EVALUATE_ARGS))
    return DPModelRun(out, seen)


@pytest.fixture
def no_backoff(monkeypatch):
    """Endpoint backends made by the commands retry at once (``backoff`` 0): a test of what the retries
    end in need not wait 1 + 2 + 4 s. (The wait is the stop event's, so patching ``time.sleep`` does not
    shorten it: two tests did that and still waited 7 s each.)"""
    from continuousbench import llm

    real = llm.make_generator

    def at_once(spec: str, **options):
        return real(spec, **{**options, "backoff": 0.0})

    monkeypatch.setattr(llm, "make_generator", at_once)


@pytest.fixture(scope="session")
def dp_evaluate_args():
    """:data:`DP_EVALUATE_ARGS`, for tests (conftest modules are not importable)."""
    return list(DP_EVALUATE_ARGS)


def two_process_evaluate(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``recipes/evaluate.py <argv>`` under torchrun, two CPU processes, offline; its output captured."""
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    recipe = Path(__file__).resolve().parents[1] / "recipes" / "evaluate.py"
    return subprocess.run(
        [*torchrun, str(recipe), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="session")
def torchrun_evaluate():
    """:func:`two_process_evaluate`, for tests (conftest modules are not importable)."""
    return two_process_evaluate


def _interrupt_training(evaluation: int, monkeypatch) -> None:
    """Ctrl-C during training: validation pass number ``evaluation`` of the next run raises
    KeyboardInterrupt (the checkpoints of the passes before it are saved)."""
    from continuousbench.harness import qa_eval

    real, calls = qa_eval.selection_eval, []

    def selection_eval(*args, **kwargs):
        eval_fn = real(*args, **kwargs)

        def interrupted(model):
            calls.append(1)
            if len(calls) == evaluation:
                raise KeyboardInterrupt
            return eval_fn(model)

        return interrupted

    monkeypatch.setattr(qa_eval, "selection_eval", selection_eval)  # the harness looks it up per run


@pytest.fixture(scope="session")
def interrupt_training():
    """:func:`_interrupt_training` ``(evaluation, monkeypatch)``."""
    return _interrupt_training


@pytest.fixture(scope="session")
def killed_run_corpus(tmp_path_factory, tiny_release):
    """The tiny release's corpus as a parquet file (so that a test can change it in place)."""
    from datasets import load_dataset

    path = tmp_path_factory.mktemp("corpus") / "corpus.parquet"
    load_dataset(str(tiny_release), "corpus", split="train").select_columns(["text"]).to_parquet(str(path))
    return path


@pytest.fixture(scope="session")
def killed_run(tmp_path_factory, tiny_release, tiny_model_dir, killed_run_corpus):
    """(folder, argv) of a 3-step run on ``killed_run_corpus`` stopped by Ctrl-C at its second evaluation
    (checkpoint-1 kept)."""
    from continuousbench.harness import run

    out = tmp_path_factory.mktemp("killed") / "run"
    argv = tiny_run_argv(tiny_release, tiny_model_dir, out, "--corpus", str(killed_run_corpus), steps=3)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _interrupt_training(2, monkeypatch)
        with pytest.raises(SystemExit) as stopped:
            run.cli(argv)
    assert stopped.value.code == 130
    return out, argv


@pytest.fixture(scope="session")
def seed_twin(tmp_path_factory, tiny_release, tiny_model_dir, finished_run):
    """``finished_run`` again with seed 1: two runs that differ only by seed."""
    from continuousbench.harness.run import cli

    out = tmp_path_factory.mktemp("runs-seed1") / "llama-lora"
    cli(tiny_run_argv(tiny_release, tiny_model_dir, out, "--seed", "1"))
    return out


@pytest.fixture(scope="session")
def baseline_run(tmp_path_factory, tiny_release, tiny_model_dir):
    """The base model scored without training (steps 0) on the same questions as ``finished_run``."""
    from continuousbench.harness.run import cli

    out = tmp_path_factory.mktemp("runs-base") / "no-training"
    cli(tiny_run_argv(tiny_release, tiny_model_dir, out, steps=0))
    return out


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture
def invoke(capsys):
    """Run ``continuousbench <argv>`` in-process; returns exit code and captured stdout/stderr."""
    from continuousbench.cli import main

    def _invoke(argv) -> CliResult:
        capsys.readouterr()
        try:
            main([str(a) for a in argv])
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return _invoke


@pytest.fixture
def fake_openai_server():
    """Factory of local OpenAI-compatible servers on 127.0.0.1 (stopped after the test)."""
    from contextlib import ExitStack

    from fake_endpoint import FakeOpenAIServer

    with ExitStack() as stack:
        yield lambda **kwargs: stack.enter_context(FakeOpenAIServer(**kwargs))


PE_WORDS = "Geminon has attack and lives in zone river stone music cloud purple the of 0 1 2 3 4 5 6 7 8 9"


def _pe_word_api(prompt: str, seed: int = 0, **_) -> str:
    """Deterministic PE API: RANDOM_API gives nine random words, VARIATION_API replaces one word."""
    import zlib

    import numpy as np

    from continuousbench.dp.pe_prompts import parse_variation_prompt

    rng = np.random.default_rng([seed, zlib.crc32(prompt.encode())])
    words, text = PE_WORDS.split(), parse_variation_prompt(prompt)
    if text is None:
        return " ".join(rng.choice(words, 9))
    edited = text.split()
    edited[rng.integers(len(edited))] = str(rng.choice(words))
    return " ".join(edited)


@pytest.fixture(scope="session")
def pe_word_api() -> str:
    """The spec of a deterministic offline API for Private Evolution (registered in ``llm.OFFLINE``)."""
    from continuousbench.llm import OFFLINE

    OFFLINE["pe-words"] = _pe_word_api
    return "offline:pe-words"
