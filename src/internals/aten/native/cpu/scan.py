"""CPU scan loop for cumsum and cumprod (``aten/src/ATen/native/cpu/ReduceOpsKernel.cpp``'s
``cpu_cum_base_kernel``): rows in parallel, each accumulated left to right in ``init``'s type,
torch's CPU ``acc_type``: double for float32, float for the 16-bit floats (rounded at each step)."""
from numba import njit, prange


@njit(parallel=True, cache=True)
def _scan(out, a, rows, n, product, init):
    for r in prange(rows):
        lo = r * n
        acc = init
        for i in range(n):
            acc = acc * a[lo + i] if product else acc + a[lo + i]
            out[lo + i] = acc


def scan_loop(out, a, rows, n, product, init):
    _scan(out, a, rows, n, product, init)


@njit(parallel=True, cache=True)
def _extreme_scan(values, indices, a, rows, n, is_max):
    for r in prange(rows):
        lo = r * n
        out = a[lo]
        idx = 0
        for i in range(n):
            x = a[lo + i]
            # ``cummax_cummin_helper``: a NaN is taken and then kept; ties move to the later index
            if x != x or (out == out and (x >= out if is_max else x <= out)):
                out = x
                idx = i
            values[lo + i] = out
            indices[lo + i] = idx


def extreme_scan_loop(values, indices, a, rows, n, is_max):
    """cummax/cummin (``cummax_helper_cpu``): the running extreme of each row and where it was."""
    _extreme_scan(values, indices, a, rows, n, is_max)
