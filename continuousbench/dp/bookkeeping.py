"""Per-record clipping of every trainable parameter in one backward pass: book-keeping (Bu et al. 2023,
fastDP) with ghost norms (Li et al. 2022). What ``clipping="bookkeeping"`` runs; ``--tuning full``'s engine.

Opacus's engines do not fit full fine-tuning: its per-sample hooks hold every record's gradient of every
parameter (micro-batch x N floats, 4 GB a record for a 1B model), and its ghost clipping runs a second
backward pass (8·N·T instead of 6·N·T FLOPs) and takes a parameter used by two layers (tied input and
output embeddings) as two, whose norms do not add up to the norm of its gradient.

Here each trainable layer runs through an autograd function whose backward returns its input gradient
and keeps the layer's input and output gradient (the "book") but computes no weight gradient. After the
one backward pass every record's squared gradient norm is summed over the parameters from those
tensors, exactly:

* a linear weight: from the record's T x T Gram matrices of inputs and output gradients,
  ``<a aᵀ, g gᵀ>`` (the ghost norm; layers that share an input share its Gram), or from the record's
  weight gradient ``gᵀ a`` materialised one layer at a time, whichever costs fewer multiply-adds;
* an embedding: the record's output gradients summed per token id (its gradient's nonzero rows);
* a weight used by several layers (tied embedding and output layer): the cross terms too,
  ``2 <G_1, G_2>``, from the same factors (for the tied pair ``sum_t,u dl_u[x_t] (g_t · h_u)``), so the
  norm is that of the weight's whole gradient;
* a norm layer's weight and bias (RMSNorm, LayerNorm; d floats a record): the forward pass repeats
  them once per record (records x 1 x d, broadcast over the tokens), so the backward pass leaves each
  record's gradient at the cost of the summed one; each layer is checked against ``torch.func``'s
  per-record gradients when wrapped.

With each record's factor ``c = min(1, 1 / ||g||)`` (the loss is already divided by C: normalised
clipping), each weight's clipped sum is one matmul of the kept tensors, ``sum_b c_b g_bᵀ a_b``: the
non-private weight gradient's FLOPs. A step therefore costs the non-private step plus the norms, and
holds the layers' output gradients until its backward pass ends. Opacus's
``DPOptimizerFastGradientClipping`` then adds the noise, once per logical batch, from the secret stream.

A gradient that reaches a trainable parameter by any other path is refused (the parameter's ``.grad``
must stay empty through the backward pass), and a layer this module cannot clip exactly is refused
when the model is wrapped, in one line naming it.
"""

from __future__ import annotations

import copy
import types
import weakref
from collections import defaultdict
from dataclasses import dataclass

import torch
import torch.nn.functional as F

NORM_LAYERS = ("RMSNorm", "LayerNorm")  # class-name endings of token-wise norm layers (nn's and HF's)


@dataclass
class Use:
    """One call of a layer that uses a parameter, kept for the norms and the clipped sum.

    ``linear``: the per-record gradient is ``rows_bᵀ cols_b`` (rows: output gradients, records x T x
    out; cols: inputs, records x T x in). ``embedding``: ``onehot(rows_b)ᵀ cols_b`` (rows: token ids,
    records x T; cols: output gradients). ``sampled``: the per-record gradients themselves (records x
    the parameter's shape)."""

    kind: str
    rows: torch.Tensor | None = None
    cols: torch.Tensor | None = None
    sampled: torch.Tensor | None = None


