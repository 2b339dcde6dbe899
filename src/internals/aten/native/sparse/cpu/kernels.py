"""CPU loops of the sparse COO layout (``SparseTensor.cpp``, ``SparseTensorMath.cpp``, ``SparseBlasImpl.cpp``).

All arrays are flat typed buffers of contiguous tensors. An ``indices`` buffer is the int64
``(S, nnz)`` matrix row by row: coordinate d of entry j is ``indices[d * nnz + j]``. A ``values``
buffer holds ``nnz`` blocks of ``D`` elements (D = 1 when there are no dense dims). A "row" of a
dense tensor is one such block: the dense tensor seen as (P, D), P the product of the sparse sizes.
Every index a loop follows was checked against the sizes before the call: no bounds checks here.
What one item of a loop does is in ``../rows.py``, shared with the CUDA kernels.
"""
from numba import njit, prange, types
from numba.extending import overload

from ...cpu.parallel_for import parallel_loop
from ...scalar_ops import fma
from ..rows import gather_row, linear_index_of, merge_segment, nonzero_row, row_pointers_at, scatter_row


@parallel_loop()
def nonzero_rows(flags, x, D):
    for p in prange(flags.size):
        nonzero_row(p, flags, x, D)


@parallel_loop()
def gather_rows(indices, values, x, flags, positions, sizes, D, nnz):
    """Rows keep their order (``positions`` is a prefix sum of ``flags``): the result is sorted."""
    for p in prange(flags.size):
        gather_row(p, indices, values, x, flags, positions, sizes, D, nnz)


@parallel_loop()
def linear_index(out, indices, sizes, nnz):
    for j in prange(nnz):
        linear_index_of(j, out, indices, sizes, nnz)


@parallel_loop()
def merge_segments(out_indices, out_values, indices, values, perm, starts, S, D, nnz):
    """Segments (output entries) run in parallel: each writes only its own."""
    for s in prange(starts.size - 1):
        merge_segment(s, out_indices, out_values, indices, values, perm, starts, S, D, nnz)


@parallel_loop()
def scatter_rows(out, values, rows, D):
    for j in prange(rows.size):
        scatter_row(j, out, values, rows, D)


@parallel_loop()
def csr_row_pointers(row_ptr, rows, nnz, M):
    """The CSR row pointers of sorted row indices: row r's entries are ``row_ptr[r]:row_ptr[r + 1]``."""
    for k in prange(nnz + 1):
        row_pointers_at(k, row_ptr, rows, nnz, M)


@parallel_loop()
def spmm(out, row_ptr, cols, values, dense, M, N):
    """out (M, N) = sparse (M, K) @ dense (K, N), the sparse matrix as CSR: one task per output row
    (no two tasks write the same element), each adding ``v * dense[col, :]`` for its row's entries."""
    for i in prange(M):
        for j in range(N):
            out[i * N + j] = 0
        for k in range(row_ptr[i], row_ptr[i + 1]):
            v = values[k]
            c = cols[k]
            for j in range(N):
                out[i * N + j] += v * dense[c * N + j]


def _axpy_one(alpha, x, y):
    """``alpha * x + y`` as BLAS's axpy computes a float: rounded once (integers: exact anyway)."""
    return alpha * x + y


@overload(_axpy_one, target="cpu")
def _axpy_one_cpu(alpha, x, y):
    if isinstance(y, types.Float):       # chosen while compiling: llvm.fma takes floats only
        return lambda alpha, x, y: fma(alpha, x, y)
    return lambda alpha, x, y: y + alpha * x


@njit(cache=True)
def merge_add(r_indices, r_values, t_indices, t_values, t_lin, s_indices, s_values, s_lin, alpha, S, D, fused):
    """torch's CPU sparse + sparse: one walk along both entry lists, as a merge of two sorted lists.

    Equal linear indices give one entry ``t + alpha * s``, otherwise the smaller one is taken.
    Entries are taken in their stored order even when a list is not sorted: torch does the same,
    and the result is coalesced only when both inputs are. Returns the number of entries written.
    torch adds each block with BLAS's axpy, ``r = alpha * s + r``: ``fused`` (float32 and float64,
    whose axpy MKL or OpenBLAS computes with fused multiply-adds) rounds it once.
    """
    tn, sn = t_lin.size, s_lin.size
    cap = tn + sn
    i = j = r = 0
    while i < tn or j < sn:
        take_t = j >= sn or (i < tn and t_lin[i] <= s_lin[j])
        take_s = i >= tn or (j < sn and s_lin[j] <= t_lin[i])
        src = i if take_t else j
        for d in range(S):
            r_indices[d * cap + r] = t_indices[d * tn + src] if take_t else s_indices[d * sn + src]
        for e in range(D):
            if take_t and take_s:
                if fused:
                    r_values[r * D + e] = _axpy_one(alpha, s_values[j * D + e], t_values[i * D + e])
                else:
                    r_values[r * D + e] = t_values[i * D + e] + alpha * s_values[j * D + e]
            elif take_t:
                r_values[r * D + e] = t_values[i * D + e]
            else:
                r_values[r * D + e] = alpha * s_values[j * D + e]
        i += take_t
        j += take_s
        r += 1
    return r


@njit(cache=True)
def add_rows_scaled(out, values, rows, alpha, D, fused):
    """dense += alpha · sparse, one stored entry after another (a row listed twice is added twice,
    in entry order), each element ``out += alpha * value``: rounded once where torch's loop is BLAS's
    axpy (MKL fuses the multiply-add) and ``fused`` is set, twice where it is a plain C++ loop of
    torch's generic build (``add_dense_sparse_worker_non_hybrid_cpu`` on x86-64). Sequential: two
    entries may name one row."""
    for j in range(rows.size):
        base = rows[j] * D
        for e in range(D):
            if fused:
                out[base + e] = _axpy_one(alpha, values[j * D + e], out[base + e])
            else:
                out[base + e] = out[base + e] + alpha * values[j * D + e]
