"""Indexing with tensors: advanced indexing, gather/scatter, masks (``aten/src/ATen/native/
TensorAdvancedIndexing.cpp``, ``Indexing.cpp``, ``ScatterGatherChecks.h``, ``TensorCompare.cpp``).

Every operator here works the same way. On the host, with NumPy, it checks the indices (torch's
messages and exception classes; a negative index counts from the end) and turns them into two
arrays of element offsets: where each element comes from and where it goes, in the operands'
flat buffers. Then one loop (``cpu/indexing.py`` or ``cuda/indexing.py``) moves the elements.
Numba checks no bounds, so no offset reaches a loop before the host has checked it. The index
tensors are read on the host for that check (torch checks them inside its kernels instead).

gather, the scatters (``scatter`` with a tensor or a number, with or without ``reduce``,
``scatter_add``, ``scatter_reduce.two``), ``index_add`` and ``index_copy`` are declared as torch
declares them, structured: a meta step (the checks, the output of self's sizes and dtype, the
overlap rules) and an impl step (self copied into the output, then the loop), with out= the
primary form and the functional and in-place forms derived from it.
"""
import math
import warnings
from collections import namedtuple

import numpy as np

from ..._tensor_base import TensorBase
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format, preserve_format
from ...c10.tensor_impl import contiguous_strides
from .. import dispatcher
from ..context import alert_not_deterministic
from ..empty_tensor import is_meta_execution
from ..tensor_iterator import (
    _overlap,
    assert_no_internal_overlap,
    assert_no_overlap,
    broadcast_shapes,
    check_no_overlap,
    has_internal_overlap,
    output_layout,
)
from .copy import buffer, fill_, same_device_copy, to_device
from .dispatch_stub import loops, refuse_float8, refuse_unlisted_dtypes
from .elementwise import common_device
from .structured import set_output, structured
from .tensor_factories import empty_strided, from_host, wrap_scalar
from .tensor_shape import as_strided, compute_stride, expand, select, wrap_dim

INDEX_DTYPES = (st.int64, st.int32, st.uint8, st.bool_)
_Layout = namedtuple("_Layout", "sizes strides")     # an operand's geometry, for output_layout


# ---------------------------------------------------------------------- offsets and the loop
def element_offsets(positions, strides, offset):
    """The element offsets of a strided grid: ``offset + sum_d positions[d][i_d] * strides[d]``,
    an array of shape ``(len(p) for p in positions)``. ``positions[d]`` lists the indices read
    along dim d (``np.arange(size)`` for a plain walk)."""
    out = np.array(offset, dtype=np.int64)
    for p, s in zip(positions, strides):
        out = out[..., None] + np.asarray(p, dtype=np.int64) * s
    return out


def walk(t):
    """Every element's offset in ``t``'s storage, in row-major order of its shape."""
    return element_offsets([np.arange(n) for n in t.shape], t.stride(), t.storage_offset())


def move(out, out_at, src, src_at, reduce=None):
    """``out[out_at] = src[src_at]`` on ``out``'s device, same dtype on both sides; with
    ``reduce="add"`` (or ``"multiply"``) ``+=`` (``*=``) instead.

    The 16-bit floats are stored as bit patterns, which a copy may move but not add: they
    accumulate in float32 copies laid out as the originals, then round once. complex32's words
    (two float16 parts) accumulate in complex64 copies too, but round after each sum, as
    ``c10::complex<c10::Half>``'s ``+=`` does: an element named k times takes k rounds.
    """
    out_at, src_at = np.ascontiguousarray(out_at, np.int64).ravel(), np.ascontiguousarray(src_at, np.int64).ravel()
    if not out_at.size:
        return out
    if reduce and (out.dtype.is_reduced_float or out.dtype is st.complex32):
        wide_out, wide_src = _float32_twin(out), _float32_twin(src)
        rounds = _occurrences(out_at) if out.dtype is st.complex32 else np.zeros(out_at.size, np.int64)
        for k in range(int(rounds.max()) + 1):
            now = rounds == k
            move(wide_out, out_at[now] - out.storage_offset(), wide_src, src_at[now] - src.storage_offset(), reduce)
            same_device_copy(out, wide_out)
            if k < rounds.max():
                same_device_copy(wide_out, out)      # the sums so far, rounded
        return out
    loops(out.device, "indexing").indexed_copy_loop(buffer(out), buffer(src), out_at, src_at, reduce)
    return out


def _occurrences(at):
    """For each offset in ``at``, how many times it came before (0 for its first)."""
    order = np.argsort(at, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(at[order])) + 1]
    counts = np.diff(np.r_[starts, at.size])
    occurrences = np.empty_like(at)
    occurrences[order] = np.arange(at.size) - np.repeat(starts, counts)
    return occurrences


def _float32_twin(t):
    """A float32 (for complex32, complex64) copy of ``t`` with its sizes and strides (storage
    offset 0)."""
    wide = st.complex64 if t.dtype is st.complex32 else st.float32
    twin = empty_strided(t.shape, t.stride(), dtype=wide, device=t.device)
    same_device_copy(twin, t)
    return twin


def _host_array(t):
    """An index tensor's values on the host (a copy, as NumPy integers or bools)."""
    return np.array(t._host_values())


def _as_device_tensor(values, dtype, device):
    return from_host(np.ascontiguousarray(values), dtype, device)


def _wrap_checked(values, size, dim, error=IndexError, message=None, wrap=True):
    """Indices along a dim of ``size``: negatives counted from the end (or, ``wrap=False``, refused
    as gather's and index_select's are), out of range refused."""
    bad = (values < (-size if wrap else 0)) | (values >= size)
    if bad.any():
        v = int(values[bad].flat[0])
        raise error(message.format(v, size) if message else f"index {v} is out of bounds for dimension {dim} "
                    f"with size {size}")
    return np.where(values < 0, values + size, values)


