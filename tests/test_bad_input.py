"""Hostile inputs, one line each: what a new user might type, and the one line they must get back.

``CLI`` runs ``continuousbench <argv>`` through the real dispatcher; ``API`` calls the Python API. A case
is an argv (or a function of :class:`Env` that sets things up and returns one), the exit code, and a
fragment of the message. Every CLI case is also checked for the rules every command keeps: a failure is
exactly one line ``error: ...`` on stderr, never a traceback, and no file that existed before the command
is changed or removed (``may_change`` lists the ones a successful case is asked to replace).
Add a new hostile input as one more line in a table.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from continuousbench.commands import one_line

RID = "geminon-tiny-2026q1"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class Env:
    """A scratch working directory (the cwd); ``$CONTINUOUSBENCH_HOME`` is ``home/``, ``$HOME`` ``user/``."""

    tmp: Path
    request: pytest.FixtureRequest

    def release(self) -> Path:
        """A copy of the session's tiny release under ``home/``."""
        target = self.tmp / "home" / RID
        if not target.exists():
            shutil.copytree(self.request.getfixturevalue("tiny_release"), target)
        return target

    def file(self, name: str, content: str | bytes = "hello\n") -> Path:
        """A file written under the cwd; returned relative, as a user would type it."""
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return Path(name)

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

    def run(self, name: str = "run", results: object = None) -> Path:
        """A finished evaluate run folder (just its results.json, in the layout `report` reads)."""
        metrics = {"metrics": {"exact_match": {"accuracy": 0.5}, "contains": {"accuracy": 0.75}}}
        results = results if results is not None else {
            "release": {"id": RID}, "base_model": "models/tiny", "tuning": "lora", "steps": 2,
            "corpus": {"fingerprint": "0123456789abcdef"},
            "metrics": {"qa_public": metrics, "qa_singleton": metrics},
        }  # fmt: skip
        self.file(f"{name}/results.json", json.dumps(results))
        return Path(name)

    def read_only(self, name: str = "ro") -> Path:
        path = self.tmp / name
        path.mkdir()
        path.chmod(0o555)
        return path

    def stale_work(self) -> list[str]:
        """Interrupted builds of the release with other settings, each with a finished world stage (the
        first under the name builds used before work folders were keyed by their settings)."""
        for name, seed in (("seed0", 0), ("0123456789ab", 8)):
            self.file(f"home/.work/{RID}-{name}/settings.json", json.dumps({"seed": seed, "rounds": 7}))
            self.file(f"home/.work/{RID}-{name}/world.json", "[]")
        return ["build", "geminon"]

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

    def model(self) -> Path:
        """A folder standing in for an embedding model (mauve refuses bad input before loading it)."""
        (self.tmp / "encoder").mkdir(exist_ok=True)
        return self.tmp / "encoder"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def after(*steps: object) -> object:
    """The last argument, once the setup calls before it have run (arguments are evaluated in order)."""
    return steps[-1]


def case(argv, code: int, message: str, *, id: str, may_change: tuple[str, ...] = (), marks=()):
    return pytest.param(argv, code, message, may_change, id=id, marks=marks)


def mauve(e: Env, *extra: str) -> list[str]:
    e.file("cand.jsonl", '{"text": "a"}\n')
    return ["mauve", "--candidate", "cand.jsonl", "--reference", str(e.release()), "--model", str(e.model()),
            *extra]  # fmt: skip


ROOT_ONLY = pytest.mark.skipif(IS_ROOT, reason="root writes into read-only folders")

