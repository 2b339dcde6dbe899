"""Sparse COO tensors: the factory, dense <-> sparse conversion, coalescing, accessors.

Mirrors ``aten/src/ATen/native/sparse/SparseTensor.cpp`` (and the dense -> sparse conversion of
``aten/src/ATen/native/TensorConversions.cpp``). Each kernel here does its shape and index checks,
then hands contiguous flat buffers to ``kernels(device)``. Every sparse tensor is built by
``sparse_coo_tensor`` (which checks its indices against its sizes) or by a kernel here whose
indices are correct by construction. The caller may still hold the indices tensor (or take it back
with ``_indices()``) and write into it, so every kernel that follows indices checks them again
where it runs (``linear_indices``, ``checked_coalesced``): the loops themselves do no bounds checks.
"""
import numpy as np

from ...._tensor_base import TensorBase
from ....c10 import scalar_type as st
from ....c10.device import as_device
from ....c10.sparse_tensor_impl import SparseTensorImpl
from ....c10.tensor_impl import COMPRESSED_LAYOUTS, sparse_coo, strided
from ...dispatcher import call
from ..copy import contiguous, cpu, to, to_device
from ..tensor_factories import empty, from_host, tensor, zeros
from ..tensor_shape import alias_impl
from . import kernels

__all__ = ["sparse_coo_tensor", "_sparse_coo_tensor_unsafe", "new_with_dims_and_tensor_sparse", "new_sparse", "flat",
           "kernel_values", "linear_indices", "sparse_to", "clone_sparse", "sparse_mask", "transpose_sparse",
           "t_sparse"]


# ---------------------------------------------------------------------- helpers
def new_sparse(sizes, indices, values, coalesced):
    return TensorBase._from_impl(SparseTensorImpl(sizes, indices, values, coalesced))


def flat(t):
    """The flat typed buffer of a contiguous tensor (the caller keeps ``t`` alive while a loop runs)."""
    assert t.is_contiguous()
    return t._flat_buffer()


def kernel_values(values):
    """``values`` as the loops read them: contiguous, and float16/bfloat16 widened to float32
    (Numba computes in neither; every float16 or bfloat16 value is exact in float32)."""
    return contiguous(to(values, st.opmath_type(values.dtype)))


def _sizes_array(sizes):
    return np.array(sizes, dtype=np.int64)


def linear_indices(indices, sizes):
    """Each entry's row-major position among the sparse sizes (int64 tensor of ``nnz``), after checking
    every coordinate against ``sizes``: the loops that scatter or gather with these positions trust them."""
    indices = contiguous(indices)
    check_indices(indices, sizes)
    nnz = indices.shape[1]
    out = empty((nnz,), dtype=st.int64, device=indices.device)
    if nnz:
        kernels(indices.device).linear_index(flat(out), flat(indices), _sizes_array(sizes), nnz)
    return out


def layout_name(layout):
    """The layout as torch's C++ prints it in messages (``Strided``, ``Sparse``, ``SparseCsr``, ...)."""
    return layout.cpp_name


def _layout_name(t):
    return layout_name(t.layout)


def check_indices(indices, sizes):
    """Every coordinate inside ``sizes`` (torch's ``check_invariants`` check, always on here:
    a kernel that scatters into a dense tensor trusts these indices)."""
    if indices.shape[1] == 0 or indices.shape[0] == 0:
        return
    lows, highs = call("amin", indices, [1], False).tolist(), call("amax", indices, [1], False).tolist()
    for d, (low, high, size) in enumerate(zip(lows, highs, sizes)):
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {d}")
        if high >= size:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size} but found index {high}")


def _sorted_and_distinct(indices, sizes):
    lin = cpu(linear_indices(indices, sizes))._numpy()
    return not np.any(lin[1:] <= lin[:-1])


def _check_claimed_coalesced(indices, sizes):
    """``is_coalesced=True`` is trusted by later kernels (mm builds row pointers from sorted rows): verify it."""
    if not _sorted_and_distinct(indices, sizes):
        raise RuntimeError("cannot set is_coalesced to true if indices correspond to uncoalesced COO tensor")