# ---------------------------------------------------------------------- advanced indexing
def _expand_indices(self, indices):
    """``expandTensors``: one int64 array (or None) per dim of ``self``, masks as their nonzero
    coordinates, plus each index's (sizes, strides) as TensorIterator will see it."""
    arrays, layouts = [], []
    for ix in indices:
        if ix is None:
            arrays.append(None)
            layouts.append(None)
            continue
        if ix.dtype not in INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        values = _host_array(ix)
        if ix.dtype in (st.bool_, st.uint8):
            d = len(arrays)
            for j, n in enumerate(ix.shape):
                if d + j >= self.dim():
                    raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {d + j + 1})")
                if n != self.shape[d + j]:
                    raise IndexError(f"The shape of the mask {list(ix.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {list(self.shape)} at index {d + j}")
            coords = np.nonzero(values.astype(bool))
            # torch indexes with the columns of nonzero's (n, k) result, laid out as its transpose:
            # a tensor of that layout (never filled) stands for them in the output's layout
            n, k = coords[0].size if coords else 0, len(coords)
            holder = empty_strided((n, k), (1, n), dtype=st.int64, device="cpu")
            for j, c in enumerate(coords):
                arrays.append(c.astype(np.int64))
                layouts.append(select(holder, 1, j))
        else:
            arrays.append(values.astype(np.int64))
            layouts.append(ix)
    if len(arrays) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {len(arrays)})")
    pad = self.dim() - len(arrays)
    return arrays + [None] * pad, layouts + [None] * pad


def _index_plan(self, indices, before_bounds=None):
    """Where ``self[indices]`` reads: (result shape, source offsets, the operands' layouts).

    The broadcast index dims replace the indexed dims where they stand if these are adjacent,
    and go first otherwise (NumPy's rule, ``AdvancedIndex`` in TensorAdvancedIndexing.cpp).
    ``before_bounds(result shape)`` runs the caller's checks that torch makes before its kernel
    checks each index against its dim.
    """
    arrays, layouts = _expand_indices(self, indices)
    dims = [d for d, a in enumerate(arrays) if a is not None]
    if not dims:
        raise RuntimeError("at least one index must be provided")   # torch: an all-None list
    try:
        shape = broadcast_shapes(*(arrays[d].shape for d in dims))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes " +
                         ", ".join(str(list(arrays[d].shape)) for d in dims)) from None
    if 0 not in shape and any(self.shape[d] == 0 for d in dims):
        raise IndexError("index is out of bounds for dimension with size 0")
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    before = [d for d in range(dims[0]) if adjacent]
    after = [d for d in range(self.dim()) if arrays[d] is None and d not in before]
    sizes, strides = self.shape, self.stride()
    result = tuple(sizes[d] for d in before) + shape + tuple(sizes[d] for d in after)
    if before_bounds is not None:
        before_bounds(result)
    read = np.zeros(shape, dtype=np.int64)
    for j, d in enumerate(dims):      # torch's message counts the index tensors, not self's dims
        read = read + _wrap_checked(np.broadcast_to(arrays[d], shape), self.shape[d], j) * self.stride(d)
    src = element_offsets([np.arange(sizes[d]) for d in before], [strides[d] for d in before], self.storage_offset())
    src = src.reshape(src.shape + (1,) * len(shape)) + read
    src = src.reshape(src.shape + (1,) * len(after)) + element_offsets(
        [np.arange(sizes[d]) for d in after], [strides[d] for d in after], 0)
    # TensorIterator's operands, as torch builds them: self restrided (stride 0 along the index
    # dims), and each index expanded to the broadcast shape, then viewed with size-1 dims for
    # self's own dims (``reshape_indexer``); the iterator broadcasts those.
    operands = [_Layout(result, tuple(strides[d] for d in before) + (0,) * len(shape) +
                        tuple(strides[d] for d in after))]
    for d in dims:
        ix = expand(layouts[d], *shape)
        sizes_1 = (1,) * len(before) + shape + (1,) * len(after)
        operands.append(_Layout(sizes_1, compute_stride(tuple(ix.shape), ix.stride(), sizes_1)))
    return result, np.broadcast_to(src, result), operands


def meta_index(out, self, indices):
    """``TORCH_PRECOMPUTE_META_FUNC2(index, Tensor)`` (TensorAdvancedIndexing.cpp): a given
    ``out`` of self's dtype, reaching no element twice and sharing no memory with self or an
    index; then the indices checked and expanded (masks to their coordinates) and where each
    element is read from planned (``make_info``, and here each index checked against its dim);
    the output of the indexed shape, laid out as TensorIterator lays out the operands
    (``build_index_op``), or ``out`` resized to it. Returns the output and the plan (torch's
    precomputed sizes and strides), which the impl step follows."""
    indices = list(indices)
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {len(indices)})")
    if out is not None:
        if out.dtype is not self.dtype:
            raise RuntimeError(f"index_out: self ({self.dtype.torch_name}) and result ({out.dtype.torch_name}) "
                               "must have the same scalar type")
        assert_no_internal_overlap(out._impl)
        assert_no_overlap(out._impl, self._impl)
        for ix in indices:
            if ix is not None:
                assert_no_overlap(out._impl, ix._impl)
    result, src_at, operands = _index_plan(self, indices)
    return set_output(out, result, self.dtype, self.device, output_layout(operands, result)), src_at


def impl_index(planned, self, indices):
    """``TORCH_IMPL_FUNC(index_out)``: each element of the output read from where the plan says
    (``index_stub``: advanced indexing copies)."""
    out, src_at = planned
    return move(out, walk(out), self, src_at)


index_out = structured(meta_index, impl_index)


