import copy

import numpy as np
import pytest
import torch
from dp_runs import noiseless

from continuousbench.dp import dpsgd
from continuousbench.dp.randomness import SecretStreams
from continuousbench.dp.sampling import PoissonBatchSampler, SamplingPlan, check_sampler


def _lora_model(model_dir):
    from continuousbench.training.modeling import load_model_and_tokenizer

    model, tok = load_model_and_tokenizer(str(model_dir), lora_rank=4, dtype="float32")
    torch.manual_seed(1)
    with torch.no_grad():  # peft initialises lora_B at 0; random values make every gradient non-trivial
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05)
    return model, tok


def _per_example_grads(model, rows, pad_id, clip_norm):
    """Independent per-example gradients of (mean token loss / C), one backward per example."""
    params = [p for p in model.parameters() if p.requires_grad]
    ce = torch.nn.CrossEntropyLoss(ignore_index=-100)
    grads = []
    for row in rows:
        ids, mask, labels = dpsgd.pad_batch([row], pad_id, "cpu")
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        loss = ce(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1)) / clip_norm
        grads.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, params)]))
    return torch.stack(grads)


# ghost on LoRA picks Gram or materialised norms by cost: each one forced too
@pytest.mark.parametrize("clipping", [*dpsgd.CLIPPINGS, "ghost:gram", "ghost:materialised"])
@pytest.mark.parametrize("micro_batch", [6, 4])  # one micro-batch, or two accumulated before the step
def test_the_step_sums_per_example_gradients_clipped_to_c(dp_model_dir, clipping, micro_batch, monkeypatch):
    from continuousbench.dp import ghost_passes

    clipping, _, norms = clipping.partition(":")
    if norms:
        monkeypatch.setattr(ghost_passes, "gram_norms_cheaper", lambda *args: norms == "gram")
    model, tok = _lora_model(dp_model_dir)
    texts = [f"Geminon {i} has attack {i} and lives in zone {i % 5}." + " zone" * (i % 4) for i in range(6)]
    rows = dpsgd.encode_records(tok, texts, 64)
    reference = copy.deepcopy(model)
    raw = _per_example_grads(reference, rows, tok.pad_token_id, 1.0).norm(dim=1)
    clip = float(raw.median())  # some examples are clipped, some are not
    per_example = _per_example_grads(reference, rows, tok.pad_token_id, clip)  # = g / C
    factors = per_example.norm(dim=1).clamp(min=1.0)
    expected_sum = (per_example / factors[:, None]).sum(0)
    assert ((per_example / factors[:, None]).norm(dim=1) <= 1 + 1e-5).all()  # <= C before the 1/C scaling
    assert (per_example.norm(dim=1) > 1).any() and (per_example.norm(dim=1) < 1).any()

    params = dpsgd.check_trainable(model)
    before = torch.cat([p.detach().reshape(-1) for p in params])
    comps = noiseless(model, params, 3, clipping=clipping)
    dpsgd.dp_step(comps, rows, clip_norm=clip, micro_batch=micro_batch, pad_id=tok.pad_token_id)
    # SGD at learning rate 1 moved the adapter by minus (sum of clipped g/C) / expected batch size.
    update = torch.cat([p.detach().reshape(-1) for p in params]) - before
    assert torch.allclose(-update * 3, expected_sum, rtol=1e-3, atol=1e-5)


def test_refuses_trainable_non_lora_parameter(dp_model_dir):
    model, _ = _lora_model(dp_model_dir)
    model.base_model.model.model.norm.weight.requires_grad_(True)
    with pytest.raises(ValueError, match=r"not a LoRA adapter.*freeze it") as err:
        dpsgd.check_trainable(model)
    assert "\n" not in str(err.value)


def test_refuses_non_poisson_batches():
    from torch.utils.data import BatchSampler, RandomSampler

    plan = SamplingPlan(100, 10.0, "poisson")
    fixed = BatchSampler(RandomSampler(range(100)), batch_size=10, drop_last=False)
    with pytest.raises(ValueError, match="assumes poisson sampling") as err:
        check_sampler(fixed, plan)
    assert "\n" not in str(err.value)
    other = PoissonBatchSampler(100, 0.2, 5, rng=np.random.default_rng())
    with pytest.raises(ValueError, match="build both from the same SamplingPlan"):
        check_sampler(other, plan)
    check_sampler(plan.sampler(5, np.random.default_rng()), plan)


def test_truncated_sampler_caps_and_follows_its_generator():
    plan = SamplingPlan(1000, 20.0, "truncated_poisson", physical_batch=20, truncation_analysis="pld")
    a = list(plan.sampler(50, np.random.default_rng(3)))
    b = list(plan.sampler(50, np.random.default_rng(3)))
    assert all(len(x) <= 20 for x in a)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert np.mean([len(x) for x in a]) == pytest.approx(19, abs=3)


