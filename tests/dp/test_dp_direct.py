"""``evaluate --epsilon``: the evaluator itself trained with DP-SGD, scored by the harness (paper App. E)."""

import json
from pathlib import Path

import dp_accounting as dpa
import pytest
from dp_accounting.pld import PLDAccountant
from dp_runs import walk_for_private_statistics

from continuousbench.dp import loop
from continuousbench.harness import run
from continuousbench.results import schema
from continuousbench.results.labels import epsilon_bucket

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_dp_direct")

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = Path("model") / "adapter_model.safetensors"


def record(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text())


@pytest.mark.slow
def test_a_dp_evaluate_run_is_a_dp_model_scored_like_every_run(dp_model_run):
    out = dp_model_run.path
    r = record(out)
    assert schema.validate(r) == [] and r["schema_version"] == 4
    privacy = r["model_privacy"]
    assert (privacy["kind"], privacy["private"], privacy["unit"], privacy["adjacency"]) == (
        "dp-model",
        True,
        "record",
        "add-or-remove",
    )
    assert r["corpus"]["privacy"] is None  # the real corpus: no DP data anywhere in this run
    # epsilon is dp_accounting's own PLD epsilon for the recorded plan (Poisson: sigma, q, steps) at delta
    accountant = PLDAccountant()
    accountant.compose(
        dpa.SelfComposedDpEvent(
            dpa.PoissonSampledDpEvent(
                privacy["sampling_probability"], dpa.GaussianDpEvent(privacy["noise_multiplier"])
            ),
            privacy["steps"],
        )
    )
    assert privacy["epsilon"] == pytest.approx(accountant.get_epsilon(privacy["delta"]), rel=1e-9)
    assert privacy["epsilon"] == pytest.approx(10, rel=0.01) and privacy["epsilon"] <= 10 * (1 + 1e-4)
    assert privacy["target_epsilon"] == 10 and epsilon_bucket(r) == "10"  # grouped by the request
    n = r["corpus"]["documents"]
    assert privacy["dataset_size"] == privacy["corpus_documents"] == n and privacy["replay_documents"] == 0
    assert privacy["sampling_probability"] == pytest.approx(8 / n) and privacy["steps"] == r["steps"] == 2
    assert r["training_args"]["epsilon"] == 10 and "packing" not in r["training_args"]
    # support-stratified metrics with intervals, selection by validation QA: as for every run
    for part in ("qa_public", "qa_singleton"):
        metrics = r["metrics"][part]
        assert metrics["n"] == 6 and ">=200" in metrics["by_support"] and metrics["buckets"]
        assert all(acc["ci95"] is not None for acc in metrics["metrics"].values())
    assert [h["step"] for h in r["validation_history"]] == [1, 2]
    assert r["selected_checkpoint"]["step"] in r["selected_checkpoint"]["tied_steps"]
    statement = privacy["statement"]
    for needed in (
        "a DP model, not DP data",
        "**Checkpoint selection uses the release's validation QA**",
        "**not protected**",
        "One corpus document",
        "Add-or-remove one document",
        "at most 64 tokens",
        "paper App. E",
        "operating system's entropy",
        "`.evaluate-work/`",
        "1/n^1.1 with n = ",
    ):
        assert needed in statement, needed
    card = (out / "model" / "README.md").read_text()
    assert statement in card and "- dp-model" in card and "a **DP model, not DP data**" in card
    assert (out / ADAPTER).is_file() and (out / ADAPTER).stat().st_mode & 0o044 == 0o044
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [".continuousbench-evaluate.json"]


@pytest.mark.slow
def test_nothing_computed_on_the_documents_without_noise_is_published(dp_model_run, tiny_release):
    from continuousbench.training.data import corpus_fingerprint, load_corpus

    out = dp_model_run.path
    r = record(out)
    assert r["corpus"]["fingerprint"] is None and r["corpus"]["cut"] is None
    stats = [x for x in dp_model_run.private_stats if x != 0.0]  # an empty Poisson batch's 0 says nothing
    fingerprint = corpus_fingerprint(load_corpus(str(tiny_release)))
    secrets = [fingerprint, "train_loss", "training_loss", "batch_sizes"]
    assert not walk_for_private_statistics(out, stats, secrets)
    assert not [p for p in out.rglob("*") if "checkpoint" in p.name or p.name in ("state.pt", "result.json")]


@pytest.mark.slow
def test_the_schema_keeps_a_dp_model_record_apart(dp_model_run):
    r = record(dp_model_run.path)
    with_fingerprint = {**r, "corpus": {**r["corpus"], "fingerprint": "0" * 64}}
    assert schema.validate(with_fingerprint) == [
        "record: corpus.fingerprint is null exactly for a DP model run (model_privacy)"
    ]
    assert schema.validate({**r, "schema_version": 1}) == ["record: model_privacy needs schema_version 2"]
    assert schema.validate({**r, "schema_version": 2}) == [
        "record: model_repo and model_privacy.target_epsilon need schema_version 3"
    ]
    as_data = {**r, "model_privacy": {**r["model_privacy"], "kind": "dp-data"}}
    assert schema.validate(as_data) == ["model_privacy.kind: Input should be 'dp-model'"]