def index_put_(self, indices, values, accumulate=False):
    """``index_put_``: ``self[indices] = values`` (or ``+=``), ``values`` broadcast to the indexed shape."""
    refuse_unlisted_dtypes("index_put", self, complex32=False, float8=self.dtype is st.float8_e8m0fnu)
    mask = None if accumulate else _masked_fill_mask(self, indices, values)
    if mask is not None:
        return masked_fill_scalar_(self, mask, values.item())
    common_device(self, values)

    def check_values(result):       # ``make_index_put_iterator``
        try:
            if broadcast_shapes(tuple(values.shape), result) != result:
                raise RuntimeError
        except RuntimeError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast "
                               f"to indexing result of shape {list(result)}") from None
        if values.dtype is not self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{self.dtype.torch_name} for the destination and {values.dtype.torch_name} "
                               "for the source.")
    result, dst_at, _ = _index_plan(self, list(indices), check_values)
    values = _on_device(values, self.device)
    lead = len(result) - values.dim()
    src_at = element_offsets([np.arange(n) if m != 1 else np.zeros(n, np.int64)
                              for n, m in zip(result, (1,) * lead + tuple(values.shape))],
                             (0,) * lead + values.stride(), values.storage_offset())
    if accumulate and self.dtype.is_reduced_float and self.device.type == "cpu":
        return _add_each_rounded(self, dst_at, values, src_at)
    return move(self, dst_at, values, src_at, "add" if accumulate else None)


def _add_each_rounded(out, out_at, src, src_at):
    """CPU ``index_put_(accumulate=True)`` on float16/bfloat16: ``cpu_index_kernel`` adds in
    the 16-bit type, so each add rounds (float16 2048 + 1 stays 2048), unlike ``move``'s one
    rounding. The adds to one element run in index order: the k-th add of every element in
    one vectorised step, k = 0, 1, ..."""
    out_at, src_at = np.asarray(out_at, np.int64).ravel(), np.asarray(src_at, np.int64).ravel()
    order = np.argsort(out_at, kind="stable")
    out_at, src_at = out_at[order], src_at[order]
    first = np.r_[True, out_at[1:] != out_at[:-1]]
    starts = np.flatnonzero(first)
    rank = np.arange(out_at.size) - np.repeat(starts, np.diff(np.r_[starts, out_at.size]))
    bits, values = buffer(out), _as_float32(out.dtype, buffer(src))
    for k in range(int(rank.max(initial=-1)) + 1):
        dst, pick = out_at[rank == k], src_at[rank == k]
        bits[dst] = _rounded_bits(out.dtype, _as_float32(out.dtype, bits[dst]) + values[pick])
    return out


def _as_float32(dtype, bits):
    if dtype is st.float16:
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _rounded_bits(dtype, f32):
    """float32 values to float16/bfloat16 bit patterns, rounding to nearest even."""
    if dtype is st.float16:
        return f32.astype(np.float16).view(np.uint16)
    b = f32.view(np.uint32)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f32), np.uint16(0x7FC0), rounded)


def index_put(self, indices, values, accumulate=False):
    return index_put_(dispatcher.call("clone", self), indices, values, accumulate)


def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    """``_index_put_impl_``: ``index_put_`` with a flag that lets torch's CUDA kernel skip its
    index checks (``unsafe``, set by autograd's own calls); every index is checked here."""
    return index_put_(self, indices, values, accumulate)


def _index_put_impl(self, indices, values, accumulate=False, unsafe=False):
    """The functional form (CompositeExplicitAutograd): a clone, then ``_index_put_impl_``."""
    return _index_put_impl_(dispatcher.call("clone", self), indices, values, accumulate, unsafe)


def _output_like_self(out, self, *inputs):
    """``set_output_raw_strided(0, self.sizes(), {}, self.options())`` (a fresh contiguous output,
    or ``out=`` checked and resized), then, for a given output, the index functions' overlap
    checks: no element reached twice, nothing shared with ``inputs``."""
    given = out is not None
    out = set_output(out, self.shape, self.dtype, self.device)
    if given:
        assert_no_internal_overlap(out._impl)
        for t in inputs:
            assert_no_overlap(out._impl, t._impl)
    return out


def meta_index_add(out, self, dim, index, source, *, alpha=1):
    """``TORCH_PRECOMPUTE_META_FUNC(index_add)`` (``index_func_meta_impl``,
    TensorAdvancedIndexing.cpp): the index a vector of int32/int64, source of self's dtype with
    one slice per index and self's slice shape; the output of self's sizes and dtype (contiguous,
    or ``out=`` checked and resized), which reaches no element twice and shares nothing with
    index or source."""
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{index.dtype.torch_name} and size: {list(index.shape)}")
    if index.dtype not in (st.int64, st.int32):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {index.dtype.torch_name}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_add_(): self ({self.dtype.torch_name}) and source ({source.dtype.torch_name}) "
                           "must have the same scalar type")
    size = source.shape[d] if source.dim() else 1
    if index.numel() != size:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({size}), for dim: {d}")
    # the dims other than ``dim`` must agree; a 0-d self or source is compared whole (a vector of
    # one element does not match a 0-d self)
    both = source.dim() and self.dim()
    if [s for k, s in enumerate(source.shape) if not both or k != d] != \
            [s for k, s in enumerate(self.shape) if not both or k != d]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    return _output_like_self(out, self, index, source)


def impl_index_add(out, self, dim, index, source, *, alpha=1):
    """``index_add_cpu_out``: ``self`` copied into the output (unless it is the output), then
    ``alpha`` times the slices of ``source`` along ``dim`` added in at ``index``, a repeated index
    receiving each: an accumulating ``index_put_`` with ``index`` in ``dim``'s place."""
    refuse_float8("index_add_", self)
    if out is not self:
        dispatcher.call("copy_", out, self)
    if self.dtype in st.LIMITED_UNSIGNED and _refuse_limited_unsigned_index_add(out, index):
        return out
    d = wrap_dim(dim, self.dim())
    bound = out.shape[d] if out.dim() else 1      # no index wraps around: -1 is out of bounds too
    outside = dispatcher.call("masked_select", index, dispatcher.call("bitwise_or.Tensor", dispatcher.call(
        "lt.Scalar", index, 0), dispatcher.call("ge.Scalar", index, bound)))
    if outside.numel():     # the vector loop's check, or the slices loop's
        if out.dim() <= 1:
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {outside[0].item()} is out of bounds for dimension {d} with size {bound}")
    values = source if alpha == 1 else _times_alpha(source, alpha)
    if out.dim() == 0:      # a 0-d tensor (and source) taken as a vector of one element
        index_put_(dispatcher.call("unsqueeze", out, 0), [dispatcher.call("reshape", index, [-1])],
                   dispatcher.call("reshape", values, [-1]), accumulate=True)
        return out
    return index_put_(out, [None] * d + [index], values, accumulate=True)


