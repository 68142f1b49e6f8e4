"""End-to-end harness runs on the tiny release: every output, both architectures, both tunings."""

import hashlib
import json

import pandas as pd
import pytest
from transformers import TrainerCallback

from continuousbench.harness import qa_eval, run
from continuousbench.harness.outputs import MODEL_DIR, PLOT, PREDICTIONS, RESULTS
from continuousbench.results.record import SELECTION_RULE
from continuousbench.results.schema import validate


def check_outputs(out, tuning: str, steps: int):
    results = json.loads((out / RESULTS).read_text())
    assert validate(results) == []
    assert (
        results["release"]["id"] == "geminon-tiny-2026q1" and len(results["release"]["manifest_sha256"]) == 64
    )
    assert results["tuning"] == tuning and results["steps"] == steps and results["seed"] == 0
    assert len(results["corpus"]["fingerprint"]) == 64 and results["corpus"]["documents"] > 0
    assert results["training_args"]["adam_beta2"] == 0.995 and results["package_version"]
    for part in ("qa_public", "qa_singleton"):
        metrics = results["metrics"][part]
        assert metrics["n"] == 6 and set(metrics["metrics"]) == {"exact_match", "contains", "mcq", "mcq_acc"}
        assert ">=200" in metrics["by_support"] and metrics["buckets"]
    table = pd.read_parquet(out / PREDICTIONS)
    assert len(table) == 12 and set(table["part"]) == {"qa_public", "qa_singleton"}
    assert {
        "split",
        "id",
        "question",
        "answer",
        "prediction",
        "exact_match",
        "contains",
        "support_count",
        "mcq",
        "answer_nll",
    } <= set(table.columns)
    assert (out / PLOT).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return results, table


@pytest.mark.slow
@pytest.mark.parametrize(
    ("arch", "tuning"), [("llama", "lora"), ("llama", "full"), ("gemma3", "lora"), ("gemma3", "full")]
)
def test_end_to_end(run_argv, tmp_path, tiny_release, tiny_model_dir, tiny_gemma_dir, arch, tuning):
    model = tiny_model_dir if arch == "llama" else tiny_gemma_dir
    out = tmp_path / f"{arch}-{tuning}"
    results = run.cli(run_argv(tiny_release, model, out, tuning=tuning))
    written, _ = check_outputs(out, tuning, steps=2)
    assert written == json.loads(json.dumps(results))
    assert results["selected_checkpoint"]["name"] in {"checkpoint-1", "checkpoint-2"}
    assert [h["step"] for h in results["validation_history"]] == [1, 2]
    weights = "adapter_model.safetensors" if tuning == "lora" else "model.safetensors"
    assert (out / MODEL_DIR / weights).is_file() and (out / MODEL_DIR / "tokenizer.json").is_file()
    card = (out / MODEL_DIR / "README.md").read_text()
    assert "model-index" in card and "question-answering" in card and "exact_match" in card


@pytest.mark.slow  # ~3 s: CI only, not the fast lane
def test_finished_run_refuses_to_restart(run_argv, finished_run, tiny_release, tiny_model_dir, capsys):
    with pytest.raises(SystemExit) as info:
        run.cli(run_argv(tiny_release, tiny_model_dir, finished_run))
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--overwrite" in err and len(err.splitlines()) == 1


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_no_training_baseline_scores_the_base_model(run_argv, tmp_path, tiny_release, tiny_model_dir):
    out = tmp_path / "baseline"
    results = run.cli(run_argv(tiny_release, tiny_model_dir, out, steps=0))
    check_outputs(out, "lora", steps=0)
    assert results["selected_checkpoint"]["name"] == "base" and not (out / MODEL_DIR).exists()
    assert not list(out.glob("checkpoint-*"))


@pytest.mark.slow  # ~4 s: CI only, not the fast lane
def test_same_seed_same_bytes(run_argv, tmp_path, tiny_release, tiny_model_dir):
    for name in ("a", "b"):
        run.cli(run_argv(tiny_release, tiny_model_dir, tmp_path / name, steps=1))
    for file in (RESULTS, PREDICTIONS, PLOT):
        a, b = (tmp_path / "a" / file).read_bytes(), (tmp_path / "b" / file).read_bytes()
        assert a.replace(b"/a", b"/b") == b if file == RESULTS else a == b


