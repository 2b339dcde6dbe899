"""CUDA kernels of the indexing operators (``aten/src/ATen/native/cuda/Indexing.cu``,
``ScatterGatherKernel.cu``). Same arguments as ``cpu/indexing.py``: offsets the host checked."""
import numpy as np
from numba import cuda

from .loops import launch_config


@cuda.jit
def _copy_indexed(out, src, out_at, src_at):
    i = cuda.grid(1)
    while i < out_at.size:
        out[out_at[i]] = src[src_at[i]]
        i += cuda.gridsize(1)


@cuda.jit
def _add_indexed(out, src, out_at, src_at):
    # One thread walks all the pairs: a repeated index must add once per occurrence, and the
    # buffers may hold types (16-bit bit patterns, int8, bool) that have no atomic add.
    if cuda.grid(1) == 0:
        for i in range(out_at.size):
            out[out_at[i]] += src[src_at[i]]


@cuda.jit
def _mul_indexed(out, src, out_at, src_at):
    if cuda.grid(1) == 0:               # one thread, as _add_indexed
        for i in range(out_at.size):
            out[out_at[i]] *= src[src_at[i]]


@cuda.jit
def _max_indexed(out, src, out_at, src_at):
    if cuda.grid(1) == 0:               # one thread, as _add_indexed; a NaN source wins
        for i in range(out_at.size):
            s = src[src_at[i]]
            if s != s or s > out[out_at[i]]:
                out[out_at[i]] = s


@cuda.jit
def _min_indexed(out, src, out_at, src_at):
    if cuda.grid(1) == 0:
        for i in range(out_at.size):
            s = src[src_at[i]]
            if s != s or s < out[out_at[i]]:
                out[out_at[i]] = s


_REDUCE_KERNELS = {None: _copy_indexed, "add": _add_indexed, "multiply": _mul_indexed, "amax": _max_indexed,
                   "amin": _min_indexed}


def indexed_copy_loop(out, src, out_at, src_at, reduce):
    out_at, src_at = cuda.to_device(np.ascontiguousarray(out_at)), cuda.to_device(np.ascontiguousarray(src_at))
    blocks, threads = (1, 1) if reduce else launch_config(out_at.size)
    with np.errstate(all="ignore"):
        _REDUCE_KERNELS[reduce][blocks, threads](out, src, out_at, src_at)