index_add_out = structured(meta_index_add, impl_index_add)


def _times_alpha(source, alpha):
    """``source * alpha`` in source's dtype, as the kernel's ``alpha.to<scalar_t>()`` multiplies
    (a bool source times 2 stays bool)."""
    if not (source.dtype.is_floating_point or source.dtype.is_complex):
        alpha = st.checked_convert(alpha, source.dtype).item()     # 2.5 multiplies an integer as 2
    values = dispatcher.call("mul.Tensor", source, wrap_scalar(alpha))
    return values if values.dtype is source.dtype else dispatcher.call("_to_copy", values, dtype=source.dtype)


def _refuse_limited_unsigned_index_add(out, index):
    """uint16, uint32 and uint64 have neither of ``index_add_cpu_``'s loops: a vector's (named
    ``index_add_``) nor, with more dims, ``scatter_add``'s, which runs only when there is
    something to add (True: nothing to add, ``out`` is done)."""
    if out.dim() <= 1:
        raise NotImplementedError(f'"index_add_" not implemented for \'{out.dtype.torch_name}\'')
    if index.numel() and out.numel():
        raise NotImplementedError(f'"scatter_gather_tensor_cpu" not implemented for \'{out.dtype.torch_name}\'')
    return True


# ---------------------------------------------------------------------- index_fill_, index_copy_
def _slices_at(t, d, picks):
    """The offsets of ``t``'s elements in the slices ``picks`` along dim ``d``."""
    positions = [np.arange(n) for n in t.shape]
    positions[d] = picks
    return element_offsets(positions, t.stride(), t.storage_offset())


def _as_vector(t):
    """A 0-dim tensor seen as a vector of one element (torch's ``unsqueeze(-1)``), else ``t``."""
    return dispatcher.call("unsqueeze", t, 0) if t.dim() == 0 else t


def index_fill_(self, dim, index, value):
    """``index_fill_`` (both overloads): ``value`` written into the slices of ``self`` along
    ``dim`` at ``index`` (negative indices count from the end), checked before anything is written."""
    refuse_float8(f"index_fill_{self.device.type}", self)
    if isinstance(value, TensorBase):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        value = value.item()
    if index.dtype is not st.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if _overlap(self._impl, index._impl):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                           "refer to a single memory location. Please clone() the tensor before performing the "
                           "operation.")
    if has_internal_overlap(self._impl):
        warnings.warn("Use of index_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar",
                      UserWarning, stacklevel=2)
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    target = _as_vector(self)
    d = wrap_dim(dim, target.dim())
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    picks = _wrap_checked(_host_array(index).reshape(-1), target.shape[d], d)
    at = _slices_at(target, d, picks)
    return move(self, at, _scalar_source(self, value), np.zeros(at.size, np.int64))


def index_fill(self, dim, index, value):
    """CompositeExplicitAutograd: into a clone that keeps ``self``'s layout."""
    return index_fill_(dispatcher.call("clone", self), dim, index, value)


def meta_index_copy(out, self, dim, index, source):
    """``TORCH_PRECOMPUTE_META_FUNC(index_copy)`` (TensorAdvancedIndexing.cpp): the output of
    self's sizes and dtype (contiguous, or ``out=`` checked and resized), then, for a given
    output, no element reached twice and nothing shared with index or source; then the checks of
    index and source against self, in torch's order."""
    d = wrap_dim(dim, self.dim())
    out = _output_like_self(out, self, index, source)
    if index.dim() >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    n = index.numel()
    if source.dim() == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {n})")
    if source.dim() != self.dim() and source.dim() != 0 and self.dim() != 0:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.dim()}), destination dimensionality ({self.dim()})")
    if index.dtype is not st.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {index.dtype.torch_name}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{self.dtype.torch_name} and (source) {source.dtype.torch_name}")
    self_sliced = [s for k, s in enumerate(self.shape) if k != d]
    source_sliced = [s for k, s in enumerate(source.shape) if k != d]
    if self_sliced != source_sliced:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, self_sliced))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, source_sliced))} at dimension 0.")
    if source.dim() and n != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    return out


def impl_index_copy(out, self, dim, index, source):
    """``TORCH_IMPL_FUNC(index_copy_out)``: ``self`` copied into the output (unless it is the
    output), then the slices of ``source`` along ``dim`` copied into its slices at ``index``, each
    index checked against the dim's size as the kernel checks it."""
    refuse_float8(f"index_copy_{self.device.type}", self)
    if out is not self:
        dispatcher.call("copy_", out, self)
    d = wrap_dim(dim, self.dim())
    target, src = _as_vector(out), _as_vector(source)
    size = target.shape[d]
    picks = _wrap_checked(_host_array(index).reshape(-1), size, d, IndexError,
                          "index_copy_(): index {} is out of bounds for dimension " + f"{d} with size " + "{}",
                          wrap=False)
    return move(out, _slices_at(target, d, picks), src, walk(src))


index_copy_out = structured(meta_index_copy, impl_index_copy)


def _on_device(t, device):
    return to_device(t, t.dtype, device)


# ---------------------------------------------------------------------- index_select, take


