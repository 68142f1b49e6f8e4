"""continued_pretraining's loss: the model's own next-token loss, equal to TRL's chunked one."""

from __future__ import annotations


def test_loss_is_trls_chunked_loss(tiny_model_dir, tiny_release, tmp_path):
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer

    from continuousbench.training.config import EvaluatorConfig
    from continuousbench.training.sft import EvaluatorTrainer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    args = EvaluatorConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        max_length=64,
        samples_per_step=8,
        per_device_train_batch_size=8,
        eval_strategy="no",
        save_strategy="no",
        load_best_model_at_end=False,
        report_to="none",
        dataloader_num_workers=0,
    )
    texts = load_dataset(str(tiny_release), "corpus", split="train[:64]").select_columns(["text"])
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    trainer = EvaluatorTrainer(model=model, args=args, train_dataset=texts, processing_class=tokenizer)
    batch = next(iter(trainer.get_train_dataloader()))
    assert batch["input_ids"].shape == (8, 64) and (batch["labels"] != -100).sum() > 400
    ours = trainer.compute_loss(model, batch)
    trls = SFTTrainer.compute_loss(trainer, model, batch)  # the chunked log-probability head
    torch.testing.assert_close(ours, trls, rtol=1e-5, atol=1e-5)
    ours.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
