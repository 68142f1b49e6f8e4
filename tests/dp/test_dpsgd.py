import copy

import numpy as np
import pytest
import torch

from continuousbench.dp import dpsgd
from continuousbench.dp.sampling import PoissonBatchSampler, check_sampler


def _lora_model(model_dir):
    from continuousbench.harness.modeling import load_model_and_tokenizer

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


def test_clipped_per_example_gradients_never_exceed_c(dp_model_dir, dp_corpus):
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
    sampler = PoissonBatchSampler(len(rows), 0.5, 1)
    comps = dpsgd.make_private(
        model, torch.optim.SGD(params, lr=0.0), rows, sampler, noise_multiplier=0.0, expected_batch_size=3
    )
    loss = dpsgd.token_loss(comps.module, comps.criterion, rows, tok.pad_token_id, "cpu")
    (loss / clip).backward()
    # Opacus's own per-example norms (before clipping) match the independent computation ...
    assert torch.allclose(comps.module.per_sample_gradient_norms, per_example.norm(dim=1), rtol=1e-3)
    # ... and the summed gradient it keeps is the sum of per-example gradients clipped to norm 1 (= C / C).
    summed = torch.cat([p.grad.reshape(-1) for p in params])
    assert torch.allclose(summed, expected_sum, rtol=1e-3, atol=1e-5)


def test_refuses_trainable_non_lora_parameter(dp_model_dir):
    model, _ = _lora_model(dp_model_dir)
    model.base_model.model.model.norm.weight.requires_grad_(True)
    with pytest.raises(ValueError, match=r"not a LoRA adapter.*freeze it") as err:
        dpsgd.check_trainable(model)
    assert "\n" not in str(err.value)


def test_refuses_non_poisson_batches():
    from torch.utils.data import BatchSampler, RandomSampler

    fixed = BatchSampler(RandomSampler(range(100)), batch_size=10, drop_last=False)
    with pytest.raises(ValueError, match="assumes poisson sampling") as err:
        check_sampler(fixed, sampling="poisson", sampling_probability=0.1, physical_batch=None)
    assert "\n" not in str(err.value)
    other = PoissonBatchSampler(100, 0.2, 5)
    with pytest.raises(ValueError, match="build both from the same settings"):
        check_sampler(other, sampling="poisson", sampling_probability=0.1, physical_batch=None)


def test_truncated_sampler_caps_and_is_seeded():
    a = list(PoissonBatchSampler(1000, 0.02, 50, sampling="truncated_poisson", physical_batch=20, seed=3))
    b = list(PoissonBatchSampler(1000, 0.02, 50, sampling="truncated_poisson", physical_batch=20, seed=3))
    assert all(len(x) <= 20 for x in a)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert np.mean([len(x) for x in a]) == pytest.approx(19, abs=3)
