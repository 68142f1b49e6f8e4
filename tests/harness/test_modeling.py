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
