"""The compressed sparse layouts: the factory, its invariant checks, accessors, conversions,
transposes and products (their value-wise arithmetic is in ``sparse_csr_tensor_math.py``).

Mirrors ``aten/src/ATen/native/sparse/SparseCsrTensor.cpp`` (factory, checks, accessors) and the
compressed half of ``aten/src/ATen/native/TensorConversions.cpp`` (to and from dense, COO and each
other). A tensor of sizes ``(*batch, rows, cols, *dense)`` keeps compressed indices, plain indices
and values (``c10/sparse_csr_tensor_impl.py``).

Every conversion here is data movement, built from operators the package already has:

* dense -> compressed: the dense tensor is arranged so that its two sparse dims come in the
  order the layout compresses them (columns first for CSC and BSC) and, for BSR and BSC, cut
  into blocks; the COO conversion of that arrangement lists the stored entries (blocks) sorted,
  batch by batch and compressed dim first; the plain indices are its last index row, the values
  its values, and counting the entries of each compressed index gives the offsets;
* compressed -> dense and -> COO: the offsets are expanded back into one index per entry, a COO
  tensor of the blocks is made, and its dense form is arranged back.

The index arithmetic (counting, expanding offsets, checking invariants) runs in NumPy on the
host, as the COO layout's sort does; the values only ever move through operators.
"""
import numpy as np

from ...._tensor_base import TensorBase
from ....c10 import scalar_type as st
from ....c10.device import as_device
from ....c10.memory_format import contiguous_format
from ....c10.sparse_csr_tensor_impl import SparseCsrTensorImpl
from ....c10.tensor_impl import COMPRESSED_LAYOUTS, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from ...dispatcher import call
from .. import tensor_factories
from ..copy import contiguous, cpu, to_device
from ..tensor_factories import from_host, tensor
from .sparse_tensor import component, layout_name, new_sparse, values_view
from .sparse_tensor_math import _sparse_mm, scaled_sum

__all__ = ["sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
           "sparse_bsc_tensor", "new_compressed"]

ROW_LAYOUTS = (sparse_csr, sparse_bsr)          # the compressed dim is the rows (of blocks)
BLOCK_LAYOUTS = (sparse_bsr, sparse_bsc)
def _index_names(layout):
    """(compressed, plain) index names as torch's messages and printing call them."""
    return ("crow_indices", "col_indices") if layout in ROW_LAYOUTS else ("ccol_indices", "row_indices")


def new_compressed(sizes, compressed_indices, plain_indices, values, layout):
    return TensorBase._from_impl(SparseCsrTensorImpl(sizes, compressed_indices, plain_indices, values, layout))


def _host(t):
    return cpu(t)._numpy()


# ---------------------------------------------------------------------- the factory and its checks
def _as_tensor(x):
    return x if isinstance(x, TensorBase) else tensor(x)


def _estimate_size(layout, compressed, plain, values):
    """torch's ``_estimate_sparse_compressed_tensor_size``: the batch from the indices, the rows
    (columns) from the compressed indices, the other dim from the largest plain index, the block
    and dense dims from the values."""
    batch = tuple(compressed.shape[:-1])
    block = tuple(values.shape[len(batch) + 1:len(batch) + 3]) if layout in BLOCK_LAYOUTS else (1, 1)
    n_compressed = compressed.shape[-1] - 1
    n_plain = int(_host(plain).max()) + 1 if plain.numel() else 0
    rows, cols = (n_compressed, n_plain) if layout in ROW_LAYOUTS else (n_plain, n_compressed)
    dense = tuple(values.shape[len(batch) + 1 + (2 if layout in BLOCK_LAYOUTS else 0):])
    return (*batch, rows * block[0], cols * block[1], *dense)