def checked_coalesced(impl):
    """The indices of a coalesced ``impl``, checked again (in range, sorted, distinct) for a kernel that
    relies on all three: the caller may have written into them since (``s._indices()[0, 0] = 7``)."""
    indices = contiguous(impl.indices)
    if impl.nnz and not _sorted_and_distinct(indices, impl.sizes[:impl.sparse_dim]):
        raise RuntimeError("sparse tensor marked coalesced has unsorted or repeated indices "
                           "(were its indices modified in place?)")
    return indices


# ---------------------------------------------------------------------- the factory
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """``torch.sparse_coo_tensor`` (the Python binding and ``sparse_coo_tensor`` of
    ``SparseTensor.cpp``): the values cast and moved as asked (autograd records the cast), the
    sizes inferred when not given, then ``_sparse_coo_tensor_unsafe``, whose operator
    ``_sparse_coo_tensor_with_dims_and_tensors`` builds the tensor and is the one autograd records
    (``SparseCooTensorWithDimsAndTensorsBackward0``): a gradient reaches ``values``. The indices are
    always checked against the sizes, as torch does only with ``check_invariants=True``."""
    indices = indices if isinstance(indices, TensorBase) else tensor(indices)
    values = values if isinstance(values, TensorBase) else tensor(values)
    device = as_device(device) if device is not None else values.device
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    indices = to_device(indices, st.int64, device)
    values = to_device(values, dtype or values.dtype, device)
    values = _expand_values_if_needed(values)
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, "
                           f"nnz from values: {values.shape[0]}")
    if size is None:
        if nnz and sparse_dim:
            check_indices(indices, [float("inf")] * sparse_dim)     # negatives only
            highs = [h + 1 for h in call("amax", indices, [1], False).tolist()]
        else:
            highs = [0] * sparse_dim
        size = (*highs, *values.shape[1:])
    out = call("_sparse_coo_tensor_unsafe", indices, values, [int(s) for s in size], is_coalesced=is_coalesced)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _expand_values_if_needed(values):
    """torch reads a 0-dim value as one entry, through ``expand`` (``expand_values_if_needed``)."""
    return call("expand", values, [1]) if values.dim() == 0 else values


def _sparse_coo_tensor_unsafe(indices, values, size, *, dtype=None, layout=None, device=None, pin_memory=None,
                              is_coalesced=None):
    """CompositeImplicitAutograd ``_sparse_coo_tensor_unsafe``: the sparse and dense dims read off the
    indices and values, then ``_sparse_coo_tensor_with_dims_and_tensors`` in the values' dtype and
    device (torch's ignores the options passed here too). Unlike torch's, the indices are still
    checked against the sizes, in the kernel below."""
    values = _expand_values_if_needed(values)
    return call("_sparse_coo_tensor_with_dims_and_tensors", indices.shape[0], values.dim() - 1, list(size),
                indices, values, dtype=values.dtype, layout=sparse_coo, device=values.device, pin_memory=None,
                is_coalesced=is_coalesced)


