"""--resume continues a killed DP run exactly (same streams, same epsilon) and refuses any change."""

import json
import re
import shutil

import pytest
import torch
from dp_runs import DP_ARGS

from continuousbench.dp import loop

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_dp_resume")]

REPLAYABLE = [*DP_ARGS, "--insecure_noise_seed", "7", "--eval_steps", "1"]
ADAPTER = "adapter_model.safetensors"


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, train_generator):
    return train_generator(tmp_path_factory.mktemp("resume") / "whole", *REPLAYABLE)


def kill_after_step_3(train_generator, out, args=tuple(REPLAYABLE)):
    """Run until Ctrl-C after step 3: a checkpoint at step 2, a best/ (eval every step) from step 3."""
    real_step = loop.train_step

    def step_then_die(run, micro_batch):
        if run.step == 3:
            raise KeyboardInterrupt
        return real_step(run, micro_batch)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loop, "train_step", step_then_die)
        with pytest.raises(SystemExit) as err:
            train_generator(out, *args)
    assert err.value.code == 130
    return out


@pytest.fixture
def killed(tmp_path, train_generator):
    return kill_after_step_3(train_generator, tmp_path / "killed")


@pytest.fixture(scope="module")
def killed_once(tmp_path_factory, train_generator):
    """A killed run that tests only try to resume with other settings (refused: nothing changes)."""
    return kill_after_step_3(train_generator, tmp_path_factory.mktemp("refused") / "killed")


def run_dir(out):
    return out / ".train-generator-work" / "runs" / "lr-0.001"


def test_the_test_seed_replays_and_says_there_is_no_guarantee(uninterrupted, tmp_path, train_generator):
    again = train_generator(tmp_path / "again", *REPLAYABLE)
    assert (again / ADAPTER).read_bytes() == (uninterrupted / ADAPTER).read_bytes()
    assert json.loads((again / "privacy.json").read_text())["private"] is False
    assert "**No DP guarantee.**" in (again / "README.md").read_text()


def test_resume_after_a_kill_is_the_uninterrupted_run(killed, uninterrupted, train_generator, caplog):
    assert [p.name for p in run_dir(killed).glob("checkpoint-*")] == ["checkpoint-2"]
    checkpoint = run_dir(killed) / "checkpoint-2"  # the secret streams: the owner's alone
    modes = checkpoint.stat().st_mode & 0o777, (checkpoint / loop.STATE).stat().st_mode & 0o777
    assert modes == (0o700, 0o600)
    (run_dir(killed) / "best" / "from-lost-steps").write_text("stale")  # best/ after the last checkpoint
    train_generator(killed, *REPLAYABLE, "--resume", "true")
    assert "resumed from checkpoint-2" in caplog.text
    assert (killed / ADAPTER).read_bytes() == (uninterrupted / ADAPTER).read_bytes()
    whole, resumed = (json.loads((d / "privacy.json").read_text()) for d in (uninterrupted, killed))
    assert resumed["epsilon"] == whole["epsilon"] and resumed["validation"] == whole["validation"]
    assert not (killed / "from-lost-steps").exists() and not (killed / ".train-generator-work").exists()


def test_restore_takes_best_from_the_checkpoint_and_checks_its_plan(killed, dp_model_dir, dp_corpus):
    from continuousbench.dp.plan import make_plan
    from continuousbench.dp.train import load_data, make_parser
    from continuousbench.processes import Processes

    folder = run_dir(killed)
    (folder / "best" / "from-lost-steps").write_text("stale")
    args, model_args, config = make_parser().parse(
        ["--corpus", str(dp_corpus), "--output_dir", str(killed), "--model", str(dp_model_dir), *REPLAYABLE]
    )
    _, train, val = load_data(args)
    plan = make_plan(len(train), config)
    run = loop.build(model_args, config, train, val, plan, Processes(), insecure_seed=7)
    assert loop.restore(run, folder) and run.step == 2
    saved = folder / "checkpoint-2" / "best"
    assert sorted(p.name for p in (folder / "best").iterdir()) == sorted(p.name for p in saved.iterdir())
    state_file = folder / "checkpoint-2" / loop.STATE
    state = torch.load(state_file, weights_only=False)
    state["plan"]["noise_multiplier"] *= 0.5
    torch.save(state, state_file)
    with pytest.raises(ValueError, match=r"another DP plan \(noise_multiplier changed\)") as err:
        loop.restore(loop.build(model_args, config, train, val, plan, Processes(), insecure_seed=7), folder)
    assert "\n" not in str(err.value)


def test_resume_refuses_another_corpus(killed_once, train_generator, dp_corpus, tmp_path, capsys):
    from datasets import load_dataset

    other = tmp_path / "other"
    shutil.copytree(dp_corpus, other)
    rows = list(load_dataset(str(dp_corpus), split="train")["text"])
    rows[0] = rows[0].replace("attack", "defense")
    target = next((other / "data").glob("train-*.parquet"))
    from datasets import Dataset

    Dataset.from_dict({"text": rows}).to_parquet(str(target))
    with pytest.raises(SystemExit) as err:
        train_generator(killed_once, *REPLAYABLE, "--resume", "true", corpus=other)
    assert err.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "corpus_sha256 changed" in line and "--resume with a changed configuration" in line
    assert not re.search(r"[0-9a-f]{16}", line), line  # a digest of the private corpus is never shown


@pytest.mark.parametrize(
    "change",
    [
        ["--epsilon", "100"],
        ["--delta", "1e-4"],
        ["--clip_norm", "1e-2"],
        ["--expected_batch_size", "16"],
        ["--sampling", "truncated_poisson"],
        ["--steps", "6"],
        ["--learning_rate", "1e-2"],
        ["--insecure_noise_seed", "8"],
        ["--secure_noise", "false"],
        ["--lora_r", "8"],
    ],
    ids=" ".join,
)
def test_resume_refuses_any_changed_setting(killed_once, train_generator, capsys, change):
    with pytest.raises(SystemExit) as err:
        train_generator(killed_once, *REPLAYABLE, *change, "--resume", "true")
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert (
        lines[-1].startswith("error: --resume with a changed configuration")
        and change[0].lstrip("-") in lines[-1]
    )
