"""Arithmetic on the compressed layouts (``aten/src/ATen/native/sparse/SparseCsrTensorMath.cpp``).

Registered under the SparseCsrCPU / SparseCsrCUDA keys of each operator:

* value-wise unary operators that keep zero at zero (``abs``, ``sin``, ``sqrt``, ``sign``, ...,
  torch's list for the compressed layouts): the same indices (copied), the operator on the values;
* ``mul``: by a number or 0-dim tensor (every value scaled), by a dense tensor of the same shape
  (each stored value times the dense value there: the sparse pattern is kept), and CSR by CSR
  (the entries both store);
* ``add``: CSR + CSR (the entries either stores), a dense result when either side is dense;
* ``mm`` of two compressed matrices (``sparse_compressed_mm`` in ``sparse_csr_tensor.py``);
* ``sum`` over dims of a CSR matrix (``sum_sparse_compressed``, torch's ``_sparse_csr_sum_cpu``):
  a CSR result with one entry per row (column) that stores something, the dims kept.

Entries are matched by their row-major position among the sparse sizes, on the host with NumPy,
as the conversions in ``sparse_csr_tensor.py`` count their offsets; the values only move and are
combined through operators. Where torch's CPU kernels (MKL) refuse a case, so does this module,
with torch's exception class and message.
"""
import numpy as np

from ....c10 import scalar_type as st
from ....c10.tensor_impl import sparse_bsc, sparse_bsr, sparse_csr, strided
from ....c10.wrap_dim import wrap_dim
from ...dispatcher import call
from ..copy import to
from ..tensor_factories import from_host, wrap_scalar, zeros
from .sparse_csr_tensor import ROW_LAYOUTS, _compressed_of_entries, _entries, _host, new_compressed
from .sparse_tensor import layout_name

