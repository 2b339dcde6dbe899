"""CPU matrix multiply (``aten/src/ATen/native/LinearAlgebra.cpp``; torch calls a BLAS here).

A cache-blocked loop over contiguous operands: ``out[b] = a[b] @ w[b]`` for each batch b, with
a (batch, M, K), w (batch, K, N) and out (batch, M, N), all row-major. Blocks of rows run in
parallel; inside, a KB x NB tile of ``w`` is reused by every row of the block while it is hot in
cache, and the innermost loop runs along a row of ``out`` and of ``w`` (unit stride: vectorised).
"""
from numba import njit, prange

MB, KB, NB = 32, 128, 512   # rows per task, and the tile of w kept in cache


@njit(parallel=True, cache=True, fastmath={"contract"})
def mm_loop(out, a, w, batch, M, N, K):
    blocks = (M + MB - 1) // MB
    for task in prange(batch * blocks):
        b, i0 = task // blocks, (task % blocks) * MB
        i1 = min(i0 + MB, M)
        oa, ow, oo = b * M * K, b * K * N, b * M * N
        for i in range(i0, i1):
            for j in range(N):
                out[oo + i * N + j] = 0
        for k0 in range(0, K, KB):
            k1 = min(k0 + KB, K)
            for j0 in range(0, N, NB):
                j1 = min(j0 + NB, N)
                for i in range(i0, i1):
                    row = oo + i * N
                    for k in range(k0, k1):
                        aik = a[oa + i * K + k]
                        wk = ow + k * N
                        for j in range(j0, j1):
                            out[row + j] += aik * w[wk + j]
