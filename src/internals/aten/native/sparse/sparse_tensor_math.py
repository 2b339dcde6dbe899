"""Arithmetic on sparse COO tensors: ``add`` and ``mm`` (``aten/src/ATen/native/sparse/SparseTensorMath.cpp``).

Registered under the Sparse keys of ``add.Tensor`` and ``mm``: the dispatcher picks them whenever
an argument is sparse (SparseCPU ranks above CPU), so they also meet mixed dense/sparse calls.
"""
import platform

import numpy as np

from ....c10 import scalar_type as st
from ....c10.tensor_impl import sparse_coo, strided
from ...dispatcher import call
from ..binary_ops import _sub_check
from ..copy import contiguous, to
from ..elementwise import common_device
from ..tensor_factories import empty, from_host, wrap_scalar, zeros
from . import kernels
from .sparse_tensor import checked_coalesced, flat, kernel_values, layout_name, linear_indices, new_sparse

__all__ = ["add_sparse", "add_sparse_", "sub_sparse", "sub_sparse_", "neg_sparse", "mul_sparse", "mul_sparse_",
           "_sparse_mm", "sum_coo",
           "addmm_sparse_dense", "scaled_sum"]


def add_sparse(self, other, *, alpha=1):
    """dense + sparse -> dense; sparse + sparse -> sparse; sparse + dense is refused (as torch)."""
    if other.layout is strided:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if self.layout is strided:
        if self.shape != other.shape:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(self.shape)} while other has size {list(other.shape)} (FYI: dense-sparse "
                               "addition does not currently support broadcasting)")
        return call("add.Tensor", self, call("to_dense", other, None, masked_grad=None), alpha=alpha)
    return _add_sparse_sparse(self, other, alpha)


def add_sparse_(self, other, *, alpha=1):
    """In place. A dense ``self`` takes each stored entry of ``other`` in turn, duplicates one
    after the other (``add_dense_sparse_worker``: r[index] += alpha · value); a sparse ``self``
    becomes the sum."""
    if self.layout is strided and other.layout is strided:
        return call("add_.Tensor", self, other, alpha=alpha)
    if self.layout is not strided:
        total = add_sparse(self, other, alpha=alpha)._impl     # the same tensor now holds the sum
        impl = self._impl
        impl.indices, impl.values, impl.coalesced = total.indices, total.values, total.coalesced
        return self
    if tuple(self.shape) != tuple(other.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                           f"{list(self.shape)} while other has size {list(other.shape)} (FYI: dense-sparse "
                           "addition does not currently support broadcasting)")
    if _adds_with_axpy(self, other, alpha):
        return _add_scaled_rows(self, other, alpha)
    indices, values = call("_indices", other), call("_values", other)
    rows = tuple(call("select.int", indices, 0, d) for d in range(indices.shape[0]))
    return call("index_put_", self, rows, call("mul.Scalar", values, alpha) if alpha != 1 else values, True)


def sub_sparse(self, other, *, alpha=1):
    """``sub.Tensor`` with a sparse operand (``sub_sparse``): the bool check, then ``add`` with -alpha."""
    _sub_check(self, other)
    return add_sparse(self, other, alpha=-alpha)


def sub_sparse_(self, other, *, alpha=1):
    """In place (``sub_sparse_``): the bool check, then ``add_`` with -alpha."""
    _sub_check(self, other)
    return add_sparse_(self, other, alpha=-alpha)


def _adds_with_axpy(self, other, alpha):
    """Whether dense += alpha · sparse takes the multiply-add loop below: on the CPU, float32 and
    float64 (torch's paths for them round ``alpha * value`` inside BLAS's axpy or a C++ loop; the
    generic path's ``mul`` then ``index_put_`` is the same with alpha 1), a contiguous ``self``."""
    return (self.device.type == "cpu" and alpha != 1 and self.dtype in (st.float32, st.float64)
            and other.dtype is self.dtype and self.is_contiguous() and other._impl.sparse_dim > 0)