CLI = [
    # --- the parser: YAML, flags, ranges (every command shares it) ---
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "seed: ten\n")], 2,
         "seed = 'ten' has the wrong type (expected int)", id="yaml-wrong-type"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "seed: [1\n")], 2,
         "r.yaml is not valid YAML at line", id="yaml-malformed"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "- seed\n")], 2,
         "must hold a mapping", id="yaml-not-a-mapping"),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "env: 5\n")], 2,
         "env must be a mapping", id="yaml-env-not-a-mapping"),
    case(lambda e: ["build", "geminon", f"--config={e.file('r.yaml', 'colour: red')}"], 2,
         "unknown key(s) colour", id="yaml-unknown-key"),
    case(["build", "geminon", "--config", "no.yaml"], 2, "--config no.yaml does not exist",
         id="yaml-missing"),
    case(["build", "geminon", "--colour", "red"], 2, "unknown argument(s) ['--colour', 'red']",
         id="unknown-flag"),
    case(["build", "geminon", "--seed", "abc"], 2,
         "argument --seed: invalid int value: 'abc'; see `continuousbench build geminon --help`",
         id="not-an-int"),
    case(["build", "geminon", "--overwrite", "maybe"], 2, "argument --overwrite: Truthy", id="not-a-bool"),
    case(["build", "geminon", "--seed", "-1"], 2, "--seed -1 is out of range", id="build-negative-seed"),
    case(["build", "geminon", "--oversample", "0.5"], 2, "--oversample 0.5 is out of range: it must lie in",
         id="build-oversample-below-1"),
    case(["mauve"], 2, "the following arguments are required: --candidate, --reference, --model",
         id="mauve-required"),
    case(["mauve", "--help"], 0, "[mauve]", id="mauve-help-names-the-extra"),
    case(["--help"], 0, "MAUVE of a corpus against a release corpus (needs the [mauve] extra)",
         id="help-names-the-extra"),
    case(["frobnicate"], 2, "unknown command 'frobnicate'", id="unknown-command"),
    # --- paths: files, read-only, system folders, ~ ---
    case(lambda e: ["build", "geminon", "--out", e.file("afile")], 2, "--out afile is a file, not a folder",
         id="build-out-is-a-file"),
    case(lambda e: ["build", "geminon", "--out", e.file("afile") / "sub"], 2, "--out afile/sub cannot be",
         id="build-out-under-a-file"),
    case(["build", "geminon", "--out", "/proc/self/cb"], 2, "--out /proc/self/cb cannot be written",
         id="build-out-in-proc"),
    case(lambda e: ["build", "geminon", "--out", e.read_only() / "r"], 2, "cannot be written",
         id="build-out-read-only", marks=ROOT_ONLY),
    case(lambda e: ["build", "geminon", "--config", e.file("r.yaml", "out: ~/releases\n")], 0,
         f"user/releases/{RID}", id="build-out-tilde-in-yaml"),
    case(lambda e: ["metric", "install", "--cache_dir", e.file("afile")], 2, "--cache_dir afile is a file",
         id="metric-cache-dir-is-a-file"),
    case(["metric", "install", "--cache_dir", "/proc/cb"], 2, "is a system folder",
         id="metric-cache-dir-in-proc"),
    case(lambda e: ["demo", "--out", e.file("afile")], 2, "--out afile is a file", id="demo-out-is-a-file"),
    case(lambda e: after(e.file("notes.txt"), ["demo", "--out", ".", "--overwrite"]), 2,
         "is not a demo folder", id="demo-overwrite-would-wipe-cwd"),
    case(["demo", "--threads", "0"], 2, "--threads 0 is out of range", id="demo-threads-0"),
    # --- build: existing releases, stale work, generators ---
    case(lambda e: after(e.release(), ["build", "geminon"]), 2, "already exists at", id="build-exists"),
    case(lambda e: after(e.release(), e.file(f"home/{RID}/notes"), ["build", "geminon", "--overwrite"]),
         2, "holds files that are not part of release", id="build-overwrite-keeps-user-files"),
    case(lambda e: e.stale_work(), 0, f"home/{RID}", id="build-past-stale-work-of-other-settings"),
    case(["build", "geminon", "--realizer", "nonsense"], 2, "cannot make a text generator from 'nonsense'",
         id="build-bad-realizer"),
    case(lambda e: ["build", "geminon", "--namer", f"endpoint:http://127.0.0.1:{closed_port()}/v1#m"], 2,
         "does not answer", id="build-dead-endpoint-before-work"),
    # --- verify ---
    case(lambda e: ["verify", e.manifest(lambda m: m.update(seed=9))], 2, "release.json was edited",
         id="verify-edited-seed"),
    case(lambda e: ["verify", e.manifest(lambda m: m.pop("manifest_sha256"))], 2, "has no manifest_sha256",
         id="verify-manifest-without-digest"),
    case(lambda e: ["verify", e.manifest(raw=b"{not json")], 2, "release.json is malformed",
         id="verify-not-json"),
    case(lambda e: ["verify", e.manifest(raw=b"\xff\xfe{}")], 2, "is malformed (UnicodeDecodeError",
         id="verify-not-utf8"),
    case(lambda e: ["verify", e.manifest(raw=b"[1, 2]")], 2, "release.json is malformed",
         id="verify-json-list"),
    case(lambda e: ["verify", e.tamper()], 2, "checksum mismatch for", id="verify-tampered-parquet"),
    case(lambda e: ["verify", e.file("afile")], 2, "afile is a file, not a release", id="verify-a-file"),
    case(["verify", "./nope"], 2, "release folder ./nope does not exist", id="verify-missing-folder"),
    case(["verify", "/proc"], 2, "/proc is not a release folder: it has no release.json", id="verify-proc"),
    case(["verify", "geminon-tiny-2026q9"], 2, "bad release id", id="verify-bad-quarter"),
    case(["verify", RID, RID], 2, "unknown argument(s)", id="verify-two-releases"),
    case(["verify"], 2, "no release given", id="verify-nothing"),
    # --- report ---
    case(lambda e: ["report", e.run(), "--json", "run/results.json", "--overwrite"], 2,
         "--json run/results.json is inside", id="report-json-over-the-runs-results"),
    case(lambda e: ["report", e.run(), "--plot", "run/cmp.png"], 2, "is inside", id="report-plot-into-run"),
    case(lambda e: ["report", e.run(), "--plot", e.file("cmp.png")], 2,
         "--plot cmp.png already exists; pass --overwrite", id="report-plot-exists"),
    case(lambda e: ["report", e.run(), "--plot", e.file("cmp.png"), "--overwrite"], 0, "public EM",
         id="report-plot-overwrite", may_change=("cmp.png",)),
    case(lambda e: ["report", e.run(), "--plot", "x.png", "--json", "x.png"], 2, "are the same file",
         id="report-same-output-twice"),
    case(lambda e: ["report", e.run(), "--json", e.run("other")], 2, "--json other is a folder",
         id="report-json-is-a-folder"),
    case(lambda e: ["report", e.run(), "--json", "/proc/self/rows.json"], 2,
         "--json /proc/self/rows.json cannot be written", id="report-json-in-proc"),
    case(lambda e: ["report", e.run(results=[1, 2])], 2, "is not the results.json of",
         id="report-results-list"),
    case(lambda e: ["report", e.run(results={"release": "x", "metrics": {}})], 2, "a field of the wrong type",
         id="report-results-wrong-shape"),
    case(lambda e: ["report", e.file("run/results.json", "")], 2, "is not valid JSON",
         id="report-results-empty"),
    case(["report", "no-such-run"], 2, "has no results.json", id="report-missing-run"),
    # --- metric ---
    case(["metric", "push"], 2, "repo_id must look like 'owner/name'", id="metric-push-without-repo"),
    # --- mauve: refused before any corpus is read or model loaded ---
    case(lambda e: mauve(e, "--output", e.run("out-folder")), 2, "--output out-folder is a folder",
         id="mauve-output-is-a-folder"),
    case(lambda e: mauve(e, "--output", e.file("m.json")), 2, "--output m.json already exists",
         id="mauve-output-exists"),
    case(lambda e: mauve(e, "--batch_size", "0"), 2, "--batch_size 0 is out of range", id="mauve-batch-0"),
    case(lambda e: mauve(e, "--n_samples", "1"), 2, "--n_samples 1 is out of range", id="mauve-one-sample"),
    case(lambda e: mauve(e, "--seeds", "0", "-1"), 2, "--seeds -1 is out of range", id="mauve-negative-seed"),
    case(lambda e: [*mauve(e)[:-1], "no-model"], 2, "--model no-model is not a folder", id="mauve-no-model"),
    case(lambda e: [*mauve(e)[:2], "no.parquet", *mauve(e)[3:]], 2, "corpus no.parquet does not exist",
         id="mauve-missing-candidate"),
]  # fmt: skip


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and "/proc" not in str(p)
    }


