"""Math the generated CPU kernels call: an ``exp`` that vectorizes (``aten/src/ATen/cpu/vec``).

``math.exp`` in a Numba loop is a call into libm, once per element: LLVM cannot turn it into
vector instructions (it could with Intel's SVML library, which Numba uses only where that is
installed). torch's vectorized kernels compute ``exp`` with SLEEF or their own polynomial in
``Vectorized<float>::exp``: plain multiplies and adds, which fill a whole vector register at a
time. ``exp_f32`` is such a polynomial (the classic Cephes ``expf``): split x = n ln 2 + r with
|r| <= ln(2)/2, approximate e^r by a degree-7 polynomial, then multiply by 2^n built from its bits.
It is within one ulp of the correctly rounded result over the whole float32 range (tests check
it against NumPy), with inf, nan and the underflow to subnormals and zero as ``math.exp``.
"""
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, register_jitable

__all__ = ["exp_f32", "float32_from_bits"]


@intrinsic
def float32_from_bits(typingctx, bits):
    """The float32 whose IEEE-754 bits are the int32 ``bits`` (one LLVM ``bitcast``, no call)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


_f = np.float32
LOG2E = _f(1.44269504088896341)
LN2_HI, LN2_LO = _f(0.693359375), _f(-2.12194440e-4)   # ln 2 in two parts: n * LN2_HI is exact
P0, P1, P2, P3, P4, P5 = (_f(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                           4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
LOWEST = _f(-104.0)                   # e^x rounds to 0 below about -103.97
HIGHEST = _f(88.72283935546875)       # e^x overflows to inf above this
ZERO, HALF, ONE, INF = _f(0.0), _f(0.5), _f(1.0), _f(np.inf)


@register_jitable(inline="always")
def exp_f32(x):
    """e**x for a float32 ``x``, branch-free so that the loop around it vectorizes."""
    xc = min(max(x, LOWEST), HIGHEST)
    n = np.floor(xc * LOG2E + HALF)        # np.floor keeps float32 (math.floor would make an int64)
    r = xc - n * LN2_HI - n * LN2_LO
    p = ((((P0 * r + P1) * r + P2) * r + P3) * r + P4) * r + P5
    y = p * r * r + r + ONE
    k = np.int32(n if n == n else ZERO)   # a nan x gives nan through y; k only has to be defined
    half = k >> 1                          # 2**k as 2**half * 2**(k - half): reaches the subnormals
    y = y * float32_from_bits((half + 127) << 23) * float32_from_bits((k - half + 127) << 23)
    return INF if x > HIGHEST else y