# torch's unary operators with compressed kernels (each maps zero to zero, so the pattern stays)
UNARY = ("abs", "angle", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "erf", "erfinv", "expm1", "floor",
         "frac", "isinf", "isnan", "isneginf", "isposinf", "log1p", "neg", "rad2deg", "relu", "round", "sgn", "sign",
         "signbit", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")

# those with an in-place form on the compressed layouts (its values changed in place)
UNARY_INPLACE = ("abs", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "erf", "erfinv", "expm1", "floor",
                 "frac", "log1p", "neg", "rad2deg", "relu", "round", "sgn", "sign", "sin", "sinh", "sqrt", "tan",
                 "tanh", "trunc")

__all__ = ([f"{op}_sparse_compressed" for op in UNARY] + [f"{op}_sparse_compressed_" for op in UNARY_INPLACE]
           + ["mul_sparse_compressed", "add_sparse_compressed", "mul_sparse_compressed_", "add_sparse_compressed_",
              "sum_sparse_compressed", "threshold_backward_sparse_compressed"])


def _with_values(self, values):
    """A compressed tensor with ``self``'s indices (copied) and sizes, and new values."""
    impl = self._impl
    return new_compressed(impl.sizes, call("clone", impl.compressed_indices), call("clone", impl.plain_indices),
                          values, impl.layout)


def _unary_kernel(op):
    def kernel(self):
        return _with_values(self, call(op, self._impl.values))
    kernel.__name__ = kernel.__qualname__ = f"{op}_sparse_compressed"
    kernel.__doc__ = f"``{op}`` of a compressed tensor: the same pattern, ``{op}`` of each stored value."
    return kernel


def _unary_inplace_kernel(op):
    def kernel(self):
        if op == "round" and self.layout is not sparse_csr:
            # torch's round_sparse_csr_ asserts the CSR layout (the other in-place forms take all four)
            raise RuntimeError("self.is_sparse_csr() INTERNAL ASSERT FAILED: torch's round_ of a compressed "
                               "tensor takes CSR only")
        call(f"{op}_", self._impl.values)
        return self
    kernel.__name__ = kernel.__qualname__ = f"{op}_sparse_compressed_"
    kernel.__doc__ = f"``{op}_`` of a compressed tensor: ``{op}_`` of its values, its indices untouched."
    return kernel


for _op in UNARY:
    globals()[f"{_op}_sparse_compressed"] = _unary_kernel(_op)
for _op in UNARY_INPLACE:
    globals()[f"{_op}_sparse_compressed_"] = _unary_inplace_kernel(_op)


def threshold_backward_sparse_compressed(grad_output, self, threshold):
    """``threshold_backward`` with compressed operands (relu's backward): ``grad_output``'s
    pattern, its values where ``self``'s stored values pass the threshold, zero elsewhere."""
    return _with_values(grad_output, call("threshold_backward", grad_output._impl.values, self._impl.values,
                                          threshold))


# ---------------------------------------------------------------------- matching entries
def _positions(t):
    """Each stored entry's row-major position (host int64 array, in stored order) of a CSR matrix."""
    flat_batch, own, plain, _, batch_shape = _entries(t)
    if batch_shape:
        raise NotImplementedError("internals: arithmetic on batched compressed tensors is not implemented")
    rows, cols = (own, plain) if t.layout in ROW_LAYOUTS else (plain, own)
    return rows.astype(np.int64) * t.shape[1] + cols


def _gather(values, places, device):
    return call("index_select", values, 0, from_host(np.ascontiguousarray(places, np.int64), st.int64, device))


def _of_positions(positions, values, like):
    """The CSR matrix of entries at sorted row-major ``positions`` with ``values``."""
    cols = like.shape[1]
    rows, plain = np.divmod(positions, max(cols, 1))
    return _compressed_of_entries(np.zeros(len(positions), np.int64), rows, plain, values, (), tuple(like.shape),
                                  sparse_csr)


# ---------------------------------------------------------------------- mul
def mul_sparse_compressed(self, other):
    """``mul.Tensor`` with a compressed operand (``mul_sparse_csr``, then ``mul_out_sparse_csr``).

    A number or 0-dim tensor scales every stored value, whatever the layout. A dense side of a
    CSR matrix is masked by its pattern (``sparse_mask``) and the entries multiplied. Otherwise
    torch makes an empty result of ``self``'s layout and multiplies the two as COO tensors into
    it, which only a CSR result accepts: ``self`` CSR takes an ``other`` of any compressed layout
    (the entries both store, a block's zeros counting as stored), and the rest is refused with
    torch's messages."""
    for scalar, sparse in ((self, other), (other, self)):
        if scalar.layout is strided and scalar.dim() == 0:
            return _with_values(sparse, call("mul.Tensor", sparse._impl.values, scalar))
    if self.layout is sparse_csr and other.layout is strided:
        return _with_values(self, call("mul.Tensor", self._impl.values, _masked(other, self)))
    if self.layout is strided and other.layout is sparse_csr:
        return _with_values(other, call("mul.Tensor", _masked(self, other), other._impl.values))
    if self.layout in (sparse_bsr, sparse_bsc):
        raise RuntimeError(f"empty_sparse_compressed expected sparse compressed (non-block) tensor layout but got "
                           f"{layout_name(self.layout)}")
    if self.layout is not sparse_csr:
        raise RuntimeError("Expected result Tensor to be of format CSR")
    if self.dim() != 2 or other.dim() != 2:
        raise NotImplementedError("internals: mul of two compressed tensors is implemented for matrices only")
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                           "number of sparse dimensions, and shape of sparse dimensions")
    a, device = _positions(self), self.device
    # other's entries as its COO tensor lists them (a block's zeros stored too)
    coo = call("_to_sparse", other, layout=None, blocksize=None, dense_dim=None)
    rows, cols = _host(call("_indices", coo))
    b = rows.astype(np.int64) * other.shape[1] + cols
    if coo.is_coalesced():      # two coalesced COO tensors: the entries both store
        both, in_a, in_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)
        values = call("mul.Tensor", _gather(self._impl.values, in_a, device),
                      _gather(call("_values", coo), in_b, device))
        return _of_positions(both, values, self)
    # An uncoalesced COO tensor (CSC's is column-major, BSR's and BSC's go block by block):
    # torch's intersection of a coalesced tensor with it keeps each of its entries, the product
    # where ``self`` stores the place, zero where it does not.
    if not len(a):      # an operand without entries: none in the product
        empty = to(_gather(call("_values", coo), np.zeros(0, np.int64), device), st.result_type(self, other))
        return _of_positions(a, empty, self)
    order = np.argsort(b, kind="stable")
    b = b[order]
    at = np.minimum(np.searchsorted(a, b), len(a) - 1)
    found = a[at] == b
    products = call("mul.Tensor", _gather(self._impl.values, at, device),
                    _gather(call("_values", coo), order, device))
    values = call("where.self", from_host(found, st.bool_, device), products,
                  call("zeros_like", products, dtype=None, layout=None, device=None, pin_memory=None,
                       memory_format=None))
    return _of_positions(b, values, self)