def check_index_select(self, dim, index):
    """``index_select``'s checks of everything but the index values (its meta function makes
    the same ones); the wrapped dim."""
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if self.dim() == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    if index.dtype not in (st.int64, st.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    refuse_unlisted_dtypes("index_select", self, complex32=False, float8=False)
    if self.dim() > 1 and index.numel() and self.shape[d] == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    return d


def index_select(self, dim, index):
    """``index_select``: the slices of ``self`` along ``dim`` at ``index`` (a vector), contiguous."""
    d = check_index_select(self, dim, index)
    size = self.shape[d] if self.dim() else 1
    # torch's CPU kernel checks dim 0 of a tensor in one loop, the other dims in another
    error, message = ((IndexError, "index out of range in self") if d == 0 else
                      (RuntimeError, "INDICES element is out of DATA bounds, id={} axis_dim={}"))
    picks = _wrap_checked(_host_array(index).reshape(-1), size, d, error, message, wrap=False)
    if self.dim() == 0:
        out = empty_strided((), (), dtype=self.dtype, device=self.device)
        return move(out, walk(out), self, walk(self))
    sizes = list(self.shape)
    sizes[d] = picks.size
    positions = [np.arange(n) for n in sizes]
    positions[d] = picks
    out = empty_strided(sizes, contiguous_strides(sizes), dtype=self.dtype, device=self.device)
    return move(out, walk(out), self, element_offsets(positions, self.stride(), self.storage_offset()))


def take(self, index):
    """``take``: elements of ``self`` seen as flat (row-major), in ``index``'s shape."""
    if index.dtype is not st.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.torch_name}")
    n = self.numel()
    if index.numel():
        refuse_unlisted_dtypes("take_cpu", self)
    if n == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    picks = _wrap_checked(_host_array(index), n, 0, IndexError,
                          "out of range: tried to access index {} on a tensor of {} elements.")
    out = empty_strided(index.shape, contiguous_strides(index.shape), dtype=self.dtype, device=self.device)
    return move(out, walk(out), self, walk(self).reshape(-1)[picks])