def _check_args(compressed, plain, values, size, layout):
    """torch's ``_validate_sparse_compressed_tensor_args_worker``: dtypes, dims and shapes, then the
    index invariants. torch checks the invariants only with ``check_invariants=True``; they are
    always checked here, as the COO factory checks its indices: the conversions read with them."""
    cname, pname = _index_names(layout)
    if compressed.dtype is not plain.dtype:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, bot got {compressed.dtype.torch_name} "
                           f"and {plain.dtype.torch_name}, respectively")
    if compressed.dtype not in (st.int32, st.int64):
        raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got {compressed.dtype.torch_name}")
    if compressed.dim() != plain.dim():
        raise RuntimeError(f"{cname} and {pname} dimensionalities must be equal but got {compressed.dim()} and "
                           f"{plain.dim()}, respectively")
    if compressed.dim() < 1:
        raise RuntimeError(f"{cname} must have dimensionality >= 1 but got {compressed.dim()}")
    batch = compressed.dim() - 1
    block_ndim = 2 if layout in BLOCK_LAYOUTS else 0
    if values.dim() < batch + 1 + block_ndim:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block dimensionalities "
                           f"(={batch} + {block_ndim}) but got {values.dim()}")
    dense = values.dim() - batch - 1 - block_ndim
    if len(size) != batch + 2 + dense:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities "
                           f"(={batch} + 2 + {dense}) but got {len(size)}")
    block = tuple(values.shape[batch + 1:batch + 3]) if block_ndim else (1, 1)
    for i in (0, 1):
        if size[batch + i] % block[i]:
            raise RuntimeError(f"tensor shape[{batch + i}] (={size[batch + i]}) must be divisible with "
                               f"blocksize[{i}] (={block[i]}) as defined by values shape")
    rows, cols = size[batch] // block[0], size[batch + 1] // block[1]
    n_compressed, n_plain = (rows, cols) if layout in ROW_LAYOUTS else (cols, rows)
    unit = ("row" if layout in ROW_LAYOUTS else "column") + (" blocks" if block_ndim else "s")
    if compressed.shape[-1] != n_compressed + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {unit} + 1 (={n_compressed + 1}), "
                           f"but got {compressed.shape[-1]}")
    nnz = values.shape[batch]
    if plain.shape[-1] != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[{batch}], "
                           f"but got {plain.shape[-1]}")
    if tuple(compressed.shape[:-1]) != tuple(size[:batch]) or tuple(plain.shape[:-1]) != tuple(size[:batch]) \
            or tuple(values.shape[:batch]) != tuple(size[:batch]):
        raise RuntimeError(f"all batch dimensions of {cname}, {pname} and values must be equal to the batch "
                           f"dimensions of the tensor, {list(size[:batch])}")
    if tuple(values.shape[batch + 1 + block_ndim:]) != tuple(size[batch + 2:]):
        raise RuntimeError(f"values.shape[{batch + 1 + block_ndim}:] must be equal to the dense dimensions of the "
                           f"tensor, {list(size[batch + 2:])}, but got {list(values.shape[batch + 1 + block_ndim:])}")
    # the batch count spelled out: with no stored element a -1 could not be inferred
    n_batches = int(np.prod(size[:batch], dtype=np.int64))
    _check_invariants(_host(compressed).reshape(n_batches, n_compressed + 1), _host(plain).reshape(n_batches, nnz),
                      n_plain, nnz, layout)


def _check_invariants(compressed, plain, n_plain, nnz, layout):
    """The index invariants (torch's ``_validate_compressed_sparse_indices``), batch by batch."""
    cname, pname = _index_names(layout)
    other = "ncols" if layout in ROW_LAYOUTS else "nrows"
    if compressed.size == 0:
        return
    if np.any(compressed[:, 0] != 0):
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if np.any(compressed[:, -1] != nnz):
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    steps = np.diff(compressed, axis=1)
    if np.any(steps < 0) or np.any(steps > n_plain):
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {other}` is not satisfied.")
    if plain.size and (plain.min() < 0 or plain.max() >= n_plain):
        raise RuntimeError(f"`0 <= {pname} < {other}` is not satisfied.")
    for c, p in zip(compressed, plain):
        same = np.repeat(np.arange(len(c) - 1), np.diff(c))     # each entry's compressed index
        if np.any((np.diff(p) <= 0) & (np.diff(same) == 0)):
            n = "nrows" if layout in ROW_LAYOUTS else "ncols"
            raise RuntimeError(f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., {n} "
                               "are sorted and distinct along the last dimension values` is not satisfied.")


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """``torch.sparse_compressed_tensor``: a tensor of the given compressed layout over the given
    indices and values (not copied when they already have the right dtype and device)."""
    if layout not in COMPRESSED_LAYOUTS:
        raise RuntimeError("sparse_compressed_tensor expected sparse compressed tensor layout but got "
                           f"{'none' if layout is None else layout_name(layout)}")
    if pin_memory:
        raise RuntimeError("Only dense CPU tensors can be pinned")
    compressed, plain, values = _as_tensor(compressed_indices), _as_tensor(plain_indices), _as_tensor(values)
    device = as_device(device) if device is not None else values.device
    # Tensors of their own over the caller's memory, as the COO factory keeps (``.data``).
    compressed = to_device(compressed, compressed.dtype, device).data
    plain = to_device(plain, plain.dtype, device).data
    values = to_device(values, dtype or values.dtype, device).data
    if size is None:
        if compressed.dim() < 1 or plain.dim() < 1:
            raise RuntimeError(f"{_index_names(layout)[0]} must have dimensionality >= 1 but got {compressed.dim()}")
        size = _estimate_size(layout, compressed, plain, values)
    size = tuple(int(s) for s in size)
    _check_args(compressed, plain, values, size, layout)
    out = new_compressed(size, compressed, plain, values, layout)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _layout_factory(layout, compressed_name, plain_name):
    def factory(compressed_indices, plain_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                requires_grad=False, check_invariants=None):
        return sparse_compressed_tensor(compressed_indices, plain_indices, values, size, dtype=dtype, layout=layout,
                                        device=device, pin_memory=pin_memory, requires_grad=requires_grad,
                                        check_invariants=check_invariants)
    name = f"sparse_{layout.name[len('sparse_'):]}_tensor"
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"``torch.{name}({compressed_name}, {plain_name}, values, size=None, ...)``: "
                       f"``sparse_compressed_tensor`` with ``layout={layout}``.")
    return factory


sparse_csr_tensor = _layout_factory(sparse_csr, "crow_indices", "col_indices")
sparse_csc_tensor = _layout_factory(sparse_csc, "ccol_indices", "row_indices")
sparse_bsr_tensor = _layout_factory(sparse_bsr, "crow_indices", "col_indices")
sparse_bsc_tensor = _layout_factory(sparse_bsc, "ccol_indices", "row_indices")


