"""CPU scan loop for cumsum and cumprod (``aten/src/ATen/native/cpu/ReduceOpsKernel.cpp``'s
``cpu_cum_base_kernel``): rows in parallel, each accumulated left to right in ``init``'s type,
torch's CPU ``acc_type``: double for float32, float for the 16-bit floats (rounded at each step)."""
from numba import prange

from ..scan_ops import cumulative_row, extreme_row, log_cumulative_row
from .parallel_for import parallel_loop


@parallel_loop()
def _scan(out, a, rows, n, product, init):
    for r in prange(rows):
        cumulative_row(out, a, r * n, n, product, init)


def scan_loop(out, a, rows, n, product, init):
    _scan(out, a, rows, n, product, init)


@parallel_loop()
def _log_scan(out, a, rows, n, init, zero):
    for r in prange(rows):
        log_cumulative_row(out, a, r * n, n, init, zero)


def log_scan_loop(out, a, rows, n, init, zero):
    """logcumsumexp (``logcumsumexp_cpu_kernel``): each row left to right in ``init``'s type."""
    _log_scan(out, a, rows, n, init, zero)


@parallel_loop()
def _extreme_scan(values, indices, a, rows, n, is_max):
    for r in prange(rows):
        extreme_row(values, indices, a, r * n, n, is_max)


def extreme_scan_loop(values, indices, a, rows, n, is_max):
    """cummax/cummin (``cummax_helper_cpu``): the running extreme of each row and where it was."""
    _extreme_scan(values, indices, a, rows, n, is_max)
