"""Bags of embeddings (``aten/src/ATen/native/EmbeddingBag.cpp``).

``_embedding_bag`` reduces the rows of ``weight`` named by ``indices`` bag by bag: bag ``b`` holds
the positions ``offsets[b]`` up to the next offset (the last bag runs to the end, unless
``include_last_offset`` makes the last offset an end). Modes: 0 sum (optionally each row scaled by
its ``per_sample_weights`` entry), 1 mean (the sum divided by the bag's size), 2 max (per
feature, with the row that held it). Rows at ``padding_idx`` take no part and are not counted.

It returns torch's four tensors: the output, ``offset2bag`` (each position's bag), ``bag_size``
and ``max_indices``; the backward formulas read the last three. Which position belongs to which
bag is bookkeeping on the (small) index tensors, done on the host; the embedding rows themselves
move through the indexing kernels (``index_select``, ``index_add_``, ``index_put_``), so the
sums add rows in position order, as torch's loop over a bag does.
"""
import numpy as np

from ...c10 import scalar_type as st
from ..dispatcher import call
from .tensor_factories import from_host, zeros

SUM, MEAN, MAX = 0, 1, 2


def _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset):
    """``check_arguments``: index dtypes, the first and last offset, per-sample weights."""
    for name, t in (("indices", indices), ("offsets", offsets)):
        if t.dtype not in (st.int64, st.int32):
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
                               f"types: Long, Int; but got torch.{t.dtype.torch_name}Tensor instead (while "
                               "checking arguments for embedding_bag)")
    if weight.dtype not in (st.float16, st.bfloat16, st.float32, st.float64):
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           f"Half, BFloat16, Float, Double; but got torch.{weight.dtype.torch_name}Tensor instead "
                           "(while checking arguments for embedding_bag)")
    if indices.dim() != 1 or offsets.dim() != 1:
        raise RuntimeError("input has to be a 1D or 2D Tensor, but got Tensor of dimension "
                           f"{indices.dim() if indices.dim() != 1 else offsets.dim()}")
    host_offsets = np.array(offsets._host_values(), dtype=np.int64)
    if host_offsets.size:
        if host_offsets[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {host_offsets[0]}")
        if host_offsets[-1] > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                               f"offsets[-1] of {host_offsets[-1]}")
    if include_last_offset and host_offsets.size < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if per_sample_weights is not None:
        if mode != SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'per_sample_weights' to have scalar type "
                               f"{weight.dtype.torch_name.capitalize()}")
        if per_sample_weights.dim() != 1 or per_sample_weights.shape[0] != indices.shape[0]:
            raise RuntimeError("expected per_sample_weights.size(0) to be equal to indices.numel()")
    return host_offsets


def _bags(host_indices, host_offsets, include_last_offset, padding_idx):
    """(num_bags, offset2bag, used): each position's bag (-1 past the last bag's end) and
    whether it takes part (a position in some bag, not at ``padding_idx``)."""
    num_bags = host_offsets.size - 1 if include_last_offset else host_offsets.size
    ends = np.append(host_offsets[1:num_bags], host_offsets[num_bags] if include_last_offset else host_indices.size)
    positions = np.arange(host_indices.size)
    offset2bag = np.searchsorted(host_offsets[:num_bags], positions, side="right") - 1
    inside = (offset2bag >= 0) & (positions < (ends[offset2bag] if num_bags else 0))
    offset2bag = np.where(inside, offset2bag, -1)
    used = inside & (host_indices != padding_idx)
    return num_bags, offset2bag, used


def _index(values, device):
    return from_host(np.ascontiguousarray(values, dtype=np.int64), st.int64, device)


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    host_offsets = _check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    host_indices = np.array(indices._host_values(), dtype=np.int64)
    outside = (host_indices < 0) | (host_indices >= weight.shape[0])
    if outside.any():      # each of torch's CPU loops words it its own way
        if mode == MAX:
            raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                               f"{host_indices[outside][0]}")
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    num_bags, offset2bag, used = _bags(host_indices, host_offsets, include_last_offset, padding_idx)
    bag_size = np.bincount(offset2bag[used], minlength=num_bags).astype(np.int64)
    if mode == MAX:
        output, max_indices = _max(weight, host_indices, offset2bag, used, num_bags)
    else:
        output = _sum(weight, host_indices, offset2bag, used, num_bags, per_sample_weights)
        if mode == MEAN:     # ``apply_bag_size``: divided by the size, an empty bag's by 1
            divisor = from_host(np.maximum(bag_size, 1).astype(np.float64), weight.dtype, weight.device)
            output = call("div.Tensor", output, call("unsqueeze", divisor, 1))
        max_indices = _index(bag_size, weight.device)
    return (output, _index(np.maximum(offset2bag, 0), weight.device), _index(bag_size, weight.device),
            max_indices)


