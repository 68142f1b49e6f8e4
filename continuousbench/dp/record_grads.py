"""Per-record LoRA gradients without Opacus's module hooks: what ``clipping="per_sample"`` runs.

Opacus's ``GradSampleModule`` gets each layer's output gradient from a full backward hook, scales it by
the batch size, and multiplies it with the stored input; autograd meanwhile computes the summed weight
gradient that DP-SGD never uses. For LoRA on a small model that overhead was ~20% of a step (hooks'
extra autograd nodes, a scaled copy of every output gradient, the unused summed gradient; see
docs/performance.md). Here each trainable ``nn.Linear`` (the LoRA A and B matrices) runs through
:class:`PerRecordLinear`, whose backward computes the input gradient and the per-record weight
gradients as one batched matmul of the output gradients and the stored inputs, and no summed weight
gradient. The result lands where Opacus puts it (``p.grad_sample``, in the same units: the gradient of
each record's own loss), so Opacus's ``DPOptimizer`` clips, sums and noises it exactly as before.
"""

from __future__ import annotations

import types

import torch
from opacus.grad_sample import GradSampleModule


class PerRecordLinear(torch.autograd.Function):
    """``x @ weight.T`` whose backward stores ``weight.grad_sample`` (records x out x in) and returns
    no summed weight gradient."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, scale: float) -> torch.Tensor:
        out = torch.nn.functional.linear(x, weight)
        device = x.device.type
        if torch.is_autocast_enabled(device):  # keep the input as the matmul saw it (bf16: half the memory)
            x = x.to(torch.get_autocast_dtype(device))
        ctx.save_for_backward(x, weight)
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, weight = ctx.saved_tensors
        records, width = x.shape[0], grad_out.shape[-1]
        backprops = grad_out.reshape(records, -1, width)
        grad_x = None
        if ctx.needs_input_grad[0]:  # a 2-D matmul: a 3-D one broadcasts the weight over the batch
            grad_x = (backprops.reshape(-1, width) @ weight.to(grad_out.dtype)).view(x.shape)
        inputs = x.reshape(records, -1, x.shape[-1]).to(grad_out.dtype)
        # one matmul for every record; alpha: a mean loss over the batch, times the batch size, gives each
        # record's own gradient, scaled inside the matmul rather than in a pass over its result
        zeros = grad_out.new_zeros(()).expand(records, width, inputs.shape[-1])
        sample = torch.baddbmm(zeros, backprops.transpose(1, 2), inputs, beta=0, alpha=ctx.scale)
        _store(weight, sample)
        return grad_x, None, None


def _store(param: torch.Tensor, sample: torch.Tensor) -> None:
    """As Opacus does: one backward's records as a tensor; a further backward's appended as a list."""
    current = getattr(param, "grad_sample", None)
    if current is None:
        param.grad_sample = sample
    elif isinstance(current, list):
        current.append(sample)
    else:
        param.grad_sample = [current, sample]


def _forward(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    scale = x.shape[0] if self._record_mean else 1  # Opacus's loss_reduction="mean": times the batch
    return PerRecordLinear.apply(x, self.weight, scale)


class RecordGradModule(GradSampleModule):
    """Opacus's ``GradSampleModule`` (same interface: ``zero_grad``, ``cleanup``, ``to_standard_module``)
    whose trainable linear layers compute per-record gradients in their own backward (no hooks)."""

    def add_hooks(self, *, loss_reduction: str = "mean", batch_first: bool = True, force_functorch=False):
        layers = [m for m in self.iterate_submodules(self._module)]
        if force_functorch or not batch_first or not all(_plain_linear(m) for m in layers):
            self._patched: list = []
            return super().add_hooks(
                loss_reduction=loss_reduction, batch_first=batch_first, force_functorch=force_functorch
            )
        for layer in layers:
            layer._record_mean = loss_reduction == "mean"
            layer.forward = types.MethodType(_forward, layer)
        self._patched = layers
        self.enable_hooks()

    def remove_hooks(self) -> None:
        for layer in getattr(self, "_patched", []):
            del layer.forward, layer._record_mean
        self._patched = []
        if hasattr(self, "autograd_grad_sample_hooks"):
            super().remove_hooks()
        self.disable_hooks()


def _plain_linear(module: torch.nn.Module) -> bool:
    """A bias-free ``nn.Linear`` whose only trainable parameter is its weight (peft's LoRA A and B)."""
    return (
        type(module) is torch.nn.Linear
        and module.bias is None
        and [name for name, p in module.named_parameters(recurse=False) if p.requires_grad] == ["weight"]
    )