# --- the same mechanism under the public test seed: replayable -------------------------------------

REPLAY = ("--insecure_noise_seed", "5")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, run_argv, tiny_release, tiny_model_dir, dp_evaluate_args):
    out = tmp_path_factory.mktemp("dp-direct") / "whole"
    run.cli(run_argv(tiny_release, tiny_model_dir, out, *dp_evaluate_args, *REPLAY))
    return out


def _same_model(a: Path, b: Path) -> None:
    import torch
    from safetensors.torch import load_file

    x, y = load_file(a / ADAPTER), load_file(b / ADAPTER)
    assert x.keys() == y.keys() and all(torch.allclose(x[k], y[k], rtol=1e-4, atol=1e-6) for k in x)
    assert any(k.endswith("lora_B.weight") and x[k].abs().sum() > 0 for k in x)  # B starts at 0: trained


@pytest.mark.slow
def test_the_test_seed_says_there_is_no_guarantee(uninterrupted):
    privacy = record(uninterrupted)["model_privacy"]
    assert privacy["private"] is False and "**No DP guarantee.**" in privacy["statement"]


@pytest.mark.slow
def test_two_processes_train_the_one_process_model(
    uninterrupted, run_argv, tmp_path, tiny_release, tiny_model_dir, dp_evaluate_args, torchrun_evaluate
):
    """torchrun, two CPU processes: each clips its share of a batch, process 0 adds the noise; one output."""
    out = tmp_path / "two"
    argv = run_argv(tiny_release, tiny_model_dir, out, *dp_evaluate_args, *REPLAY)
    proc = torchrun_evaluate(argv, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count(f"-> {out}") == 1  # one process prints the scores
    _same_model(uninterrupted, out)
    one, two = record(uninterrupted), record(out)
    # the answer's loss is a float32 sum: another thread count may change its last bits
    losses = [{p: m.pop("answer_nll")["mean"] for p, m in r["metrics"].items()} for r in (one, two)]
    assert losses[1] == pytest.approx(losses[0], rel=1e-6)
    assert two["training_args"]["world_size"] == 2 and two["metrics"] == one["metrics"]
    assert two["validation_history"] == one["validation_history"]
    assert two["model_privacy"]["epsilon"] == one["model_privacy"]["epsilon"]
    assert not (out / ".evaluate-work").exists()


def _killed(run_argv, release, model, out, dp_args, *, at_step: int) -> Path:
    """Ctrl-C before step ``at_step + 1``: checkpoints were saved up to ``at_step`` (save_steps 1)."""
    real = loop.train_step

    def step_then_die(dp_run, micro_batch):
        if dp_run.step == at_step:
            raise KeyboardInterrupt
        return real(dp_run, micro_batch)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "train_step", step_then_die)
        with pytest.raises(SystemExit) as err:
            run.cli(run_argv(release, model, out, *dp_args, *REPLAY))
    assert err.value.code == 130
    return out


@pytest.fixture(scope="module")
def killed_once(tmp_path_factory, run_argv, tiny_release, tiny_model_dir, dp_evaluate_args):
    """A killed run that tests only try to resume with other settings (refused: nothing changes)."""
    out = tmp_path_factory.mktemp("dp-killed") / "run"
    return _killed(run_argv, tiny_release, tiny_model_dir, out, dp_evaluate_args, at_step=1)


@pytest.mark.slow
def test_resume_after_a_kill_is_the_uninterrupted_run(
    uninterrupted, run_argv, tmp_path, tiny_release, tiny_model_dir, dp_evaluate_args, caplog
):
    out = _killed(run_argv, tiny_release, tiny_model_dir, tmp_path / "run", dp_evaluate_args, at_step=1)
    assert [p.name for p in (out / ".evaluate-work" / "dp-run").glob("checkpoint-*")] == ["checkpoint-1"]
    run.cli(run_argv(tiny_release, tiny_model_dir, out, *dp_evaluate_args, *REPLAY, "--resume"))
    assert "resumed from checkpoint-1" in caplog.text
    assert (out / ADAPTER).read_bytes() == (uninterrupted / ADAPTER).read_bytes()
    whole, resumed = record(uninterrupted), record(out)
    for key in ("model_privacy", "validation_history", "selected_checkpoint", "metrics"):
        assert resumed[key] == whole[key], key


