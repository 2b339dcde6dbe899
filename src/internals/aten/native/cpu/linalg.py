"""CPU matrix multiply (``aten/src/ATen/native/LinearAlgebra.cpp``; torch calls a BLAS here).

``out[b] = a[b] @ w[b]`` for each batch b, with a (batch, M, K), w (batch, K, N) and out
(batch, M, N), row-major (or, flagged ``trans``, a and w column-major, as BLAS's ``transa`` and
``transb`` allow), blocked the way a BLAS ``gemm`` is (GotoBLAS, simplified):

1. ``w`` is *packed* transposed, into ``wt`` (batch, N, K): each column of ``w`` becomes a
   contiguous row, so every entry of ``out`` is a dot product of two unit-stride rows. A
   column-major ``w`` (``x @ weight.t()`` in ``linear``) already is ``wt``: nothing to pack. A
   column-major ``a`` is packed the other way, into row-major rows.
2. Tasks of ``MC`` rows by ``NC`` columns of ``out`` run in parallel (a small product runs them
   on the calling thread: see ``parallel_for.pick``). For each block of ``KC``
   values of k (the task's ``MC x KC`` piece of ``a`` stays in L2) and each group of 4 rows of
   ``wt`` (4 x KC, held in L1), a micro-kernel computes a 4 x 4 tile of ``out``: 16 dot products
   at once, so that each vector it loads from ``a`` or ``wt`` feeds 4 multiply-adds.
3. Dot products shorter than ``SHORT_K`` would be mostly set-up and horizontal sums: then each row
   of ``out`` is built instead from rank-1 updates, ``out[i, :] += a[i, k] * w[k, :]``, which
   run along the contiguous rows of ``w`` (``linear``'s last layer backward has K = 10).

The micro-kernel keeps its 16 sums in local variables, which LLVM vectorizes as 16 reductions
along k, each in its own vector register: inside the loop no load or store of ``out``, and two
loads per four fused multiply-adds. Summing along k needs the ``reassoc`` flag (set on ``gemm``,
into which the micro-kernel is inlined: a call per tile, passing eight array views, cost 7-14%):
float sums are rounded in another order than a sequential loop's; integer sums are exact (they
wrap, in any order).

A BLAS's micro-kernel instead makes rank-1 updates of a tile of ``out`` held in registers: for
each k, a vector of a packed row of ``w`` times one broadcast value of ``a`` per tile row. In
Numba that means one local variable per element of the tile, which only LLVM's SLP vectorizer
turns into vectors, and Numba switches it off (numba#8852: miscompilations). Switched on for one
kernel, a 6 x 16 tile reached about the same speed as this one with 256-bit vectors (about 110
GFLOP/s on data in L1) and 164 with 512-bit ones, but the packing it needs ate the gain at these
sizes.

What limits the speed, measured on one core of a 2-core AVX-512 Xeon: about 85 GFLOP/s in
float32, against about 110 for the micro-kernel alone on data in L1 and 175 for torch's BLAS.
LLVM picks 256-bit vectors (8 float32) for this CPU where the BLAS uses 512-bit ones (asking
Numba's LLVM for 512-bit ones, ``-prefer-256-bit``, left the MLP benchmark's products as they
were); each tile streams its 4 rows of ``a`` from L2; each tile ends with 16 horizontal sums.
"""
import numpy as np
from numba import njit, prange

from .parallel_for import parallel_loop, pick

MR = NR = 4          # the micro-kernel's tile of out (rows of a x rows of wt)
KC, MC = 1024, 64    # k values per tile: its 4 rows of wt (16 KiB in float32) stay in L1, and long
                     # dot products amortize the horizontal sums; rows of a per task (128 KiB at KC)
NC = 128             # columns of out per task: a few rows by many columns still make tasks for both cores
SHORT_K = 16


@njit(inline="always")
def _rows(m, i, last, k0, k1):
    """Rows i..i+3 of matrix m, cut to columns k0:k1; past ``last`` they repeat row ``last``
    (a tile at the edge computes those products too, and never stores them)."""
    return (m[min(i, last), k0:k1], m[min(i + 1, last), k0:k1],
            m[min(i + 2, last), k0:k1], m[min(i + 3, last), k0:k1])


@njit(inline="always")
def _dot_tile(a_rows, w_rows, zero):
    """The 4 x 4 dot products of 4 rows of a with 4 rows of wt: the micro-kernel."""
    a0, a1, a2, a3 = a_rows
    w0, w1, w2, w3 = w_rows
    c00 = c01 = c02 = c03 = c10 = c11 = c12 = c13 = zero
    c20 = c21 = c22 = c23 = c30 = c31 = c32 = c33 = zero
    for k in range(a0.shape[0]):
        c00 += a0[k] * w0[k]
        c01 += a0[k] * w1[k]
        c02 += a0[k] * w2[k]
        c03 += a0[k] * w3[k]
        c10 += a1[k] * w0[k]
        c11 += a1[k] * w1[k]
        c12 += a1[k] * w2[k]
        c13 += a1[k] * w3[k]
        c20 += a2[k] * w0[k]
        c21 += a2[k] * w1[k]
        c22 += a2[k] * w2[k]
        c23 += a2[k] * w3[k]
        c30 += a3[k] * w0[k]
        c31 += a3[k] * w1[k]
        c32 += a3[k] * w2[k]
        c33 += a3[k] * w3[k]
    return ((c00, c01, c02, c03), (c10, c11, c12, c13), (c20, c21, c22, c23), (c30, c31, c32, c33))