def _add_scaled_rows(self, other, alpha):
    """torch's ``add_out_dense_sparse_cpu``: a coalesced tensor (or one entry) with no dense dims goes
    through a scalar loop of the generic build, two roundings on x86-64 (one on aarch64, whose
    compilers contract it); every other one through ``cpublas::axpy``, which MKL (and OpenBLAS on
    ARM) computes with fused multiply-adds. Entries are added in stored order."""
    impl = other._impl
    non_hybrid = (impl.coalesced or impl.nnz == 1) and impl.dense_dim == 0
    fused = not non_hybrid or platform.machine().lower() in ("arm64", "aarch64")
    sparse_sizes = impl.sizes[:impl.sparse_dim]
    rows = linear_indices(impl.indices, sparse_sizes)     # checked against the sizes here
    values = contiguous(impl.values)
    block = int(np.prod(impl.sizes[impl.sparse_dim:]))
    scale = np.float32(alpha) if self.dtype is st.float32 else np.float64(alpha)
    kernels(self.device).add_rows_scaled(flat(self), flat(values), flat(rows), scale, block, fused)
    return self


def neg_sparse(self):
    """The same entries with their values negated."""
    return new_sparse(tuple(self.shape), call("clone", call("_indices", self)),
                      call("neg", call("_values", self)), self.is_coalesced())


def scaled_sum(self, product, beta, alpha):
    """``beta * self + alpha * product`` for a dense ``self`` (broadcast to the product's shape) and
    the product of a sparse operand: ``self`` is not read when ``beta`` is zero, as torch's BLAS
    path does not (NaN in it stays out). torch's kernels add ``alpha * value * row`` entry by entry
    into the scaled ``self``; here the product is formed first: the last bits may differ."""
    if self.layout is not strided:
        return None
    if product.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type {product.dtype.torch_name} but found {self.dtype.torch_name}")
    base = call("expand", self, list(product.shape))
    if beta == 0:
        return call("mul.Tensor", product, wrap_scalar(alpha)) if alpha != 1 else contiguous(product)
    if beta != 1:
        base = call("mul.Tensor", base, wrap_scalar(beta))
    return call("add.Tensor", base, product, alpha=alpha)


def addmm_sparse_dense(self, mat1, mat2, *, beta=1, alpha=1):
    """``addmm``'s sparse kernel (``addmm_sparse_dense_cpu``): dense + sparse @ dense."""
    if self.layout is not strided:
        raise RuntimeError(f"addmm_sparse_dense: expected strided result tensor, got tensor with layout "
                           f"{layout_name(self.layout)}")
    return scaled_sum(self, call("mm", mat1, mat2), beta, alpha)


def sum_coo(self, *, dtype=None):
    """``sum``'s sparse kernel (``sum_coo``): the sum of the stored values, duplicates included, the
    zeros it does not store adding nothing."""
    return call("sum", call("_values", self), dtype=dtype)


def _zero_dim_operand(self, other):
    """The sparse operand and the 0-dim dense one of a product, or None when the product is one the
    package does not compute (sparse by sparse, sparse by a dimensioned dense tensor)."""
    if other.layout is strided and other.dim() == 0:
        return self, other
    if self.layout is strided and self.dim() == 0 and other.layout is sparse_coo:
        return other, self
    return None


def mul_sparse(self, other):
    """``mul.Tensor``'s sparse kernel for a sparse tensor times a 0-dim one, the product an
    optimizer's momentum takes (``mul_out_sparse_zerodim``): the same indices (copied) and coalesced
    flag, each value times the scalar, in the promoted type."""
    pair = _zero_dim_operand(self, other)
    if pair is None:
        raise NotImplementedError("internals: mul of sparse tensors is implemented only by a 0-dim tensor "
                                  "or a Python number")
    sparse, scalar = pair
    impl = sparse._impl
    return new_sparse(impl.sizes, call("clone", impl.indices), call("mul.Tensor", impl.values, scalar),
                      impl.coalesced)


def mul_sparse_(self, other):
    """In place: ``self`` gets a new values tensor, the product (torch 2.13 leaves the old one to any
    ``detach`` of ``self`` that shares it, while the version counter, shared, moves for both). The
    product must keep ``self``'s dtype: torch's check words it as the values' dtype. The coalesced
    flag follows torch's as the tests record it (see below)."""
    if self.layout is not sparse_coo or _zero_dim_operand(self, other) is None:
        raise NotImplementedError("internals: mul_ of a sparse tensor is implemented only by a 0-dim tensor "
                                  "or a Python number")
    impl = self._impl
    product = call("mul.Tensor", impl.values, other)
    if product.dtype is not impl.dtype:
        if not st.can_cast(product.dtype, impl.dtype):
            raise RuntimeError(f"dtype of values ({product.dtype.torch_name}) must match dtype of sparse tensor "
                               f"({impl.dtype.torch_name})")
        product = to(product, impl.dtype)
    # torch installs the product as a new set of entries, which it calls coalesced only when there
    # are fewer than two: a coalesced tensor of two entries or more comes out uncoalesced.
    impl.values, impl.coalesced = product, impl.nnz < 2
    return self