def test_noise_comes_from_the_secret_stream_not_the_global_seed(dp_model_dir):
    """Same global torch seed, fresh secret streams: different noise; the same stream state: same noise."""
    model, tok = _lora_model(dp_model_dir)
    rows = dpsgd.encode_records(tok, ["Geminon 1 has attack 7.", "Geminon 2 lives in zone 2."], 32)
    params = dpsgd.check_trainable(model)
    start = [p.detach().clone() for p in params]

    def noisy_update(streams: SecretStreams) -> torch.Tensor:
        with torch.no_grad():
            for p, s in zip(params, start, strict=True):
                p.copy_(s)
        torch.manual_seed(0)  # the published seed: must not matter
        optimizer = torch.optim.SGD(params, lr=1.0)
        comps = dpsgd.make_private(
            model,
            optimizer,
            noise_multiplier=1.0,
            expected_batch_size=2,
            generator=streams.noise,
            secure_mode=True,
        )
        dpsgd.dp_step(comps, rows, clip_norm=1e-3, micro_batch=2, pad_id=tok.pad_token_id)
        update = torch.cat([(p.detach() - s).reshape(-1) for p, s in zip(params, start, strict=True)])
        comps.module.to_standard_module()
        return update

    first, second = SecretStreams.create(), SecretStreams.create()
    assert not torch.equal(noisy_update(first), noisy_update(second))
    replay = SecretStreams.create(insecure_seed=5)
    state = replay.state_dict()
    once = noisy_update(replay)
    replay.load_state_dict(state)
    assert torch.equal(once, noisy_update(replay))


def test_bf16_autocast_keeps_the_update_in_float32(dp_model_dir):
    model, tok = _lora_model(dp_model_dir)
    rows = dpsgd.encode_records(tok, ["Geminon 1 has attack 7.", "Geminon 2 lives in zone 2."], 32)
    params = dpsgd.check_trainable(model)
    before = [p.detach().clone() for p in params]
    comps = noiseless(model, params, 2)
    dpsgd.dp_step(
        comps, rows, clip_norm=1e-3, micro_batch=2, pad_id=tok.pad_token_id, autocast_dtype=torch.bfloat16
    )
    assert all(p.dtype == torch.float32 for p in params)
    assert any(not torch.equal(p, b) for p, b in zip(params, before, strict=True))


def test_per_sample_computes_per_record_grads_without_hooks_or_a_summed_grad(dp_model_dir):
    """per_sample: each record's LoRA gradient from one batched matmul per layer, no Opacus hooks and no
    summed weight gradient (autograd's, which DP-SGD never uses, cost part of the step's 22%)."""
    model, tok = _lora_model(dp_model_dir)
    rows = dpsgd.encode_records(tok, ["Geminon 1 has attack 7.", "Geminon 2 lives in zone 2 and 3."], 32)
    params = dpsgd.check_trainable(model)
    expected = _per_example_grads(copy.deepcopy(model), rows, tok.pad_token_id, 1.0)
    comps = noiseless(model, params, 2)
    assert not any(m._backward_hooks or m._forward_hooks for m in model.modules())
    dpsgd.record_loss(comps.module, rows, tok.pad_token_id, "cpu").mean().backward()
    assert all(p.grad is None for p in params)
    got = torch.cat([p.grad_sample.reshape(len(rows), -1) for p in params], dim=1)
    assert torch.allclose(got, expected, rtol=1e-4, atol=1e-6)
    comps.module.to_standard_module()
    assert not any(hasattr(m, "_record_mean") or "forward" in vars(m) for m in model.modules())


def _ghost(dp_model_dir):
    model, tok = _lora_model(dp_model_dir)
    rows = dpsgd.encode_records(tok, ["Geminon 1 has attack 7.", "Geminon 2 lives in zone 2 and 3."], 32)
    params = dpsgd.check_trainable(model)
    comps = noiseless(model, params, 2, clipping="ghost")
    return comps, rows, tok, params


def test_ghost_first_pass_computes_norms_but_no_weight_gradient(dp_model_dir, monkeypatch):
    """Opacus's first pass computed every LoRA weight's gradient only to zero it (~0.2 s of a 2.4 s step
    at rank 128); ours stops at the embeddings. The clipped sum itself is checked above."""
    comps, rows, tok, params = _ghost(dp_model_dir)
    seen = []
    zero_grad = comps.optimizer.zero_grad

    def record_then_zero(*args, **kwargs):
        seen.append([p.grad is not None for p in params])
        return zero_grad(*args, **kwargs)

    monkeypatch.setattr(comps.optimizer, "zero_grad", record_then_zero)
    dpsgd.dp_step(comps, rows, clip_norm=1.0, micro_batch=2, pad_id=tok.pad_token_id)
    assert seen[0] == [False] * len(params)  # between the passes: norms computed, no weight gradient


def test_ghost_refuses_a_step_whose_hooks_computed_no_norm(dp_model_dir):
    """A norm left from an earlier step must never clip this one."""
    comps, rows, tok, _ = _ghost(dp_model_dir)
    dpsgd.dp_step(comps, rows, clip_norm=1.0, micro_batch=2, pad_id=tok.pad_token_id)
    comps.module.disable_hooks()
    with pytest.raises(RuntimeError, match="computed no per-record norm"):
        dpsgd.dp_step(comps, rows, clip_norm=1.0, micro_batch=2, pad_id=tok.pad_token_id)


def test_ghost_picks_the_cheaper_norms_for_the_length():
    """Gram norms grow with T^2, materialised ones with T: short records take Gram norms at a large rank's
    r x d gradients, long ones the materialised gradients."""
    from continuousbench.dp import ghost_passes

    lora = [torch.empty(128, 2048), torch.empty(2048, 128)]  # A (r x d) and B (d x r) of a rank-128 layer
    assert ghost_passes.gram_norms_cheaper(lora, tokens=32)  # 32^2 x 2176 < 32 x 262144
    assert not ghost_passes.gram_norms_cheaper(lora, tokens=512)
