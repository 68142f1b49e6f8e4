"""The one model loader: every kind of "a model" a user names, one dtype for an adapter and its base, the
commands that score a model loading the same run the same way, and no second loader anywhere."""

import ast
import shutil
from pathlib import Path

import pytest

from continuousbench import loader
from continuousbench.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def test_one_loader_for_runs_adapters_and_model_folders(finished_run, tmp_path, tiny_model_dir):
    """An evaluate run is read through its model/, an adapter is merged into its base (the same logits as
    peft's own adapter model), a plain folder is loaded as it is."""
    import torch
    from peft import AutoPeftModelForCausalLM

    model, tokenizer, record = loader.load_model(str(finished_run), dtype="float32")
    assert record == {"given": str(finished_run), "kind": "evaluate run", "dtype": "float32"}
    assert not any("lora" in name for name, _ in model.named_parameters()) and not model.training
    adapter = finished_run / "model"
    assert loader.load_model(str(adapter), dtype="float32")[2]["kind"] == "adapter"
    ids = torch.tensor([tokenizer("Stalet is the Mouse Geminon.")["input_ids"]])
    peft_model = AutoPeftModelForCausalLM.from_pretrained(str(adapter), dtype=torch.float32).eval()
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, peft_model(ids).logits, atol=1e-5)
    assert loader.load_model(str(tiny_model_dir))[2]["kind"] == "model"
    light = tmp_path / "light"
    shutil.copytree(finished_run, light, ignore=shutil.ignore_patterns("model", "checkpoint-*"))
    with pytest.raises(UserError, match="evaluate run without a trained model"):
        loader.load_model(str(light))


def test_an_unmerged_adapter_is_in_its_bases_dtype(finished_run):
    """peft keeps a bf16 base's adapter in float32 unless told otherwise: the audit (unmerged) would then
    score a model and its base at different precisions. Failed with peft's AutoPeftModel loading."""
    import torch

    model, _, record = loader.load_model(str(finished_run / "model"), dtype="bfloat16", merge=False)
    dtypes = {p.dtype for p in model.parameters()}
    assert dtypes == {torch.bfloat16} and record["dtype"] == "bfloat16"
    assert any("lora" in name for name, _ in model.named_parameters())  # not merged


class Loaded(Exception):
    """Raised by the spy once a command has loaded its model: nothing after loading is under test."""


def test_contamination_gate_and_memorization_load_one_run_alike(
    invoke, monkeypatch, tmp_path, finished_run, tiny_release
):
    """The three commands that score "a model" take the same evaluate run folder and load it in the same
    dtype on the same device (the gate once loaded adapters in peft's default dtype, and refused a run)."""
    seen = []

    def spy(source, option="--model", **kw):
        model, tokenizer, record = real(source, option, **kw)
        seen.append((Path(source), {p.dtype for p in model.parameters()}, str(model.device), record["kind"]))
        raise Loaded

    real = loader.load_model
    monkeypatch.setattr(loader, "load_model", spy)
    commands = (
        ["contamination", "--model", finished_run, "--release", tiny_release],
        ["gate", "--release", tiny_release, "--models", finished_run, "--gates", "unsolvable"],
        ["memorization", "--model", finished_run, "--release", tiny_release, "--output", tmp_path / "m.json"],
    )
    for argv in commands:
        with pytest.raises(Loaded):
            invoke(argv)
    assert len(seen) == 3 and len({(s, frozenset(d), dev, kind) for s, d, dev, kind in seen}) == 1, seen
    assert seen[0][3] == "evaluate run" and len(seen[0][1]) == 1


def _from_pretrained_calls(path: Path) -> list[tuple[str, int]]:
    """(the receiver's name, line) of every ``X.from_pretrained(...)`` call in ``path``."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "from_pretrained":
            value = node.func.value
            calls.append((getattr(value, "id", None) or ast.unparse(value), node.lineno))
    return calls


# Calls of from_pretrained that load no causal LM: the MAUVE/FID encoder (hidden states, no LM head).
NOT_CAUSAL = {("continuousbench/embeddings/encoders.py", "AutoModel")}


def test_one_from_pretrained_of_a_causal_lm_outside_tests_in_the_loader():
    """Every model or tokenizer loading outside tests is the loader's; one call loads a causal LM."""
    found = {}
    for folder in ("continuousbench", "builders", "recipes", "benchmarks", "leaderboard"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name, line in _from_pretrained_calls(path):
                found[(str(path.relative_to(ROOT)), name, line)] = None
    outside = [f for f in found if f[0] != "continuousbench/loader.py" and f[:2] not in NOT_CAUSAL]
    assert not outside, f"load models through continuousbench.loader, not: {outside}"
    causal = [f for f in found if f[0] == "continuousbench/loader.py" and "CausalLM" in f[1]]
    assert len(causal) == 1, causal


def test_the_scan_sees_a_second_loader(tmp_path):
    (tmp_path / "m.py").write_text("from transformers import AutoModelForCausalLM as A\nA.from_pretrained(1)")
    assert _from_pretrained_calls(tmp_path / "m.py") == [("A", 2)]


def test_one_device_rule(monkeypatch):
    import torch

    from continuousbench import processes

    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert (processes.device(), processes.device(cpu=True)) == ("cuda:1", "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert processes.device() == "cpu"
