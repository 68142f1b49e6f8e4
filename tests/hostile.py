"""The kit of ``tests/test_bad_input.py``: a scratch working directory and the setups its cases call.

A case of the table is one line; when it needs a file, a damaged model or a half-finished run first,
it calls a method of :class:`Env` (each returns what a user would type: a relative path, or an argv).
The session's slow artefacts (tiny release, tiny model, finished and killed runs) come from the
fixtures in ``tests/conftest.py`` and are copied before a case may change them.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

RID = "geminon-tiny-2026q1"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dead_endpoint(kind: str = "endpoint") -> str:
    return f"{kind}:http://127.0.0.1:{closed_port()}/v1#m"


def fill_disk(monkeypatch: pytest.MonkeyPatch, at: int = 2, limit: bool = False) -> None:
    """The disk fills up while the next evaluate run writes its ``at``-th checkpoint (after the model,
    before Trainer's last files): the write raises ENOSPC. ``limit``: the file size limit is hit instead
    (``ulimit -f``), as safetensors reports it: its own error, no path, no errno."""
    import errno
    import os

    from safetensors import SafetensorError
    from transformers import Trainer

    calls = []

    def full(trainer, output_dir):
        calls.append(output_dir)
        if len(calls) == at and limit:
            raise SafetensorError("Error while serializing: I/O error: File too large (os error 27)")
        if len(calls) == at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.path.join(output_dir, "rng_state.pth"))

    monkeypatch.setattr(Trainer, "_save_rng_state", full)


def after(*steps: object) -> object:
    """The last argument, once the setup calls before it have run (arguments are evaluated in order)."""
    return steps[-1]


@dataclass
class Env:
    """A scratch working directory (the cwd); ``$CONTINUOUSBENCH_HOME`` is ``home/``, ``$HOME`` ``user/``."""

    tmp: Path
    request: pytest.FixtureRequest
    monkeypatch: pytest.MonkeyPatch

    def fixture(self, name: str):
        return self.request.getfixturevalue(name)

    # --- files and folders -------------------------------------------------------------------------

    def file(self, name: str, content: str | bytes = "hello\n") -> Path:
        """A file written under the cwd; returned relative, as a user would type it."""
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return Path(name)

    def parquet(self, name: str, columns: dict[str, list], cut: bool = False) -> Path:
        """A parquet file of ``columns`` (an empty one holds strings; ``cut``: its second half missing, as
        after a failed copy)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.table({k: pa.array(v) if v else pa.array([], pa.string()) for k, v in columns.items()})
        pq.write_table(table, path)
        if cut:
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return Path(name)

    def held(self, name: str) -> Path:
        """Folder ``name`` locked by another process, as by a command still running into it (killed at the
        end of the test)."""
        import subprocess
        import sys

        hold = "import sys, time; from continuousbench.locks import lock_folder; "
        hold += "lock_folder(sys.argv[1], 'evaluate');"
        holder = subprocess.Popen(
            [sys.executable, "-c", hold + " print(1, flush=True); time.sleep(120)", str(self.tmp / name)],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.request.addfinalizer(lambda: (holder.kill(), holder.wait()))
        assert holder.stdout.readline().strip() == "1"
        return Path(name)

    def read_only(self, name: str = "ro") -> Path:
        path = self.tmp / name
        path.mkdir()
        path.chmod(0o555)
        return path

    def copy(self, source: Path, name: str, **ignore) -> Path:
        shutil.copytree(source, self.tmp / name, ignore=shutil.ignore_patterns(*ignore.get("ignore", ())))
        return Path(name)

    # --- releases ----------------------------------------------------------------------------------

    def release(self) -> Path:
        """A copy of the session's tiny release under ``home/``."""
        target = self.tmp / "home" / RID
        if not target.exists():
            shutil.copytree(self.fixture("tiny_release"), target)
        return target

    def manifest(self, edit: Callable[[dict], None] | None = None, raw: bytes | None = None) -> Path:
        """The release with its ``release.json`` edited in place (as JSON, or replaced by ``raw`` bytes)."""
        path = self.release() / "release.json"
        if raw is not None:
            path.write_bytes(raw)
        else:
            manifest = json.loads(path.read_text())
            edit(manifest)
            path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        return self.release()

    def tamper(self, name: str = "data/qa_public/test-00000-of-00001.parquet", garbage: bytes = b"") -> Path:
        """The release with one byte of a file flipped (or the whole file replaced by ``garbage``)."""
        data = bytearray((self.release() / name).read_bytes())
        data[len(data) // 2] ^= 0xFF
        (self.release() / name).write_bytes(garbage or bytes(data))
        return self.release()

    def stale_work(self) -> list[str]:
        """Interrupted builds of the release with other settings, each with a finished world stage (the
        first under the name builds used before work folders were keyed by their settings)."""
        for name, seed in (("seed0", 0), ("0123456789ab", 8)):
            self.file(f"home/.work/{RID}-{name}/settings.json", json.dumps({"seed": seed, "rounds": 7}))
            self.file(f"home/.work/{RID}-{name}/world.json", "[]")
        return ["build", "geminon"]

    def unfinished_build(self, *argv: str, drafts: str | None = None) -> None:
        """What ``build geminon <argv>`` killed while drafting leaves: its work folder (keyed by its
        settings) with the world and one finished drafting unit (or ``drafts``, the log's text)."""
        from continuousbench.geminon.build import DRAFTS, build_settings
        from continuousbench.geminon.command import make_parser
        from continuousbench.stages import WorkDir

        (args,) = make_parser().parse(list(argv))
        settings = build_settings(args)
        work = WorkDir.path_for(Path("home/.work"), settings["release"], settings)
        self.file(f"{work}/settings.json", json.dumps(settings))
        self.file(f"{work}/world.json", "[]")
        unit = json.dumps({"key": "wiki:1:7:10", "drafts": [], "stats": {}}) + "\n"
        self.file(f"{work}/{DRAFTS}", unit if drafts is None else drafts)

    def tampered_copy(self) -> Path:
        """A copy of the release with every qa_public/test answer changed, loaded once by ``load_dataset``."""
        from datasets import Dataset, load_dataset

        copy = self.tmp / "copy" / RID
        shutil.copytree(self.release(), copy)
        path = copy / "data/qa_public/test-00000-of-00001.parquet"
        rows = Dataset.from_parquet(str(path), cache_dir=str(self.tmp / "scratch")).to_dict()
        Dataset.from_dict({**rows, "answer": ["TAMPERED"] * len(rows["answer"])}).to_parquet(str(path))
        assert set(load_dataset(str(copy), "qa_public", split="test")["answer"]) == {"TAMPERED"}
        return copy

    def in_user_home(self) -> str:
        """The release copied to ``~/cb/<id>``; returns ``"~/cb"``."""
        shutil.copytree(self.release(), self.tmp / "user" / "cb" / RID)
        return "~/cb"

    # --- models ------------------------------------------------------------------------------------

    def model(self, edit: str | None = None) -> Path:
        """A copy of the tiny Llama, damaged by ``edit``: no-tokenizer, half-weights, encoder, seq2seq,
        short-context (128 positions), or a folder with a tokenizer but no model (``tokenizer-only``)."""
        folder = self.tmp / f"model-{edit}"
        shutil.copytree(self.fixture("tiny_model_dir"), folder)
        weights = folder / "model.safetensors"
        if edit == "no-tokenizer":
            for file in folder.glob("*token*"):
                file.unlink()
        elif edit == "half-weights":
            weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
        elif edit in ("encoder", "seq2seq"):
            from transformers import BertConfig, BertModel, T5Config, T5Model

            weights.unlink()
            if edit == "encoder":
                config = BertConfig(
                    hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
                )
                BertModel(config).save_pretrained(folder)
            else:
                config = T5Config(d_model=16, d_ff=32, num_layers=1, num_heads=2, d_kv=8)
                T5Model(config).save_pretrained(folder)
        elif edit == "short-context":
            config = json.loads((folder / "config.json").read_text())
            (folder / "config.json").write_text(json.dumps(config | {"max_position_embeddings": 128}))
        elif edit == "tokenizer-only":
            weights.unlink()
            (folder / "config.json").unlink()
        return folder

    # --- runs of the commands ----------------------------------------------------------------------

    def evaluate(
        self,
        *extra: str,
        out: str = "run",
        drop: tuple[str, ...] = (),
        model: Path | None = None,
        steps: int = 1,
    ) -> list[str]:
        """``evaluate`` argv of a tiny run on the session's release and model (``drop``: options left out)."""
        model = model or self.fixture("tiny_model_dir")
        release = self.fixture("tiny_release")
        args = self.fixture("run_argv")(release, model, self.tmp / out, *extra, steps=steps)
        for option in drop:
            i = args.index(option)
            del args[i : i + 2]
        return ["evaluate", *args]

    def finished_run(self, name: str = "run", *, light: bool = False) -> Path:
        """A copy of the session's finished evaluate run (``light``: without model and checkpoints)."""
        ignore = ("model", "checkpoint-*") if light else ()
        return self.copy(self.fixture("finished_run"), name, ignore=ignore)

    def run(self, name: str = "run", results: object = None) -> Path:
        """A hand-made run folder holding only a results.json (the pre-schema layout `report` reads)."""
        metrics = {"metrics": {"exact_match": {"accuracy": 0.5}, "contains": {"accuracy": 0.75}}}
        results = (
            results
            if results is not None
            else {
                "release": {"id": RID},
                "base_model": "models/tiny",
                "tuning": "lora",
                "steps": 2,
                "corpus": {"fingerprint": "0123456789abcdef"},
                "metrics": {"qa_public": metrics, "qa_singleton": metrics},
            }
        )
        self.file(f"{name}/results.json", json.dumps(results))
        return Path(name)

    def edited_run(self, name: str, edit: Callable[[dict], None] | None = None, **columns) -> Path:
        """A light copy of the finished run with its results.json edited and prediction columns replaced."""
        import pandas as pd

        run = self.tmp / self.finished_run(name, light=True)
        if edit is not None:
            record = json.loads((run / "results.json").read_text())
            edit(record)
            (run / "results.json").write_text(json.dumps(record))
        if columns:
            table = pd.read_parquet(run / "predictions.parquet")
            table = table.assign(**columns)
            table.to_parquet(run / "predictions.parquet", index=False)
        return Path(name)

    def killed_run(self, *change: str) -> list[str]:
        """A copy of the session's run stopped by Ctrl-C after checkpoint-1, resumed with ``change``
        (option, value) applied; a value may name ``other.parquet``, ``model-copy`` or ``release-copy``,
        the same bytes in another place."""
        out, argv = self.fixture("killed_run")
        shutil.copytree(out, self.tmp / "run")
        args = with_option(argv, "--output_dir", str(self.tmp / "run"))
        copies = {
            "other.parquet": self.fixture("killed_run_corpus"),
            "model-copy": self.fixture("tiny_model_dir"),
            "release-copy": self.fixture("tiny_release"),
        }
        for option, value in zip(change[::2], change[1::2], strict=True):
            if value in copies:
                source, value = copies[value], str(self.tmp / value)
                (shutil.copytree if source.is_dir() else shutil.copy)(source, value)
            args = with_option(args, option, value)
        return ["evaluate", *args, "--resume"]

    def interrupted(self, argv: list[str], evaluation: int = 2) -> None:
        """Run the evaluate ``argv`` here, stopped by Ctrl-C at its ``evaluation``-th validation pass."""
        from continuousbench.harness import run

        with pytest.MonkeyPatch.context() as monkeypatch:
            self.fixture("interrupt_training")(evaluation, monkeypatch)
            with pytest.raises(SystemExit) as stopped:
                run.cli([str(a) for a in argv[1:]])
        assert stopped.value.code == 130

    def ctrl_c_on_import(self) -> None:
        """Ctrl-C while the next command's module is being imported (its first second)."""
        import importlib

        real = importlib.import_module
        calls = []

        def interrupted(name, *args):
            calls.append(name)
            if len(calls) == 1:
                raise KeyboardInterrupt
            return real(name, *args)

        self.monkeypatch.setattr(importlib, "import_module", interrupted)

    def unreachable_hub(self) -> None:
        """Online mode, with the Hub at a closed port of this machine."""
        from huggingface_hub import constants

        self.monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        endpoint = f"http://127.0.0.1:{closed_port()}"
        self.monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        self.monkeypatch.setattr(
            constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
        )
        self.monkeypatch.setenv("HF_TOKEN", "hf_" + "x" * 30)

    def disk_full(self, at: int = 2, limit: bool = False) -> None:
        fill_disk(self.monkeypatch, at, limit)

    def corpus_file(self, name: str, reverse: bool = False) -> Path:
        """The tiny release's corpus texts as a parquet file (``reverse``: the same texts, reordered)."""
        from datasets import load_dataset

        texts = load_dataset(str(self.fixture("tiny_release")), "corpus", split="train")["text"]
        return self.parquet(name, {"text": texts[::-1] if reverse else texts})

    def interrupt_training(self, evaluation: int) -> None:
        """Ctrl-C at the ``evaluation``-th validation pass of the next evaluate run."""
        self.fixture("interrupt_training")(evaluation, self.monkeypatch)

    def train_generator(self, *extra: str, corpus: Path | str | None = None) -> list[str]:
        corpus = corpus or self.fixture("tiny_release")
        model = self.fixture("tiny_model_dir")
        return [
            "train-generator",
            "--corpus",
            str(corpus),
            "--model",
            str(model),
            "--output_dir",
            "gen",
            "--lora_r",
            "4",
            "--steps",
            "2",
            "--max_length",
            "32",
            *extra,
        ]

    def synthesize(self, *extra: str) -> list[str]:
        return [
            "synthesize",
            "--generator",
            str(self.fixture("tiny_model_dir")),
            "--output_dir",
            "syn",
            "--num_samples",
            "3",
            "--max_new_tokens",
            "6",
            *extra,
        ]

    def pe(self, *extra: str, corpus: Path | str | None = None, api: str | None = None) -> list[str]:
        corpus, api = corpus or self.fixture("tiny_release"), api or self.fixture("pe_word_api")
        return [
            "pe",
            "--corpus",
            str(corpus),
            "--api",
            api,
            "--embedding_model",
            str(self.fixture("tiny_model_dir")),
            "--output_dir",
            "pe",
            "--iterations",
            "2",
            "--num_samples",
            "8",
            "--sweep_num_samples",
            "4",
            "--max_new_tokens",
            "8",
            *extra,
        ]

    def offline_api(self, name: str, answer: Callable[..., str]) -> str:
        """``offline:<name>``: a scripted model (registered for this test only)."""
        from continuousbench import llm

        self.monkeypatch.setitem(llm.OFFLINE, name, answer)
        return f"offline:{name}"

    def server(self, **options) -> str:
        """The ``/v1`` URL of a local OpenAI-compatible server (``garbage=True``, ``reply=``...)."""
        return self.fixture("fake_openai_server")(**options).url

    def clustered(self, name: str = "clustered") -> Path:
        """A tiny cluster-stage output: three reports of one event and one of another."""
        text = "The bridge over the river reopened on Monday after two years of repairs, the city said. " * 4
        rows = [(f"a{i}", f"https://news{i}.example/bridge", str(i // 3)) for i in range(4)]
        return self.parquet(
            f"{name}/data/part-00000.parquet",
            {
                "id": [r[0] for r in rows],
                "url": [r[1] for r in rows],
                "hostname": [r[1][8:22] for r in rows],
                "title": ["Bridge reopens"] * 4,
                "date": ["2026-01-05"] * 4,
                "crawl_date": ["2026-01-05"] * 4,
                "language": ["en"] * 4,
                "text": [text] * 4,
                "cluster": [int(r[2]) for r in rows],
            },
        ).parent.parent

    def hub(self, tags: list[str] = ()) -> object:
        """The Hub faked at its HTTP boundary (a dataset repo holding ``tags``)."""
        from fake_hub import fake_hub

        return fake_hub(self.monkeypatch, RID, list(tags))


def with_option(argv: list[str], option: str, value: str) -> list[str]:
    """``argv`` with ``option`` set to ``value`` (replaced if present, else appended)."""
    args = list(argv)
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    return args


def with_file_limit(argv: list[str], limit: int, cwd: Path) -> subprocess.CompletedProcess:
    """``continuousbench <argv>`` in a child process whose files may not grow past ``limit`` bytes
    (``ulimit -f``): the disk "fills" at its first larger write, wherever the library writing is."""
    import resource
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "continuousbench.cli", *map(str, argv)],
        cwd=cwd,
        preexec_fn=cap,
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The one ``error:`` line of a failed command (asserted to be the only one)."""
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-3000:]
    return errors[0]