def new_with_dims_and_tensor_sparse(sparse_dim, dense_dim, size, indices, values, *, dtype=None, layout=None,
                                    device=None, pin_memory=None, is_coalesced=None):
    """``_sparse_coo_tensor_with_dims_and_tensors``'s sparse kernel (``new_with_dims_and_tensor_sparse``
    in ``SparseTensor.cpp``): a sparse tensor over ``indices`` and ``values`` themselves (not copied),
    after the checks of torch's ``set_indices_and_values_unsafe`` and its index invariants."""
    if pin_memory:
        raise RuntimeError("Only dense CPU tensors can be pinned")
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    if indices.layout is not strided or values.layout is not strided:
        raise RuntimeError("expected indices and values to be dense tensors")
    if indices.dim() != 2 or indices.shape[0] != sparse_dim:
        raise RuntimeError(f"dimension of indices must be 2 x nnz with sparse_dim {sparse_dim}, but got "
                           f"{list(indices.shape)}")
    if indices.dtype is not st.int64:
        raise RuntimeError(f"indices must be an int64 tensor, but got {indices.dtype.torch_name}")
    if dtype is not None and values.dtype is not dtype:
        raise RuntimeError(f"dtype of values ({values.dtype.torch_name}) must match dtype of sparse tensor "
                           f"({dtype.torch_name})")
    if indices.device != values.device:
        raise RuntimeError(f"device of indices ({indices.device}) must match device of values ({values.device})")
    nnz = indices.shape[1]
    expected = [nnz, *size[sparse_dim:]]
    if list(values.shape) != expected:
        raise RuntimeError(f"values has incorrect size, expected {expected}, got {list(values.shape)}")
    check_indices(indices, size)
    if is_coalesced and nnz > 1:
        _check_claimed_coalesced(indices, size[:sparse_dim])
    # Tensors of their own over the caller's memory (``.data``): ``i.data = other`` on the caller's
    # tensor must not swap the sparse tensor's indices (its kernels read ``nnz`` entries of them).
    return new_sparse(size, indices.data, values.data, nnz < 2 if is_coalesced is None else is_coalesced)


def _no_entries(sizes, sparse_dim, dtype, device):
    """The indices and values of a sparse tensor with no entries (coalesced, trivially)."""
    return (empty((sparse_dim, 0), dtype=st.int64, device=device),
            empty((0, *sizes[sparse_dim:]), dtype=dtype, device=device))


def empty_sparse(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """``empty.memory_format``'s sparse kernel: every dim sparse, no entries."""
    if pin_memory:
        raise RuntimeError("Only dense CPU tensors can be pinned")
    size = tuple(size)
    return new_sparse(size, *_no_entries(size, len(size), dtype, device), True)


def empty_like_sparse_coo(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """``empty_like``'s sparse kernel: no entries, the input's sparse and dense dims."""
    if pin_memory:
        raise RuntimeError("Only dense CPU tensors can be pinned")
    device = as_device(device) if device is not None else self.device
    return new_sparse(self.shape, *_no_entries(self.shape, self._impl.sparse_dim, dtype or self.dtype, device), True)


def zero_sparse_(self):
    """``zero_``'s sparse kernel: drop every entry (sizes and dims stay)."""
    impl = self._impl
    impl.indices, impl.values = _no_entries(impl.sizes, impl.sparse_dim, impl.dtype, impl.device)
    impl.coalesced = True
    return self


_CPP_MEMORY_FORMAT = {"contiguous_format": "Contiguous", "preserve_format": "Preserve",
                      "channels_last": "ChannelsLast", "channels_last_3d": "ChannelsLast3d"}


def clone_sparse(self, *, memory_format=None):
    """``clone``'s sparse kernel (``clone_sparse`` in ``SparseTensor.cpp``): copies of the indices and
    values, the coalesced flag kept. A sparse tensor has no strides to lay out, so torch refuses any
    memory format, even ``preserve_format``, naming it as C++ prints it."""
    if memory_format is not None:
        name = str(memory_format).split(".")[-1]
        raise RuntimeError(f"unsupported memory format option {_CPP_MEMORY_FORMAT.get(name, name)}")
    impl = self._impl
    return new_sparse(impl.sizes, call("clone", impl.indices), call("clone", impl.values), impl.coalesced)


def sparse_mask(self, mask):
    """``dense.sparse_mask(mask)`` (``sparse_mask`` in ``SparseTensor.cpp``): a sparse tensor with the
    mask's entries, in the mask's order and with its coalesced flag, each holding ``self``'s value at
    that coordinate; a mask listing a coordinate twice gets that value twice. torch multiplies
    ``self`` by a mask of ones, which leaves every value exact: here the values are gathered."""
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} "
                           f"but mask has size {list(mask.shape)}")
    if mask.layout is not sparse_coo:
        raise RuntimeError("sparse_mask expects mask to be sparse COO")
    if self.layout is sparse_coo:
        return _sparse_mask_of_sparse(self, mask)
    if self.layout is not strided:
        raise NotImplementedError("internals: sparse_mask of a compressed tensor is not implemented")
    impl = mask._impl
    if self.numel() == 0 or impl.nnz == 0:
        return sparse_to(clone_sparse(mask), self.dtype, self.device)
    indices = call("clone", impl.indices)
    check_indices(indices, impl.sizes[:impl.sparse_dim])
    rows = [call("select.int", indices, 0, d) for d in range(impl.sparse_dim)]
    values = call("index.Tensor", self, rows)
    return new_sparse(impl.sizes, indices, values, impl.coalesced)