@pytest.mark.slow
def test_selection_keeps_the_best_validation_checkpoint(
    run_argv, tmp_path, tiny_release, tiny_model_dir, monkeypatch
):
    """Scripted validation scores 0.1, 0.5, 0.3: checkpoint-2 is selected and the test metrics are its own."""
    import torch
    from peft import PeftModel

    from continuousbench.harness.qa_eval import evaluate_qa
    from continuousbench.training.modeling import load_model_and_tokenizer

    scores = iter([0.1, 0.5, 0.3])
    scripted = lambda *a, **k: lambda model: {"qa_contains": next(scores)}  # noqa: E731
    monkeypatch.setattr(qa_eval, "selection_eval", scripted)
    out = tmp_path / "selection"
    results = run.cli(run_argv(tiny_release, tiny_model_dir, out, "--save_total_limit", "5", steps=3))
    assert results["selected_checkpoint"] == {
        "name": "checkpoint-2",
        "step": 2,
        "validation_contains": 0.5,
        "rule": SELECTION_RULE,
        "tied_steps": [2],
    }
    assert [h["contains"] for h in results["validation_history"]] == [0.1, 0.5, 0.3]

    def adapter(folder):
        base, tokenizer = load_model_and_tokenizer(str(tiny_model_dir), tuning="full")
        return PeftModel.from_pretrained(base, str(folder)), tokenizer

    def lora_weights(model):
        return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_B" in n}

    selected, _ = adapter(out / MODEL_DIR)
    best, tokenizer = adapter(out / "checkpoint-2")
    last, _ = adapter(out / "checkpoint-3")
    w_sel, w_best, w_last = lora_weights(selected), lora_weights(best), lora_weights(last)
    assert all(torch.equal(w_sel[n], w_best[n]) for n in w_sel)
    assert any(not torch.equal(w_sel[n], w_last[n]) for n in w_sel)
    table = pd.read_parquet(out / PREDICTIONS).query("part == 'qa_public'")
    from datasets import load_dataset

    qa = load_dataset(str(tiny_release), "qa_public", split="test").filter(
        lambda r: r["id"] in set(table["id"])
    )
    _, predictions = evaluate_qa(best, tokenizer, qa, max_new_tokens=8)
    assert predictions == table.set_index("id").loc[qa["id"], "prediction"].tolist()


@pytest.mark.slow
def test_a_validation_tie_is_recorded_and_the_earliest_step_kept(
    run_argv, tmp_path, tiny_release, tiny_model_dir, monkeypatch, caplog
):
    scores = iter([0.25, 0.5, 0.5])
    scripted = lambda *a, **k: lambda model: {"qa_contains": next(scores)}  # noqa: E731
    monkeypatch.setattr(qa_eval, "selection_eval", scripted)
    out = tmp_path / "tie"
    results = run.cli(run_argv(tiny_release, tiny_model_dir, out, "--save_total_limit", "5", steps=3))
    assert results["selected_checkpoint"] == {
        "name": "checkpoint-2",
        "step": 2,
        "validation_contains": 0.5,
        "rule": SELECTION_RULE,
        "tied_steps": [2, 3],
    }
    assert "validation tie: steps [2, 3]" in caplog.text


class Crash(TrainerCallback):
    """Kill the run right after checkpoint ``at`` is saved."""

    def __init__(self, at: int):
        self.at = at

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == self.at:
            raise KeyboardInterrupt(f"killed after step {self.at}")


class StartStep(TrainerCallback):
    def __init__(self):
        self.step = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.step = state.global_step


@pytest.mark.slow
def test_killed_run_resumes_from_its_last_checkpoint(run_argv, tmp_path, tiny_release, tiny_model_dir):
    out = tmp_path / "resume"
    argv = run_argv(tiny_release, tiny_model_dir, out, steps=4)
    parse = run.make_parser().parse
    h, m, t = parse(argv)
    with pytest.raises(KeyboardInterrupt):
        run.main(h, m, t, callbacks=[Crash(at=2)])
    assert not (out / RESULTS).exists() and (out / ".evaluate-work" / "checkpoint-2").is_dir()
    h, m, t = parse(argv)
    with pytest.raises(FileExistsError, match="--resume"):
        run.main(h, m, t)
    start = StartStep()
    h, m, t = parse([*argv, "--resume"])
    results = run.main(h, m, t, callbacks=[start])
    assert start.step == 2
    assert [e["step"] for e in results["validation_history"]] == [1, 2, 3, 4]
    assert (out / "checkpoint-4").is_dir() and (out / RESULTS).is_file()


