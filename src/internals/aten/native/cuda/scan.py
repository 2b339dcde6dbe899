"""CUDA scan kernel for cumsum and cumprod: one thread per row, accumulated left to right
(``aten/src/ATen/native/cuda/ScanKernels.cu`` scans each row in parallel within a block)."""
from numba import cuda

from .loops import launch_config


@cuda.jit
def _scan(out, a, rows, n, product, init):
    r = cuda.grid(1)
    while r < rows:
        lo = r * n
        acc = init
        for i in range(n):
            acc = acc * a[lo + i] if product else acc + a[lo + i]
            out[lo + i] = acc
        r += cuda.gridsize(1)


def scan_loop(out, a, rows, n, product, init):
    blocks, threads = launch_config(rows)
    _scan[blocks, threads](out, a, rows, n, product, init)


@cuda.jit
def _extreme_scan(values, indices, a, rows, n, is_max):
    r = cuda.grid(1)
    while r < rows:
        lo = r * n
        out = a[lo]
        idx = 0
        for i in range(n):
            x = a[lo + i]
            if x != x or (out == out and (x >= out if is_max else x <= out)):
                out = x
                idx = i
            values[lo + i] = out
            indices[lo + i] = idx
        r += cuda.gridsize(1)


def extreme_scan_loop(values, indices, a, rows, n, is_max):
    """cummax/cummin, one thread per row (the CPU loop's rule: ``ScanKernels.cu``)."""
    blocks, threads = launch_config(rows)
    _extreme_scan[blocks, threads](values, indices, a, rows, n, is_max)