@pytest.fixture
def env(tmp_path, monkeypatch, request):
    import datasets

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CONTINUOUSBENCH_HUB_REPO", raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    yield Env(tmp_path, request)
    for path in tmp_path.rglob("*"):  # let pytest clean up read-only folders
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)


@pytest.mark.parametrize("argv, code, message, may_change", CLI)
def test_cli(argv, code, message, may_change, env, invoke):
    argv = argv(env) if callable(argv) else argv
    before = _snapshot(env.tmp)
    result = invoke([str(a) for a in argv])
    assert result.exit_code == code, result.output
    assert message in result.output, result.output
    assert "Traceback" not in result.output
    if code:  # progress lines may come first; the error is one line, the last
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and result.stderr.strip().splitlines()[-1] == errors[0], result.stderr
    after = _snapshot(env.tmp)
    lost = {name for name, digest in before.items() if after.get(name) != digest} - set(may_change)
    assert not lost, f"changed or removed: {sorted(lost)}"


# --- the Python API ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qa_metric():
    import evaluate

    return evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "qa_match"))


def _score(**kw):
    from continuousbench.scoring import score

    return score(**{"predictions": ["a"], "references": ["a"], **kw})


def _load(*args, **kw):
    from continuousbench.release import load_release

    return load_release(*args, **kw)


