"""CUDA matrix multiply: the classic tiled shared-memory kernel.

Each block computes a TILE x TILE tile of ``out``. It walks along K one tile at a time: the
block's threads load a tile of ``a`` and a tile of ``w`` into shared memory together (each
thread one element, so neighbouring threads read neighbouring addresses: coalesced), wait,
and multiply the tiles out of fast shared memory. Same arguments as the CPU ``mm_loop``.
"""
import math

import numba
import numpy as np
from numba import cuda

from ...._cuda_env import SIMULATED

TILE = 4 if SIMULATED else 16


def _build_mm(acc_type):
    @cuda.jit
    def kernel(out, a, w, M, N, K):
        tile_a = cuda.shared.array((TILE, TILE), acc_type)
        tile_w = cuda.shared.array((TILE, TILE), acc_type)
        ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
        b = cuda.blockIdx.z
        i = cuda.blockIdx.y * TILE + ty
        j = cuda.blockIdx.x * TILE + tx
        acc = acc_type(0)
        for k0 in range(0, K, TILE):
            tile_a[ty, tx] = a[b * M * K + i * K + k0 + tx] if (i < M and k0 + tx < K) else 0
            tile_w[ty, tx] = w[b * K * N + (k0 + ty) * N + j] if (k0 + ty < K and j < N) else 0
            cuda.syncthreads()
            for k in range(TILE):
                acc += tile_a[ty, k] * tile_w[k, tx]
            cuda.syncthreads()
        if i < M and j < N:
            out[b * M * N + i * N + j] = acc
    return kernel


_kernels = {}


def mm_loop(out, a, w, batch, M, N, K):
    key = np.dtype(out.dtype)
    if key not in _kernels:
        _kernels[key] = _build_mm(numba.from_dtype(key))
    grid = (math.ceil(N / TILE), math.ceil(M / TILE), batch)
    with np.errstate(all="ignore"):
        _kernels[key][grid, (TILE, TILE)](out, a, w, M, N, K)