@pytest.mark.slow
def test_push_to_hub_uploads_the_selected_model_and_never_the_token(
    run_argv, tmp_path, tiny_release, tiny_model_dir, monkeypatch, capsys, caplog
):
    from pathlib import Path
    from types import SimpleNamespace

    from fake_hub import patch_hub

    secret = "hf_secretTOKEN1234567890"
    monkeypatch.setenv("HF_TOKEN", secret)
    calls = []

    def note(name, self, args, kwargs):  # HfApi's own signatures: a wrong keyword fails here
        if name == "create_repo":
            calls.append(("create", args[0], kwargs))
        else:
            files = sorted(p.name for p in Path(kwargs["folder_path"]).iterdir())
            calls.append(("upload", kwargs["repo_id"], files))

    commit = SimpleNamespace(commit_url="https://huggingface.co/me/tiny-eval/commit/abc")
    patch_hub(monkeypatch, {"create_repo": None, "upload_folder": commit}, note)
    out = tmp_path / "push"
    results = run.cli(
        run_argv(
            tiny_release, tiny_model_dir, out, "--push_to_hub", "--hub_model_id", "me/tiny-eval", steps=1
        )
    )
    assert calls[0][:2] == ("create", "me/tiny-eval") and calls[1][:2] == ("upload", "me/tiny-eval")
    assert {"README.md", "adapter_model.safetensors", "adapter_config.json"} <= set(calls[1][2])
    assert results["hub_commit"].endswith("/commit/abc") and results["model_repo"] == "me/tiny-eval"
    captured = capsys.readouterr()
    for text in (
        captured.out,
        captured.err,
        caplog.text,
        *(p.read_text(errors="ignore") for p in out.rglob("*.json")),
    ):
        assert secret not in text


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_judge_adds_llm_match(run_argv, tmp_path, tiny_release, tiny_model_dir, monkeypatch):
    """An always-"1" judge passes only with the override, which results.json and the card carry."""
    from continuousbench import llm
    from continuousbench.harness.card import model_card

    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "home"))  # the judge's answer cache
    monkeypatch.setitem(llm.OFFLINE, "always-match", lambda prompt, **kw: "1")
    out = tmp_path / "judged"
    argv = run_argv(
        tiny_release,
        tiny_model_dir,
        out,
        "--judge",
        "offline:always-match",
        "--judge_override_calibration",
        steps=0,
    )
    results = run.cli(argv)
    metrics = results["metrics"]["qa_public"]["metrics"]
    assert set(metrics) == {"exact_match", "contains", "llm_match", "mcq", "mcq_acc"}
    assert "llm_match" in pd.read_parquet(out / PREDICTIONS).columns
    calibration = results["judge"]["calibration"]
    assert calibration["override"] and not calibration["passed"] and calibration["accuracy"] == 0.5
    assert "failed calibration and was used anyway" in model_card(results, "judged").content


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_judge_endpoint_is_asked_before_training_then_judges(
    run_argv, tmp_path, tiny_release, tiny_model_dir, monkeypatch, fake_openai_server, capsys
):
    """... through a server that takes its key in the URL: the key reaches it, and no file or line."""
    import fake_judges

    from continuousbench.harness.card import model_card
    from continuousbench.scoring.judge import PROMPT_VERSION, calibration_cases

    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(tmp_path / "home"))  # the judge's answer cache
    server = fake_openai_server(reply=fake_judges.served(fake_judges.rule_following), query_key="k3y-judge")
    out = tmp_path / "judged"
    judge = f"endpoint:{server.url}?key=k3y-judge#fake"
    results = run.cli(run_argv(tiny_release, tiny_model_dir, out, "--judge", judge, steps=0))
    asked = [r["messages"][0]["content"] for r in server.requests if "messages" in r]
    assert "RESPONSE: Blue" in asked[0]  # the canned pair came first, before any model answered
    calibration = {fake_judges.fields(p) for p in asked[1 : 1 + len(calibration_cases())]}
    assert calibration == set(fake_judges.CASES)  # then the calibration set, before any model answered
    assert "llm_match" in results["metrics"]["qa_public"]["metrics"]
    record = results["judge"]
    assert (record["kind"], record["model"], record["prompt_version"]) == ("endpoint", "fake", PROMPT_VERSION)
    assert record["endpoint"] == f"{server.url}?key=REDACTED" and results["harness_args"]["judge"] == (
        f"endpoint:{server.url}?key=REDACTED#fake"
    )
    assert record["server"] == {"served": ["fake"], "answered_by": "fake"}
    assert all(path.endswith("?key=k3y-judge") for path in server.paths)
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and b"k3y-judge" in p.read_bytes()]
    assert not leaked and "k3y-judge" not in "".join(capsys.readouterr())
    assert record["calibration"]["passed"] and record["calibration"]["accuracy"] == 37 / 40
    n = results["metrics"]["qa_public"]["n"]
    decided = record["decided"]["qa_public"]
    assert sum(decided.values()) == n
    judged = len(asked) - 1 - len(calibration_cases())
    assert judged == sum(d["judge"] for d in record["decided"].values()), "code-decided cases were asked"
    assert set(record["agreement"]["qa_public"]) == {"vs_exact_match", "vs_contains", "both_wrong"}
    card = model_card(results, "judged").content
    judged_by = "LLM match judged by fake (endpoint, prompt v2, calibration 92%): calibration accuracy 92.50%"
    assert judged_by in card