def metric(e: Env, **options):
    """The qa_match module loaded from this repository (once per test module unless given options)."""
    if options:
        import evaluate

        return evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "qa_match"), **options)
    return e.request.getfixturevalue("qa_metric")


API = [
    pytest.param(lambda e: _score(predictions=[], references=[]), "predictions is empty", id="score-empty"),
    pytest.param(lambda e: _score(support_counts=[1.7]), "support_counts[0] = 1.7", id="score-support-1.7"),
    pytest.param(lambda e: _score(support_counts=[True]), "support_counts[0] = True", id="score-bool"),
    pytest.param(lambda e: _score(support_counts="5"), "support_counts must be a list", id="score-support-s"),
    pytest.param(lambda e: _score(references=None), "references must be a list", id="score-references-none"),
    pytest.param(lambda e: _score(predictions="a"), "predictions must be a sequence of strings",
                 id="score-predictions-str"),
    pytest.param(lambda e: _score(matchers="contains"), "matchers must be distinct", id="score-matchers-str"),
    pytest.param(lambda e: _score(thresholds=None), "thresholds must be non-negative integers",
                 id="score-thresholds-none"),
    pytest.param(lambda e: _score(thresholds=[True]), "thresholds must be non-negative",
                 id="score-threshold-bool"),
    pytest.param(lambda e: metric(e).compute(predictions=[], references=[]), "predictions is empty",
                 id="metric-empty"),
    pytest.param(lambda e: metric(e).compute(predictions=["a"], references=[["a"]], support_counts=[1.7]),
                 "support_counts[0] = 1.7", id="metric-support-1.7"),
    pytest.param(lambda e: metric(e).compute(predictions=["a"], references=[["a"]], support_counts=[True]),
                 "support_counts[0] = True", id="metric-support-bool"),
    pytest.param(lambda e: metric(e).compute(predictions="abc", references="abc"),
                 "predictions must be a sequence of strings", id="metric-strings-not-lists"),
    pytest.param(lambda e: metric(e).add(prediction=3, reference="3"),
                 "predictions must be a sequence of strings", id="metric-add-a-number"),
    pytest.param(lambda e: metric(e, thresholds=[1.5]), "thresholds must be non-negative integers",
                 id="metric-load-bad-thresholds"),
    pytest.param(lambda e: _load(e.release(), "qa_public", split="test[:x]"), "bad split 'test[:x]'",
                 id="load-bad-slice"),
    pytest.param(lambda e: _load(e.release(), "qa_public", split="train"), "unknown split 'train'",
                 id="load-unknown-split"),
    pytest.param(lambda e: _load(e.release(), None), "unknown release part None", id="load-part-none"),
    pytest.param(lambda e: _load(e.manifest(lambda m: m.update(seed=9)), "qa_public"),
                 "release.json was edited", id="load-edited-manifest"),
    pytest.param(lambda e: _load(Path("/proc")), "no release.json", id="load-proc"),
    pytest.param(lambda e: _load(e.tamper("data/entities/train-00000-of-00001.parquet", b"x"), "entities",
                                 verify=False), "is not a readable parquet file", id="load-unverified-junk"),
    pytest.param(lambda e: __import__("continuousbench.release").release.write_release(
                     RID, _parts(e.release()), root="/proc/self/cb", seed=0, generator={}),
                 "root /proc/self/cb cannot be written", id="write-into-proc"),
    pytest.param(lambda e: __import__("continuousbench.release").release.write_release(
                     RID, _parts(e.release()), root="out", seed="7", generator={}),
                 "seed must be a non-negative integer", id="write-seed-str"),
    pytest.param(lambda e: _load(e.tamper("data/corpus/train-00000-of-00001.parquet"), "qa_public"),
                 "checksum mismatch", id="load-other-part-tampered"),
]  # fmt: skip