# ---------------------------------------------------------------------- accessors
def _refuse(op, wanted, self):
    raise RuntimeError(f"{op} expected {wanted} tensor layout but got {layout_name(self.layout)}")


_ROW_WANTED, _COL_WANTED = "sparse row compressed", "sparse column compressed"


def crow_indices_sparse_csr(self):
    if self.layout not in ROW_LAYOUTS:
        _refuse("crow_indices", _ROW_WANTED, self)
    return component(self, self._impl.compressed_indices)


def col_indices_sparse_csr(self):
    if self.layout not in ROW_LAYOUTS:
        _refuse("col_indices", _ROW_WANTED, self)
    return component(self, self._impl.plain_indices)


def ccol_indices_sparse_csr(self):
    if self.layout in ROW_LAYOUTS:
        _refuse("ccol_indices", _COL_WANTED, self)
    return component(self, self._impl.compressed_indices)


def row_indices_sparse_csr(self):
    if self.layout in ROW_LAYOUTS:
        _refuse("row_indices", _COL_WANTED, self)
    return component(self, self._impl.plain_indices)


def crow_indices_default(self):
    _refuse("crow_indices", _ROW_WANTED, self)


def col_indices_default(self):
    _refuse("col_indices", _ROW_WANTED, self)


def ccol_indices_default(self):
    _refuse("ccol_indices", _COL_WANTED, self)


def row_indices_default(self):
    _refuse("row_indices", _COL_WANTED, self)


def values_sparse_csr(self):
    """``values()``: a view of the compressed tensor (autograd carries its gradient back)."""
    return values_view(self, self._impl.values)


def sum_csr(self, *, dtype=None):
    """``sum``'s compressed kernel (``sum_csr``): the sum of the stored values."""
    return call("sum", component(self, self._impl.values), dtype=dtype)


def _nnz_sparse_csr(self):
    return self._impl.nnz


def sparse_dim_sparse_csr(self):
    return 2


def dense_dim_sparse_csr(self):
    return self._impl.dense_dim


_FLIPPED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc, sparse_bsc: sparse_bsr}


def transpose_sparse_compressed(self, dim0, dim1):
    """``transpose`` of a compressed tensor's two sparse dims: the same three tensors read the other
    way, CSR as CSC (and BSR as BSC, its blocks transposed). Transposing a dim with itself is the
    tensor unchanged; batch dims and dense dims are not transposed here (torch refuses the mixed
    and hybrid cases, with these messages)."""
    impl = self._impl
    n = len(impl.sizes)
    d0, d1 = dim0 % n, dim1 % n
    if d0 == d1:
        return new_compressed(impl.sizes, impl.compressed_indices, impl.plain_indices, impl.values, impl.layout)
    if impl.dense_dim:
        raise RuntimeError("transpose(): hybrid sparse compressed tensors with dense dimensions are not supported")
    batch = impl.batch_dim

    def kind(d):
        return "Batch" if d < batch else "Sparse"
    if kind(d0) != kind(d1):
        raise RuntimeError(f"transpose(): can only transpose dimensions of the same type (Batch, Sparse, Dense), "
                           f"got {d0}({kind(d0)}) and {d1}({kind(d1)})")
    if kind(d0) == "Batch":
        raise NotImplementedError("internals: transposing the batch dims of a compressed tensor is not implemented")
    sizes = list(impl.sizes)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    values = impl.values
    if impl.layout in BLOCK_LAYOUTS:       # each block is read transposed too
        values = call("transpose.int", values, batch + 1, batch + 2)
    return new_compressed(tuple(sizes), impl.compressed_indices, impl.plain_indices, values, _FLIPPED[impl.layout])


