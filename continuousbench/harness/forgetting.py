"""The forgetting monitor: a general corpus's loss before and after continued pretraining.

FictionalQA trains its models on 5% fiction mixed into 95% web text and watches the web text's loss,
so that learning the fiction is not bought by forgetting everything else. ``evaluate --mix_corpus``
does the same: the held-out sample of the mixed-in corpus (:func:`.inputs.mix_general_text`) is scored
with the base model before training and with the selected model after it.
"""

from __future__ import annotations

from continuousbench.harness.qa_eval import weights_precision


def heldout_loss(model, tokenizer, texts: list[str], max_length: int) -> float:
    """Mean over documents of each one's mean token loss (``<bos> text <eos>``, cut at ``max_length``)."""
    from continuousbench.dp.dpsgd import encode_records, record_losses

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with weights_precision(model):
        losses = record_losses(model, encode_records(tokenizer, texts, max_length), pad)
    return sum(losses) / len(losses)


def record(mix: dict | None, before: float | None, after: float | None) -> dict | None:
    """results.json ``forgetting``: the corpus as given and fingerprinted, and the two losses."""
    if mix is None:
        return None
    kept = {k: v for k, v in mix.items() if k != "texts"}
    return {**kept, "loss_before": before, "loss_after": after, "change": after - before}
