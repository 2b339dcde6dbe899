"""CUDA sort and selection kernels: one thread per row, each sorting its row with
``sorting.sort_row`` in global memory (``aten/src/ATen/native/cuda/Sort.cu`` sorts segments
with CUB's radix sort instead; one thread a row is the simple, slower form)."""
from numba import cuda

from ..sorting import select_in_row, sort_row
from .loops import launch_config


@cuda.jit
def _sort(values, idx, tmp, keys, rows, n, descending):
    r = cuda.grid(1)
    while r < rows:
        lo, hi = r * n, (r + 1) * n
        sort_row(keys[lo:hi], idx[lo:hi], tmp[lo:hi], n, descending)
        for i in range(n):
            values[lo + i] = keys[lo + idx[lo + i]]
        r += cuda.gridsize(1)


def sort_loop(values, idx, tmp, keys, rows, n, descending):
    blocks, threads = launch_config(rows)
    _sort[blocks, threads](values, idx, tmp, keys, rows, n, descending)


_select_kernels = {}


def _build_select(kind):
    @cuda.jit
    def kernel(out_values, out_idx, values, idx, rows, n, k):
        r = cuda.grid(1)
        while r < rows:
            p = select_in_row(kind, values[r * n:(r + 1) * n], n, k)
            out_values[r] = values[r * n + p]
            out_idx[r] = idx[r * n + p]
            r += cuda.gridsize(1)
    return kernel


def select_loop(kind, out_values, out_idx, values, idx, rows, n, k):
    if kind not in _select_kernels:
        _select_kernels[kind] = _build_select(kind)
    blocks, threads = launch_config(rows)
    _select_kernels[kind][blocks, threads](out_values, out_idx, values, idx, rows, n, k)