def _sparse_mask_of_sparse(self, mask):
    """``sparse.sparse_mask(mask)`` with both COO: the mask's entries (its order, duplicates and
    flag), each holding ``self``'s value at that coordinate, its duplicates summed (``self``
    coalesced first), and zero where ``self`` stores none. The coordinates are matched on the host
    by their row-major positions; the values only move (``index_select``, ``index_put_``)."""
    impl, own = mask._impl, call("coalesce", self)._impl
    if impl.sparse_dim != own.sparse_dim:
        raise RuntimeError("sparse_mask(): the number of sparse dimensions in `self` should match that of the "
                           f"`mask`. Got `self.sparse_dim() == {own.sparse_dim}` != "
                           f"`mask.sparse_dim() == {impl.sparse_dim}`.")
    sizes = impl.sizes[:impl.sparse_dim]
    wanted = cpu(linear_indices(impl.indices, sizes))._numpy()
    stored = cpu(linear_indices(checked_coalesced(own), sizes))._numpy()
    place = np.minimum(np.searchsorted(stored, wanted), max(len(stored) - 1, 0))
    found = (place < len(stored)) & (stored[place] == wanted) if len(stored) else np.zeros(len(wanted), bool)
    values = zeros((impl.nnz, *impl.sizes[impl.sparse_dim:]), dtype=self.dtype, device=self.device)
    if found.any():
        rows = from_host(np.flatnonzero(found), st.int64, self.device)
        picked = call("index_select", own.values, 0, from_host(place[found], st.int64, self.device))
        values = call("index_put", values, [rows], picked, False)
    return new_sparse(impl.sizes, call("clone", impl.indices), values, impl.coalesced)


def transpose_sparse(self, dim0, dim1):
    """``transpose`` of a COO tensor (``sparse_transpose_`` on a clone, ``TensorShape.cpp``): two
    sparse dims swap their rows of indices; the entries keep their order, so the result is not
    coalesced unless it has none."""
    impl = self._impl
    n = max(len(impl.sizes), 1)
    d0, d1 = dim0 % n, dim1 % n
    if d0 >= impl.sparse_dim or d1 >= impl.sparse_dim:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: "
                           f"{impl.sparse_dim}, d0: {d0}, d1: {d1}")
    order = list(range(impl.sparse_dim))
    order[d0], order[d1] = order[d1], order[d0]
    sizes = list(impl.sizes)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    indices = call("index_select", impl.indices, 0, from_host(np.array(order, np.int64), st.int64, self.device))
    return new_sparse(tuple(sizes), indices, call("clone", impl.values), impl.nnz == 0)


def t_sparse(self):
    """``t`` of a COO tensor: a matrix (or vector) with no dense dims, transposed."""
    impl = self._impl
    if impl.sparse_dim > 2 or impl.dense_dim:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                           f"{impl.sparse_dim} sparse and {impl.dense_dim} dense dimensions")
    return transpose_sparse(self, 0, 1) if impl.sparse_dim == 2 else clone_sparse(self)


def sparse_to(t, dtype, device):
    """``Tensor.to`` for a sparse tensor: its indices and values moved, its values cast."""
    if dtype is t.dtype and device == t.device:
        return t
    impl = t._impl
    return new_sparse(impl.sizes, to_device(impl.indices, impl.indices.dtype, device),
                      to_device(impl.values, dtype, device), impl.coalesced)


# ---------------------------------------------------------------------- dense -> sparse
def _compressed_conversions():
    """The compressed layouts' module, which builds on this one (imported when first needed)."""
    from . import sparse_csr_tensor  # a real cycle: that module builds on this one
    return sparse_csr_tensor


