"""The row scans the CPU and CUDA scan loops share: each loop walks its rows (``prange`` on the
CPU, a grid-stride loop on CUDA) and hands one row to these functions, which Numba compiles into
either (``register_jitable``), as ``scalar_ops`` is shared by the elementwise loops."""
import math

from numba.extending import register_jitable


@register_jitable
def cumulative_row(out, a, lo, n, product, init):
    """cumsum/cumprod of ``a[lo:lo + n]`` into ``out``, accumulated left to right in ``init``'s type."""
    acc = init
    for i in range(n):
        acc = acc * a[lo + i] if product else acc + a[lo + i]
        out[lo + i] = acc


@register_jitable
def log_add_exp(x, y):
    """``_log_add_exp_helper`` (``ReduceOpsKernel.cpp``): log(exp(x) + exp(y)) without overflow;
    ``std::min``/``std::max`` keep a NaN ``y``, and two equal infinities give ``x``."""
    if y != y:
        lo = hi = y
    else:
        lo = y if y < x else x
        hi = y if x < y else x
    if lo != hi or math.isfinite(lo):
        return math.log1p(math.exp(lo - hi)) + hi
    return x


@register_jitable
def log_cumulative_row(out, a, lo, n, init, zero):
    """logcumsumexp of ``a[lo:lo + n]`` into ``out``, accumulated in the type of ``init`` (-inf)
    and ``zero``, which each element is first converted to (adding ``zero`` does that alike
    compiled and in Python, where NumPy would otherwise keep a float32 result)."""
    acc = init
    for i in range(n):
        acc = log_add_exp(zero + a[lo + i], acc)
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
