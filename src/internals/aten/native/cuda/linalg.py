"""CUDA matrix multiply: the classic tiled shared-memory kernel.

Each block computes a TILE x TILE tile of ``out``. It walks along K one tile at a time: the
block's threads load a tile of ``a`` and a tile of ``w`` into shared memory together (each
thread one element, so neighbouring threads read neighbouring addresses: coalesced), wait,
and multiply the tiles out of fast shared memory. Same arguments as the CPU ``mm_loop``: an
operand flagged ``trans`` is stored column-major, which only changes the index it is read at.
"""
import math

import numba
import numpy as np
from numba import cuda

# 16 x 16 threads per block, also on the simulator: it runs each thread as a Python thread, and
# fewer, larger blocks wait at fewer barriers (a (2, 8, 9) @ (2, 9, 64) product: 7.9 s with
# 4 x 4 tiles, 2.1 s with 16 x 16).
TILE = 16


def _build_mm(acc_type):
    @cuda.jit
    def kernel(out, a, w, M, N, K, trans_a, trans_w):
        tile_a = cuda.shared.array((TILE, TILE), acc_type)
        tile_w = cuda.shared.array((TILE, TILE), acc_type)
        ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
        b = cuda.blockIdx.z
        i = cuda.blockIdx.y * TILE + ty
        j = cuda.blockIdx.x * TILE + tx
        acc = acc_type(0)
        for k0 in range(0, K, TILE):
            k = k0 + tx                      # a[b, i, k], stored (M, K) or transposed (K, M)
            tile_a[ty, tx] = a[b * M * K + (k * M + i if trans_a else i * K + k)] if (i < M and k < K) else 0
            k = k0 + ty                      # w[b, k, j], stored (K, N) or transposed (N, K)
            tile_w[ty, tx] = w[b * K * N + (j * K + k if trans_w else k * N + j)] if (k < K and j < N) else 0
            cuda.syncthreads()
            for kk in range(TILE):
                acc += tile_a[ty, kk] * tile_w[kk, tx]
            cuda.syncthreads()
        if i < M and j < N:
            out[b * M * N + i * N + j] = acc
    return kernel


_kernels = {}


def mm_loop(out, a, w, batch, M, N, K, trans_a=False, trans_w=False):
    key = np.dtype(out.dtype)
    if key not in _kernels:
        _kernels[key] = _build_mm(numba.from_dtype(key))
    grid = (math.ceil(N / TILE), math.ceil(M / TILE), batch)
    with np.errstate(all="ignore"):
        _kernels[key][grid, (TILE, TILE)](out, a, w, M, N, K, trans_a, trans_w)
