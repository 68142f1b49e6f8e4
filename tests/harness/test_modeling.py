import pytest

from continuousbench.training.modeling import LORA_TARGETS, load_model_and_tokenizer


@pytest.mark.parametrize("model_fixture", ["tiny_model_dir", "tiny_gemma_dir"])
def test_lora_on_the_seven_projections_with_scale_one(request, model_fixture):
    model, tokenizer = load_model_and_tokenizer(str(request.getfixturevalue(model_fixture)), lora_rank=8)
    config = model.peft_config["default"]
    assert set(config.target_modules) == set(LORA_TARGETS)
    assert (config.r, config.lora_alpha, config.lora_dropout) == (8, 8, 0.0)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    wrapped = {n.split(".")[-4] for n in trainable}  # ...q_proj.lora_A.default.weight
    assert wrapped == set(LORA_TARGETS)
    assert model.base_model.model.model.layers[0].self_attn.q_proj.scaling["default"] == 1.0
    assert tokenizer.pad_token is not None


def test_full_tuning_trains_every_parameter(tiny_model_dir):
    model, _ = load_model_and_tokenizer(str(tiny_model_dir), tuning="full", lora_alpha=None)
    assert all(p.requires_grad for p in model.parameters())


def test_bad_model_arguments(tmp_path, tiny_model_dir):
    with pytest.raises(ValueError, match="unknown tuning"):
        load_model_and_tokenizer(str(tiny_model_dir), tuning="qlora")
    with pytest.raises(FileNotFoundError, match="cannot load model"):
        load_model_and_tokenizer(str(tmp_path / "nowhere"))


def test_one_loader_for_runs_adapters_and_model_folders(finished_run, tmp_path, tiny_model_dir):
    """``load_for_inference``: an evaluate run is read through its model/, a LoRA adapter is merged into
    its base (the same logits as peft's own adapter model), a plain folder is loaded as it is."""
    import shutil

    import torch
    from peft import AutoPeftModelForCausalLM

    from continuousbench.errors import UserError
    from continuousbench.training.modeling import load_for_inference

    model, tokenizer, record = load_for_inference(str(finished_run), dtype="float32")
    assert record == {"given": str(finished_run), "kind": "evaluate run", "dtype": "float32"}
    assert not any("lora" in name for name, _ in model.named_parameters()) and not model.training
    adapter = finished_run / "model"
    _, _, as_adapter = load_for_inference(str(adapter), dtype="float32")
    assert as_adapter["kind"] == "LoRA adapter"
    ids = torch.tensor([tokenizer("Stalet is the Mouse Geminon.")["input_ids"]])
    peft_model = AutoPeftModelForCausalLM.from_pretrained(str(adapter), dtype=torch.float32).eval()
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, peft_model(ids).logits, atol=1e-5)
    assert load_for_inference(str(tiny_model_dir))[2]["kind"] == "model"
    light = tmp_path / "light"
    shutil.copytree(finished_run, light, ignore=shutil.ignore_patterns("model", "checkpoint-*"))
    with pytest.raises(UserError, match="evaluate run without a trained model"):
        load_for_inference(str(light))
