"""The fill loop behind ``linspace`` (``aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp``).

torch fills the first half of a linspace counting up from ``start`` and the second half
counting down from ``end``, one element at a time. Its C++ is built with fused multiply-add
enabled (the AVX2 and AVX512 builds torch picks on any recent x86 CPU), so the compiler turns
``start + step * i`` into a single ``fma`` instruction: one rounding instead of two. We let
LLVM do the same with ``fastmath={"contract"}``, which is what makes our values equal to
torch's bit for bit rather than one rounding step away.
"""
from numba import njit


@njit(cache=True, fastmath={"contract"})
def linspace_fill(out, start, end, step, index):
    """``out[i]`` for a linspace; ``index[i]`` is ``i`` in the compute type, as C++ converts it."""
    steps = out.size
    halfway = steps // 2
    for i in range(steps):
        if i < halfway:
            out[i] = start + step * index[i]
        else:
            out[i] = end - step * index[steps - i - 1]


@njit(cache=True)
def logspace_fill(out, start, end, step, base, index):
    """``out[i]`` for a logspace (``logspace_out`` in ``RangeFactories.cpp``, a file torch builds
    without fused multiply-add): ``base ** (start + step·i)`` for the first half, ``base **
    (end − step·(steps − 1 − i))`` for the second, in ``start``'s type (double for a float or
    double result, float for an integer one: integer results are truncated by the caller);
    ``index[i]`` is ``i`` in that type, as C++ converts it."""
    steps = out.size
    halfway = steps // 2
    for i in range(steps):
        if i < halfway:
            out[i] = base ** (start + step * index[i])
        else:
            out[i] = base ** (end - step * index[steps - i - 1])
