"""Batching rules for the operators of per-example-gradient code (``BatchRulesConvolution.cpp``,
``BatchRulesLoss.cpp``, ``BatchRulesPooling.cpp``, ``BatchRulesNorm.cpp``,
``BatchRulesScatterOps.cpp``, ``BatchRulesModules.cpp`` in ``aten/src/ATen/functorch``).

Each rule calls the operator once on the physical tensors, in one of three ways:

- **fold into the examples' dim**: an operator that treats the rows of its first dim alike
  (pooling, a convolution with an unbatched weight) gets the batch merged into that dim;
- **fold into the groups**: a convolution whose weight differs per example runs as one grouped
  convolution, each example's channels a group of their own;
- **offset the indices**: embedding and advanced indexing read a batched table through indices
  shifted by ``b * rows`` or through an explicit batch index.

Losses and norms reduced per example (``nll_loss`` with ``'mean'``, layer norm's weight
gradient) run unreduced once and are reduced per example here, since one call would sum over
the batch too.
"""
from .._functional import broadcast_shapes
from .._tensor import Tensor
from .batch_rules import _batch_size, _bind, _pad, _refuse_unbatched_self, _wrap
from .batched_tensor import BatchedTensor, is_batched

__all__ = ["NN_RULES"]


def _full(x, level, size):
    """``x``'s physical tensor with the batch dim in front; an unbatched ``x`` expanded to it."""
    if is_batched(x, level):
        return x._value
    return x.unsqueeze(0).expand(size, *x.shape)


def _physical_of(x, level):
    return x._value if is_batched(x, level) else x


def _size_of(level, bound):
    return _batch_size(level, [v for v in bound.values() if isinstance(v, Tensor)])


def _logical(x, level):
    return x._value.dim() - 1 if is_batched(x, level) else x.dim()


# ---------------------------------------------------------------------------- convolution
def _groups_fold(x, size):
    """``[B, N, C, ...]`` as ``[N, B*C, ...]``: each example's channels side by side."""
    x = x.movedim(0, 1)
    return x.reshape(x.shape[0], size * x.shape[2], *x.shape[3:])