@pytest.mark.parametrize("call, message", API)
def test_api(call, message, env):
    with pytest.raises(Exception) as err:  # noqa: PT011 - the type is checked through one_line below
        call(env)
    line = one_line(err.value)
    assert line is not None, f"a bug, not bad input: {err.value!r}"
    assert message in line and "\n" not in line, line


def _parts(release) -> dict:
    from continuousbench.release import CONFIGS, load_release

    return {c: dict(load_release(release, c)) for c in CONFIGS}


# Inputs the library must accept, and what it must return for them.
RETURNS = [
    pytest.param(lambda e: after(e.tampered_copy(), _load(RID, "qa_public", split="test")),
                 lambda rows, e: "TAMPERED" not in rows["answer"], id="load-pristine-after-tampered-copy"),
    pytest.param(lambda e: _load(f"{e.in_user_home()}/{RID}", "qa_public", split="test"),
                 lambda rows, e: rows.num_rows > 0, id="load-tilde-folder"),
    pytest.param(lambda e: _load(RID, "entities", split="train", root=e.in_user_home()),
                 lambda rows, e: rows.num_rows > 0, id="load-tilde-root"),
    pytest.param(lambda e: __import__("continuousbench.release").release.write_release(
                     RID, _parts(e.release()), root="~/copy", seed=0, generator={}),
                 lambda path, e: path == e.tmp / "user" / "copy" / RID, id="write-tilde-root"),
    pytest.param(lambda e: _load(e.release(), "qa_public", split="test[:2]+validation[-1:]"),
                 lambda rows, e: rows.num_rows == 3, id="load-slices"),
    pytest.param(lambda e: _score(support_counts=__import__("numpy").array([3])),
                 lambda out, e: out["by_support"][">=0"]["n"] == 1, id="score-numpy-support"),
]  # fmt: skip


@pytest.mark.parametrize("call, check", RETURNS)
def test_api_returns(call, check, env):
    assert check(call(env), env)