def _masked(dense, sparse):
    """``dense.sparse_mask(sparse)``'s values: the dense entries at the CSR matrix's stored places."""
    if tuple(dense.shape) != tuple(sparse.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(dense.shape)} but "
                           f"mask has size {list(sparse.shape)}")
    if sparse.dim() != 2:
        raise NotImplementedError("internals: mul of a dense tensor and a batched or hybrid CSR tensor is not "
                                  "implemented")
    at = from_host(_positions(sparse), st.int64, sparse.device)
    return call("index_select", call("reshape", dense, [-1]), 0, at)


# ---------------------------------------------------------------------- add
def add_sparse_compressed(self, other, *, alpha=1):
    """``add.Tensor`` with a compressed operand (``add_out_sparse_compressed_cpu``): with a dense
    side, the dense sum (CSR and CSC only); CSR + CSR, the CSR matrix of every entry either stores
    (an entry both store summed, explicit zeros kept), for the floating and complex types MKL adds.
    MKL refuses the block layouts but for a CSR self beside a BSR matrix of 1x1 blocks (read as the
    CSR matrix it is); its refusals keep their class and words here."""
    if self.layout is strided or other.layout is strided:
        sparse = other if self.layout is strided else self
        if sparse.layout in (sparse_bsr, sparse_bsc):      # add_out_dense_sparse_compressed_cpu's assertion
            raise RuntimeError("src.layout() == kSparseCsr || src.layout() == kSparseCsc INTERNAL ASSERT FAILED: "
                               "torch adds a dense tensor and a CSR or CSC one only")
        dense = self if sparse is other else other      # torch's check names the dense side self
        if tuple(dense.shape) != tuple(sparse.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(dense.shape)} while other has size {list(sparse.shape)} (FYI: op2-sparse "
                               f"addition does not currently support broadcasting)")
        dense = [call("to_dense", t, None, masked_grad=None) if t.layout is not strided else t for t in (self, other)]
        return call("add.Tensor", *dense, alpha=alpha)
    for t in (other, self):     # torch asks other for its crow_indices first
        if t.layout not in ROW_LAYOUTS:
            raise RuntimeError(f"crow_indices expected sparse row compressed tensor layout but got "
                               f"{layout_name(t.layout)}")
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"torch.add: Expected input tensors to have the same shape, but got tensor `self` with "
                           f"shape {list(self.shape)} and tensor `other` with shape {list(other.shape)}")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {other.dtype.torch_name} but found {self.dtype.torch_name}")
    if not (self.dtype.is_floating_point or self.dtype.is_complex) or self.dtype.is_reduced_float:
        raise NotImplementedError(f"\"add_out_sparse_csr_impl_mkl\" not implemented for '{self.dtype.torch_name}'")
    if self.layout is sparse_bsr or other.layout is sparse_bsr:
        other = _mkl_block_operand(self, other)
    if self.dim() != 2:
        raise NotImplementedError("internals: add of batched or hybrid compressed tensors is not implemented")
    a, b = _positions(self), _positions(other)
    union = np.union1d(a, b)
    device = self.device
    n = len(union)
    dense_sizes = tuple(self._impl.values.shape[1:])

    def spread(positions, values):
        """The values placed at their entries' places among the union (zero elsewhere), and where."""
        places = np.searchsorted(union, positions)
        out = zeros((n, *dense_sizes), dtype=self.dtype, device=device)
        if len(places):
            out = call("index_put", out, [from_host(places, st.int64, device)], values, False)
        mask = np.zeros(n, bool)
        mask[places] = True
        return out, mask
    t_vals, in_t = spread(a, self._impl.values)
    s_vals, in_s = spread(b, other._impl.values if alpha == 1
                          else call("mul.Tensor", other._impl.values, wrap_scalar(alpha)))
    # an entry only one side stores keeps its value as it is (a -0.0 stays -0.0)
    summed = call("add.Tensor", t_vals, s_vals)
    only_t = from_host(in_t & ~in_s, st.bool_, device)
    only_s = from_host(in_s & ~in_t, st.bool_, device)
    values = call("where.self", only_t, t_vals, call("where.self", only_s, s_vals, summed))
    return _of_positions(union, values, self)