@njit(inline="always")
def _add_tile(out, tile, i, j, rows, cols):
    """out[i:i + rows, j:j + cols] += the tile's corner of that size."""
    for r in range(rows):
        for s in range(cols):
            out[i + r, j + s] += tile[r][s]


@njit(inline="always")
def _pack_task(task, dst, src):
    """16 rows of dst[b] = src[b].T, in 16 x 16 blocks, so that each row of a block is one 64-byte
    line read or written."""
    rows, cols = dst.shape[1], dst.shape[2]
    groups = (rows + 15) // 16
    b, r0 = task // groups, task % groups * 16
    for c0 in range(0, cols, 16):
        for r in range(r0, min(r0 + 16, rows)):
            for c in range(c0, min(c0 + 16, cols)):
                dst[b, r, c] = src[b, c, r]


@parallel_loop()
def transpose_pack(dst, src):
    """dst[b] = src[b].T, for row-major (batch, rows, cols) arrays."""
    for task in prange(dst.shape[0] * ((dst.shape[1] + 15) // 16)):
        _pack_task(task, dst, src)


@njit(inline="always")
def _gemm_task(task, out, a, wt, zero):
    """One MC x NC block of out = a @ wt.T (see the module docstring)."""
    M, K, N = a.shape[1], a.shape[2], wt.shape[1]
    row_blocks, col_blocks = (M + MC - 1) // MC, (N + NC - 1) // NC
    b, rest = task // (row_blocks * col_blocks), task % (row_blocks * col_blocks)
    i0, j0 = rest // col_blocks * MC, rest % col_blocks * NC
    i1, j1 = min(i0 + MC, M), min(j0 + NC, N)
    out[b, i0:i1, j0:j1] = 0
    for k0 in range(0, K, KC):
        k1 = min(k0 + KC, K)
        for j in range(j0, j1, NR):
            w_rows = _rows(wt[b], j, j1 - 1, k0, k1)
            for i in range(i0, i1, MR):
                tile = _dot_tile(_rows(a[b], i, i1 - 1, k0, k1), w_rows, zero)
                _add_tile(out[b], tile, i, j, min(MR, i1 - i), min(NR, j1 - j))


@njit(inline="always")
def _gemm_tasks(a, wt):
    return a.shape[0] * ((a.shape[1] + MC - 1) // MC) * ((wt.shape[1] + NC - 1) // NC)


@parallel_loop(fastmath={"contract", "reassoc"})
def gemm(out, a, wt):
    """out = a @ wt.T per batch: a (batch, M, K) and wt (batch, N, K), both row-major."""
    zero = out.dtype.type(0)    # the sums' start, typed: from a literal 0 float32 sums would be float64
    for task in prange(_gemm_tasks(a, wt)):
        _gemm_task(task, out, a, wt, zero)


@njit(inline="always")
def _short_k_task(task, out, a, w):
    """Row i of out[b] = a[b] @ w[b] by rank-1 updates."""
    b, i = task // a.shape[1], task % a.shape[1]
    row = out[b, i]
    row[:] = 0
    for k in range(a.shape[2]):
        x, w_k = a[b, i, k], w[b, k]
        for j in range(row.shape[0]):
            row[j] += x * w_k[j]


@parallel_loop()
def gemm_short_k(out, a, w):
    """out = a @ w per batch by rank-1 updates: a (batch, M, K) and w (batch, K, N), row-major."""
    for task in prange(a.shape[0] * a.shape[1]):
        _short_k_task(task, out, a, w)


def mm_loop(out, a, w, batch, M, N, K, trans_a=False, trans_w=False):
    """The flat buffers of out, a and w, viewed as matrices (NumPy checks the sizes): a stored
    (M, K) or, ``trans_a``, (K, M); w stored (K, N) or, ``trans_w``, (N, K)."""
    a = a[:batch * M * K].reshape((batch, K, M) if trans_a else (batch, M, K))
    w = w[:batch * K * N].reshape((batch, N, K) if trans_w else (batch, K, N))
    out = out[:batch * M * N].reshape(batch, M, N)
    a = _packed_transpose(a) if trans_a else a
    work = (batch, M, N, K)      # as many multiply-adds as a loop over this shape has elements
    if K < SHORT_K:
        pick(gemm_short_k, work)(out, a, _packed_transpose(w) if trans_w else w)
    else:
        pick(gemm, work)(out, a, w if trans_w else _packed_transpose(w))


def _packed_transpose(m):
    packed = np.empty((m.shape[0], m.shape[2], m.shape[1]), dtype=m.dtype)
    pick(transpose_pack, m.shape)(packed, m)
    return packed
