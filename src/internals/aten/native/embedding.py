"""Embedding lookups (``aten/src/ATen/native/Embedding.cpp``).

The forward pass is a row gather, ``weight.index_select(0, indices)``, reshaped to the indices'
shape plus the embedding dim. Its backward adds each output row's gradient into the row of the
weight it was read from (an accumulating ``index_put_``: a repeated index adds once per use),
skipping ``padding_idx`` and, with ``scale_grad_by_freq``, dividing by how often each row was used.
"""
from ...c10 import scalar_type as st
from .. import dispatcher
from .tensor_factories import ones, zeros


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
    if sparse:
        raise NotImplementedError("internals' embedding has no sparse gradient")
    rows = dispatcher.call("index_select", weight, 0, dispatcher.call("reshape", indices, [-1]))
    return dispatcher.call("view", rows, [*indices.shape, weight.shape[1]])


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