def _embedding_bag_forward_only(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                                per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                          include_last_offset, padding_idx)


def _sum(weight, host_indices, offset2bag, used, num_bags, per_sample_weights):
    """Each used row (scaled by its sample weight) added into its bag, in position order."""
    keep = np.flatnonzero(used)
    rows = call("index_select", weight, 0, _index(host_indices[keep], weight.device))
    if per_sample_weights is not None:
        scale = call("index_select", per_sample_weights, 0, _index(keep, weight.device))
        rows = call("mul.Tensor", rows, call("unsqueeze", scale, 1))
    out = zeros((num_bags, weight.shape[1]), dtype=weight.dtype, device=weight.device)
    return call("index_add_", out, 0, _index(offset2bag[keep], weight.device), rows)


def _max(weight, host_indices, offset2bag, used, num_bags):
    """Per bag and feature the largest value, the first row holding it winning a tie (torch's
    loop replaces only on a strictly greater value); an empty bag gives zeros and index -1.
    Bags advance together, one position of each per step."""
    width = weight.shape[1]
    members = [np.flatnonzero(used & (offset2bag == b)) for b in range(num_bags)]
    longest = max((len(m) for m in members), default=0)
    out = zeros((num_bags, width), dtype=weight.dtype, device=weight.device)
    arg = call("full", [num_bags, width], -1, dtype=st.int64, device=weight.device)
    for k in range(longest):
        has = np.array([len(m) > k for m in members])
        rows_at = np.array([host_indices[m[k]] if len(m) > k else 0 for m in members], dtype=np.int64)
        rows = call("index_select", weight, 0, _index(rows_at, weight.device))
        first = call("unsqueeze", from_host(np.array([len(m) > 0 and k == 0 for m in members]), st.bool_,
                                            weight.device), 1)
        live = call("unsqueeze", from_host(has, st.bool_, weight.device), 1)
        take = call("logical_and", live, call("logical_or", first, call("gt.Tensor", rows, out)))
        out = call("where.self", take, rows, out)
        candidate = call("expand", call("unsqueeze", _index(rows_at, weight.device), 1), [num_bags, width])
        arg = call("where.self", take, candidate, arg)
    return out, arg


# ---- backward
def _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights,
                            scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx=-1):
    if sparse:
        return call("_embedding_bag_sparse_backward", grad, indices, offsets, offset2bag, bag_size, num_weights,
                    scale_grad_by_freq, mode, per_sample_weights, padding_idx)
    return call("_embedding_bag_dense_backward", grad, indices, offset2bag, bag_size, maximum_indices,
                num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx)


def _embedding_bag_sparse_backward(grad, indices, offsets, offset2bag, bag_size, num_weights, scale_grad_by_freq,
                                   mode, per_sample_weights=None, padding_idx=-1):
    """The weight's gradient as a sparse COO tensor (CompositeImplicitAutograd, as torch's): each
    position gets its bag's gradient row (times the reciprocal of the bag's size for a mean, times
    its sample weight when given), and ``embedding``'s sparse backward makes one entry per position,
    padding positions dropped, uncoalesced. Max mode never reaches here: ``F.embedding_bag`` refuses
    it with sparse gradients."""
    index_grad = call("index_select", grad, 0, offset2bag)
    if mode == MEAN:
        # torch writes ``1 / bag_size`` in C++: the reciprocal, then a product (not a division).
        inverse = call("reciprocal", call("_to_copy", bag_size, dtype=grad.dtype))
        index_grad = call("mul.Tensor", index_grad, call("index_select", call("unsqueeze", inverse, 1), 0, offset2bag))
    if per_sample_weights is not None:
        index_grad = call("mul.Tensor", index_grad, call("unsqueeze", per_sample_weights, 1))
    return call("embedding_backward", index_grad, indices, num_weights, padding_idx, scale_grad_by_freq, True)