def _check_put(self, index, source, accumulate):
    """``put_``'s checks, in its order: the alert for a write that may race (duplicates without
    ``accumulate``, or CUDA's atomic adds), then dtypes, devices, the counts, an empty ``self``,
    and no overlap between what is written and what is read."""
    if not accumulate or self.device.type == "cuda":
        alert_not_deterministic("put_")
    if index.dtype is not st.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype.torch_name}")
    if self.dtype is not source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{self.dtype.torch_name} and source.dtype = {source.dtype.torch_name}")
    if not self.device == source.device == index.device:
        raise RuntimeError(f"put_(): self, index and source expected to be in the same device, but got self.device = "
                           f"{self.device}, index.device = {index.device}, and source.device = {source.device}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    assert_no_internal_overlap(self._impl)
    assert_no_overlap(self._impl, index._impl)
    assert_no_overlap(self._impl, source._impl)


def put_(self, index, source, accumulate=False):
    """``put_``: ``self`` seen as flat (row-major, whatever its strides) gets ``source``'s elements
    at ``index`` (negative counts from the end), or has them added with ``accumulate`` (repeated
    indices add up). Every index is checked on the host before the loop writes anything."""
    _check_put(self, index, source, accumulate)
    if index.numel() == 0 or is_meta_execution():
        return self
    refuse_unlisted_dtypes("take_put_cpu" if self.device.type == "cpu" else "put_cuda", self)    # put_kernel's names
    picks = _wrap_checked(_host_array(index).reshape(-1), self.numel(), 0, IndexError,
                          "out of range: tried to access index {} on a tensor of {} elements.")
    dst_at, src_at = walk(self).reshape(-1)[picks], walk(source).reshape(-1)
    if accumulate and self.dtype.is_reduced_float and self.device.type == "cpu":
        return _add_each_rounded(self, dst_at, source, src_at)     # the CPU kernel adds in the 16-bit type
    return move(self, dst_at, source, src_at, "add" if accumulate else None)


def put(self, index, source, accumulate=False):
    """``put``: ``put_`` on a copy of ``self`` that keeps its layout."""
    copy = dispatcher.call("clone", self, memory_format=preserve_format)
    return dispatcher.call("put_", copy, index, source, accumulate)


# ---------------------------------------------------------------------- gather, scatter
def _geometry(t):
    """(sizes, strides); a 0-dim operand of gather/scatter counts as one of shape [1] (``ensure_nonempty_dim``)."""
    return (tuple(t.shape), t.stride()) if t.dim() else ((1,), (1,))


def _gather_scatter_checks(name, self, dim, index, src=None):
    """``scatter_gather_dtype_check`` then ``gather_shape_check`` / ``scatter_shape_check``
    (ScatterGatherChecks.h): ``src`` is None for gather and for a scalar scatter."""
    d = wrap_dim(dim, self.dim())
    if index.numel() == 0:         # torch checks nothing else of an empty index
        return d
    if index.dtype not in (st.int64, st.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    if max(index.dim(), 1) != max(self.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    isizes, ssizes = _geometry(index)[0], _geometry(self)[0]
    expected = (f"expected index {list(index.shape)} to be no larger than self {list(self.shape)} "
                f"apart from dimension {d}")
    wrong = next((k for k in range(len(isizes)) if k != d and isizes[k] > ssizes[k]), None)
    if name == "gather":
        if wrong is not None:
            raise RuntimeError(f"Size does not match at dimension {wrong} {expected}")
        return d
    # scatter checks src's sizes only if self's were right (``src.size(k)`` raising if src has
    # fewer dims), and names src only if there is one
    wrong = wrong is not None or src is not None and any(
        isizes[k] > (src.size(k) if src.dim() else 1) for k in range(len(ssizes)))
    if src is not None and max(src.dim(), 1) != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if wrong:
        raise RuntimeError("E" + expected[1:] + (f" and to be no larger size than src {list(src.shape)}"
                                                 if src is not None else ""))
    return d


def _along(t, index, d, picks):
    """Offsets in ``t`` of the elements ``index`` names: its own position, ``picks`` along dim d."""
    sizes, strides = _geometry(t)
    isizes = _geometry(index)[0]
    positions = [np.arange(n) for n in isizes]
    positions[d] = np.zeros(1, np.int64)
    base = element_offsets(positions, strides, t.storage_offset())
    return base + picks.reshape(isizes) * strides[d]


def _picks(index, size, d):
    return _wrap_checked(_host_array(index).reshape(-1), size, d, RuntimeError, wrap=False)


def meta_gather(out, self, dim, index, *, sparse_grad=False):
    """``TORCH_META_FUNC(gather)``: the output of index's shape and self's dtype (contiguous, or
    ``out=`` checked and resized); a given ``out`` shares nothing with ``self`` and no part of
    ``index``; then the index's dtype and shape checks (none for an empty index)."""
    wrapped = wrap_dim(dim, self.dim())
    given = out is not None
    out = set_output(out, index.shape, self.dtype, self.device)
    if given:
        assert_no_internal_overlap(out._impl)
        assert_no_overlap(out._impl, self._impl)
        check_no_overlap(out._impl, [index._impl])
    _gather_scatter_checks("gather", self, wrapped, index)
    return out


def impl_gather(out, self, dim, index, *, sparse_grad=False):
    """``gather_stub``: ``out[i][j] = self[index[i][j]][j]`` along ``dim``, each element written
    at ``out``'s own strides."""
    if index.numel():
        refuse_unlisted_dtypes("scatter_gather_tensor_cpu", self)
        d = wrap_dim(dim, self.dim())
        picks = _picks(index, _geometry(self)[0][d], d)
        move(out, walk(out), self, _along(self, index, d, picks))
    return out


gather_out = structured(meta_gather, impl_gather)


def take_along_dim(self, indices, dim=None):
    """``take_along_dim``, CompositeImplicitAutograd (TensorAdvancedIndexing.cpp): ``gather`` along
    ``dim`` once ``self`` and ``indices`` are broadcast against each other in every other dim, the
    indices taken modulo the dim's size (so -1 is the last); with no ``dim``, ``gather`` over both
    flattened, which wraps nothing."""
    if indices.device != self.device:
        raise RuntimeError(f"Expected tensor to have {self.device} Device, but got tensor with {indices.device} "
                           "Device (while checking arguments for torch.take_along_dim():)")
    if dim is None:
        return dispatcher.call("gather", dispatcher.call("view", self, [-1]), 0, dispatcher.call("view", indices, [-1]))
    if self.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {self.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    if indices.dtype is not st.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.torch_name}")
    d = wrap_dim(dim, self.dim())
    sizes, isizes = list(self.shape), list(indices.shape)
    sizes[d], isizes[d] = indices.shape[d], self.shape[d]
    indices = dispatcher.call("expand", indices, list(broadcast_shapes(sizes, indices.shape)))
    self = dispatcher.call("expand", self, list(broadcast_shapes(isizes, self.shape)))
    return dispatcher.call("gather", self, d, dispatcher.call("remainder.Scalar", indices, self.shape[d]))


def _scatter(self, dim, index, src, reduce):
    """The scatter kernels' loop (``scatter_stub`` and its ``reduce`` forms): each ``src``
    element written (or combined by ``reduce``) into the ``self`` element ``index`` names along
    ``dim``. The meta step has checked the arguments."""
    if index.numel():
        refuse_unlisted_dtypes("scatter_gather_tensor_cpu", self)
        d = wrap_dim(dim, self.dim())
        picks = _picks(index, _geometry(self)[0][d], d)
        src = _on_device(src, self.device)
        src_sizes, src_strides = _geometry(src)
        isizes = _geometry(index)[0]
        src_at = element_offsets([np.arange(n) for n in isizes], src_strides, src.storage_offset())
        move(self, _along(self, index, d, picks), src, src_at, reduce)
    return self


def _scalar_source(self, value, index=None):
    """A scalar ``value`` as a stride-0 source as large as ``index`` (scatter.value; one element
    for masked_fill),
    checked against ``self``'s dtype as their kernels' ``value.to<scalar_t>()`` is (a one-element
    fill would let a float16 overflow to inf)."""
    st.checked_convert(value, self.dtype)
    one = fill_(empty_strided((1,), (1,), dtype=self.dtype, device=self.device), value)
    return one if index is None else as_strided(one, index.shape, (0,) * index.dim())


# The reductions each form of scatter takes, by name, and the kernel that combines with each:
# ``get_operator_enum`` (ReductionType.h), the old names for scatter's ``reduce=``, the new ones
# (``get_reduction_enum``, "max" and "min" accepted as amax and amin) for scatter_reduce.two.
_OLD_REDUCTIONS = {"add": "add", "multiply": "multiply"}
_NEW_REDUCTIONS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "amax", "max": "amax",
                   "amin": "amin", "min": "amin"}


def _reduction(reduce, new_options=False):
    """``get_operator_enum``: the loop's reduction for a ``reduce`` string, or torch's error."""
    if new_options:
        if reduce not in _NEW_REDUCTIONS:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        return _NEW_REDUCTIONS[reduce]
    if reduce not in _OLD_REDUCTIONS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return _OLD_REDUCTIONS[reduce]


def _meta_scatter(out, self, dim, index, src=None, reduce=None, new_options=False):
    """``scatter_meta_impl`` (TensorAdvancedIndexing.cpp), the meta step of every scatter: the
    dtype and shape checks (``src`` None for a scalar source); a given output (``self`` in place)
    reaches no element twice and shares nothing with index or src; the output of self's sizes
    and dtype (contiguous, or ``out=`` checked and resized); then the ``reduce`` name."""
    _gather_scatter_checks("scatter", self, dim, index, src)
    if out is not None:
        assert_no_internal_overlap(out._impl)
        assert_no_overlap(out._impl, index._impl)
        if src is not None:
            assert_no_overlap(out._impl, src._impl)
    out = set_output(out, self.shape, self.dtype, self.device)
    if reduce is not None:
        _reduction(reduce, new_options)
    return out


def _into(out, self):
    """``scatter_impl``'s first step: ``self`` copied into the output, unless it is the output."""
    if out is not self:
        dispatcher.call("copy_", out, self)
    return out


def meta_scatter_src(out, self, dim, index, src):
    """``TORCH_META_FUNC2(scatter, src)``."""
    return _meta_scatter(out, self, dim, index, src)


def impl_scatter_src(out, self, dim, index, src):
    """``scatter.src_out``: ``out[index[i][j]][j] = src[i][j]`` along ``dim``, over a copy of ``self``."""
    return _scatter(_into(out, self), dim, index, src, None)


scatter_src_out = structured(meta_scatter_src, impl_scatter_src)


def meta_scatter_value(out, self, dim, index, value):
    """``TORCH_META_FUNC2(scatter, value)``: no source tensor to check."""
    return _meta_scatter(out, self, dim, index)


def impl_scatter_value(out, self, dim, index, value):
    """``scatter.value_out`` (``scatter_fill_stub``): ``value`` written where ``index`` points."""
    _into(out, self)
    if index.numel():
        refuse_unlisted_dtypes("scatter_gather_scalar_cpu", out)
    return _scatter(out, dim, index, _scalar_source(out, value, index), None) if index.numel() else out


scatter_value_out = structured(meta_scatter_value, impl_scatter_value)


def meta_scatter_reduce(out, self, dim, index, src, *, reduce):
    """``TORCH_META_FUNC2(scatter, reduce)``: torch deprecates ``reduce=`` with a tensor ``src``
    (TORCH_WARN_ONCE; raised here, inside the structured kernels, Python's default filter shows it
    once for each of the derived forms)."""
    warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                  "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.", stacklevel=2)
    return _meta_scatter(out, self, dim, index, src, reduce)


def impl_scatter_reduce(out, self, dim, index, src, *, reduce):
    """``scatter.reduce_out`` (``scatter_reduce_stub``): each ``src`` element added or multiplied in."""
    return _scatter(_into(out, self), dim, index, src, _reduction(reduce))


scatter_reduce_out = structured(meta_scatter_reduce, impl_scatter_reduce)


def meta_scatter_value_reduce(out, self, dim, index, value, *, reduce):
    """``TORCH_META_FUNC2(scatter, value_reduce)``."""
    return _meta_scatter(out, self, dim, index, None, reduce)


def impl_scatter_value_reduce(out, self, dim, index, value, *, reduce):
    """``scatter.value_reduce_out`` (``scatter_scalar_reduce_stub``): ``value`` added or multiplied in."""
    _into(out, self)
    if not index.numel():
        return out
    refuse_unlisted_dtypes("scatter_gather_scalar_cpu", out)
    return _scatter(out, dim, index, _scalar_source(out, value, index), _reduction(reduce))


scatter_value_reduce_out = structured(meta_scatter_value_reduce, impl_scatter_value_reduce)


def meta_scatter_add(out, self, dim, index, src):
    """``TORCH_META_FUNC(scatter_add)``: ``scatter_meta_impl`` with reduce "add"."""
    return _meta_scatter(out, self, dim, index, src, "add")


def impl_scatter_add(out, self, dim, index, src):
    """``self`` copied into the output (unless it is the output), then ``src`` added at the
    indexed places (``scatter_add_stub``)."""
    return _scatter(_into(out, self), dim, index, src, "add")


scatter_add_out = structured(meta_scatter_add, impl_scatter_add)


def _reduction_identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    high = reduce in ("amin", "min")
    if dtype is st.bool_:
        return high
    if dtype.is_floating_point:
        return math.inf if high else -math.inf
    info = np.iinfo(dtype.numpy_type)
    return int(info.max if high else info.min)


def meta_scatter_reduce_two(out, self, dim, index, src, reduce, *, include_self=True):
    """``TORCH_META_FUNC2(scatter_reduce, two)``: ``scatter_meta_impl`` with the new reduction names."""
    return _meta_scatter(out, self, dim, index, src, reduce, new_options=True)


def impl_scatter_reduce_two(out, self, dim, index, src, reduce, *, include_self=True):
    """``TORCH_IMPL_FUNC(scatter_reduce_two)``: each ``src`` element combined into the output
    element ``index`` names along ``dim``; ``include_self=False`` first starts every named element
    from the reduction's identity; "mean" then divides by how many were combined (floor for
    integers)."""
    _into(out, self)
    if reduce == "mean" and out.dtype is st.bool_:
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for \'Bool\'')
    if not index.numel():
        return out
    if not include_self:
        refuse_unlisted_dtypes("scatter_reduce_exclude_input_init", out)
        _scatter(out, dim, index, _scalar_source(out, _reduction_identity(reduce, out.dtype), index), None)
    _scatter(out, dim, index, src, _reduction(reduce, new_options=True))
    if reduce == "mean":
        count = dispatcher.call("ones_like" if include_self else "zeros_like", out)
        dispatcher.call("scatter_add_", count, dim, index, dispatcher.call("ones_like", src))
        dispatcher.call("masked_fill_.Scalar", count, dispatcher.call("eq.Scalar", count, 0), 1)
        if out.dtype.is_floating_point or out.dtype.is_complex:
            dispatcher.call("div_.Tensor", out, count)
        else:
            dispatcher.call("div_.Tensor_mode", out, count, rounding_mode="floor")
    return out