def t_sparse_compressed(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return transpose_sparse_compressed(self, 0, 1)


def sparse_compressed_to(t, dtype, device):
    """``Tensor.to`` for a compressed tensor: its three tensors moved, its values cast."""
    if dtype is t.dtype and device == t.device:
        return t
    impl = t._impl
    return new_compressed(impl.sizes, to_device(impl.compressed_indices, impl.compressed_indices.dtype, device),
                          to_device(impl.plain_indices, impl.plain_indices.dtype, device),
                          to_device(impl.values, dtype, device), impl.layout)


def zeros_like_sparse_compressed(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                                 memory_format=None):
    """``zeros_like`` of a compressed tensor (its branch in torch's ``zeros_like``): a tensor of
    the same layout, sizes, block size and dense dims without entries, its compressed indices zero."""
    if layout is not None and layout not in COMPRESSED_LAYOUTS:
        return tensor_factories.zeros_like(self, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                           memory_format=memory_format)
    impl = self._impl
    device = as_device(device) if device is not None else self.device
    batch = tuple(impl.compressed_indices.shape[:-1])
    index = impl.compressed_indices.dtype
    values_shape = (*batch, 0, *impl.values.shape[len(batch) + 1:])
    return new_compressed(impl.sizes, tensor_factories.zeros((*batch, impl.compressed_indices.shape[-1]),
                                                             dtype=index, device=device),
                          tensor_factories.zeros((*batch, 0), dtype=index, device=device),
                          tensor_factories.zeros(values_shape, dtype=dtype or self.dtype, device=device),
                          layout or impl.layout)


def clone_sparse_compressed(self, *, memory_format=None):
    """``clone``: copies of the three tensors, the same layout."""
    if memory_format is not None:
        raise RuntimeError("unsupported memory format option Preserve")
    impl = self._impl
    return new_compressed(impl.sizes, call("clone", impl.compressed_indices), call("clone", impl.plain_indices),
                          call("clone", impl.values), impl.layout)


# ---------------------------------------------------------------------- dense -> compressed
def _arranged(x, batch, layout, blocksize):
    """``x`` (sizes ``(*batch, R, C, *dense)``) with its sparse dims in the layout's order, and
    cut into blocks for BSR and BSC: sizes ``(*batch, P, Q, *block, *dense)`` where P counts
    the compressed dim (rows or columns, of blocks) and Q the plain one."""
    n = x.dim()
    rows, cols = x.shape[batch], x.shape[batch + 1]
    before, after = list(range(batch)), list(range(batch + 2, n))
    if layout not in BLOCK_LAYOUTS:
        return x if layout in ROW_LAYOUTS else call("permute", x, [*before, batch + 1, batch, *after])
    r, c = blocksize
    cut = call("reshape", x, [*x.shape[:batch], rows // r, r, cols // c, c, *x.shape[batch + 2:]])
    # cut's dims: batch..., R/r (batch), r (batch+1), C/c (batch+2), c (batch+3), dense...
    grid = [batch, batch + 2] if layout is sparse_bsr else [batch + 2, batch]
    return call("permute", cut, [*before, *grid, batch + 1, batch + 3, *[d + 2 for d in after]])


def _plain_indices_tensor(plain, shape, device):
    """The plain indices (a host array) as torch's conversions lay them out: the second row of a
    ``(2, nnz)`` index tensor (the COO form they go through), so they start ``nnz`` elements into
    their storage, and ``storage_offset()`` of ``col_indices()`` says so."""
    flat = np.ascontiguousarray(plain, dtype=np.int64).reshape(-1)
    rows = from_host(np.stack([np.zeros_like(flat), flat]), st.int64, device)
    return call("reshape", call("select.int", rows, 0, 1), shape)


def _compressed_from_arranged(arranged, batch, sizes, layout):
    """The compressed tensor of ``arranged`` (``_arranged``'s result): its COO form lists the stored
    entries in order, batch by batch, compressed index first."""
    coo = call("_to_sparse.sparse_dim", arranged, batch + 2)
    indices, values = _host(coo._impl.indices), coo._impl.values
    n_batches = int(np.prod(arranged.shape[:batch], dtype=np.int64))
    P = arranged.shape[batch]
    nnz_total = indices.shape[1]
    if batch:
        flat_batch = np.ravel_multi_index(tuple(indices[:batch]), arranged.shape[:batch]) if nnz_total else \
            np.zeros(0, np.int64)
        per_batch = np.bincount(flat_batch, minlength=n_batches)
        if n_batches and np.any(per_batch != per_batch[0]):
            raise RuntimeError("Expect the same number of specified elements per batch.")
        nnz = int(per_batch[0]) if n_batches else 0
    else:
        flat_batch, nnz = np.zeros(nnz_total, np.int64), nnz_total
    counts = np.zeros((max(n_batches, 1), P), np.int64)
    np.add.at(counts, (flat_batch, indices[batch]), 1)
    crow = np.concatenate([np.zeros((counts.shape[0], 1), np.int64), np.cumsum(counts, axis=1)], axis=1)
    device = arranged.device
    batch_shape = tuple(arranged.shape[:batch])
    compressed = from_host(crow[:n_batches] if batch else crow[0], st.int64, device)
    compressed = call("reshape", compressed, [*batch_shape, P + 1])
    plain = _plain_indices_tensor(indices[batch + 1], [*batch_shape, nnz], device)
    values = call("reshape", values, [*batch_shape, nnz, *values.shape[1:]])
    return new_compressed(sizes, compressed, plain, values, layout)


def _to_compressed(self, layout, blocksize, dense_dim, name):
    """dense -> one of the compressed layouts, with torch's checks and messages (``name`` is the
    kernel torch's message names: ``dense_to_sparse`` or ``dense_to_sparse_csr``, ...)."""
    n = self.dim()
    if layout in BLOCK_LAYOUTS and blocksize is None:
        raise RuntimeError(f"{name}: conversion from Strided to {layout_name(layout)} without blocksize argument "
                           "given is not supported")
    if layout not in BLOCK_LAYOUTS and blocksize is not None:
        raise RuntimeError(f"{name}: conversion from Strided to {layout_name(layout)} with blocksize argument given "
                           "is not supported")
    # torch's order: a given dense_dim's range is checked first, except that a block layout first
    # reads the block's rows at dim -2 - dense_dim (an IndexError where that dim is missing)
    reads_block_first = layout in BLOCK_LAYOUTS and dense_dim is not None and dense_dim >= 0
    block_dim = -2 - (dense_dim if reads_block_first else 0)
    if dense_dim is not None and not reads_block_first and not 0 <= dense_dim <= n - 2:
        raise RuntimeError(f"{name}: dense_dim argument must be in [0,{n - 2}] range, but {dense_dim} is given")
    if block_dim < -max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                         f"but got {block_dim})")
    dense_dim = 0 if dense_dim is None else dense_dim
    if not 0 <= dense_dim <= n - 2:
        raise RuntimeError(f"{name}: dense_dim argument must be in [0,{n - 2}] range, but {dense_dim} is given")
    batch = n - 2 - dense_dim
    if blocksize is not None:
        blocksize = tuple(int(b) for b in blocksize)
        rows, cols = self.shape[batch], self.shape[batch + 1]
        if len(blocksize) != 2 or rows % blocksize[0] or cols % blocksize[1]:
            raise RuntimeError(f"{name}: tensor sparse size ({rows},{cols}) must be divisible by given blocksize "
                               f"({blocksize[0]},{blocksize[1]})")
    return _compressed_from_arranged(_arranged(self, batch, layout, blocksize), batch, tuple(self.shape), layout)


# ---------------------------------------------------------------------- compressed -> COO of blocks -> dense
def _entries(self):
    """Each stored entry's batch (flat), compressed and plain index, in storage order (host
    arrays), and the values with the batch dims flattened into the entries' dim."""
    impl = self._impl
    batch = impl.batch_dim
    batch_shape = tuple(impl.plain_indices.shape[:-1])
    n_batches = int(np.prod(batch_shape, dtype=np.int64))
    nnz = impl.nnz
    compressed = _host(impl.compressed_indices).reshape(n_batches, -1)
    plain = _host(impl.plain_indices).reshape(n_batches * nnz).astype(np.int64)
    own = (np.concatenate([np.repeat(np.arange(c.shape[0] - 1), np.diff(c)) for c in compressed])
           if n_batches else np.zeros(0, np.int64))
    flat_batch = np.repeat(np.arange(n_batches), nnz)
    values = call("reshape", impl.values, [n_batches * nnz, *impl.values.shape[batch + 1:]])
    return flat_batch, own.astype(np.int64), plain, values, batch_shape


def _block_coo(self):
    """A COO tensor over the arranged sizes ``(*batch, P, Q, *block, *dense)`` holding the same
    entries (explicit zeros kept), sparse in its first ``batch + 2`` dims."""
    impl = self._impl
    flat_batch, own, plain, values, batch_shape = _entries(self)
    batch = len(batch_shape)
    batch_rows = list(np.unravel_index(flat_batch, batch_shape)) if batch else []
    indices = from_host(np.stack([*batch_rows, own, plain]).astype(np.int64).reshape(batch + 2, -1), st.int64,
                        self.device)
    block = impl.blocksize or (1, 1)
    rows, cols = impl.sizes[batch] // block[0], impl.sizes[batch + 1] // block[1]
    grid = (rows, cols) if impl.layout in ROW_LAYOUTS else (cols, rows)
    return new_sparse((*batch_shape, *grid, *values.shape[1:]), indices, values, coalesced=True), batch


def _unarranged(arranged, batch, layout):
    """``_arranged`` undone: the dense tensor of sizes ``(*batch, R, C, *dense)``."""
    n = arranged.dim()
    before = list(range(batch))
    if layout not in BLOCK_LAYOUTS:
        if layout in ROW_LAYOUTS:
            return arranged
        return call("permute", arranged, [*before, batch + 1, batch, *range(batch + 2, n)])
    # arranged: batch..., P, Q, r, c, dense...
    row_grid, col_grid = (batch, batch + 1) if layout is sparse_bsr else (batch + 1, batch)
    dense = list(range(batch + 4, n))
    ordered = call("permute", arranged, [*before, row_grid, batch + 2, col_grid, batch + 3, *dense])
    s = ordered.shape
    return call("reshape", ordered, [*s[:batch], s[batch] * s[batch + 1], s[batch + 2] * s[batch + 3], *s[batch + 4:]])


def sparse_compressed_to_dense(self, dtype=None, masked_grad=None):
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
    coo, batch = _block_coo(self)
    dense = _unarranged(call("_to_dense", coo), batch, self.layout)
    # a fresh row-major tensor, as torch's: strides of size-1 dims too (contiguous() would keep a view's)
    return dense if self.layout is sparse_csr else call("clone", dense, memory_format=contiguous_format)


def _compressed_to_coo(self, sparse_dim=None):
    """compressed -> COO, sparse in the batch dims and the two sparse dims: one entry per stored
    element, explicit zeros kept, in the order they are stored (the elements of a BSR or BSC block
    row by row). torch flags the result coalesced where the order is sorted by construction: CSR,
    a tensor without elements or with one stored entry, and a BSR matrix of one-row blocks."""
    impl = self._impl
    if sparse_dim is not None and sparse_dim != 2:
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {layout_name(impl.layout)} to Sparse with "
                           "sparse_dim argument !=2 is not supported")
    flat_batch, own, plain, values, batch_shape = _entries(self)
    batch = len(batch_shape)
    rows, cols = (own, plain) if impl.layout in ROW_LAYOUTS else (plain, own)
    if impl.layout in BLOCK_LAYOUTS:
        r, c = impl.blocksize
        within_r, within_c = np.divmod(np.arange(r * c), c)
        rows = (rows[:, None] * r + within_r[None, :]).reshape(-1)
        cols = (cols[:, None] * c + within_c[None, :]).reshape(-1)
        flat_batch = np.repeat(flat_batch, r * c)
        values = call("reshape", values, [values.shape[0] * r * c, *values.shape[3:]])
    coalesced = (impl.layout is sparse_csr or self.numel() == 0 or impl.nnz == 1
                 or (impl.layout is sparse_bsr and impl.blocksize[0] == 1 and not batch))
    batch_rows = list(np.unravel_index(flat_batch, batch_shape)) if batch else []
    indices = from_host(np.stack([*batch_rows, rows, cols]).astype(np.int64).reshape(batch + 2, -1), st.int64,
                        self.device)
    return new_sparse(impl.sizes, indices, values, coalesced)


def _compressed_of_entries(flat_batch, rows, cols, values, batch_shape, sizes, layout, block=(1, 1)):
    """The compressed tensor of entries given by host index arrays (any order; for BSR and BSC,
    block rows and columns) and values: sorted by batch, compressed index, plain index; offsets
    counted per batch. torch's block conversions build their plain indices on their own (at the
    start of their storage), the others take them from a COO index tensor's second row."""
    own, plain = (rows, cols) if layout in ROW_LAYOUTS else (cols, rows)
    order = np.lexsort((plain, own, flat_batch))
    batch = len(batch_shape)
    n_batches = int(np.prod(batch_shape, dtype=np.int64))
    P = sizes[batch] // block[0] if layout in ROW_LAYOUTS else sizes[batch + 1] // block[1]
    counts = np.zeros((max(n_batches, 1), P), np.int64)
    np.add.at(counts, (flat_batch, own), 1)
    offsets = np.concatenate([np.zeros((counts.shape[0], 1), np.int64), np.cumsum(counts, axis=1)], axis=1)
    nnz = len(order) // max(n_batches, 1)
    device = values.device
    compressed = call("reshape", from_host(offsets[:n_batches] if batch else offsets[0], st.int64, device),
                      [*batch_shape, P + 1])
    plain_t = (from_host(np.ascontiguousarray(plain[order]), st.int64, device) if layout in BLOCK_LAYOUTS
               else _plain_indices_tensor(plain[order], [len(order)], device))
    plain_t = call("reshape", plain_t, [*batch_shape, nnz])
    picked = call("index_select", values, 0, from_host(order.astype(np.int64), st.int64, device))
    return new_compressed(sizes, compressed, plain_t, call("reshape", picked, [*batch_shape, nnz, *values.shape[1:]]),
                          layout)


# ---------------------------------------------------------------------- the conversion operators
def sparse_compressed_to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``_to_sparse`` / ``_to_sparse.sparse_dim`` of a compressed tensor."""
    if sparse_dim is not None or layout is None or layout is sparse_coo:
        if blocksize is not None:
            raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {layout_name(self.layout)} to Sparse "
                               "with blocksize argument given is not supported")
        return _compressed_to_coo(self, sparse_dim)
    if blocksize is not None and layout not in BLOCK_LAYOUTS:
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {layout_name(self.layout)} to "
                           f"{layout_name(layout)} with blocksize argument given is not supported")
    return _compressed_to_compressed(self, layout, blocksize, dense_dim, "sparse_compressed_to_sparse")


def _compressed_to_compressed(self, layout, blocksize, dense_dim, name):
    if dense_dim is not None and dense_dim != self._impl.dense_dim:
        raise RuntimeError(f"{name}: conversion from {layout_name(self.layout)} to {layout_name(layout)} with "
                           "dense_dim argument given is not supported")
    if self.layout is layout:
        if layout in BLOCK_LAYOUTS and blocksize is not None and tuple(blocksize) != self._impl.blocksize:
            raise RuntimeError(f"{name}: conversion from {layout_name(layout)} to {layout_name(layout)} with "
                               f"blocksize changed from {list(self._impl.blocksize)} to {list(blocksize)} is not "
                               "supported")
        return self
    if layout in BLOCK_LAYOUTS and blocksize is None:
        raise RuntimeError(f"{name}: conversion from {layout_name(self.layout)} to {layout_name(layout)} without "
                           "blocksize argument given is not supported")
    if self.layout in BLOCK_LAYOUTS and layout not in BLOCK_LAYOUTS:
        raise RuntimeError(f"sparse_compressed_to_{layout.name}: expected SparseCsr or SparseCsc layout but got "
                           f"{layout_name(self.layout)}")
    impl = self._impl
    if layout not in BLOCK_LAYOUTS:      # CSR <-> CSC: the same entries, explicit zeros kept
        flat_batch, own, plain, values, batch_shape = _entries(self)
        rows, cols = (own, plain) if impl.layout in ROW_LAYOUTS else (plain, own)
        return _compressed_of_entries(flat_batch, rows, cols, values, batch_shape, impl.sizes, layout)
    dense = sparse_compressed_to_dense(self)
    out = _to_compressed(dense, layout, blocksize, impl.dense_dim, name)._impl
    # torch's compressed -> block conversion builds its plain indices on their own (no COO row)
    return new_compressed(out.sizes, out.compressed_indices, call("clone", out.plain_indices), out.values, layout)


def dense_to_sparse_compressed(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``_to_sparse`` of a strided tensor to a compressed layout (``dense_to_sparse`` in torch)."""
    return _to_compressed(self, layout, blocksize, dense_dim, "dense_to_sparse")


def coo_to_sparse_compressed(self, layout, blocksize, dense_dim, name):
    """COO -> compressed: torch converts only a COO tensor of two sparse dims. Every entry is
    kept, explicit zeros too; for BSR and BSC, every block that holds an entry (with the dense
    tensor's values in the rest of the block)."""
    if dense_dim is not None and dense_dim != call("dense_dim", self):
        raise RuntimeError(f"{name}: conversion from Sparse to {layout_name(layout)} with dense_dim "
                           "argument given is not supported")
    if call("sparse_dim", self) != 2:
        raise RuntimeError(f"coo_to_sparse_{layout.name[len('sparse_'):]}: conversion from Sparse to "
                           f"{layout_name(layout)} for input tensors with sparse_dim()!=2 is not supported")
    c = call("coalesce", self)
    rows, cols = _host(c._impl.indices)
    if layout not in BLOCK_LAYOUTS:
        if blocksize is not None:
            raise RuntimeError(f"{name}: conversion from Sparse to {layout_name(layout)} with blocksize argument "
                               "given is not supported")
        return _compressed_of_entries(np.zeros(len(rows), np.int64), rows, cols, c._impl.values, (), c._impl.sizes,
                                      layout)
    if blocksize is None:
        raise RuntimeError(f"{name}: conversion from Sparse to {layout_name(layout)} without blocksize argument "
                           "given is not supported")
    r, q = (int(b) for b in blocksize)
    R, C = c.shape[0], c.shape[1]
    if R % r or C % q:
        raise RuntimeError(f"{name}: tensor sparse size ({R},{C}) must be divisible by given blocksize ({r},{q})")
    blocks = np.unique((rows // r) * (C // q) + cols // q)        # the blocks holding an entry, row-major
    block_rows, block_cols = np.divmod(blocks, C // q)
    grid = _arranged(call("_to_dense", c, None, None), 0, sparse_bsr, (r, q))     # (R/r, C/q, r, q, *dense)
    values = call("index.Tensor", grid, [from_host(block_rows, st.int64, c.device),
                                         from_host(block_cols, st.int64, c.device)])
    return _compressed_of_entries(np.zeros(len(blocks), np.int64), block_rows, block_cols, values, (),
                                  tuple(c.shape), layout, (r, q))


def _to_sparse_layout_kernel(layout):
    """The kernels of ``_to_sparse_csr`` / ``_csc`` (``dense_dim``) and ``_to_sparse_bsr`` / ``_bsc``
    (``blocksize``, ``dense_dim``) for each backend: strided, COO, compressed."""
    short = layout.name[len("sparse_"):]
    blocked = layout in BLOCK_LAYOUTS

    def split(args):
        return (args[0], args[1] if len(args) > 1 else None) if blocked else (None, args[0] if args else None)

    def dense(self, *args, **kwargs):
        blocksize, dense_dim = split(args)
        dense_dim = kwargs.get("dense_dim", dense_dim)
        return _to_compressed(self, layout, blocksize, dense_dim, f"dense_to_sparse_{short}")

    def coo(self, *args, **kwargs):
        blocksize, dense_dim = split(args)
        return coo_to_sparse_compressed(self, layout, blocksize, kwargs.get("dense_dim", dense_dim),
                                        f"coo_to_sparse_{short}")

    def compressed(self, *args, **kwargs):
        blocksize, dense_dim = split(args)
        return _compressed_to_compressed(self, layout, blocksize, kwargs.get("dense_dim", dense_dim),
                                         f"to_sparse_{short}")
    return dense, coo, compressed


(dense_to_sparse_csr, coo_to_sparse_csr, sparse_compressed_to_sparse_csr) = _to_sparse_layout_kernel(sparse_csr)
(dense_to_sparse_csc, coo_to_sparse_csc, sparse_compressed_to_sparse_csc) = _to_sparse_layout_kernel(sparse_csc)
(dense_to_sparse_bsr, coo_to_sparse_bsr, sparse_compressed_to_sparse_bsr) = _to_sparse_layout_kernel(sparse_bsr)
(dense_to_sparse_bsc, coo_to_sparse_bsc, sparse_compressed_to_sparse_bsc) = _to_sparse_layout_kernel(sparse_bsc)


# ---------------------------------------------------------------------- products
def _sparse_compressed_mm(self, mat2):
    """``mm`` with a compressed operand (torch reaches ``addmm``'s SparseCsrCPU kernel): the
    operand's COO form, through the COO layout's product. A matrix only: no batch, no dense dims."""
    if self.layout in COMPRESSED_LAYOUTS and mat2.layout in COMPRESSED_LAYOUTS:
        return _compressed_by_compressed(self, mat2)
    sparse = self if self.layout in COMPRESSED_LAYOUTS else mat2
    # what torch's CPU kernels take: CSR and CSC on either side, BSR of square blocks on the left
    if sparse.layout is sparse_bsc or (sparse.layout is sparse_bsr and sparse is mat2):
        operands = ("Strided", layout_name(self.layout), layout_name(mat2.layout))
        raise RuntimeError("addmm: computation on CPU is not implemented for {} + {} @ {}".format(*operands))
    if sparse.layout is sparse_bsr and sparse._impl.blocksize[0] != sparse._impl.blocksize[1]:
        raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks.")
    if sparse.dtype not in (st.float32, st.float64, st.complex64, st.complex128):     # MKL's types only
        raise NotImplementedError(f'"addmm_out_sparse_csr_impl_mkl" not implemented for \'{sparse.dtype.torch_name}\'')
    if sparse._impl.batch_dim or sparse._impl.dense_dim:
        raise NotImplementedError("internals: mm of a compressed tensor with batch or dense dims is not implemented")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    coo = _compressed_to_coo(sparse)
    # the product comes out row-major either way, as torch's does
    return _sparse_mm(coo, mat2) if sparse is self else contiguous(_sparse_mm(self, coo))


def _compressed_by_compressed(a, b):
    """CSR or CSC times CSR or CSC: a CSR matrix (torch's MKL product gives CSR whatever the two
    layouts), by Gustavson's row-by-row method as MKL runs it. Row i of the result walks row i of
    ``a`` (columns ascending); each entry (i, k) meets the entries of row k of ``b`` (columns
    ascending), and each column j reached is stored in the order it is first reached (not sorted:
    torch's result keeps MKL's order), its products summed in the order they are met; a sum that
    cancels to zero stays an entry. The index pairs are worked out on the host; the values are
    gathered, multiplied and summed by operators."""
    for t in (a, b):
        if t.layout not in (sparse_csr, sparse_csc):
            operands = ("SparseCsr", layout_name(a.layout), layout_name(b.layout))
            raise RuntimeError("addmm: computation on CPU is not implemented for {} + {} @ {}".format(*operands))
        if t._impl.batch_dim or t._impl.dense_dim:
            raise NotImplementedError("internals: mm of compressed tensors with batch or dense dims is not "
                                      "implemented")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.torch_name} but found {b.dtype.torch_name}")
    if a.dtype not in (st.float32, st.float64, st.complex64, st.complex128):     # MKL's types only
        raise NotImplementedError(f'"addmm_out_sparse_csr_impl_mkl_sparse" not implemented for '
                                  f"'{a.dtype.torch_name}'")
    M, K, N = a.shape[0], a.shape[1], b.shape[1]

    def row_major(t):
        """The entries' rows, columns and storage places, sorted by row then column."""
        _, own, plain, values, _ = _entries(t)
        rows, cols = (own, plain) if t.layout in ROW_LAYOUTS else (plain, own)
        order = np.lexsort((cols, rows))
        return rows[order], cols[order], order, values
    a_rows, a_cols, a_places, a_values = row_major(a)
    b_rows, b_cols, b_places, b_values = row_major(b)
    counts = np.bincount(b_rows, minlength=K).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    reps = counts[a_cols]                                     # how many entries of b each entry of a meets
    a_at = np.repeat(np.arange(len(a_rows), dtype=np.int64), reps)
    within = np.arange(int(reps.sum()), dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
    b_at = np.repeat(starts[a_cols], reps) + within
    rows, cols = a_rows[a_at], b_cols[b_at]
    # each (row, column) once, in the order first met; the pairs are already grouped by row
    keys, first, slot = np.unique(rows * N + cols, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")                  # entries in the order first met
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    device = a.device

    def host(x):
        return from_host(np.ascontiguousarray(x, np.int64), st.int64, device)
    products = call("mul.Tensor", call("index_select", a_values, 0, host(a_places[a_at])),
                    call("index_select", b_values, 0, host(b_places[b_at])))
    values = call("zeros", [len(keys)], dtype=products.dtype, device=device)
    if len(a_at):
        values = call("index_add", values, 0, host(rank[slot.reshape(-1)]), products)
    out_rows = keys[order] // max(N, 1)
    crow = np.concatenate([[0], np.cumsum(np.bincount(out_rows, minlength=M))]).astype(np.int64)
    return new_compressed((M, N), host(crow), host(keys[order] % max(N, 1)), values, sparse_csr)


def addmm_sparse_compressed_dense(self, mat1, mat2, *, beta=1, alpha=1):
    """``addmm`` with a compressed operand (``addmm_sparse_compressed_dense``): dense + the product,
    which ``mm``'s compressed kernel computes; torch's CPU kernels take no sparse ``self`` here."""
    if self.layout is not strided:
        operands = (layout_name(self.layout), layout_name(mat1.layout), layout_name(mat2.layout))
        raise RuntimeError("addmm: computation on CPU is not implemented for {} + {} @ {}".format(*operands))
    return scaled_sum(self, call("mm", mat1, mat2), beta, alpha)


def to_sparse_csr(self, dense_dim=None):
    return call("_to_sparse_csr", self, dense_dim)


def to_sparse_csc(self, dense_dim=None):
    return call("_to_sparse_csc", self, dense_dim)


def to_sparse_bsr(self, blocksize, dense_dim=None):
    return call("_to_sparse_bsr", self, blocksize, dense_dim)


def to_sparse_bsc(self, blocksize, dense_dim=None):
    return call("_to_sparse_bsc", self, blocksize, dense_dim)