def _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                  scale_grad_by_freq, mode, per_sample_weights=None, padding_idx=-1):
    """Sum and mean: each position not at ``padding_idx`` adds its bag's gradient times its scale
    into its row, in position order. Max: each feature's gradient goes to the row that won it."""
    out = zeros((num_weights, grad.shape[1]), dtype=grad.dtype, device=grad.device)
    if mode == MAX:
        return _max_backward(grad, out, maximum_indices, bag_size)
    host_indices = np.array(indices._host_values(), dtype=np.int64)
    host_bags = np.array(offset2bag._host_values(), dtype=np.int64)
    keep = np.flatnonzero(host_indices != padding_idx)
    scale = _backward_scales(host_indices, host_bags, keep, bag_size, mode, scale_grad_by_freq, per_sample_weights)
    rows = call("index_select", grad, 0, _index(host_bags[keep], grad.device))
    if scale is not None:
        rows = call("mul.Tensor", rows, call("unsqueeze", from_host(scale, grad.dtype, grad.device), 1))
    return call("index_add_", out, 0, _index(host_indices[keep], grad.device), rows)


def _backward_scales(host_indices, host_bags, keep, bag_size, mode, scale_grad_by_freq, per_sample_weights):
    """Each kept position's factor, in double and then rounded to the gradient's type, as torch's
    loop computes it: its sample weight, over its row's count, over its bag's size for a mean.
    The count torch reads is ``counts[sorted_indices[g]]`` for the position's group g (the rank
    of its row among the distinct rows), which is its own row's count only while the distinct
    rows are 0, 1, 2, ...; reproduced as it is."""
    if per_sample_weights is None and not scale_grad_by_freq and mode != MEAN:
        return None
    scale = np.ones(keep.size, np.float64)
    if per_sample_weights is not None:
        scale = np.array(per_sample_weights._host_values(), dtype=np.float64)[keep]
    if scale_grad_by_freq:
        counts = np.bincount(host_indices, minlength=int(host_indices.max(initial=0)) + 1)
        groups = np.searchsorted(np.unique(host_indices), host_indices[keep])
        scale = scale / counts[np.sort(host_indices, kind="stable")[groups]]
    if mode == MEAN:
        sizes = np.array(bag_size._host_values(), dtype=np.int64)[host_bags[keep]]
        scale = np.where(sizes != 0, scale / np.where(sizes != 0, sizes, 1), scale)
    return scale


def _max_backward(grad, out, maximum_indices, bag_size):
    """``index_add_`` of each non-empty bag's gradient at its winning rows, feature by feature."""
    nonempty = _index(np.flatnonzero(np.array(bag_size._host_values()) > 0), grad.device)
    winners = call("index_select", maximum_indices, 0, nonempty)
    grads = call("index_select", grad, 0, nonempty)
    features = call("expand", call("unsqueeze", call("arange", grad.shape[1], dtype=st.int64, device=grad.device),
                                   0), list(winners.shape))
    return call("index_put_", out, (call("reshape", winners, [-1]), call("reshape", features, [-1])),
                call("reshape", grads, [-1]), True)


def _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    """d out[bag] / d w_i = ⟨grad[bag], weight[indices[i]]⟩ for each used position i, 0 elsewhere."""
    if mode != SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    host_indices = np.array(indices._host_values(), dtype=np.int64)
    bags = call("index_select", grad, 0, offset2bag)
    rows = call("index_select", weight, 0, indices)
    dots = call("sum.dim_IntList", call("mul.Tensor", bags, rows), [1])
    padding = from_host(host_indices == padding_idx, st.bool_, grad.device)
    return call("masked_fill.Scalar", dots, padding, 0)


# ---- the public operator (CompositeImplicitAutograd)
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False):
    return embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                     include_last_offset, None)


def embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                              include_last_offset, padding_idx):
    """``embedding_bag``: ``padding_idx`` checked and wrapped; indices and offsets brought to one
    integer type (``promoteIndicesAndOffsets``); then ``_embedding_bag`` (``_embedding_bag_forward_only``
    for a weight that needs no gradient)."""
    if padding_idx is None:
        padding_idx = -1
    else:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= rows
    if indices.dtype != offsets.dtype and {indices.dtype, offsets.dtype} <= {st.int32, st.int64}:
        indices = call("_to_copy", indices, dtype=st.int64)
        offsets = call("_to_copy", offsets, dtype=st.int64)
    # a weight without a gradient to come (none asked, no tangent) takes the operator that keeps
    # nothing for a backward, as torch's composite chooses
    forward_only = not weight.requires_grad and not getattr(weight, "_fw_grads", None)
    return call("_embedding_bag_forward_only" if forward_only else "_embedding_bag", weight, indices, offsets,
                scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx)
