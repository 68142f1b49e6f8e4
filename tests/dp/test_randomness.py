"""The DP noise and batches are secret; everything non-private follows --seed."""

import pytest
import torch
from dp_runs import DP_ARGS, NONPRIVATE_ARGS

from continuousbench.dp.randomness import SecretStreams

ADAPTER = "adapter_model.safetensors"


def test_secret_streams_differ_and_resume_exactly():
    a, b = SecretStreams.create(), SecretStreams.create()
    assert a.secret and not torch.equal(torch.randn(8, generator=a.noise), torch.randn(8, generator=b.noise))
    assert a.batches.random() != b.batches.random()
    state = a.state_dict()
    first = (torch.randn(4, generator=a.noise), a.batches.random(5))
    a.load_state_dict(state)
    again = (torch.randn(4, generator=a.noise), a.batches.random(5))
    assert torch.equal(first[0], again[0]) and (first[1] == again[1]).all()
    fixed = SecretStreams.create(insecure_seed=3), SecretStreams.create(insecure_seed=3)
    assert not fixed[0].secret and torch.equal(
        torch.randn(4, generator=fixed[0].noise), torch.randn(4, generator=fixed[1].noise)
    )
    assert "no DP guarantee" in fixed[0].describe(True) and "entropy" in a.describe(True)


def test_lora_initialisation_follows_the_seed(dp_model_dir):
    from continuousbench.dp import loop
    from continuousbench.dp.plan import DPPlan
    from continuousbench.dp.sampling import SamplingPlan
    from continuousbench.dp.train import make_parser
    from continuousbench.processes import Processes

    texts = ["Geminon 1 has attack 7.", "Geminon 2 lives in zone 2."]
    plan = DPPlan(SamplingPlan(2, 1.0, "poisson"), 1.0, 2, 1e-3, 1e-3)

    def initial_lora(seed: str) -> list[torch.Tensor]:
        _, model_args, config = make_parser().parse(
            ["--output_dir", "/tmp/unused", "--model", str(dp_model_dir), *DP_ARGS, "--seed", seed]
        )
        torch.manual_seed(1234)  # whatever the global state was before, the seed decides
        run = loop.build(model_args, config, texts, texts, plan, Processes())
        return [p.detach().clone() for p in run.params]

    a, b, c = initial_lora("0"), initial_lora("0"), initial_lora("1")
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, z) for x, z in zip(a, c, strict=True))


@pytest.mark.slow
def test_two_dp_runs_with_the_same_seed_draw_different_noise(tmp_path, dp_generator, train_generator):
    again = train_generator(tmp_path / "again", *DP_ARGS)
    assert (again / ADAPTER).read_bytes() != (dp_generator.path / ADAPTER).read_bytes()


@pytest.mark.slow
def test_nonprivate_runs_with_the_same_seed_are_identical(tmp_path, train_generator):
    """LoRA initialisation and data order follow --seed: the same adapter, byte for byte."""
    a = train_generator(tmp_path / "a", *NONPRIVATE_ARGS)
    b = train_generator(tmp_path / "b", *NONPRIVATE_ARGS)
    assert (a / ADAPTER).read_bytes() == (b / ADAPTER).read_bytes()