@pytest.mark.slow
def test_a_run_killed_while_scoring_resumes_without_training_again(
    uninterrupted, run_argv, tmp_path, tiny_release, tiny_model_dir, dp_evaluate_args
):
    """A second DP training would be a second release of the same documents: the finished one is scored."""
    out = tmp_path / "run"
    argv = run_argv(tiny_release, tiny_model_dir, out, *dp_evaluate_args, *REPLAY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run, "score", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
        with pytest.raises(SystemExit):
            run.cli(argv)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "train_dp", lambda *a, **k: pytest.fail("trained again"))
        run.cli([*argv, "--resume"])
    assert (out / ADAPTER).read_bytes() == (uninterrupted / ADAPTER).read_bytes()
    assert record(out)["model_privacy"] == record(uninterrupted)["model_privacy"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "change",
    [
        ["--epsilon", "100"],
        ["--epsilon", "inf"],
        ["--delta", "1e-4"],
        ["--clip_norm", "1e-2"],
        ["--expected_batch_size", "16"],
        ["--sampling", "truncated_poisson"],
        ["--insecure_noise_seed", "8"],
        ["--secure_noise", "false"],
        ["--clipping", "ghost"],
    ],
    ids=" ".join,
)
def test_resume_refuses_a_changed_dp_setting(
    killed_once, run_argv, tiny_release, tiny_model_dir, dp_evaluate_args, capsys, monkeypatch, change
):
    """Refused before the noise is calibrated (18 CPU-s at epsilon 100 with the 1e-3 grid)."""
    from continuousbench.harness import dp_training

    monkeypatch.setattr(dp_training, "make_plan", lambda *a: pytest.fail("calibrated before refusing"))
    argv = run_argv(tiny_release, tiny_model_dir, killed_once, *dp_evaluate_args, *REPLAY, *change)
    argv.append("--resume")
    with pytest.raises(SystemExit) as err:
        run.cli(argv)
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("error: --resume with a changed configuration") and change[0][2:] in lines[-1]


def test_a_resume_whose_plan_fails_pins_nothing(
    run_argv, tiny_release, tiny_model_dir, dp_evaluate_args, tmp_path, capsys
):
    """A run killed before it pinned its configuration, resumed with a DP setting the plan refuses, still
    pins nothing: the corrected command can then resume (the check comes before the plan, the pin after)."""
    from continuousbench.harness import inputs

    out = tmp_path / "run"
    argv = run_argv(tiny_release, tiny_model_dir, out, *dp_evaluate_args, *REPLAY)
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit) as err:
        patch.setattr(inputs, "load_inputs", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
        run.cli(argv)
    assert err.value.code == 130 and (out / ".evaluate-work").is_dir()
    with pytest.raises(SystemExit) as err:
        run.cli([*argv, "--resume", "--expected_batch_size", "auto"])  # auto needs truncated Poisson sampling
    assert err.value.code == 2 and "--expected_batch_size auto" in capsys.readouterr().err
    assert not (out / ".evaluate-work" / "run-config.json").exists()


DIRECT_RECIPES = sorted((ROOT / "recipes" / "configs").glob("dp-direct-*.yaml"))
TABLE_32 = {("geminon", "1b"): 5e-4, ("geminon", "4b"): 2e-4, ("news", "1b"): 1e-4, ("news", "4b"): 1e-4}


@pytest.mark.parametrize("recipe", DIRECT_RECIPES, ids=lambda p: p.stem)
def test_paper_recipes_are_the_dp_generators_settings(recipe):
    """App. I.2: direct DP evaluators share the DP generators' configuration (Tables 29, 31, 32)."""
    harness, model, t = run.make_parser().parse(["--config", str(recipe), "--output_dir", "/tmp/cb-unused"])
    track, size = recipe.stem.split("-")[2:]
    assert t.private and t.epsilon == 10 and t.max_steps == 3000 and t.clip_norm == 1e-3
    assert (t.sampling, t.truncation_analysis, t.physical_batch_size) == ("truncated_poisson", "pld", 512)
    assert (t.expected_batch_size, t.clipping, t.eval_steps) == ("auto", "ghost", 250)
    assert (model.model, model.tuning, model.lora_r) == (f"google/gemma-3-{size}-pt", "lora", 128)
    assert harness.track == track and t.learning_rate == TABLE_32[track, size]
    assert t.max_length == (256 if track == "geminon" else 1024)


def test_all_four_paper_recipes_and_the_tiny_one_exist():
    assert {p.stem for p in DIRECT_RECIPES} == {f"dp-direct-{k[0]}-{k[1]}" for k in TABLE_32}
    _, model, t = run.make_parser().parse(
        ["--config", str(ROOT / "recipes/configs/geminon-tiny-demo-dp-direct.yaml"), "--output_dir", "/tmp/x"]
    )
    assert t.private and t.epsilon == 10 and t.sampling == "poisson" and model.tuning == "lora"
