"""Embedding lookups (``aten/src/ATen/native/Embedding.cpp``).

The forward pass is a row gather, ``weight.index_select(0, indices)``, reshaped to the indices'
shape plus the embedding dim. Its backward adds each output row's gradient into the row of the
weight it was read from (an accumulating ``index_put_``: a repeated index adds once per use),
skipping ``padding_idx`` and, with ``scale_grad_by_freq``, dividing by how often each row was used.
"""
from ...c10 import scalar_type as st
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
    rows = weight.index_select(0, indices.reshape(-1))
    return rows.view(*indices.shape, weight.shape[1])


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    _check_indices(indices, "embedding_backward")
    flat = indices.reshape(-1)
    grad = grad_output.reshape(flat.numel(), grad_output.shape[-1])
    if padding_idx >= 0:
        grad = grad.masked_fill((flat == padding_idx).unsqueeze(1), 0)
    if scale_grad_by_freq:
        counts = zeros((num_weights,), dtype=grad.dtype, device=grad.device)
        counts.index_put_((flat,), ones(flat.shape, dtype=grad.dtype, device=grad.device), accumulate=True)
        grad = grad.div(counts.index_select(0, flat).unsqueeze(1))
    out = zeros((num_weights, grad.shape[1]), dtype=grad.dtype, device=grad.device)
    return out.index_put_((flat,), grad, accumulate=True)