def _groups_unfold(y, size):
    """``[N, B*C, ...]`` back to ``[B, N, C, ...]``."""
    return y.reshape(y.shape[0], size, y.shape[1] // size, *y.shape[2:]).movedim(1, 0)


def _flat(w):
    """``[B, O, ...]`` as ``[B*O, ...]``."""
    return w.reshape(w.shape[0] * w.shape[1], *w.shape[2:])


def _convolution(func, level, args, kwargs):
    """An unbatched weight: the batch folds into the examples' dim N. A batched weight: one
    convolution with ``B * groups`` groups (the same fold serves a transposed convolution,
    whose weight has the input channels first)."""
    names, b = _bind(func, args, kwargs)
    x, w, bias = b["input"], b["weight"], b["bias"]
    if _logical(x, level) != _logical(w, level):
        return NotImplemented
    size = _size_of(level, b)
    rest = [b[n] for n in names[3:]]
    if not is_batched(w, level) and not is_batched(bias, level):
        p = x._value
        out = func(p.reshape(size * p.shape[1], *p.shape[2:]), w, bias, *rest)
        return BatchedTensor(out.reshape(size, p.shape[1], *out.shape[1:]), level)
    *head, groups = rest
    bias_p = None if bias is None else _full(bias, level, size).reshape(-1)
    out = func(_groups_fold(_full(x, level, size), size), _flat(_full(w, level, size)), bias_p, *head, groups * size)
    return BatchedTensor(_groups_unfold(out, size), level)


def _convolution_backward(func, level, args, kwargs):
    """Every argument batched, the grouped convolution's backward: the weight's and the bias's
    gradients come out per example, ``[B*O, ...]``."""
    names, b = _bind(func, args, kwargs)
    go, x, w = b["grad_output"], b["input"], b["weight"]
    if not _logical(x, level) == _logical(w, level) == _logical(go, level):
        return NotImplemented
    size = _size_of(level, b)
    bias_sizes = b["bias_sizes"]
    if bias_sizes is not None:
        bias_sizes = [size * bias_sizes[0]]
    head = [b[n] for n in ("stride", "padding", "dilation", "transposed", "output_padding")]
    gi, gw, gb = func(_groups_fold(_full(go, level, size), size), _groups_fold(_full(x, level, size), size),
                      _flat(_full(w, level, size)), bias_sizes, *head, b["groups"] * size, b["output_mask"])
    return (None if gi is None else BatchedTensor(_groups_unfold(gi, size), level),
            None if gw is None else BatchedTensor(gw.reshape(size, gw.shape[0] // size, *gw.shape[1:]), level),
            None if gb is None else BatchedTensor(gb.reshape(size, -1), level))


# ---------------------------------------------------------------------------- pooling
def _planes(p, rank):
    """A physical ``[B, (N,) C, H, W]`` as ``[B*N, C, H, W]`` (or as it is without N)."""
    return p if rank == 3 else p.reshape(p.shape[0] * p.shape[1], *p.shape[2:])


def _max_pool2d(func, level, args, kwargs):
    x = args[0]
    rank = _logical(x, level)
    if rank not in (3, 4) or not is_batched(x, level):
        return NotImplemented
    p = x._value
    out, idx = func(_planes(p, rank), *args[1:], **kwargs)
    lead = p.shape[:rank - 2]
    return (BatchedTensor(out.reshape(*lead, *out.shape[1:]), level),
            BatchedTensor(idx.reshape(*lead, *idx.shape[1:]), level))


def _max_pool2d_backward(func, level, args, kwargs):
    names, b = _bind(func, args, kwargs)
    rank = _logical(b["self"], level)
    if rank not in (3, 4):
        return NotImplemented
    size = _size_of(level, b)
    phys = {n: _planes(_full(b[n], level, size), rank) for n in ("grad_output", "self", "indices")}
    rest = [b[n] for n in ("kernel_size", "stride", "padding", "dilation", "ceil_mode")]
    out = func(phys["grad_output"], phys["self"], *rest, phys["indices"])
    x = _full(b["self"], level, size)
    return BatchedTensor(out.reshape(x.shape), level)


# ---------------------------------------------------------------------------- nll_loss
_NONE, _MEAN, _SUM = 0, 1, 2


def _rows(self_p, target_p, level_rank):
    """``[B, N, C]`` and ``[B, N]`` from a physical self of logical rank 1 or 2."""
    if level_rank == 1:
        return self_p.unsqueeze(1), target_p.unsqueeze(1)
    return self_p, target_p


def _class_weights(target, weight, ignore_index, dtype):
    """Each row's weight: its class's (1 without weights), 0 where the target is ignored."""
    keep = target != ignore_index
    if weight is None:
        return keep.to(dtype)
    safe = target.where(keep, 0)
    return weight.index_select(0, safe.reshape(-1)).reshape(target.shape) * keep


def _nll_rows(func, level, args, kwargs):
    """The bound arguments, the example's rank, the batch size and the input and target as
    (batch, rows, classes) and (batch, rows); all None where no rule applies (a batched class
    weight, or an input of another rank), so the call takes the fallback."""
    _, b = _bind(func, args, kwargs)
    rank = _logical(b["self"], level)
    if is_batched(b["weight"], level) or rank not in (1, 2):
        return None, None, None, None, None
    size = _size_of(level, b)
    s, t = _rows(_full(b["self"], level, size), _full(b["target"], level, size), rank)
    return b, rank, size, s, t


def _nll_loss_forward(func, level, args, kwargs):
    """Unreduced over the batch's rows in one call, then summed (and divided by the weight
    total) per example."""
    b, rank, size, s, t = _nll_rows(func, level, args, kwargs)
    if b is None:
        return NotImplemented
    weight = b["weight"]
    n, c = s.shape[1], s.shape[2]
    # torch's rule picks each row's class with gather, so a target out of range raises gather's
    # error (a RuntimeError naming the physical class dim), not the loss kernel's IndexError
    s.gather(2, t.where(t != b["ignore_index"], 0).unsqueeze(2))
    out, _ = func(s.reshape(size * n, c), t.reshape(size * n), weight, _NONE, b["ignore_index"])
    out = out.reshape(size, n)
    reduction = b["reduction"]
    total = _class_weights(t, weight, b["ignore_index"], s.dtype).sum(1)
    if reduction == _NONE:
        empty = s.new_empty((size, 0)) if rank == 2 else s.new_zeros((size,))
        return BatchedTensor(out if rank == 2 else out.reshape(size), level), BatchedTensor(empty, level)
    loss = out.sum(1)
    if reduction == _MEAN:
        loss = loss / total
    return BatchedTensor(loss, level), BatchedTensor(total, level)


def _nll_loss_backward(func, level, args, kwargs):
    """The unreduced backward over the batch's rows, each row's incoming gradient the example's
    (divided by its weight total under ``'mean'``)."""
    b, rank, size, s, t = _nll_rows(func, level, args, kwargs)
    if b is None:
        return NotImplemented
    go, weight, total = b["grad_output"], b["weight"], b["total_weight"]
    n, c = s.shape[1], s.shape[2]
    g = _full(go, level, size)
    if b["reduction"] == _MEAN:
        g = g / _full(total, level, size)
    g = g.reshape(size, -1).expand(size, n) if b["reduction"] != _NONE or rank == 1 else g
    out = func(g.reshape(size * n), s.reshape(size * n, c), t.reshape(size * n), weight, _NONE,
               b["ignore_index"], s.new_ones(()))
    return BatchedTensor(out.reshape(_full(b["self"], level, size).shape), level)


# ---------------------------------------------------------------------------- embedding
def _offset(indices, size, rows):
    """Indices into a ``[B*rows, ...]`` table: example ``b``'s shifted by ``b * rows``."""
    shift = (indices.new_ones((size,)).cumsum(0) - 1) * rows
    return indices + shift.reshape(size, *[1] * (indices.dim() - 1))


def _embedding(func, level, args, kwargs):
    names, b = _bind(func, args, kwargs)
    w, idx = b["weight"], b["indices"]
    rest = {n: b[n] for n in names[2:] if n in b}
    if not is_batched(w, level):
        return BatchedTensor(func(w, idx._value, **rest), level)
    size = _size_of(level, b)
    table = w._value
    rest.pop("padding_idx", None)     # a row index of one example; it matters only to the backward
    return BatchedTensor(func(_flat(table), _offset(_full(idx, level, size), size, table.shape[1]), **rest), level)


def _embedding_dense_backward(func, level, args, kwargs):
    """Per example gradients of the table: one backward into ``[B*rows, D]`` through offset
    indices; the padding row, one index per example, zeroed afterwards."""
    names, b = _bind(func, args, kwargs)
    size = _size_of(level, b)
    rows, pad = b["num_weights"], b["padding_idx"]
    go = _full(b["grad_output"], level, size)
    idx = _offset(_full(b["indices"], level, size), size, rows)
    out = func(go, idx, size * rows, -1, b["scale_grad_by_freq"]).reshape(size, rows, -1)
    if pad >= 0:
        out = out.index_fill(1, idx.new_full((1,), pad), 0)
    return BatchedTensor(out, level)


# ---------------------------------------------------------------------------- layer norm
def _native_layer_norm(func, level, args, kwargs):
    """The normalization runs on the physical input (its batch dim is one more leading dim); a
    batched weight or bias is applied afterwards, per example."""
    names, b = _bind(func, args, kwargs)
    x, shape, w, bias = b["input"], b["normalized_shape"], b["weight"], b["bias"]
    size = _size_of(level, b)
    rank = _logical(x, level)
    affine = is_batched(w, level) or is_batched(bias, level)
    out, mean, rstd = func(_full(x, level, size), shape, None if affine else w, None if affine else bias, b["eps"])
    if affine:
        if w is not None:
            out = out * (_pad(w._value, len(shape), rank) if is_batched(w, level) else w)
        if bias is not None:
            out = out + (_pad(bias._value, len(shape), rank) if is_batched(bias, level) else bias)
    return tuple(BatchedTensor(t, level) for t in (out, mean, rstd))


def _native_layer_norm_backward(func, level, args, kwargs):
    """The input's gradient from one physical call; the weight's and bias's summed per example
    (one call would sum them over the batch too)."""
    names, b = _bind(func, args, kwargs)
    shape, w, mask = b["normalized_shape"], b["weight"], b["output_mask"]
    size = _size_of(level, b)
    rank = _logical(b["input"], level)
    go, x, mean, rstd = (_full(b[n], level, size) for n in ("grad_out", "input", "mean", "rstd"))
    scaled, weight = go, w
    if is_batched(w, level):
        scaled, weight = go * _pad(w._value, len(shape), rank), None
    gi = func(scaled, x, shape, mean, rstd, weight, None, [mask[0], False, False])[0] if mask[0] else None
    dims = list(range(1, rank - len(shape) + 1))
    gw = gb = None
    if mask[1] and w is not None:
        gw = (go * ((x - mean) * rstd)).sum(dims) if dims else go * ((x - mean) * rstd)
    if mask[2] and b["bias"] is not None:
        gb = go.sum(dims) if dims else go.clone()
    return tuple(None if t is None else BatchedTensor(t, level) for t in (gi, gw, gb))


# ---------------------------------------------------------------------------- gather, scatter, index
def _dim_past_batch(d, rank):
    if not -max(rank, 1) <= d < max(rank, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(rank, 1)}, "
                         f"{max(rank, 1) - 1}], but got {d})")
    return d % rank + 1


def _gather_scatter(func, level, args, kwargs):
    """Every tensor argument batched (the unbatched expanded), the dim moved past the batch dim."""
    _refuse_unbatched_self(func, level, args, kwargs)
    names, b = _bind(func, args, kwargs)
    tensors = {n: v for n, v in b.items() if isinstance(v, Tensor)}
    rank = _logical(b["self"], level)
    if rank == 0 or any(_logical(t, level) != rank for t in tensors.values()):
        return NotImplemented       # a 0-dim example, or an index of another rank: the fallback's checks
    size = _size_of(level, b)
    phys = {n: _full(t, level, size) for n, t in tensors.items()}
    b.update(phys, dim=_dim_past_batch(b["dim"], rank))
    positional = [b.pop(n) for n in names if n in b]
    out = func(*positional, **b)
    return args[0] if func.overloadpacket.__name__.endswith("_") else _wrap(out, level)


def _index(func, level, args, kwargs):
    """Advanced indexing with an explicit batch index in front: ``P[arange(B), *indices]``,
    the batched indices padded to the same logical rank. Boolean masks take the fallback."""
    if func._overloadname != "Tensor":
        return NotImplemented
    self, indices = args[0], list(args[1])
    present = [i for i, t in enumerate(indices) if t is not None]
    if not present or any(indices[i].dtype.is_floating_point or indices[i].dtype.itemsize == 1 for i in present):
        return NotImplemented
    size = _batch_size(level, [self, *[indices[i] for i in present]])
    k = max(_logical(indices[i], level) for i in present)
    phys = [None if t is None else (_pad(t._value, _logical(t, level), k) if is_batched(t, level) else t)
            for t in indices]
    arange = _physical_of(indices[present[0]], level).new_ones((size,)).cumsum(0) - 1
    out = func(_full(self, level, size), [arange.reshape(size, *[1] * k), *phys])
    adjacent = present == list(range(present[0], present[-1] + 1))
    if adjacent and present[0] > 0:    # torch puts adjacent index dims where the first index was
        out = out.movedim(list(range(1, 1 + k)), list(range(1 + present[0], 1 + present[0] + k)))
    return BatchedTensor(out, level)


def _index_put(func, level, args, kwargs):
    """Writes through advanced indices (``index_put``; ``_index_put_impl_``, the backward of
    ``a[i]``): the same explicit batch index as ``_index``; the values, laid out for one example's
    indexed shape, moved to the physical one (the index dims first when the batch index made the
    indices non-adjacent)."""
    _refuse_unbatched_self(func, level, args, kwargs)
    names, b = _bind(func, args, kwargs)
    self, indices, values = b["self"], list(b["indices"]), b["values"]
    present = [i for i, t in enumerate(indices) if t is not None]
    if not present or any(indices[i].dtype.is_floating_point or indices[i].dtype.itemsize == 1 for i in present):
        return NotImplemented
    size = _size_of(level, b)
    k = max(_logical(indices[i], level) for i in present)
    phys = [None if t is None else (_pad(t._value, _logical(t, level), k) if is_batched(t, level) else t)
            for t in indices]
    batch = (_physical_of(indices[present[0]], level).new_ones((size,)).cumsum(0) - 1).reshape(size, *[1] * k)
    target = _full(self, level, size)
    shown = _index_shape(tuple(target.shape[1:]), present, k, [t for t in phys if t is not None], size)
    v = _pad(_full(values, level, size), _logical(values, level), len(shown)).expand(size, *shown)
    adjacent = present == list(range(present[0], present[-1] + 1))
    if adjacent and present[0] > 0:
        v = v.movedim(list(range(1 + present[0], 1 + present[0] + k)), list(range(1, 1 + k)))
    unsafe = (b["unsafe"],) if "unsafe" in b else ()        # _index_put_impl(_)'s extra flag
    out = func(target, [batch, *phys], v, b.get("accumulate", False), *unsafe)
    return args[0] if _inplace_name(func) else BatchedTensor(out, level)


def _inplace_name(func):
    return func.overloadpacket.__name__.endswith("_")


def _index_shape(example, present, k, phys, size):
    """One example's indexed shape: the index dims where torch puts them, the other dims kept."""
    lead = list(broadcast_shapes(*[tuple(t.shape) for t in phys]))
    lead = lead[-k:] if len(lead) > k else [1] * (k - len(lead)) + lead
    rest = [n for d, n in enumerate(example) if d not in present]
    adjacent = present == list(range(present[0], present[-1] + 1))
    if adjacent:
        return [*example[:present[0]], *lead, *example[present[-1] + 1:]]
    return [*lead, *rest]


NN_RULES = {
    "convolution": _convolution, "convolution_backward": _convolution_backward,
    "max_pool2d_with_indices": _max_pool2d, "max_pool2d_with_indices_backward": _max_pool2d_backward,
    "nll_loss_forward": _nll_loss_forward, "nll_loss_backward": _nll_loss_backward,
    "embedding": _embedding, "embedding_dense_backward": _embedding_dense_backward,
    "native_layer_norm": _native_layer_norm, "native_layer_norm_backward": _native_layer_norm_backward,
    "gather": _gather_scatter, "scatter": _gather_scatter, "scatter_": _gather_scatter,
    "scatter_add": _gather_scatter, "scatter_add_": _gather_scatter, "scatter_reduce": _gather_scatter,
    "scatter_reduce_": _gather_scatter, "index": _index,
    "index_put": _index_put, "index_put_": _index_put,
    "_index_put_impl": _index_put, "_index_put_impl_": _index_put,     # index's backward (autograd's own put)
}