def test_results_record_absolute_paths_and_the_capped_generation_budget(
    run_argv, tmp_path, tiny_release, tiny_model_dir, monkeypatch, caplog
):
    """Relative paths from another directory; 256 new tokens do not fit a 310-position model."""
    import os
    import shutil
    from pathlib import Path

    short = Path(shutil.copytree(tiny_model_dir, tmp_path / "short"))
    config = json.loads((short / "config.json").read_text())
    (short / "config.json").write_text(json.dumps(config | {"max_position_embeddings": 310}))
    monkeypatch.chdir(tmp_path)
    release, model = os.path.relpath(tiny_release), os.path.relpath(short)
    recipe = Path("recipe.yaml")
    recipe.write_text("seed: 0\n")
    argv = ["--config", str(recipe), *run_argv(release, model, "run", "--max_new_tokens", "256", steps=0)]
    results = run.cli(argv)
    assert results["release"]["given"] == release
    for record in (results["release"], results["model"], results["corpus"], results["recipe"]):
        assert Path(record["path"]).is_absolute() and Path(record["path"]).exists()
    assert results["model"]["path"] == str(short.resolve()) and results["model"]["given"] == model
    digest = hashlib.sha256(recipe.read_bytes()).hexdigest()
    given = {k: results["recipe"][k] for k in ("given", "path", "file_sha256")}
    assert given == {"given": "recipe.yaml", "path": str(tmp_path / "recipe.yaml"), "file_sha256": digest}
    why = results["recipe"]["why_not_canonical"]
    assert why == "recipe.yaml is not one of the canonical recipes (recipes/configs)"
    generation = results["generation"]
    assert generation["max_new_tokens"] == 256 and generation["model_context"] == 310
    assert generation["effective_max_new_tokens"] == 310 - generation["longest_prompt_tokens"] > 0
    assert "capped to" in caplog.text


@pytest.mark.slow  # ~2 s: CI only, not the fast lane
def test_a_huge_single_line_document_is_cut_and_recorded(
    run_argv, tmp_path, tiny_release, tiny_model_dir, caplog
):
    from datasets import Dataset

    texts = load_corpus_texts(tiny_release)[:200]
    huge = " ".join(texts) * 4  # one line of ~200k characters
    Dataset.from_dict({"text": [*texts, huge.replace("\n", " ")]}).to_parquet(str(tmp_path / "c.parquet"))
    argv = run_argv(
        tiny_release,
        tiny_model_dir,
        tmp_path / "run",
        "--corpus",
        str(tmp_path / "c.parquet"),
        "--max_document_blocks",
        "4",
        steps=1,
    )
    cut = run.cli(argv)["corpus"]["cut"]
    limit = 4 * 64 * 4  # blocks x max_length x 4 characters a token
    assert cut["max_document_characters"] == limit and cut["documents_cut"] >= 1
    assert cut["characters_dropped"] >= len(huge) - limit and "--max_document_blocks" in caplog.text


def load_corpus_texts(release) -> list[str]:
    from datasets import load_dataset

    return load_dataset(str(release), "corpus", split="train")["text"]