def _mkl_block_operand(self, other):
    """What MKL's add makes of a BSR operand (``add_out_sparse_csr`` in ``mkl/SparseBlasImpl.cpp``):
    non-square blocks refused first; then a CSR self beside BSR blocks of 1x1 reads them as CSR
    (returned here as that CSR matrix); any other mix fails in ``mkl_sparse_?_add``, and two BSR
    matrices of one square block size in MKL's export of the sum."""
    blocks = [t._impl.blocksize for t in (self, other) if t.layout is sparse_bsr]
    if any(r != c for r, c in blocks):
        raise RuntimeError("MKL Sparse doesn't support matrices with non-square blocks.")
    letter = {st.float32: "s", st.float64: "d", st.complex64: "c", st.complex128: "z"}[self.dtype]
    if self.layout is sparse_csr and blocks == [(1, 1)]:
        impl = other._impl
        return new_compressed(impl.sizes, impl.compressed_indices, impl.plain_indices,
                              call("reshape", impl.values, [-1]), sparse_csr)
    if self.layout is sparse_bsr and other.layout is sparse_bsr and blocks[0] == blocks[1] != (1, 1):
        values = {"s": "values", "d": "values", "c": "reinterpret_cast<MKL_Complex8**>(values)",
                  "z": "reinterpret_cast<MKL_Complex16**>(values)"}[letter]
        raise RuntimeError(f"MKL error: SPARSE_STATUS_INVALID_VALUE when calling `mkl_sparse_{letter}_export_csr( "
                           f"source, indexing, rows, cols, rows_start, rows_end, col_indx, {values})`")
    if self.layout is sparse_bsr and blocks[0] == (1, 1) and blocks[-1] == (1, 1):
        # torch returns a BSR tensor holding CSR-shaped values here, or fails by the data
        raise NotImplementedError("internals: add with a BSR self of 1x1 blocks is not implemented (torch's MKL "
                                  "path gives a malformed BSR tensor)")
    raise RuntimeError(f"MKL error: SPARSE_STATUS_NOT_SUPPORTED when calling `mkl_sparse_{letter}_add(operation, "
                       f"A, alpha, B, C)`")


# ---------------------------------------------------------------------- in place
def _install(self, result):
    """``self`` takes ``result``'s indices and values (its sizes and layout are the same): the
    compressed tensor is changed in place, as torch's ``copy_`` of the result into it does."""
    if result.layout is not self.layout:
        raise RuntimeError(f"result layout {layout_name(result.layout)} does not match the layout of self, "
                           f"{layout_name(self.layout)}")
    if result.dtype is not self.dtype:
        raise RuntimeError(f"result type {result.dtype.torch_name} can't be cast to the desired output type "
                           f"{self.dtype.torch_name}")
    impl, new = self._impl, result._impl
    impl.compressed_indices, impl.plain_indices, impl.values = new.compressed_indices, new.plain_indices, new.values
    return self


