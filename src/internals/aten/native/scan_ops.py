"""The row scans the CPU and CUDA scan loops share: each loop walks its rows (``prange`` on the
CPU, a grid-stride loop on CUDA) and hands one row to these functions, which Numba compiles into
either (``register_jitable``), as ``scalar_ops`` is shared by the elementwise loops."""
from numba.extending import register_jitable


@register_jitable
def cumulative_row(out, a, lo, n, product, init):
    """cumsum/cumprod of ``a[lo:lo + n]`` into ``out``, accumulated left to right in ``init``'s type."""
    acc = init
    for i in range(n):
        acc = acc * a[lo + i] if product else acc + a[lo + i]
        out[lo + i] = acc


@register_jitable
def extreme_row(values, indices, a, lo, n, is_max):
    """cummax/cummin of ``a[lo:lo + n]``: the running extreme and where it was
    (``cummax_cummin_helper``: a NaN is taken and then kept; ties move to the later index)."""
    out = a[lo]
    idx = 0
    for i in range(n):
        x = a[lo + i]
        if x != x or (out == out and (x >= out if is_max else x <= out)):
            out = x
            idx = i
        values[lo + i] = out
        indices[lo + i] = idx
