"""Ghost clipping's two backward passes, without the LoRA weight gradients the first one would discard.

Opacus's ghost clipping (``DPTensorFastGradientClipping.backward``) runs a first backward pass only so that
its hooks see each LoRA layer's inputs and output gradients and compute every record's gradient norm; it
then zeroes the weight gradients that pass computed and runs a second pass on the loss reweighted by the
clipping factors. Computing those discarded gradients was ~0.2 s of a 2.4 s step at LoRA rank 128
(docs/performance.md). Here the input embeddings' output enters the graph as a leaf that requires grad,
and the first pass asks for that leaf's gradient alone: autograd still runs every layer's input gradient
(so every LoRA layer's hooks fire, as before) but no weight gradient. The second pass asks for the
trainable parameters only. Same norms, same factors, same clipped sum (``tests/dp/test_dpsgd.py`` checks
the step against independent per-example gradients); a norm that no hook wrote in this step is refused,
never reused from the last one.

Each record's norm comes either from the two T x T Gram matrices of a layer's inputs and output gradients
(Opacus's ghost norm) or from the record's materialised gradient, one layer at a time (Opacus's fast
gradient clipping); :func:`gram_norms_cheaper` picks, per step, whichever costs fewer multiply-adds for
the batch's length T. The norms are the same; at rank 128 and T = 128 the materialised ones were 5% of a
step cheaper, and at longer T the Gram matrices grow with T squared.
"""

from __future__ import annotations

import torch


class EmbeddingLeaf:
    """Forward hook on the input embeddings: with autograd on, their output as a fresh leaf that requires
    grad (the embeddings are frozen, so no gradient is lost); the latest one is kept for the first pass."""

    def __init__(self) -> None:
        self.leaf: torch.Tensor | None = None

    def __call__(self, module, args, output: torch.Tensor) -> torch.Tensor | None:
        if not torch.is_grad_enabled():
            return None
        self.leaf = output.detach().requires_grad_()
        return self.leaf


def attach(model, params: list) -> EmbeddingLeaf | None:
    """The hook on a LoRA model's input embeddings; None when something else trains (a soft prompt sits
    beside the embeddings, so a first pass that stops at them would miss its norms)."""
    lora = {id(p) for name, p in model.named_parameters() if "lora_" in name}
    if not params or any(id(p) not in lora for p in params):
        return None
    hook = EmbeddingLeaf()
    model.get_input_embeddings().register_forward_hook(hook)
    return hook


def backward(module, optimizer, loss, hook: EmbeddingLeaf, tokens: int) -> None:
    """Opacus's two passes for ``loss`` (a ``DPTensorFastGradientClipping``, mean reduction) over records
    padded to ``tokens``, with each pass asking only for what it needs and the cheaper norms."""
    if hook.leaf is None:
        raise RuntimeError("ghost clipping: no forward pass under autograd since the last step")
    params = optimizer.params
    module.use_ghost_clipping = gram_norms_cheaper(params, tokens)
    for p in params:
        p._norm_sample = None
    per_record = loss.loss_per_sample
    torch.autograd.backward(per_record.mean(dim=0), inputs=[hook.leaf], retain_graph=True)
    if any(getattr(p, "_norm_sample", None) is None for p in params):
        raise RuntimeError("ghost clipping: a trainable layer's hooks computed no per-record norm this step")
    optimizer.zero_grad()
    coefficients = module.get_clipping_coef().to(per_record.device)
    module.disable_hooks()
    try:
        torch.autograd.backward(torch.sum(coefficients * per_record), inputs=params)
    finally:
        module.enable_hooks()
        hook.leaf = None


def gram_norms_cheaper(params: list, tokens: int) -> bool:
    """Per record and LoRA weight (out x in): Gram norms cost T^2 (in + out) multiply-adds, a materialised
    gradient T in out (held for one layer at a time, then freed)."""
    gram = sum(tokens * tokens * (p.shape[0] + p.shape[1]) for p in params)
    direct = sum(tokens * p.shape[0] * p.shape[1] for p in params)
    return gram < direct