scatter_reduce_two_out = structured(meta_scatter_reduce_two, impl_scatter_reduce_two)


def _masked_fill_mask(self, indices, values):
    """``canDispatchToMaskedFill``: a single bool or uint8 index and a one-element CPU value make
    ``index_put_`` a ``masked_fill_`` (so a 0-dim mask works, and a uint8 mask is refused); the
    mask gets trailing dims of size 1 for the dims it does not cover."""
    if values.numel() != 1 or values.device.type != "cpu":
        return None
    covered, mask = 0, None
    for ix in indices:
        if ix is None:
            covered += 1
            continue
        if ix.dtype not in (st.bool_, st.uint8) or ix.device != self.device or mask is not None:
            return None
        if covered + ix.dim() > self.dim():
            return None                     # too many indices: the general path says so
        for j, n in enumerate(ix.shape):
            if n != self.shape[covered + j]:
                raise IndexError(f"The shape of the mask {list(ix.shape)} at index {j} does not match the shape "
                                 f"of the indexed tensor {list(self.shape)} at index {covered + j}")
        mask, covered = ix, covered + ix.dim()
    if mask is None:
        return None
    return dispatcher.call("reshape", mask, [*mask.shape] + [1] * (self.dim() - covered))


# ---------------------------------------------------------------------- masks
def _check_mask(mask, name):
    if mask.dtype is not st.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{st.type_meta_name(mask.dtype)}")


