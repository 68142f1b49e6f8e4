"""DP prompt tuning: each record's soft-prompt gradient is clipped, the noise is there, and only the
soft prompt trains."""

import copy
import json

import pytest
import torch
from dp_runs import PROMPT_ARGS, noiseless

from continuousbench.dp import dpsgd
from continuousbench.training.adapters import PromptSpec, look_up_per_record, soft_prompt

# one worker runs this file's module fixtures once (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("test_prompt_tuning")

TEXTS = [f"Geminon {i} has attack {i} and lives in zone {i % 5}." + " zone" * (i % 4) for i in range(6)]


def _prompt_model(model_dir, tokens: int = 4):
    from continuousbench.training.modeling import load_model_and_tokenizer

    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer(
        str(model_dir), tuning="prompt", prompt=PromptSpec(tokens, "random_uniform", 0.5), dtype="float32"
    )
    return model, tok


def _per_record_grads(model, rows, pad_id, clip_norm):
    """Each record's gradient of (mean token loss / C), by PEFT's own loss (labels shifted past the
    virtual tokens), one backward per record: independent of the code under test. The first token
    (BOS) is not a target, as in DP training: PEFT would otherwise score it after the last virtual one."""
    grads = []
    for row in rows:
        ids, mask, labels = dpsgd.pad_batch([row], pad_id, "cpu")
        labels[:, 0] = -100
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss / clip_norm
        grads.append(torch.autograd.grad(loss, [soft_prompt(model)])[0].reshape(-1))
    return torch.stack(grads)


def test_prompt_tuning_trains_only_the_soft_prompt_initialised_in_range(dp_model_dir):
    model, _ = _prompt_model(dp_model_dir)
    params = dpsgd.check_trainable(model)
    assert len(params) == 1 and params[0] is soft_prompt(model) and params[0].shape[0] == 4
    assert params[0].abs().max() <= 0.5 and params[0].std() > 0.1  # uniform in [-0.5, 0.5], not N(0, 1)


@pytest.mark.parametrize("clipping", dpsgd.CLIPPINGS)
@pytest.mark.parametrize("micro_batch", [6, 4])
def test_the_prompt_step_sums_per_record_gradients_clipped_to_c(dp_model_dir, clipping, micro_batch):
    """Fails with PEFT's own lookup (one lookup repeated over the batch): the hook would clip the
    batch's summed gradient as if it were one record's."""
    model, tok = _prompt_model(dp_model_dir)
    rows = dpsgd.encode_records(tok, TEXTS, 64)
    reference = copy.deepcopy(model)
    clip = float(_per_record_grads(reference, rows, tok.pad_token_id, 1.0).norm(dim=1).median())
    per_record = _per_record_grads(reference, rows, tok.pad_token_id, clip)
    factors = per_record.norm(dim=1).clamp(min=1.0)
    assert (per_record.norm(dim=1) > 1).any() and (per_record.norm(dim=1) < 1).any()
    expected = (per_record / factors[:, None]).sum(0)

    look_up_per_record(model)
    params = dpsgd.check_trainable(model)
    before = params[0].detach().clone().reshape(-1)
    comps = noiseless(model, params, 3, clipping=clipping)
    dpsgd.dp_step(comps, rows, clip_norm=clip, micro_batch=micro_batch, pad_id=tok.pad_token_id)
    update = params[0].detach().reshape(-1) - before
    assert torch.allclose(-update * 3, expected, rtol=1e-3, atol=1e-5)


def test_the_prompt_step_adds_noise_of_std_sigma(dp_model_dir):
    """The update minus the noiseless one is N(0, (sigma / B)^2) per value: fails with the noise removed."""
    model, tok = _prompt_model(dp_model_dir, tokens=16)
    look_up_per_record(model)
    rows = dpsgd.encode_records(tok, TEXTS, 64)
    params = dpsgd.check_trainable(model)
    start = params[0].detach().clone()

    def update(sigma: float) -> torch.Tensor:
        with torch.no_grad():
            params[0].copy_(start)
        comps = dpsgd.make_private(
            model,
            torch.optim.SGD(params, lr=1.0),
            noise_multiplier=sigma,
            expected_batch_size=4,
            generator=torch.Generator().manual_seed(3),
        )
        dpsgd.dp_step(comps, rows, clip_norm=1e-3, micro_batch=6, pad_id=tok.pad_token_id)
        comps.module.to_standard_module()
        return (params[0].detach() - start).reshape(-1)

    noise = update(2.0) - update(0.0)
    assert noise.numel() == 16 * 64
    assert noise.std().item() == pytest.approx(2.0 / 4, rel=0.1) and abs(noise.mean().item()) < 0.05


@pytest.fixture(scope="module")
def prompt_generator(tmp_path_factory, train_generator):
    return train_generator(tmp_path_factory.mktemp("prompt") / "gen", *PROMPT_ARGS)


