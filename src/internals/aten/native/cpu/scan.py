"""CPU scan loop for cumsum and cumprod (``aten/src/ATen/native/cpu/ReduceOpsKernel.cpp``'s
``cpu_cum_base_kernel``): rows in parallel, each accumulated left to right."""
from numba import njit, prange


@njit(parallel=True, cache=True)
def _scan(out, a, rows, n, product):
    for r in prange(rows):
        lo = r * n
        acc = a[lo] - a[lo] + (1 if product else 0)
        for i in range(n):
            acc = acc * a[lo + i] if product else acc + a[lo + i]
            out[lo + i] = acc


def scan_loop(out, a, rows, n, product):
    _scan(out, a, rows, n, product)
