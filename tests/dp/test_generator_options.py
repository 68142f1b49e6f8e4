"""train-generator's LoRA placement and grid sweep end to end: what is saved, stated and published."""

import json

import pytest
from dp_runs import DP_ARGS

pytestmark = pytest.mark.slow


def test_lora_on_mlp_trains_only_mlp_adapters(tmp_path, train_generator):
    from safetensors.torch import load_file

    out = train_generator(tmp_path / "mlp", *DP_ARGS, "--steps", "2", "--lora_targets", "mlp")
    keys = list(load_file(out / "adapter_model.safetensors"))
    projections = {k.split(".lora_")[0].rsplit(".", 1)[-1] for k in keys}
    assert keys and projections == {"gate_proj", "up_proj", "down_proj"}
    privacy = json.loads((out / "privacy.json").read_text())
    expected = "LoRA adapters of rank 4 on the MLP projections (down_proj, gate_proj, up_proj)"
    assert privacy["trained"] == expected
    card = (out / "README.md").read_text()
    assert '"lora_targets": "mlp"' in card and f"DP-SGD trained {privacy['trained']}" in card


def test_a_grid_sweep_states_its_composed_epsilon_and_publishes_one_run(tmp_path, train_generator):
    from continuousbench.dp.accounting import dp_event, event_epsilon

    grid = "learning_rate=1e-3,clip_norm=1e-3,1e-1"  # a grid of two runs: seconds
    out = train_generator(tmp_path / "grid", *DP_ARGS, "--steps", "2", "--sweep", grid)
    privacy = json.loads((out / "privacy.json").read_text())
    one = dp_event(privacy["noise_multiplier"], privacy["sampling_probability"], privacy["steps_per_run"])
    import dp_accounting as dpa

    assert privacy["runs_accounted"] == 2 and privacy["epsilon"] <= 10  # --epsilon 10: the grid's total
    composed = event_epsilon(dpa.ComposedDpEvent([one] * 2), privacy["delta"])
    assert privacy["epsilon"] == pytest.approx(composed, rel=1e-3)
    selection = privacy["selection"]
    assert selection["grid"] == {"learning_rate": [1e-3], "clip_norm": [1e-3, 1e-1]}
    assert len(selection["runs"]) == 2 and "lowest validation loss" in selection["rule"]
    best = min(selection["runs"], key=lambda r: r["validation_loss"])
    assert selection["selected"] == {k: best[k] for k in ("learning_rate", "clip_norm")}
    assert privacy["clip_norm"] == best["clip_norm"] and privacy["learning_rate"] == best["learning_rate"]
    card = (out / "README.md").read_text()
    headline = card.split("## Privacy statement", 1)[1].strip().split("\n")[0]
    assert f"({privacy['epsilon']:.4g}, " in headline and "the 2 runs of its sweep composed" in headline
    assert "among 2 runs (learning rate in {0.001} x clip norm in {0.001, 0.1})" in card
    assert sorted(p.name for p in out.glob("*.safetensors")) == ["adapter_model.safetensors"]
    assert not list(out.rglob("checkpoint-*")) and not list(out.glob("lr-*"))