def _add_sparse_sparse(t, s, alpha):
    """On the CPU, torch's merge (``merge_add``): one walk along both entry lists in stored order,
    coalesced when both inputs are. On cuda, as torch's CUDA kernel: the two lists concatenated,
    ``s``'s values scaled by ``alpha``, uncoalesced."""
    if t.shape != s.shape:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, "
                           f"but {list(t.shape)} != {list(s.shape)}")
    if call("sparse_dim", t) != call("sparse_dim", s):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same density, but 'self' has {t.sparse_dim()} "
                           f"sparse dimensions while 'other' has {s.sparse_dim()} sparse dimensions")
    device = common_device(t, s)
    dtype = st.promote_types(t.dtype, s.dtype)
    if dtype.is_reduced_float:
        raise NotImplementedError(f"\"cadd_sparse\" not implemented for '{dtype.torch_name}'")
    if dtype is not st.bool_ and isinstance(alpha, bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not dtype.is_floating_point and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    ti, si = t._impl, s._impl
    t_idx, s_idx = contiguous(ti.indices), contiguous(si.indices)
    t_val, s_val = contiguous(to(ti.values, dtype)), contiguous(to(si.values, dtype))
    S, tn, sn = ti.sparse_dim, ti.nnz, si.nnz
    r_idx = empty((S, tn + sn), dtype=st.int64, device=device)
    r_val = empty((tn + sn, *t_val.shape[1:]), dtype=dtype, device=device)
    if device.type == "cuda":
        _put(r_idx, 1, 0, t_idx)
        _put(r_idx, 1, tn, s_idx)
        _put(r_val, 0, 0, t_val)
        _put(r_val, 0, tn, call("mul.Tensor", s_val, wrap_scalar(alpha)))
        return new_sparse(t.shape, r_idx, r_val, coalesced=False)
    sparse_sizes = ti.sizes[:S]
    t_lin, s_lin = linear_indices(t_idx, sparse_sizes), linear_indices(s_idx, sparse_sizes)
    block = int(np.prod(ti.sizes[S:]))
    count = kernels(device).merge_add(flat(r_idx), flat(r_val), flat(t_idx), flat(t_val), flat(t_lin), flat(s_idx),
                                      flat(s_val), flat(s_lin), st.checked_convert(alpha, dtype), S, block,
                                      dtype in (st.float32, st.float64))
    return new_sparse(t.shape, call("narrow", r_idx, 1, 0, count), call("narrow", r_val, 0, 0, count),
                      coalesced=ti.coalesced and si.coalesced)


def _sparse_by_sparse(a, b):
    """sparse (M, K) @ sparse (K, N) -> sparse (M, N), coalesced (``sparse_sparse_matmul_cpu``):
    both coalesced first, then Gustavson's row-by-row product as torch's ``_csr_matmult`` runs
    it. Entry (i, k) of ``a`` meets each entry (k, j) of ``b``; the products of one output entry
    are summed from zero in the order of k, and a sum that cancels to zero stays an entry. The
    index pairs are worked out on the host; the values are multiplied and summed by operators."""
    for name, t in (("mat1_", a), ("mat2_", b)):
        if t.dim() != 2:
            raise RuntimeError(f"Expected {name}.dim() == 2 to be true, but got false.  (Could this error message "
                               f"be improved?  If so, please report an enhancement request to PyTorch.)")
    for t in (a, b):
        if t._impl.dense_dim:
            raise RuntimeError(f"sparse_sparse_matmul_cpu: scalar values expected, got {t._impl.dense_dim}D values")
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({M}x{K} and {K2}x{N})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {a.dtype.torch_name} does not match mat2 dtype {b.dtype.torch_name}")
    if not (a.dtype in (st.float32, st.float64) or a.dtype.is_complex) or a.dtype is st.complex32:
        raise NotImplementedError(f"\"sparse_matmul\" not implemented for '{a.dtype.torch_name}'")
    device = common_device(a, b)
    a, b = call("coalesce", a)._impl, call("coalesce", b)._impl
    a_rows, a_cols = call("_to_copy", a.indices, device="cpu")._numpy()
    b_rows, b_cols = call("_to_copy", b.indices, device="cpu")._numpy()
    b_start = np.searchsorted(b_rows, np.arange(K + 1))          # b's row pointers
    counts = b_start[a_cols + 1] - b_start[a_cols]               # the entries of b each entry of a meets
    from_a = np.repeat(np.arange(len(a_rows)), counts)
    first = np.cumsum(counts) - counts
    from_b = np.repeat(b_start[a_cols], counts) + np.arange(int(counts.sum())) - np.repeat(first, counts)
    places, slot = np.unique(a_rows[from_a] * N + b_cols[from_b], return_inverse=True)

    def picked(values, at):
        return call("index_select", values, 0, from_host(at.astype(np.int64), st.int64, device))
    products = call("mul.Tensor", picked(a.values, from_a), picked(b.values, from_b))
    sums = call("index_add", zeros((len(places),), dtype=a.dtype, device=device), 0,
                from_host(slot.astype(np.int64).reshape(-1), st.int64, device), products)
    indices = from_host(np.stack([places // max(N, 1), places % max(N, 1)]).astype(np.int64), st.int64, device)
    return new_sparse((M, N), indices, sums, coalesced=True)


def _put(dst, dim, start, src):
    """``dst.narrow(dim, start, len).copy_(src)``: ``src`` written into a slice of ``dst``."""
    call("copy_", call("narrow", dst, dim, start, src.shape[dim]), src, False)


def _sparse_mm(self, mat2):
    """sparse (M, K) @ dense (K, N) -> dense (M, N), and dense @ sparse through the transpose.

    The sparse matrix is coalesced, so its entries are sorted by row: row pointers (CSR) then give
    each output row its entries, and one task per row (CPU) or per output element (CUDA) adds
    ``value * mat2[col, :]`` for them. No two tasks write one element: no atomics.
    """
    if self.layout is strided:         # dense @ sparse = (sparse^T @ dense^T)^T, as torch's result strides show
        i = mat2._impl
        if i.sparse_dim != 2 or i.dense_dim != 0:
            raise NotImplementedError("internals: dense @ sparse needs a 2-d sparse matrix with no dense dims")
        flipped = empty((2, i.nnz), dtype=st.int64, device=i.indices.device)
        rows = call("select.int", i.indices, 0, 1), call("select.int", i.indices, 0, 0)
        for row, source in enumerate(rows):
            call("copy_", call("select.int", flipped, 0, row), source, False)
        mat2_t = new_sparse((i.sizes[1], i.sizes[0]), flipped, i.values, coalesced=False)
        return call("t", _sparse_mm(mat2_t, call("t", self)))
    if mat2.layout is sparse_coo:
        return _sparse_by_sparse(self, mat2)
    impl = self._impl
    if impl.sparse_dim != 2 or impl.dense_dim != 0:
        raise RuntimeError(f"mm: expected a sparse matrix with 2 sparse dims and no dense dims, but got "
                           f"sparse_dim {impl.sparse_dim} and dense_dim {impl.dense_dim}")
    if mat2.dtype is not self.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype.torch_name} but found {mat2.dtype.torch_name}")
    if self.dtype is st.bool_:
        raise NotImplementedError("\"addmm_sparse_dense\" not implemented for 'Bool'")
    M, K = impl.sizes
    N = mat2.size(1)             # an IndexError for a 1-d mat2, as torch's
    if mat2.shape[0] != K:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {K}, got {mat2.shape[0]}")
    device = common_device(self, mat2)
    c = call("coalesce", self)._impl
    indices, values, dense = checked_coalesced(c), kernel_values(c.values), kernel_values(mat2)
    nnz = c.nnz
    k = kernels(device)
    row_ptr = empty((M + 1,), dtype=st.int64, device=device)
    k.csr_row_pointers(flat(row_ptr), flat(indices)[:nnz], nnz, M)
    out = empty((M, N), dtype=values.dtype, device=device)
    if out.numel():
        k.spmm(flat(out), flat(row_ptr), flat(indices)[nnz:], flat(values), flat(dense), M, N)
    return to(out, self.dtype)