@pytest.mark.slow
def test_a_dp_prompt_run_meets_its_epsilon_and_says_what_it_trained(prompt_generator):
    import dp_accounting as dpa
    from safetensors.torch import load_file

    privacy = json.loads((prompt_generator / "privacy.json").read_text())
    assert privacy["private"] and privacy["tuning"] == "prompt"
    assert privacy["epsilon"] == pytest.approx(10, rel=0.01)  # the target, as calibrated
    gaussian = dpa.GaussianDpEvent(privacy["noise_multiplier"])
    event = dpa.PoissonSampledDpEvent(privacy["sampling_probability"], gaussian)
    pld = dpa.pld.PLDAccountant().compose(event, privacy["steps"])
    assert pld.get_epsilon(privacy["delta"]) == pytest.approx(privacy["epsilon"], rel=1e-3)
    assert "soft prompt of 4 virtual tokens" in privacy["trained"] and "[-0.01, 0.01]" in privacy["trained"]
    card = (prompt_generator / "README.md").read_text()
    assert f"DP-SGD trained {privacy['trained']}, which is released" in card and "prompt-tuning" in card
    saved = load_file(prompt_generator / "adapter_model.safetensors")
    assert list(saved) == ["prompt_embeddings"] and saved["prompt_embeddings"].shape[0] == 4
    assert json.loads((prompt_generator / "adapter_config.json").read_text())["peft_type"] == "PROMPT_TUNING"


@pytest.mark.slow
def test_a_prompt_tuned_generator_samples_locally_through_its_soft_prompt(prompt_generator, dp_model_dir):
    from continuousbench.dp.synthesize import load_generator, start_prompt
    from continuousbench.llm.local import generate_batched
    from continuousbench.loader import load_model

    model, tok = load_generator(str(prompt_generator))
    assert model.active_peft_config.is_prompt_learning  # not merged: PEFT prepends the prompt
    base, _, _ = load_model(str(dp_model_dir))
    sample = dict(max_new_tokens=8, batch_size=4, do_sample=True, seed=1)  # noqa: C408
    with_prompt = generate_batched(model, tok, [start_prompt(tok)] * 4, **sample)
    without = generate_batched(base, tok, [start_prompt(tok)] * 4, **sample)
    assert len(with_prompt) == 4 and with_prompt != without  # the same seed: only the prompt differs


@pytest.mark.slow
def test_a_server_backend_refuses_a_prompt_tuned_generator_in_one_line(prompt_generator, tmp_path, invoke):
    url = "completions:http://127.0.0.1:9/v1#gen"
    args = ["synthesize", "--generator", prompt_generator, "--backend", url, "--output_dir", tmp_path / "s"]
    result = invoke(args)
    assert result.exit_code == 2 and "prompt-tuned" in result.stderr and "--backend local" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "s").exists()


# A run whose noise and batches replay (test seed), evaluated every step: the two tests below compare to it.
REPLAYABLE = [*PROMPT_ARGS, "--insecure_noise_seed", "7", "--eval_steps", "1"]


@pytest.fixture(scope="module")
def replayable_prompt_run(tmp_path_factory, train_generator):
    return train_generator(tmp_path_factory.mktemp("replay") / "whole", *REPLAYABLE)


@pytest.mark.slow
def test_two_processes_train_the_same_soft_prompt_as_one(
    tmp_path, dp_corpus, dp_model_dir, replayable_prompt_run
):
    """Each process clips its share of the batch, process 0 adds the one noise draw (test seed)."""
    from safetensors.torch import load_file
    from test_processes import torchrun

    torchrun(dp_corpus, dp_model_dir, tmp_path / "two", *REPLAYABLE)
    runs = (replayable_prompt_run, tmp_path / "two")
    a, b = (load_file(d / "adapter_model.safetensors")["prompt_embeddings"] for d in runs)
    start = PromptSpec(4).init_range
    assert torch.allclose(a, b, rtol=1e-4, atol=1e-6) and a.abs().max() > start  # trained, and alike


@pytest.mark.slow
def test_a_killed_prompt_run_resumes_to_the_uninterrupted_soft_prompt(
    tmp_path, train_generator, replayable_prompt_run, caplog
):
    """The soft prompt, its optimizer state and the secret streams come back from the checkpoint."""
    import logging

    from test_dp_resume import kill_after_step_3

    whole = replayable_prompt_run
    kill_after_step_3(train_generator, tmp_path / "killed", REPLAYABLE)
    caplog.set_level(logging.INFO)
    resumed = train_generator(tmp_path / "killed", *REPLAYABLE, "--resume", "true")
    assert "resumed from checkpoint-2" in caplog.text
    adapter = "adapter_model.safetensors"
    assert (resumed / adapter).read_bytes() == (whole / adapter).read_bytes()
