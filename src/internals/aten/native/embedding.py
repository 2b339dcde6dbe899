"""Embedding lookups (``aten/src/ATen/native/Embedding.cpp``).

The forward pass is a row gather, ``weight.index_select(0, indices)``, reshaped to the indices'
shape plus the embedding dim. Its backward adds each output row's gradient into the row of the
weight it was read from (an accumulating ``index_put_``: a repeated index adds once per use),
skipping ``padding_idx`` and, with ``scale_grad_by_freq``, dividing by how often each row was used.
"""
from ...c10 import scalar_type as st
from .. import dispatcher
from .sparse.sparse_tensor import new_sparse
from .tensor_factories import empty, ones, zeros


def _check_indices(indices, name):
    if indices.dtype not in (st.int64, st.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{indices.dtype.torch_name}Tensor instead "
                           f"(while checking arguments for {name})")


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``embedding``, CompositeExplicitAutograd: rows of ``weight`` at ``indices``."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, "embedding")
    rows = dispatcher.call("index_select", weight, 0, dispatcher.call("reshape", indices, [-1]))
    return dispatcher.call("view", rows, [*indices.shape, weight.shape[1]])


def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    """The weight's gradient, dense or sparse as ``embedding`` was asked (CompositeImplicitAutograd)."""
    if sparse:
        return dispatcher.call("embedding_sparse_backward", grad, indices, num_weights, padding_idx,
                               scale_grad_by_freq)
    return dispatcher.call("embedding_dense_backward", grad, indices, num_weights, padding_idx, scale_grad_by_freq)


def embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """A sparse COO gradient of the weight's size: one entry per lookup (the padding row's
    dropped), each holding that output row's gradient, left uncoalesced as torch leaves it, so a
    row read twice appears twice; the optimizer sums them when it coalesces."""
    _check_indices(indices, "embedding_backward")
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    features = grad.shape[-1]
    if padding_idx != -1:
        kept = dispatcher.call("ne.Scalar", indices, padding_idx)
        indices, grad = dispatcher.call("index.Tensor", indices, [kept]), dispatcher.call("index.Tensor", grad, [kept])
    if grad.numel() == 0:       # every lookup was the padding row (or none was made)
        indices = empty((1, 0), dtype=st.int64, device=grad.device)
        values = empty((0, features), dtype=grad.dtype, device=grad.device)
    else:
        indices = dispatcher.call("_to_copy", dispatcher.call("reshape", indices, [1, -1]), dtype=st.int64) \
            if indices.dtype is not st.int64 else dispatcher.call("reshape", indices, [1, -1])
        values = dispatcher.call("reshape", grad, [-1, features])
    # torch's unsafe constructor calls fewer than two entries coalesced
    return new_sparse((num_weights, features), indices, values, values.shape[0] < 2)


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    _check_indices(indices, "embedding_backward")
    flat = dispatcher.call("reshape", indices, [-1])
    grad = dispatcher.call("reshape", grad_output, [flat.numel(), grad_output.shape[-1]])
    if padding_idx >= 0:
        padding = dispatcher.call("unsqueeze", dispatcher.call("eq.Scalar", flat, padding_idx), 1)
        grad = dispatcher.call("masked_fill.Scalar", grad, padding, 0)
    if scale_grad_by_freq:
        counts = zeros((num_weights,), dtype=grad.dtype, device=grad.device)
        dispatcher.call("index_put_", counts, (flat,), ones(flat.shape, dtype=grad.dtype, device=grad.device), True)
        per_row = dispatcher.call("unsqueeze", dispatcher.call("index_select", counts, 0, flat), 1)
        grad = dispatcher.call("div.Tensor", grad, per_row)
    out = zeros((num_weights, grad.shape[1]), dtype=grad.dtype, device=grad.device)
    return dispatcher.call("index_put_", out, (flat,), grad, True)