class Book:
    """What one micro-batch's forward and backward passes recorded, by parameter."""

    def __init__(self) -> None:
        self.uses: dict[torch.nn.Parameter, list[Use]] = defaultdict(list)
        self.leaves: list[tuple[torch.nn.Parameter, torch.Tensor]] = []  # norm weights, one row a record
        self._casts: dict[int, tuple[weakref.ref, torch.Tensor]] = {}

    def cast(self, x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """``x`` in the autocast dtype, cast once for the layers that share it (q, k and v; gate and up),
        so that they keep one copy and share its Gram matrix. Keyed by identity, checked through a weak
        reference: a freed tensor's id may come back."""
        if x.dtype == dtype:
            return x
        hit = self._casts.get(id(x))
        if hit is not None and hit[0]() is x:
            return hit[1]
        cast = x.to(dtype)
        self._casts[id(x)] = (weakref.ref(x), cast)
        return cast

    def add(self, param: torch.nn.Parameter, use: Use) -> None:
        if use.kind == "sampled" and self.uses[param]:  # a layer called twice: its gradients add up
            self.uses[param][0].sampled += use.sampled
        else:
            self.uses[param].append(use)

    def collect(self) -> None:
        """Book the norm layers' per-record gradients, which the backward pass left in their leaves."""
        for param, leaf in self.leaves:
            if leaf.grad is not None:
                self.add(param, Use("sampled", sampled=leaf.grad.reshape(len(leaf), *param.shape).float()))
        self.leaves.clear()

    def clear(self) -> None:
        self.uses.clear()
        self.leaves.clear()
        self._casts.clear()


class _Linear(torch.autograd.Function):
    """``F.linear`` whose backward returns the input gradient and books (input, output gradient)."""

    @staticmethod
    def forward(ctx, x, weight, bias, book: Book):
        device, used = x.device.type, weight
        if torch.is_autocast_enabled(device):  # input and weight as the matmul sees them (bf16: half the
            dtype = torch.get_autocast_dtype(device)  # memory, and no second cast in the backward pass)
            x, used = book.cast(x, dtype), weight.to(dtype)
        ctx.save_for_backward(x, used)
        ctx.book, ctx.weight, ctx.bias = book, weight, bias
        return F.linear(x, used, bias)

    @staticmethod
    def backward(ctx, grad_out):
        x, used = ctx.saved_tensors
        weight = ctx.weight
        grad_x = None
        if ctx.needs_input_grad[0]:  # a 2-D matmul: a 3-D one broadcasts the weight over the batch
            flat = grad_out.reshape(-1, grad_out.shape[-1]) @ used.to(grad_out.dtype)
            grad_x = flat.view(*grad_out.shape[:-1], weight.shape[1])
        rows = grad_out.reshape(grad_out.shape[0], -1, grad_out.shape[-1])
        if weight.requires_grad:
            ctx.book.add(weight, Use("linear", rows, x.reshape(x.shape[0], -1, x.shape[-1])))
        if ctx.bias is not None and ctx.bias.requires_grad:
            ctx.book.add(ctx.bias, Use("sampled", sampled=rows.sum(1, dtype=torch.float32)))
        return grad_x, None, None, None


class _Embedding(torch.autograd.Function):
    """``F.embedding`` whose backward books (token ids, output gradients); ids get no gradient."""

    @staticmethod
    def forward(ctx, ids, weight, padding_idx, book: Book):
        ctx.save_for_backward(ids)
        ctx.book, ctx.padding_idx, ctx.weight = book, padding_idx, weight
        return F.embedding(ids, weight, padding_idx)

    @staticmethod
    def backward(ctx, grad_out):
        (ids,) = ctx.saved_tensors
        if ctx.padding_idx is not None:  # as F.embedding's backward: the padding row gets nothing
            grad_out = grad_out.masked_fill((ids == ctx.padding_idx).unsqueeze(-1), 0)
        records = ids.shape[0]
        ctx.book.add(
            ctx.weight,
            Use("embedding", ids.reshape(records, -1), grad_out.reshape(records, -1, grad_out.shape[-1])),
        )
        return None, None, None, None


def _linear_forward(self, x):
    if not torch.is_grad_enabled():
        return self._bk_original(x)
    return _Linear.apply(x, self.weight, self.bias, self._bk_book)


def _embedding_forward(self, ids):
    if not torch.is_grad_enabled():
        return self._bk_original(ids)
    out = _Embedding.apply(ids, self.weight, self.padding_idx, self._bk_book)
    scale = getattr(self, "embed_scale", None)  # Gemma 3's scaled embedding: lookup x sqrt(hidden)
    return out if scale is None else out * scale.to(self.weight.dtype)


def _norm_forward(self, x):
    """The layer's own computation with each trainable weight repeated once per record (a leaf of
    records x 1 ... x the weight's shape, broadcast over the tokens): the one backward pass leaves each
    record's gradient in it, at the cost of the weight gradient it replaces."""
    if not torch.is_grad_enabled():
        return self._bk_original(x)
    params = {}
    for name, p in self.named_parameters():
        if p.requires_grad:
            params[name] = _per_record_leaf(p, x)
            self._bk_book.leaves.append((p, params[name]))
        else:
            params[name] = p
    return self._bk_stateless(params, x)


def _per_record_leaf(param: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    shape = (x.shape[0],) + (1,) * (x.dim() - 1 - param.dim()) + tuple(param.shape)
    return param.detach().expand(shape).clone().requires_grad_()


class _Stateless:
    """A norm layer's computation on a parameter-free copy, so that the copy is no submodule and keeps
    the layer's own forward; ``nn.LayerNorm`` as its formula (``F.layer_norm`` takes no per-record
    weights)."""

    def __init__(self, layer: torch.nn.Module) -> None:
        self.copy = copy.deepcopy(layer).to("meta")
        self.buffers = dict(layer.named_buffers())

    def __call__(self, params: dict, x: torch.Tensor) -> torch.Tensor:
        if isinstance(self.copy, torch.nn.LayerNorm):
            shape, eps = self.copy.normalized_shape, self.copy.eps
            out = F.layer_norm(x, shape, eps=eps)
            out = out * params["weight"] if "weight" in params else out
            return out + params["bias"] if "bias" in params else out
        return torch.func.functional_call(self.copy, {**params, **self.buffers}, (x,))

    def check(self, layer: torch.nn.Module, name: str) -> None:
        """Refuse (one ValueError line) a layer whose per-record gradients by weights repeated per record
        differ from ``torch.func``'s on a small random input: it does not use its weights elementwise."""
        weights = {n: p.detach() for n, p in layer.named_parameters()}
        width = next(iter(weights.values())).shape[-1]
        generator = torch.Generator().manual_seed(0)
        x, grad_out = (torch.randn(2, 3, width, generator=generator) for _ in range(2))
        device = next(layer.parameters()).device
        x, grad_out = x.to(device), grad_out.to(device)

        def record_loss(params, x_b, g_b):
            return (self(params, x_b.unsqueeze(0)) * g_b.unsqueeze(0)).sum()

        try:
            want = torch.func.vmap(torch.func.grad(record_loss), in_dims=(None, 0, 0))(weights, x, grad_out)
            with torch.enable_grad():
                leaves = {n: _per_record_leaf(p, x) for n, p in weights.items()}
                torch.autograd.backward(self(leaves, x), grad_out)
            same = all(
                torch.allclose(leaves[n].grad.reshape(want[n].shape), want[n], atol=1e-5) for n in want
            )
        except RuntimeError:
            same = False
        if not same:
            raise ValueError(
                f"parameter {name} lives in a {type(layer).__name__}, whose per-record gradients cannot be "
                "computed exactly here (it does not use its weights elementwise); freeze it"
            )


def _kind(module: torch.nn.Module) -> str | None:
    """How this module's parameters are clipped: linear, embedding, norm, or None (it cannot be)."""
    if type(module) is torch.nn.Linear:
        return "linear"
    if isinstance(module, torch.nn.Embedding) and (
        type(module) is torch.nn.Embedding or type(module).__name__.endswith("ScaledWordEmbedding")
    ):
        return "embedding"
    if type(module).__name__.endswith(NORM_LAYERS):
        return "norm"
    return None


def trainable_layers(model) -> tuple[list[torch.nn.Parameter], dict[str, list[tuple[str, torch.nn.Module]]]]:
    """(trainable parameters in the model's order, layers with one by kind), after refusing in one
    ValueError line any trainable parameter this module cannot clip exactly."""
    layers: dict[str, list[tuple[str, torch.nn.Module]]] = defaultdict(list)
    owners: dict[torch.nn.Parameter, list[str]] = defaultdict(list)
    for module_name, module in model.named_modules(remove_duplicate=False):
        own = [(n, p) for n, p in module.named_parameters(recurse=False) if p.requires_grad]
        if not own:
            continue
        full = f"{module_name}.{own[0][0]}" if module_name else own[0][0]
        kind = _kind(module)
        if kind is None:
            raise ValueError(
                f"parameter {full} lives in a {type(module).__name__}, which DP-SGD here cannot clip per "
                "record (linear, embedding and norm layers only); freeze it (requires_grad=False)"
            )
        if kind == "embedding" and (
            module.max_norm is not None or module.scale_grad_by_freq or module.sparse
        ):
            raise ValueError(
                f"parameter {full}: an embedding with max_norm, scale_grad_by_freq or sparse gradients "
                "cannot be clipped per record; freeze it (requires_grad=False)"
            )
        if (module_name, module) not in layers[kind]:
            layers[kind].append((module_name, module))
        for _, p in own:
            owners[p].append(kind)
    for p, kinds in owners.items():
        if "norm" in kinds and len(kinds) > 1:
            name = next(n for n, q in model.named_parameters() if q is p)
            raise ValueError(
                f"parameter {name} is shared by a norm layer and another layer, whose per-record "
                "gradients cannot be combined exactly; freeze it (requires_grad=False)"
            )
    params = [p for p in model.parameters() if p.requires_grad]
    return params, layers


def describe(model) -> str:
    """What book-keeping clips in ``model``, in words, for the privacy statement and the card."""
    params, layers = trainable_layers(model)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    used = [p for found in layers.values() for _, m in found for p in m.parameters(False) if p.requires_grad]
    tied = any(sum(q is p for q in used) > 1 for p in params)
    count = {kind: len(found) for kind, found in layers.items()}
    norms = ", ".join(sorted({type(m).__name__ for _, m in layers.get("norm", [])}))
    parts = [
        f"{count['linear']} linear layers" if "linear" in count else "",
        f"{count['embedding']} embedding table(s)"
        + (" tied with the output layer (one weight, both uses in its norm)" if tied else "")
        if "embedding" in count
        else "",
        f"{count['norm']} norm layers ({norms})" if norms else "",
    ]
    parts = [x for x in parts if x]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    whole = (
        f"every weight of the base model but {frozen:,} frozen"
        if frozen
        else "every weight of the base model"
    )
    return (
        f"{whole} ({sum(p.numel() for p in params):,} parameters in {listed}), each record's gradient over "
        "all of them clipped as one, with exact per-record norms (book-keeping)"
    )


class BookkeepingModule(torch.nn.Module):
    """The model with its trainable layers routed through booking functions. :meth:`backward` runs the
    one backward pass of the records' losses and leaves each parameter's clipped sum in ``p.grad``."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self._module = model
        self.params, layers = trainable_layers(model)
        self.book = Book()
        self._patched: list[torch.nn.Module] = []
        forwards = {"linear": _linear_forward, "embedding": _embedding_forward, "norm": _norm_forward}
        if any(hasattr(layer, "_bk_book") for found in layers.values() for _, layer in found):
            raise RuntimeError("the model is wrapped for book-keeping already: unwrap it first")
        for kind, found in layers.items():
            for name, layer in found:
                if kind == "norm":  # the stateless copy first: it keeps the layer's own forward
                    layer._bk_stateless = _Stateless(layer)
                    layer._bk_stateless.check(layer, name)
                layer._bk_book, layer._bk_original = self.book, layer.forward
                layer.forward = types.MethodType(forwards[kind], layer)
                self._patched.append(layer)
        self.names = {p: n for n, p in model.named_parameters()}

    def forward(self, *args, **kwargs):
        return self._module(*args, **kwargs)

    def backward(self, losses: torch.Tensor) -> torch.Tensor:
        """Backpropagate ``losses`` (one per record, already divided by C), clip each record's gradient to
        norm 1 and put the clipped sum in ``p.grad``; returns the records' gradient norms (private: for
        tests, never to be logged)."""
        for p in self.params:
            p.grad = None
        try:
            losses.sum().backward()
            leaked = [self.names[p] for p in self.params if p.grad is not None]
            if leaked:
                raise RuntimeError(
                    f"parameter {leaked[0]} received a gradient outside the per-record layers (a path "
                    "this engine does not see would escape clipping); freeze it"
                )
            norms = torch.stack(list(self.squared_norms(len(losses)).values())).sum(0).sqrt()
            self.clipped_sums(1.0 / norms.clamp(min=1.0))
        finally:
            self.book.clear()
        return norms

    def squared_norms(self, records: int) -> dict[torch.nn.Parameter, torch.Tensor]:
        """Each parameter's squared gradient norm per record (float32; zeros for an unused one)."""
        self.book.collect()
        shared = _SharedInputs(self.book)
        out = {}
        for p in self.params:
            squared = torch.zeros(records, device=p.device, dtype=torch.float32)
            uses = self.book.uses.get(p, [])
            for i, use in enumerate(uses):
                squared += shared.squared_norm(use, p)
                for other in uses[i + 1 :]:
                    squared += 2 * _cross(use, other)
            out[p] = squared
        return out

    def clipped_sums(self, factors: torch.Tensor) -> None:
        """``p.grad`` = sum over records of factor x the record's gradient; a parameter no layer used in
        this step gets zeros. Each parameter's book is dropped once summed (memory moves, not grows)."""
        shared = _SharedInputs(self.book)
        for p in reversed(self.params):  # the last layers' tensors are the ones the norms left in cache
            total = None
            for use in self.book.uses.pop(p, []):
                total = shared.add_clipped_sum(total, use, factors, p)
            p.grad = torch.zeros_like(p) if total is None else total.to(p.dtype)

    def to_standard_module(self) -> torch.nn.Module:
        """The model with its layers' own forwards back (as Opacus's modules offer)."""
        for layer in self._patched:
            del layer.forward
            for attr in ("_bk_book", "_bk_original", "_bk_stateless"):
                if hasattr(layer, attr):
                    delattr(layer, attr)
        self._patched = []
        return self._module


class _SharedInputs:
    """What linear layers sharing one input (q, k and v; gate and up) compute from it once: its Gram
    matrices for the norms, its rows scaled by the clipping factors for the sums; each dropped after its
    last use."""

    def __init__(self, book: Book) -> None:
        self.cache: dict[int, torch.Tensor] = {}
        self.left: dict[int, int] = defaultdict(int)
        for uses in book.uses.values():
            for use in uses:
                if use.kind == "linear":
                    self.left[id(use.cols)] += 1

    def _once(self, cols: torch.Tensor, make=None) -> torch.Tensor | None:
        """``make(cols)``, computed by the first layer that needs it; ``make`` None: this layer needs
        nothing but is counted."""
        key = id(cols)
        value = self.cache.pop(key, None)
        if value is None and make is not None:
            value = make(cols)
        self.left[key] -= 1
        if self.left[key] > 0 and value is not None:
            self.cache[key] = value
        return value

    def squared_norm(self, use: Use, param: torch.Tensor) -> torch.Tensor:
        """Each record's squared norm of one use's gradient (a linear one's by the cheaper way)."""
        if use.kind == "sampled":
            return use.sampled.flatten(1).pow(2).sum(1)
        if use.kind == "embedding":
            return _embedding_squared_norm(use.rows, use.cols, param.shape[0])
        rows, cols = use.rows, use.cols
        tokens, width_in, width_out = rows.shape[1], cols.shape[2], rows.shape[2]
        if width_in * width_out < tokens * (width_in + width_out):  # per record: T i o < T^2 (i + o)
            self._once(cols)
            per_record = torch.bmm(rows.transpose(1, 2), cols)  # this layer's only, freed at once
            return per_record.float().flatten(1).pow(2).sum(1)
        gram_in = self._once(cols, lambda x: torch.bmm(x, x.transpose(1, 2)))
        gram_out = torch.bmm(rows, rows.transpose(1, 2))  # whole: blocks of it fall off bmm's fast paths
        return (gram_out * gram_in).sum((1, 2), dtype=torch.float32)

    def add_clipped_sum(
        self, total: torch.Tensor | None, use: Use, factors: torch.Tensor, param
    ) -> torch.Tensor:
        """``total + sum_b factors_b G_b`` for one use of ``param`` (float32; ``total`` None: the first)."""
        if use.kind == "sampled":
            part = torch.einsum("b...,b->...", use.sampled, factors)
        elif use.kind == "embedding":
            scaled = use.cols * factors.to(use.cols.dtype)[:, None, None]
            part = torch.zeros_like(param, dtype=torch.float32)
            part.index_add_(0, use.rows.reshape(-1), scaled.flatten(0, 1).float())
        else:  # scale the input (once for the layers that share it) unless the output gradient is smaller
            rows, cols = use.rows, use.cols
            if self.left[id(cols)] > 1 or cols.shape[-1] <= rows.shape[-1]:
                cols = self._once(cols, lambda x: x * factors.to(x.dtype)[:, None, None])
            else:
                self._once(cols)
                rows = rows * factors.to(rows.dtype)[:, None, None]
            part = (rows.flatten(0, 1).t() @ cols.flatten(0, 1)).float()
        return part if total is None else total.add_(part)


def _embedding_squared_norm(ids: torch.Tensor, grads: torch.Tensor, vocabulary: int) -> torch.Tensor:
    """Each record's ``||onehot(ids)ᵀ grads||²``: its output gradients summed per (record, token id)."""
    records = ids.shape[0]
    record_of = torch.arange(records, device=ids.device).unsqueeze(1).expand_as(ids)
    keys, rows = torch.unique((record_of * vocabulary + ids).reshape(-1), return_inverse=True)
    summed = torch.zeros(len(keys), grads.shape[-1], device=grads.device, dtype=torch.float32)
    summed.index_add_(0, rows, grads.reshape(-1, grads.shape[-1]).float())
    out = torch.zeros(records, device=grads.device, dtype=torch.float32)
    return out.index_add_(0, keys // vocabulary, summed.pow(2).sum(1))


def _cross(a: Use, b: Use) -> torch.Tensor:
    """Each record's ``<G_a, G_b>`` for two uses of one parameter, from their factors."""
    if a.kind == "embedding" and b.kind == "linear":
        a, b = b, a
    if a.kind == "linear" and b.kind == "linear":  # sum_t,u (g_t · g'_u)(x_t · x'_u)
        rows = torch.bmm(a.rows, b.rows.transpose(1, 2)).float()
        return (rows * torch.bmm(a.cols, b.cols.transpose(1, 2)).float()).sum((1, 2))
    if a.kind == "linear" and b.kind == "embedding":  # tied: sum_t,u dl_t[id_u] (h_t · g_u)
        ids = b.rows.unsqueeze(1).expand(-1, a.rows.shape[1], -1)
        picked = a.rows.gather(2, ids).float()
        return (picked * torch.bmm(a.cols, b.cols.transpose(1, 2).to(a.cols.dtype)).float()).sum((1, 2))
    if a.kind == "embedding" and b.kind == "embedding":  # sum_t,u [id_t == id'_u] (g_t · g'_u)
        same = a.rows.unsqueeze(2) == b.rows.unsqueeze(1)
        return (same * torch.bmm(a.cols, b.cols.transpose(1, 2)).float()).sum((1, 2))
    raise RuntimeError(f"no exact cross term for a {a.kind} and a {b.kind} use of one parameter")
