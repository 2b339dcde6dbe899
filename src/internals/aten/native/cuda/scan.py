"""CUDA scan kernel for cumsum and cumprod: one thread per row, accumulated left to right
(``aten/src/ATen/native/cuda/ScanKernels.cu`` scans each row in parallel within a block)."""
from numba import cuda

from ..scan_ops import cumulative_row, extreme_row, log_cumulative_row
from .loops import launch_config


@cuda.jit
def _scan(out, a, rows, n, product, init):
    r = cuda.grid(1)
    while r < rows:
        cumulative_row(out, a, r * n, n, product, init)
        r += cuda.gridsize(1)


def scan_loop(out, a, rows, n, product, init):
    blocks, threads = launch_config(rows)
    _scan[blocks, threads](out, a, rows, n, product, init)


@cuda.jit
def _log_scan(out, a, rows, n, init, zero):
    r = cuda.grid(1)
    while r < rows:
        log_cumulative_row(out, a, r * n, n, init, zero)
        r += cuda.gridsize(1)


def log_scan_loop(out, a, rows, n, init, zero):
    """logcumsumexp, one thread per row, in the CPU loop's order and precision."""
    blocks, threads = launch_config(rows)
    _log_scan[blocks, threads](out, a, rows, n, init, zero)


@cuda.jit
def _extreme_scan(values, indices, a, rows, n, is_max):
    r = cuda.grid(1)
    while r < rows:
        extreme_row(values, indices, a, r * n, n, is_max)
        r += cuda.gridsize(1)


def extreme_scan_loop(values, indices, a, rows, n, is_max):
    """cummax/cummin, one thread per row (the CPU loop's rule: ``ScanKernels.cu``)."""
    blocks, threads = launch_config(rows)
    _extreme_scan[blocks, threads](values, indices, a, rows, n, is_max)
