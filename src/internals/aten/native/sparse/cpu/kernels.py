"""CPU loops of the sparse COO layout (``SparseTensor.cpp``, ``SparseTensorMath.cpp``, ``SparseBlasImpl.cpp``).

All arrays are flat typed buffers of contiguous tensors. An ``indices`` buffer is the int64
``(S, nnz)`` matrix row by row: coordinate d of entry j is ``indices[d * nnz + j]``. A ``values``
buffer holds ``nnz`` blocks of ``D`` elements (D = 1 when there are no dense dims). A "row" of a
dense tensor is one such block: the dense tensor seen as (P, D), P the product of the sparse sizes.
Every index a loop follows was checked against the sizes before the call: no bounds checks here.
"""
from numba import njit, prange


@njit(parallel=True, cache=True)
def nonzero_rows(flags, x, D):
    """flags[p] = 1 if row p of the dense ``x`` holds any nonzero (NaN counts: it is not zero)."""
    for p in prange(flags.size):
        found = 0
        for e in range(D):
            if x[p * D + e] != 0:
                found = 1
                break
        flags[p] = found


@njit(parallel=True, cache=True)
def gather_rows(indices, values, x, flags, positions, sizes, D, nnz):
    """Entry ``positions[p]`` <- row p of ``x``, for each flagged row: its coordinates (p unravelled
    over ``sizes``, row-major) and its block of values. Rows keep their order: the result is sorted."""
    for p in prange(flags.size):
        if flags[p]:
            j = positions[p]
            rest = p
            for d in range(sizes.size - 1, -1, -1):
                indices[d * nnz + j] = rest % sizes[d]
                rest //= sizes[d]
            for e in range(D):
                values[j * D + e] = x[p * D + e]


@njit(parallel=True, cache=True)
def linear_index(out, indices, sizes, nnz):
    """out[j] = the row-major position of entry j's coordinates in a tensor of ``sizes``."""
    for j in prange(nnz):
        position = 0
        for d in range(sizes.size):
            position = position * sizes[d] + indices[d * nnz + j]
        out[j] = position


@njit(parallel=True, cache=True)
def merge_segments(out_indices, out_values, indices, values, perm, starts, S, D, nnz):
    """Coalesce's merge: output entry s sums the input entries ``perm[starts[s]:starts[s + 1]]``
    (one coordinate, in their input order) and takes their coordinates. Segments run in parallel."""
    count = starts.size - 1
    for s in prange(count):
        first = perm[starts[s]]
        for d in range(S):
            out_indices[d * count + s] = indices[d * nnz + first]
        for e in range(D):
            out_values[s * D + e] = values[first * D + e]
            for k in range(starts[s] + 1, starts[s + 1]):
                out_values[s * D + e] += values[perm[k] * D + e]


@njit(parallel=True, cache=True)
def scatter_rows(out, values, rows, D):
    """out[rows[j]] = values[j] block by block; the rows are distinct (a coalesced input)."""
    for j in prange(rows.size):
        for e in range(D):
            out[rows[j] * D + e] = values[j * D + e]


@njit(parallel=True, cache=True)
def csr_row_pointers(row_ptr, rows, nnz, M):
    """The CSR row pointers of sorted row indices: row r's entries are ``row_ptr[r]:row_ptr[r + 1]``.

    Each boundary k (between entries k - 1 and k) starts every row after the previous entry's row
    up to entry k's row: each row pointer is written exactly once, so boundaries run in parallel.
    """
    for k in prange(nnz + 1):
        previous = rows[k - 1] if k > 0 else -1
        current = rows[k] if k < nnz else M
        for r in range(previous + 1, current + 1):
            row_ptr[r] = k


@njit(parallel=True, cache=True)
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


@njit(cache=True)
def merge_add(r_indices, r_values, t_indices, t_values, t_lin, s_indices, s_values, s_lin, alpha, S, D):
    """torch's CPU sparse + sparse: one walk along both entry lists, as a merge of two sorted lists.

    Equal linear indices give one entry ``t + alpha * s``, otherwise the smaller one is taken.
    Entries are taken in their stored order even when a list is not sorted: torch does the same,
    and the result is coalesced only when both inputs are. Returns the number of entries written.
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
                r_values[r * D + e] = t_values[i * D + e] + alpha * s_values[j * D + e]
            elif take_t:
                r_values[r * D + e] = t_values[i * D + e]
            else:
                r_values[r * D + e] = alpha * s_values[j * D + e]
        i += take_t
        j += take_s
        r += 1
    return r
