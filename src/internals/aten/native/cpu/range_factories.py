"""The fill loop behind ``linspace`` (``aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp``).

torch fills the first half of a linspace counting up from ``start`` and the second half
counting down from ``end``, one element at a time. Its C++ is built with fused multiply-add
enabled (the AVX2 and AVX512 builds torch picks on any recent x86 CPU), so the compiler turns
``start + step * i`` into a single ``fma`` instruction: one rounding instead of two; we call
``fma`` (LLVM's, exact on every machine), which is what makes our values equal to torch's bit
for bit rather than one rounding step away. torch's x86-64 default build (a CPU without AVX2,
or ``ATEN_CPU_CAPABILITY=default``) has no FMA and rounds twice: the caller says which
(``dispatch_stub.fma_contracted``).
"""
from numba import njit

from ..scalar_ops import fma


@njit(cache=True)
def linspace_fill(out, start, end, step, index, fused):
    """``out[i]`` for a linspace; ``index[i]`` is ``i`` in the compute type, as C++ converts it.
    ``fused``: one rounding per value (the FMA builds), else two (the x86-64 default build)."""
    steps = out.size
    halfway = steps // 2
    for i in range(steps):
        if i < halfway:
            out[i] = fma(step, index[i], start) if fused else start + step * index[i]
        else:
            j = index[steps - i - 1]
            out[i] = fma(-step, j, end) if fused else end - step * j


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