def _mask_where(self, mask):
    """Offsets of ``self``'s elements where ``mask`` (broadcast to ``self``'s shape) is true."""
    shape = _mask_shape(self, mask)
    chosen = np.broadcast_to(_host_array(mask), shape)
    return walk(self)[chosen]


def _mask_shape(self, mask):
    """The mask broadcast to ``self``'s shape, which it may not grow."""
    shape = broadcast_shapes(tuple(self.shape), tuple(mask.shape))     # as TensorIterator, self first
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    return shape


def masked_fill_scalar_(self, mask, value):
    """``masked_fill_``: ``value`` written where ``mask`` is true."""
    _check_mask(mask, "masked_fill_")
    common_device(self, mask)
    refuse_unlisted_dtypes("masked_fill", self, complex32=False)
    if is_meta_execution():     # metadata only (a fake's meta step): the checks, and no values to write
        _mask_shape(self, mask)
        return self
    at = _mask_where(self, mask)
    return move(self, at, _scalar_source(self, value), np.zeros(at.size, np.int64))


def masked_fill_tensor_(self, mask, value):
    if value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    return masked_fill_scalar_(self, mask, value.item())


def masked_fill_scalar(self, mask, value):
    # torch: a contiguous clone filled in place, after broadcasting the mask against self
    shape = broadcast_shapes(tuple(mask.shape), tuple(self.shape))
    out = empty_strided(shape, contiguous_strides(shape), dtype=self.dtype, device=self.device)
    same_device_copy(out, dispatcher.call("expand", self, list(shape)) if tuple(self.shape) != shape else self)
    return masked_fill_scalar_(out, mask, value)


def masked_fill_tensor(self, mask, value):
    broadcast_shapes(tuple(mask.shape), tuple(self.shape))     # (``expand_outplace`` comes first)
    if value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    return masked_fill_scalar(self, mask, value.item())


def masked_scatter_(self, mask, source):
    """``masked_scatter_``: where ``mask`` (expanded to ``self``'s shape) is true, the next element
    of ``source`` (read as contiguous), in row-major order; too few of them is refused first."""
    assert_no_internal_overlap(self._impl)
    if self.dtype is not source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{self.dtype.torch_name} and {source.dtype.torch_name}")
    mask = dispatcher.call("expand", mask, list(self.shape))
    if mask.dtype is st.uint8:
        warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is now deprecated,"
                      "please use a mask with dtype torch.bool instead.", UserWarning, stacklevel=2)
    if mask.dtype is not st.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.torch_name}")
    common_device(self, mask)
    refuse_unlisted_dtypes("masked_scatter", self)
    at = walk(self)[np.asarray(_host_array(mask), dtype=bool)]
    if at.size > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return move(self, at, source, walk(source).reshape(-1)[:at.size])


def masked_scatter(self, mask, source):
    """CompositeExplicitAutograd: ``self`` and ``mask`` broadcast together, ``self`` cloned
    contiguous, then ``masked_scatter_``."""
    shape = list(broadcast_shapes(tuple(mask.shape), tuple(self.shape)))
    mask, self = dispatcher.call("expand", mask, shape), dispatcher.call("expand", self, shape)
    return masked_scatter_(dispatcher.call("clone", self, memory_format=contiguous_format), mask, source)


def masked_scatter_backward(grad_output, mask, sizes):
    """CompositeExplicitAutograd: the source's gradient in ``masked_scatter`` — the elements of
    ``grad_output`` under the mask, in order, then zeros for the source's elements it did not
    use, viewed with the source's sizes."""
    numel = math.prod(sizes)
    selected = dispatcher.call("masked_select", grad_output, mask)
    if numel > selected.numel():
        filler = dispatcher.call("zeros", [numel - selected.numel()], dtype=grad_output.dtype,
                                 device=grad_output.device)
        selected = dispatcher.call("cat", [selected, filler], 0)
    return dispatcher.call("view", selected, list(sizes))


def masked_select(self, mask):
    """``masked_select``: the elements where ``mask`` is true, broadcast together, as a vector."""
    if mask.dtype is not st.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    common_device(self, mask)
    shape = broadcast_shapes(tuple(mask.shape), tuple(self.shape))     # ``expand_outplace(mask, self)``
    chosen = np.broadcast_to(_host_array(mask), shape)
    src = element_offsets([np.arange(n) if m != 1 else np.zeros(n, np.int64)
                           for n, m in zip(shape, (1,) * (len(shape) - self.dim()) + tuple(self.shape))],
                          (0,) * (len(shape) - self.dim()) + self.stride(), self.storage_offset())[chosen]
    out = empty_strided((src.size,), (1,), dtype=self.dtype, device=self.device)
    return move(out, walk(out), self, src)


def nonzero(self):
    """``nonzero``: the coordinates of the nonzero elements, one row each (int64, n x ndim)."""
    refuse_unlisted_dtypes("nonzero_count_cpu", self, complex32=False)
    values = np.asarray(_host_array(self))
    coords = np.argwhere(values != 0) if self.dim() else np.zeros((int(values != 0), 0), np.int64)
    # torch fills an (ndim, n) tensor and returns its transpose: strides (1, n)
    n = coords.shape[0]
    out = empty_strided((n, self.dim()), (1, n), dtype=st.int64, device=self.device)
    if coords.size:
        source = _as_device_tensor(coords.astype(np.int64), st.int64, self.device)
        same_device_copy(out, source)
    return out


def repeat_interleave_tensor(repeats, output_size=None):
    """``repeat_interleave.Tensor``: ``i`` repeated ``repeats[i]`` times, for each i
    (``repeat_interleave_common`` in Repeat.h; the kernel dispatches on index types first)."""
    if repeats.dtype not in (st.int64, st.int32):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for \'{repeats.dtype.torch_name}\'')
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    counts = _host_array(repeats).astype(np.int64)
    if output_size is not None and counts.size and output_size != counts.sum():
        raise RuntimeError("allocated size does not match required size")
    # torch checks the signs only without an output_size (and then leaves elements unset): always here
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    out = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return _as_device_tensor(out, repeats.dtype, repeats.device)
