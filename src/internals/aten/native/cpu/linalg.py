"""CPU matrix multiply (``aten/src/ATen/native/LinearAlgebra.cpp``; torch calls a BLAS here).

``out[b] = a[b] @ w[b]`` for each batch b, with a (batch, M, K), w (batch, K, N) and out
(batch, M, N), all row-major, in the shape of a BLAS ``gemm`` (GotoBLAS's blocking, simplified):

1. ``w`` is *packed* into strips ``NR`` columns wide, each stored k-major and contiguous
   (zero-padded on the right), so the inner loop reads ``w`` at unit stride however wide N is.
2. Tasks of ``MC`` rows run in parallel. For each block of ``KC`` values of k and each strip,
   a micro-kernel updates a ``MR x NR`` tile of ``out`` (4 rows x 64 columns: 1 KiB, held in L1)
   with ``KC`` rank-1 updates: every value of the strip it loads feeds ``MR`` multiply-adds.

Numba has no vector types and cannot mark the operands as non-overlapping, so the tile lives in
``out`` (L1) rather than in registers as a BLAS's would; that, not arithmetic, limits the speed.
"""
import numpy as np
from numba import njit, prange

MR, NR = 4, 64      # the micro-kernel's tile of out
KC, MC = 128, 32    # k values per pass over a tile (the strip's 32 KiB stays in cache); rows per task


@njit(inline="always", fastmath={"contract"})
def _tile(c0, c1, c2, c3, a0, a1, a2, a3, panel):
    """Add ``a_r @ panel`` to row slice ``c_r`` for the four rows (each slice NR wide, each
    ``a_r`` the row's KC values of a): the full-size micro-kernel."""
    for k in range(panel.shape[0]):
        wk = panel[k]
        x0, x1, x2, x3 = a0[k], a1[k], a2[k], a3[k]
        for j in range(NR):
            c0[j] += x0 * wk[j]
            c1[j] += x1 * wk[j]
            c2[j] += x2 * wk[j]
            c3[j] += x3 * wk[j]


@njit(inline="always", fastmath={"contract"})
def _edge_tile(out, a, panel, b, i, rows, j0, cols, k0):
    """The same update for a tile cut short by the edge of out (fewer rows or columns)."""
    for k in range(panel.shape[0]):
        wk = panel[k]
        for r in range(rows):
            x = a[b, i + r, k0 + k]
            for j in range(cols):
                out[b, i + r, j0 + j] += x * wk[j]


@njit(parallel=True, cache=True, fastmath={"contract"})
def gemm(out, a, w, packed):
    """out = a @ w, batched; ``packed`` is scratch of shape (batch, strips, K, NR)."""
    batch, M, K = a.shape
    N = w.shape[2]
    strips = packed.shape[1]
    for task in prange(batch * strips):
        b, s = task // strips, task % strips
        j0 = s * NR
        cols = min(NR, N - j0)
        for k in range(K):
            for j in range(cols):
                packed[b, s, k, j] = w[b, k, j0 + j]
            for j in range(cols, NR):
                packed[b, s, k, j] = 0
    blocks = (M + MC - 1) // MC
    for task in prange(batch * blocks):
        b, i0 = task // blocks, (task % blocks) * MC
        i1 = min(i0 + MC, M)
        for i in range(i0, i1):
            for j in range(N):
                out[b, i, j] = 0
        for k0 in range(0, K, KC):
            k1 = min(k0 + KC, K)
            for s in range(strips):
                j0 = s * NR
                cols = min(NR, N - j0)
                panel = packed[b, s, k0:k1]
                for i in range(i0, i1, MR):
                    rows = min(MR, i1 - i)
                    if rows == MR and cols == NR:
                        _tile(out[b, i, j0:j0 + NR], out[b, i + 1, j0:j0 + NR],
                              out[b, i + 2, j0:j0 + NR], out[b, i + 3, j0:j0 + NR],
                              a[b, i, k0:k1], a[b, i + 1, k0:k1], a[b, i + 2, k0:k1], a[b, i + 3, k0:k1], panel)
                    else:
                        _edge_tile(out, a, panel, b, i, rows, j0, cols, k0)


def mm_loop(out, a, w, batch, M, N, K):
    """The flat contiguous buffers of out, a and w, viewed as matrices (NumPy checks the sizes)."""
    packed = np.empty((batch, (N + NR - 1) // NR, K, NR), dtype=a.dtype)
    gemm(out[:batch * M * N].reshape(batch, M, N), a[:batch * M * K].reshape(batch, M, K),
         w[:batch * K * N].reshape(batch, K, N), packed)