def mul_sparse_compressed_(self, other):
    """``mul_`` of a compressed tensor: the product, installed in ``self``."""
    return _install(self, mul_sparse_compressed(self, other))


def add_sparse_compressed_(self, other, *, alpha=1):
    """``add_`` of a compressed tensor by a compressed one: the sum, installed in ``self``."""
    if self.layout is strided:
        return call("add_.Tensor", self, call("to_dense", other, None, masked_grad=None), alpha=alpha)
    return _install(self, add_sparse_compressed(self, other, alpha=alpha))


# ---------------------------------------------------------------------- sum over dims
def sum_sparse_compressed(self, dim, keepdim=False, *, dtype=None):
    """``sum.dim_IntList`` of a compressed tensor (``sum_sparse_compressed``, then
    ``_sparse_csr_sum_cpu``): CSR matrices only, the dims kept. Over dim 1, a ``(rows, 1)`` CSR
    matrix with an entry for each row that stores one; over dim 0, ``(1, cols)`` with an entry
    for each column that does; over both (or ``dim=()``), one entry. Each sum runs over the
    entries in stored order (rows top-down within a column), in the accumulation type: integers
    (bool excluded) in int64, reduced floats in float32, rounded once."""
    if dim is None:
        raise RuntimeError("dim has no value, cannot be used in sum.dim_IntList")
    if self.layout is not sparse_csr:
        raise RuntimeError(f"Currently the only compressed sparse format supported for sum.dim_IntList is CSR, "
                           f"but got layout {layout_name(self.layout)}")
    dtype = dtype or self.dtype
    if dtype is st.bool_ or dtype is st.complex32:
        raise NotImplementedError(f"\"_sparse_csr_sum_cpu\" not implemented for '{dtype.torch_name}'")
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
    if self.dim() != 2:
        raise RuntimeError("input_dim == 2 INTERNAL ASSERT FAILED: torch's CSR reductions take matrices only")
    dims = sorted({wrap_dim(d, 2) for d in dim}) if len(dim) else [0, 1]
    if len(dims) != len(dim) and len(dim):
        raise RuntimeError("((dims[0] == 0 && dims[1] == 1) || (dims[0] == 1 && dims[1] == 0)) INTERNAL ASSERT "
                           "FAILED: a dim repeated in a CSR reduction")
    impl = self._impl
    values = to(impl.values, dtype)
    acc = st.int64 if dtype.category == st.INTEGRAL else st.opmath_type(dtype)
    result_dtype = st.int64 if dtype.category == st.INTEGRAL else dtype
    _, rows, cols, _, _ = _entries(self)
    rows_n, cols_n = self.shape
    if dims == [0, 1]:
        nnz = min(1, len(rows))
        targets, crow, plain = np.zeros(len(rows), np.int64), [0, nnz], np.zeros(nnz, np.int64)
        sizes = (1, min(1, cols_n))
    elif dims == [1]:
        stored = np.unique(rows)                       # the rows that store an entry
        targets = np.searchsorted(stored, rows)
        crow = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=rows_n) > 0)])
        plain, sizes = np.zeros(len(stored), np.int64), (rows_n, 1)
    else:
        stored = np.unique(cols)
        targets = np.searchsorted(stored, cols)
        crow, plain, sizes = [0, len(stored)], stored, (1, cols_n)
    device = self.device
    sums = zeros((len(plain),), dtype=acc, device=device)
    if len(targets):
        sums = call("index_add", sums, 0, from_host(targets.astype(np.int64), st.int64, device),
                    to(values, acc))
    sums = to(sums, result_dtype)
    index = impl.compressed_indices.dtype
    return new_compressed(sizes, from_host(np.asarray(crow, np.int64), index, device),
                          from_host(np.asarray(plain, np.int64), index, device), sums, sparse_csr)