def _check_target_layout(blocksize, name, source):
    """COO has no blocks: torch refuses a block size (naming the kernel that refuses it)."""
    if blocksize is not None:
        raise RuntimeError(f"{name}: conversion from {source} to Sparse with blocksize argument given is not "
                           "supported")


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """CompositeImplicitAutograd ``to_sparse`` and ``to_sparse.sparse_dim``: the backend's ``_to_sparse``."""
    if sparse_dim is not None:
        return call("_to_sparse.sparse_dim", self, sparse_dim)
    return call("_to_sparse", self, layout=layout, blocksize=blocksize, dense_dim=dense_dim)


def dense_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The first ``sparse_dim`` dims become coordinates, the rest a dense block per entry.

    A block is stored when any of its elements is nonzero. One loop flags those rows, a prefix
    sum of the flags (on the host) gives each stored row its place, and a second loop writes the
    coordinates and blocks there: the entries come out sorted and distinct, so coalesced.
    """
    if layout in COMPRESSED_LAYOUTS:
        return _compressed_conversions().dense_to_sparse_compressed(self, layout=layout, blocksize=blocksize,
                                                                    dense_dim=dense_dim)
    _check_target_layout(blocksize, "dense_to_sparse", "Strided")
    n = self.dim()
    if sparse_dim is None:
        sparse_dim = n - dense_dim if dense_dim is not None else n
    if not 0 <= sparse_dim <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, but {sparse_dim} is given")
    if sparse_dim == 0 and n > 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    sparse_sizes, dense_sizes = tuple(self.shape[:sparse_dim]), tuple(self.shape[sparse_dim:])
    rows, block = int(np.prod(sparse_sizes)), int(np.prod(dense_sizes))
    x = kernel_values(self)
    k = kernels(self.device)
    flags = empty((rows,), dtype=st.int64, device=self.device)
    if rows:
        k.nonzero_rows(flat(flags), flat(x), block)
    counts = cpu(flags)._numpy()
    nnz = int(counts.sum())
    positions = from_host(np.cumsum(counts) - counts, st.int64, self.device)
    indices = empty((sparse_dim, nnz), dtype=st.int64, device=self.device)
    values = empty((nnz, *dense_sizes), dtype=x.dtype, device=self.device)
    if nnz:
        k.gather_rows(flat(indices), flat(values), flat(x), flat(flags), flat(positions), _sizes_array(sparse_sizes),
                      block, nnz)
    return new_sparse(self.shape, indices, to(values, self.dtype), coalesced=True)


def sparse_coo_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout in COMPRESSED_LAYOUTS:
        return _compressed_conversions().coo_to_sparse_compressed(self, layout, blocksize, dense_dim,
                                                                  "sparse_coo_to_sparse")
    _check_target_layout(blocksize, "to_sparse", "Sparse")
    if dense_dim is not None:
        raise RuntimeError("to_sparse: conversion from Sparse to Sparse with dense_dim argument given is not supported")
    if sparse_dim is not None and sparse_dim != call("sparse_dim", self):
        raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
                           "is not supported")
    return self


# ---------------------------------------------------------------------- coalesce, sparse -> dense
def coalesce_or_self(self):
    """CompositeImplicitAutograd: a coalesced tensor is its own coalesced form."""
    if self.layout is not sparse_coo:
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {_layout_name(self)}")
    return self if call("is_coalesced", self) else call("_coalesce", self)


def _coalesce_sparse(self):
    """Sort the entries by linear index and sum each run of equal ones.

    The sort is NumPy's stable argsort, on the host (for cuda too: torch sorts on the device);
    the merge, one task per distinct coordinate summing its entries in input order, is a loop of
    the tensor's device.
    """
    impl = self._impl
    sparse_sizes = impl.sizes[:impl.sparse_dim]
    indices, values = contiguous(impl.indices), kernel_values(impl.values)
    nnz, block = impl.nnz, int(np.prod(impl.sizes[impl.sparse_dim:]))
    lin = cpu(linear_indices(indices, sparse_sizes))._numpy()
    perm = np.argsort(lin, kind="stable")
    starts = np.concatenate(([0], np.flatnonzero(np.diff(lin[perm])) + 1, [nnz])) if nnz else np.zeros(1, np.int64)
    count = len(starts) - 1
    out_indices = empty((impl.sparse_dim, count), dtype=st.int64, device=self.device)
    out_values = empty((count, *values.shape[1:]), dtype=values.dtype, device=self.device)
    if count:
        perm_t, starts_t = from_host(perm, st.int64, self.device), from_host(starts, st.int64, self.device)
        kernels(self.device).merge_segments(flat(out_indices), flat(out_values), flat(indices), flat(values),
                                            flat(perm_t), flat(starts_t), impl.sparse_dim, block, nnz)
    if count < nnz:     # torch writes into an (sparse_dim, nnz) buffer and keeps its first columns
        buffer = empty((impl.sparse_dim, nnz), dtype=st.int64, device=self.device)
        out_indices = call("copy_", call("narrow", buffer, 1, 0, count), out_indices, False)
    return new_sparse(impl.sizes, out_indices, to(out_values, self.dtype), coalesced=True)


def to_dense(self, dtype=None, *, masked_grad=None):
    """CompositeImplicitAutograd: a strided tensor is already dense."""
    if self.layout is strided:
        return self
    return call("_to_dense", self, dtype, masked_grad)


def sparse_to_dense(self, dtype=None, masked_grad=None):
    """Zeros, then each entry's block written at its coordinates. Coalescing first sums the
    duplicates, so every element is written at most once: the scatter runs in parallel, on the
    GPU without atomics."""
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_to_dense")
    c = call("coalesce", self)._impl
    values = kernel_values(c.values)
    out = zeros(c.sizes, dtype=values.dtype, device=self.device)
    if c.nnz:
        rows = linear_indices(c.indices, c.sizes[:c.sparse_dim])
        kernels(self.device).scatter_rows(flat(out), flat(values), flat(rows), int(np.prod(c.sizes[c.sparse_dim:])))
    return to(out, self.dtype)


# ---------------------------------------------------------------------- accessors
def component(self, t):
    """A new tensor over the same memory as ``t``, one of ``self``'s component tensors, and not a
    view of anything: what ``indices()``, ``_indices()`` and ``_values()`` return. torch's autograd
    records none of them (derivatives.yaml: ``output_differentiability: [False]``), so they have
    no ``_base`` to carry a gradient through."""
    impl = t._impl
    return type(self)._from_impl(alias_impl(t, impl.sizes, impl.strides, None, None, impl.version_counter))


def values_view(self, t):
    """``values()``: a view whose base is the sparse tensor itself, so that autograd can carry a
    gradient of the values back to it (``ValuesBackward0``, torch's ``values_backward``)."""
    impl = t._impl
    return type(self)._from_impl(alias_impl(t, impl.sizes, impl.strides, None, None, impl.version_counter), base=self)


def indices_sparse(self):
    if not self._impl.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return component(self, self._impl.indices)


def indices_default(self):
    raise RuntimeError(f"indices expected sparse coordinate tensor layout but got {_layout_name(self)}")


def values_sparse(self):
    if not self._impl.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return values_view(self, self._impl.values)


def values_default(self):
    raise RuntimeError(f"values expected sparse tensor layout but got {_layout_name(self)}")


def _indices_sparse(self):
    return component(self, self._impl.indices)


def _values_sparse(self):
    return component(self, self._impl.values)


def _nnz_sparse(self):
    return self._impl.nnz


def is_coalesced_sparse(self):
    return self._impl.coalesced


def is_coalesced_default(self):
    raise RuntimeError(f"is_coalesced expected sparse coordinate tensor layout but got {_layout_name(self)}")


def sparse_dim_sparse(self):
    return self._impl.sparse_dim


def sparse_dim_default(self):
    return 0


def dense_dim_sparse(self):
    return self._impl.dense_dim


def dense_dim_default(self):
    return self.dim()
