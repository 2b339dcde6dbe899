"""The per-element math of every elementwise op, shared by the CPU and CUDA loops.

ATen hands each loop a small lambda (``cpu_kernel(iter, [](a, b) { return a + b; })`` in
``aten/src/ATen/native/cpu/BinaryOpsKernel.cpp``). Numba cannot cache a loop that takes a
function argument, so here a loop takes an op *number*: ``unary_op(op, x)``,
``binary_op(op, a, b, alpha)`` and ``ternary_op(op, a, b, c, value)`` (where, addcmul,
addcdiv) index a table of small functions. In jitted code the op number is
a compile-time literal and the ``@overload`` below resolves it to the table's function while
typing, so each (op, dtype) pair compiles to its own straight-line loop. Under the CUDA
simulator these are plain Python calls into the same table.

Each function gets its number where it is defined, ``ADD = BINARY.register(add)``: a table hands
numbers out in registration order, so no number is ever counted by hand.
"""
import cmath
import math

import numpy as np
from numba import njit, types
from numba.extending import intrinsic, overload, register_jitable
from numba.np.numpy_support import as_dtype

from .dispatch_stub import fma_contracted
from .erfcx_table import ERFCX_Y100


class OpTable:
    """The scalar functions of one kind (unary, binary, ...), numbered in registration order.

    A loop receives the number, a plain int that Numba reads as a compile-time constant (see
    ``cpu/loops.py``), and ``table[number]`` is the function it compiles in."""

    def __init__(self, kind):
        self.kind = kind
        self.functions = []
        self.names = []             # the module constant that holds each number

    def register(self, fn, name=None):
        """Append ``fn`` and return its number; ``name`` is the constant's, when not the function's."""
        name = name or fn.__name__.upper()
        if name in self.names:
            raise ValueError(f"{self.kind} op {name} is registered twice")
        self.functions.append(fn)
        self.names.append(name)
        return len(self.functions) - 1

    def __getitem__(self, number):
        return self.functions[number]

    def __len__(self):
        return len(self.functions)

    def __repr__(self):
        return f"<{self.kind} ops: {len(self)}>"


UNARY, BINARY, TERNARY, REDUCE = OpTable("unary"), OpTable("binary"), OpTable("ternary"), OpTable("reduction")


# ----------------------------------------------------------------------------- unary ops
@register_jitable
def neg(x):
    return -x
NEG = UNARY.register(neg)


@register_jitable
def absolute(x):
    return abs(x)
ABS = UNARY.register(absolute, "ABS")


_LOG_DBL_MAX = 709.782712893384     # the largest x whose exp is finite in float64


@register_jitable
def exp(x):
    # The guard keeps Python (the simulator) from raising OverflowError past log(DBL_MAX); written
    # so that NaN fails it and reaches math.exp, which returns NaN (exp(nan) is nan, sigmoid(nan) too).
    return math.inf if x > _LOG_DBL_MAX else math.exp(x)
EXP = UNARY.register(exp)


@register_jitable
def log(x):
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
LOG = UNARY.register(log)


@register_jitable
def sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan
SQRT = UNARY.register(sqrt)


@register_jitable
def relu(x):
    return 0 if x < 0 else x
RELU = UNARY.register(relu)


@register_jitable
def sigmoid(x):
    return 1 / (1 + exp(-x))
SIGMOID = UNARY.register(sigmoid)


@register_jitable
def tanh(x):
    return math.tanh(x)
TANH = UNARY.register(tanh)


@register_jitable
def logical_not(x):
    return not x
LOGICAL_NOT = UNARY.register(logical_not)


# The 16-bit floats, as bit patterns in unsigned integers: NumPy has no bfloat16 and Numba's
# CPU target no float16, so kernels compute in float32 and convert at the edges (ATen's opmath).
@register_jitable
def float_bits_to_half(bits):
    """IEEE float32 bits -> float16 bits, rounding to nearest even (as ``c10::Half(float)``)."""
    bits = int(bits)                    # widen: see _widening below
    sign = (bits >> 16) & 0x8000
    exponent = (bits >> 23) & 0xFF
    mant = bits & 0x7FFFFF
    if exponent == 0xFF:
        return sign | 0x7C00 | (0x200 if mant else 0)
    e = exponent - 112                      # rebias: 127 - 15
    if e >= 0x1F:
        return sign | 0x7C00
    if e <= 0:                          # a float16 subnormal, or zero
        if e < -10:
            return sign
        mant = mant | 0x800000
        shift = 14 - e
        half = mant >> shift
        rest = mant & ((1 << shift) - 1)
        halfway = 1 << (shift - 1)
        if rest > halfway or (rest == halfway and (half & 1)):
            half += 1
        return sign | half
    half = sign | (e << 10) | (mant >> 13)
    rest = mant & 0x1FFF
    if rest > 0x1000 or (rest == 0x1000 and (half & 1)):
        half += 1                       # a carry into the exponent is still correct
    return half
FLOAT_BITS_TO_HALF = UNARY.register(float_bits_to_half)


@register_jitable
def half_bits_to_float(h):
    h = int(h)                          # widen: see _widening below
    sign = (h & 0x8000) << 16
    exponent = (h >> 10) & 0x1F
    mant = h & 0x3FF
    if exponent == 0:
        if mant == 0:
            return sign
        e = 113
        while (mant & 0x400) == 0:      # normalise a subnormal
            mant <<= 1
            e -= 1
        return sign | (e << 23) | ((mant & 0x3FF) << 13)
    if exponent == 0x1F:
        return sign | 0x7F800000 | (mant << 13)
    return sign | ((exponent + 112) << 23) | (mant << 13)
HALF_BITS_TO_FLOAT = UNARY.register(half_bits_to_float)


@register_jitable
def float_bits_to_bf16(bits):
    """float32 bits -> bfloat16 bits: keep the top half, rounding to nearest even."""
    bits = int(bits)                    # widen: see _widening below
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
FLOAT_BITS_TO_BF16 = UNARY.register(float_bits_to_bf16)


@register_jitable
def bf16_bits_to_float(h):
    return int(h) << 16                 # widen: see _widening below
BF16_BITS_TO_FLOAT = UNARY.register(bf16_bits_to_float)


# The float8 types (``c10/util/Float8_e4m3fn.h``, ``Float8_e5m2.h``, ``Float8_e4m3fnuz.h``,
# ``Float8_e5m2fnuz.h``, ``Float8_e8m0fnu.h``), as uint8 bit patterns converted to and from float32
# bits. c10 rounds to nearest even (subnormals included); what becomes of a value past the largest
# finite one differs: e4m3fn saturates to +-448 (inf too), e5m2 becomes inf, the fnuz types
# become their one NaN, 0x80, which is also where their -0 would be (it becomes +0).
@register_jitable
def _round_shift(x, shift):
    """``x >> shift``, rounded to nearest even on the bits shifted out."""
    if shift > 40:
        return 0
    q = x >> shift
    rest = x & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and (q & 1)):
        q += 1
    return q


@register_jitable
def _float8_magnitude(bits, mant_bits, bias):
    """|float32 ``bits``| (finite) as a float8 code of ``mant_bits`` mantissa bits and exponent
    ``bias``, rounded to nearest even: the code of a value one past the largest code is what
    the rounding carried into (the caller decides what it means)."""
    exponent = (bits >> 23) & 0xFF
    mant = bits & 0x7FFFFF
    emin = 1 - bias                     # the smallest normal exponent of the float8 type
    if exponent == 0:                   # a float32 subnormal: far below any float8 value
        return _round_shift(mant, 23 - mant_bits + emin + 126)
    e = exponent - 127
    if e >= emin:                       # a float8 normal: the biased exponent above the mantissa
        return _round_shift(((e - emin + 1) << 23) | mant, 23 - mant_bits)
    return _round_shift(mant | 0x800000, 23 - mant_bits + emin - e)


@register_jitable
def _float_bits_to_float8(bits, mant_bits, bias, max_code, overflow_code, nan_code, unsigned_zero):
    bits = int(bits)                    # widen: see _widening below
    sign = (bits >> 24) & 0x80
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return nan_code if unsigned_zero else sign | nan_code
    if (bits & 0x7FFFFFFF) == 0x7F800000:
        code = max_code + 1
    else:
        code = _float8_magnitude(bits & 0x7FFFFFFF, mant_bits, bias)
    if code > max_code:
        return overflow_code if unsigned_zero else sign | overflow_code
    if code == 0 and unsigned_zero:
        return 0
    return sign | code


@register_jitable
def float_bits_to_e4m3fn(bits):
    return _float_bits_to_float8(bits, 3, 7, 0x7E, 0x7E, 0x7F, False)
FLOAT_BITS_TO_E4M3FN = UNARY.register(float_bits_to_e4m3fn)


@register_jitable
def float_bits_to_e5m2(bits):
    return _float_bits_to_float8(bits, 2, 15, 0x7B, 0x7C, 0x7F, False)
FLOAT_BITS_TO_E5M2 = UNARY.register(float_bits_to_e5m2)


@register_jitable
def float_bits_to_e4m3fnuz(bits):
    return _float_bits_to_float8(bits, 3, 8, 0x7F, 0x80, 0x80, True)
FLOAT_BITS_TO_E4M3FNUZ = UNARY.register(float_bits_to_e4m3fnuz)


@register_jitable
def float_bits_to_e5m2fnuz(bits):
    return _float_bits_to_float8(bits, 2, 16, 0x7F, 0x80, 0x80, True)
FLOAT_BITS_TO_E5M2FNUZ = UNARY.register(float_bits_to_e5m2fnuz)


@register_jitable
def float_bits_to_e8m0fnu(bits):
    """``fp8e8m0fnu_from_fp32_value``: the float32 exponent, rounded up when the mantissa is
    past one half (or exactly one half of a normal: the implied bit is the even test); no sign,
    and inf and NaN become the NaN, 0xFF."""
    bits = int(bits)                    # widen: see _widening below
    exponent = (bits >> 23) & 0xFF
    if exponent == 0xFF:
        return 0xFF
    mant = bits & 0x7FFFFF
    if mant > 0x400000 or (mant == 0x400000 and exponent > 0):
        exponent += 1
    return exponent
FLOAT_BITS_TO_E8M0FNU = UNARY.register(float_bits_to_e8m0fnu)


@register_jitable
def _float8_to_float_bits(code, mant_bits, bias):
    """A float8 magnitude code of ``mant_bits`` mantissa bits and exponent ``bias`` as float32
    bits (exact: float32 holds every float8 value)."""
    exponent = code >> mant_bits
    mant = code & ((1 << mant_bits) - 1)
    if exponent == 0:
        if mant == 0:
            return 0
        e = 1 - bias + 127
        while (mant >> mant_bits) == 0:     # normalise a subnormal
            mant <<= 1
            e -= 1
        return (e << 23) | ((mant & ((1 << mant_bits) - 1)) << (23 - mant_bits))
    return ((exponent - bias + 127) << 23) | (mant << (23 - mant_bits))


@register_jitable
def e4m3fn_bits_to_float(h):
    """``fp8e4m3fn_to_fp32_value``: 0x7F and 0xFF are NaN (its bits: the exponent's ones over the
    mantissa, 0x7FF00000)."""
    h = int(h)                          # widen: see _widening below
    sign = (h & 0x80) << 24
    if (h & 0x7F) == 0x7F:
        return sign | 0x7FF00000
    return sign | _float8_to_float_bits(h & 0x7F, 3, 7)
E4M3FN_BITS_TO_FLOAT = UNARY.register(e4m3fn_bits_to_float)


@register_jitable
def e5m2_bits_to_float(h):
    """``fp8e5m2_to_fp32_value``: the float16 of the same top byte, the NaNs made quiet."""
    h = int(h)                          # widen: see _widening below
    sign = (h & 0x80) << 24
    if (h & 0x7C) == 0x7C:
        return sign | 0x7F800000 | ((h & 3) << 21) | (0x400000 if h & 3 else 0)
    return sign | _float8_to_float_bits(h & 0x7F, 2, 15)
E5M2_BITS_TO_FLOAT = UNARY.register(e5m2_bits_to_float)


@register_jitable
def _fnuz_bits_to_float(h, mant_bits, bias):
    """``fp8_fnuz_to_fp32_value``: 0x80, the one NaN, is 0x7F800001 (a signalling NaN's bits)."""
    h = int(h)                          # widen: see _widening below
    if h == 0x80:
        return 0x7F800001
    return ((h & 0x80) << 24) | _float8_to_float_bits(h & 0x7F, mant_bits, bias)


@register_jitable
def e4m3fnuz_bits_to_float(h):
    return _fnuz_bits_to_float(h, 3, 8)
E4M3FNUZ_BITS_TO_FLOAT = UNARY.register(e4m3fnuz_bits_to_float)


@register_jitable
def e5m2fnuz_bits_to_float(h):
    return _fnuz_bits_to_float(h, 2, 16)
E5M2FNUZ_BITS_TO_FLOAT = UNARY.register(e5m2fnuz_bits_to_float)


@register_jitable
def e8m0fnu_bits_to_float(h):
    """``fp8e8m0fnu_to_fp32_value``: 2**(h - 127); 0 is 2**-127 (a float32 subnormal), 0xFF NaN."""
    h = int(h)                          # widen: see _widening below
    if h == 0xFF:
        return 0x7F800001
    return 0x400000 if h == 0 else h << 23
E8M0FNU_BITS_TO_FLOAT = UNARY.register(e8m0fnu_bits_to_float)
# ``abs_impl`` on a float8 value: ``x < 0 ? -x : x``, so -0 and every NaN keep their bits, and a
# negative value loses its sign bit (c10's negation of a float8 value is exact).
@register_jitable
def _float8_abs_bits(h, nan_above):
    h = int(h)                          # widen: see _widening below
    magnitude = h & 0x7F
    if h & 0x80 and magnitude != 0 and magnitude <= nan_above:
        return magnitude
    return h


@register_jitable
def e4m3fn_abs_bits(h):
    return _float8_abs_bits(h, 0x7E)            # 0x7F: NaN
E4M3FN_ABS_BITS = UNARY.register(e4m3fn_abs_bits)


@register_jitable
def e5m2_abs_bits(h):
    return _float8_abs_bits(h, 0x7C)            # 0x7C: inf, past it NaN
E5M2_ABS_BITS = UNARY.register(e5m2_abs_bits)


@register_jitable
def fnuz_abs_bits(h):
    return _float8_abs_bits(h, 0x7F)            # 0x80, the NaN, has no magnitude bits
FNUZ_ABS_BITS = UNARY.register(fnuz_abs_bits)


@register_jitable
def nan_bits_to_zero(bits):
    """float32 bits with a NaN made +0: what a NaN of the fnuz types and e8m0fnu becomes as an
    integer in torch's casts (0, where a float32 NaN gives the integer's minimum)."""
    bits = int(bits)                    # widen: see _widening below
    return 0 if (bits & 0x7FFFFFFF) > 0x7F800000 else bits
NAN_BITS_TO_ZERO = UNARY.register(nan_bits_to_zero)


# by dtype name, for a value read on the host (``item()``): plain Python calls
FLOAT8_TO_FLOAT_BITS = {"float8_e4m3fn": e4m3fn_bits_to_float, "float8_e5m2": e5m2_bits_to_float,
                  "float8_e4m3fnuz": e4m3fnuz_bits_to_float, "float8_e5m2fnuz": e5m2fnuz_bits_to_float,
                  "float8_e8m0fnu": e8m0fnu_bits_to_float}


# _widening: the bit patterns arrive as uint16/uint32. Numba computes with them in 64 bits, but
# under the CUDA simulator they are NumPy scalars, which keep their width: ``uint16 << 16`` would
# be 0 and ``uint32 - 112`` would wrap around. ``int()`` makes both compute as Numba does.


@register_jitable
def identity(x):
    return x        # a CPU copy: the loop's store converts to the output's dtype, as C does
IDENTITY = UNARY.register(identity)


# ---- math: UnaryOps.cpp's kernels, in the compute dtype (float32 for 16-bit floats)
@register_jitable
def sin(x):
    return math.sin(x)
SIN = UNARY.register(sin)


@register_jitable
def cos(x):
    return math.cos(x)
COS = UNARY.register(cos)


@register_jitable
def tan(x):
    return math.tan(x)
TAN = UNARY.register(tan)


@register_jitable
def erf(x):
    return math.erf(x)
ERF = UNARY.register(erf)


@register_jitable
def gelu(x):
    """``GeluKernel.cpp``, approximate="none": x * Phi(x), Phi the normal distribution's CDF."""
    return x * 0.5 * (1 + math.erf(x * 0.7071067811865476))
GELU = UNARY.register(gelu)


@register_jitable
def gelu_tanh(x):
    """approximate="tanh": the tanh fit of Phi."""
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1 + math.tanh(inner))
GELU_TANH = UNARY.register(gelu_tanh)


@register_jitable
def silu(x):
    return x / (1 + exp(-x))
SILU = UNARY.register(silu)


@register_jitable
def sign(x):
    return (0 < x) - (x < 0)       # as ``sign_kernel``: NaN gives 0, -0.0 gives 0
SIGN = UNARY.register(sign)


_INTEGRAL = 2.0 ** 52      # every float64 (and float32) at least this large is an integer


@register_jitable
def nearbyint(x):
    """Round half to even (C's ``nearbyint``), as ``round`` does."""
    if not abs(x) < _INTEGRAL:              # already an integer (or inf, or NaN)
        return x
    r = math.floor(x + 0.5)
    if r - x == 0.5 and r % 2 != 0:
        r -= 1
    return math.copysign(r, x)              # keeps the sign of -0.4 -> -0.0
NEARBYINT = UNARY.register(nearbyint)


@register_jitable
def bitwise_not(x):
    return ~x               # integers only: a bool tensor's ``~`` is LOGICAL_NOT
BITWISE_NOT = UNARY.register(bitwise_not)


# ---- complex numbers: the kernels ``AT_DISPATCH_..._AND_COMPLEX_TYPES`` adds for c10::complex
@register_jitable
def real_part(x):
    return x.real       # a complex -> real copy: the imaginary part is dropped (torch warns)
REAL_PART = UNARY.register(real_part)


@register_jitable
def nonzero(x):
    return x != 0       # complex -> bool: true unless both parts are zero
NONZERO = UNARY.register(nonzero)


@register_jitable
def conj(x):
    return x.conjugate()
CONJ = UNARY.register(conj)


@register_jitable
def angle(x):
    """A real number's angle: 0, or pi for a negative one; NaN stays NaN (``angle_impl``)."""
    if x != x:
        return x
    return math.pi if x < 0 else 0.0
ANGLE = UNARY.register(angle)


@register_jitable
def angle_complex(x):
    return cmath.phase(x)
ANGLE_COMPLEX = UNARY.register(angle_complex)


@register_jitable
def exp_complex(x):
    """C99's ``cexp`` (Annex G, as glibc has it): e^re (cos im + i sin im), with the real ``exp``'s
    overflow guard (Python's cmath.exp raises where C's gives inf). A zero imaginary part stays
    exactly zero; an infinite real part meets a non-finite angle as Annex G says."""
    re, im = x.real, x.imag
    if abs(re) < math.inf:
        if not abs(im) < math.inf:          # inf or NaN: no angle to turn by
            return complex(math.nan, math.nan)
        e = exp(re)
        return complex(e, im) if im == 0 else complex(e * math.cos(im), e * math.sin(im))
    if re != re:                            # NaN: only a zero imaginary part survives
        return complex(re, im if im == 0 else math.nan)
    value = 0.0 if re < 0 else math.inf
    if abs(im) < math.inf:
        return complex(value, im) if im == 0 else complex(math.copysign(value, math.cos(im)),
                                                          math.copysign(value, math.sin(im)))
    return complex(math.inf, im - im) if re > 0 else complex(0.0, math.copysign(0.0, im))
EXP_COMPLEX = UNARY.register(exp_complex)


@register_jitable
def log_complex(x):
    return cmath.log(x) if x != 0 else complex(-math.inf, cmath.phase(x))
LOG_COMPLEX = UNARY.register(log_complex)


@register_jitable
def sqrt_complex(x):
    return cmath.sqrt(x)
SQRT_COMPLEX = UNARY.register(sqrt_complex)


# Complex hyperbolic and trigonometric functions (std::sin etc. on c10::complex, that is glibc's
# csin, ccos, ctan, ctanh): C99 Annex G's values for infinite and NaN parts, and for finite ones
# sinh/cosh written out with a guard against overflow (Python's math.cosh raises past 710,
# which the CUDA simulator would meet). sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz).
def cosh_limit(x):
    """Where e^x overflows x's type, ``(MAX_EXP - 1) * ln 2`` (glibc's threshold t): 88.03 for
    float32, 709.09 for float64. Python (the simulator) asks the value's type; Numba, see below."""
    return 88.02969193111305 if isinstance(x, np.float32) else 709.0895657128241


@overload(cosh_limit, target="generic")
def _cosh_limit_jit(x):
    limit = 88.02969193111305 if x == types.float32 else 709.0895657128241
    return lambda x: limit


@register_jitable
def _times_cosh(c, x):
    """c * cosh(x) without overflowing early: in x's own type while cosh(x) fits it (as glibc's
    csinhf computes in float), then in double, then with e^|x| / 2 as two halves."""
    if abs(x) < cosh_limit(x):
        return c * math.cosh(x)
    wide, cw = abs(np.float64(x)), np.float64(c)      # (Numba's float() keeps a float32)
    if wide < 709.0:
        return cw * math.cosh(wide)
    if c == 0:          # glibc multiplies the largest double by sin(0): a zero, not 0 * inf
        return cw
    half = exp(wide / 2)
    return cw * half / 2 * half


@register_jitable
def _times_sinh(c, x):
    return c * math.sinh(x) if abs(x) < cosh_limit(x) else _times_cosh(c, x) * math.copysign(1.0, x)


# These take the two parts, not a complex number: a complex64's parts stay float32 (Numba's
# ``complex()`` makes a complex128), so the math runs in float, as glibc's csinf and friends do.
@register_jitable
def csinh(re, im):
    """glibc's ``csinh``."""
    if abs(re) < math.inf:
        if abs(im) < math.inf:
            return complex(_times_sinh(math.cos(im), re), _times_cosh(math.sin(im), re))
        if re == 0:
            return complex(re, im - im)
        return complex(math.nan, math.nan)
    if re == re:                            # re is +-inf
        if abs(im) < math.inf:
            if im == 0:
                return complex(re, im)
            return complex(math.copysign(math.inf, math.cos(im)) * math.copysign(1.0, re),
                           math.copysign(math.inf, math.sin(im)))
        return complex(math.inf, im - im)
    return complex(math.nan, im if im == 0 else math.nan)


@register_jitable
def ccosh(re, im):
    """glibc's ``ccosh``."""
    if abs(re) < math.inf:
        if abs(im) < math.inf:
            return complex(_times_cosh(math.cos(im), re), _times_sinh(math.sin(im), re))
        return complex(im - im, 0.0 if re == 0 else math.nan)
    if re == re:
        if abs(im) < math.inf:
            if im == 0:
                return complex(math.inf, im * math.copysign(1.0, re))
            return complex(math.copysign(math.inf, math.cos(im)),
                           math.copysign(math.inf, math.sin(im)) * math.copysign(1.0, re))
        return complex(math.inf, im - im)
    return complex(math.nan, im if im == 0 else math.nan)


@register_jitable
def ctanh(re, im):
    """glibc's ``ctanh``: past half the overflow threshold (where sinh^2 would overflow) tanh is
    +-1 and the imaginary part 4 sin cos e^(-2|re|)."""
    if not (abs(re) < math.inf and abs(im) < math.inf):
        if abs(re) == math.inf:
            if abs(im) < math.inf and abs(im) > 1:
                return complex(math.copysign(1.0, re), math.copysign(0.0, math.sin(im) * math.cos(im)))
            return complex(math.copysign(1.0, re), math.copysign(0.0, im))
        if im == 0:
            return complex(re, im)
        return complex(re if re == 0 else math.nan, math.nan)
    s, c = math.sin(im), math.cos(im)
    if abs(re) > cosh_limit(re) / 2:
        return complex(math.copysign(1.0, re), 4 * s * c * exp(-2 * abs(re)))
    sh, ch = math.sinh(re), math.cosh(re)
    den = sh * sh + c * c if abs(sh) > abs(c) * 2.220446049250313e-16 else c * c
    return complex(sh * ch / den, s * c / den)


@register_jitable
def sin_complex(x):
    """-i sinh(iz); glibc's csin gives +inf where that has -inf (both parts non-finite)."""
    if abs(x.imag) == math.inf and not abs(x.real) < math.inf:
        return complex(math.nan, math.inf)
    w = csinh(-x.imag, x.real)
    return complex(w.imag, -w.real)
SIN_COMPLEX = UNARY.register(sin_complex)


@register_jitable
def cos_complex(x):
    return ccosh(-x.imag, x.real)
COS_COMPLEX = UNARY.register(cos_complex)


@register_jitable
def tan_complex(x):
    w = ctanh(-x.imag, x.real)
    return complex(w.imag, -w.real)
TAN_COMPLEX = UNARY.register(tan_complex)


@register_jitable
def tanh_complex(x):
    return ctanh(x.real, x.imag)
TANH_COMPLEX = UNARY.register(tanh_complex)


@register_jitable
def _over_zero(x):
    """x / +0.0 without Python's ZeroDivisionError (the simulator runs plain Python)."""
    return math.nan if x != x or x == 0 else math.copysign(math.inf, x)


@register_jitable
def _fdiv(a, b):
    """a / b as C computes it, where Python (the simulator) raises for b == 0."""
    return a / b if b != 0 else _over_zero(a) * math.copysign(1.0, b)


@register_jitable
def c10_div(a, b):
    """``c10::complex``'s ``operator/``: NumPy's scaled division; by zero, each part divided by
    zero on its own (1j / 0 is nan+infj)."""
    c, d = b.real, b.imag
    if abs(c) >= abs(d):
        if c == 0 and d == 0:
            return complex(_fdiv(a.real, abs(c)), _fdiv(a.imag, abs(d)))
        rat = d / c
        scl = 1.0 / (c + d * rat)
        return complex((a.real + a.imag * rat) * scl, (a.imag - a.real * rat) * scl)
    rat = _fdiv(c, d)
    scl = _fdiv(1.0, d + c * rat)
    return complex((a.real * rat + a.imag) * scl, (a.imag * rat - a.real) * scl)


@register_jitable
def sigmoid_complex(x):
    """1 / (1 + e^-x), the scalar loop of ``sigmoid_kernel``: cexp, then c10's division."""
    w = exp_complex(complex(-x.real, -x.imag))
    return c10_div(complex(1.0, 0.0), complex(1.0 + w.real, 0.0 + w.imag))
SIGMOID_COMPLEX = UNARY.register(sigmoid_complex)


# ---- rounding: floor, ceil, trunc and frac of floats. Numba's math.floor
# returns an int64, which has no -0.0: the sign comes back with copysign (ceil(-0.5) is -0.0).
@register_jitable
def floor(x):
    return math.copysign(math.floor(x), x) if abs(x) < _INTEGRAL else x
FLOOR = UNARY.register(floor)


@register_jitable
def ceil(x):
    return math.copysign(math.ceil(x), x) if abs(x) < _INTEGRAL else x
CEIL = UNARY.register(ceil)


@register_jitable
def trunc(x):
    # floor of |x|: NumPy's float32 has no __trunc__ for math.trunc (the simulator runs Python)
    return math.copysign(math.floor(abs(x)), x) if abs(x) < _INTEGRAL else x
TRUNC = UNARY.register(trunc)


@register_jitable
def frac(x):
    """x - trunc(x), exact; inf - inf makes frac(inf) NaN, as torch's."""
    return x - trunc(x)
FRAC = UNARY.register(frac)


@register_jitable
def rsqrt(x):
    """``1 / std::sqrt(x)`` in x's own type (``rsqrt_kernel``, ``Vectorized::rsqrt``): two roundings."""
    return like(x, 1) / sqrt(x)
RSQRT = UNARY.register(rsqrt)


@register_jitable
def log1p(x):
    return math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan)
LOG1P = UNARY.register(log1p)


# The inverse and hyperbolic trigonometric functions and the base-2/10 logarithms (UnaryOps.cpp).
# Outside its domain each is NaN, at a pole +-inf, as the C library's are; written out because
# Python's math (the CUDA simulator's) raises there instead. Which precision a float32 takes is
# the one whose bits agree with torch's CPU loop most often (measured on 200,000 samples):
# torch calls the C library's float functions for asinh/acosh (all agree), SLEEF's 1-ulp ones
# for the others, which double precision rounded to float matches for sinh, cosh, atanh, log2,
# log10 (99.8% of samples), and the C library's float asin/acos/atan for 95-99%.
@register_jitable
def asin(x):
    return math.asin(x) if -1 <= x <= 1 else math.nan
ASIN = UNARY.register(asin)


@register_jitable
def acos(x):
    return math.acos(x) if -1 <= x <= 1 else math.nan
ACOS = UNARY.register(acos)


@register_jitable
def atan(x):
    return math.atan(x)
ATAN = UNARY.register(atan)


@register_jitable
def sinh(x):
    return _times_sinh(1.0, np.float64(x))
SINH = UNARY.register(sinh)


@register_jitable
def cosh(x):
    return _times_cosh(1.0, np.float64(x))
COSH = UNARY.register(cosh)


@register_jitable
def asinh(x):
    return math.asinh(x)
ASINH = UNARY.register(asinh)


@register_jitable
def acosh(x):
    return math.acosh(x) if x >= 1 else math.nan
ACOSH = UNARY.register(acosh)


@register_jitable
def atanh(x):
    if -1 < x < 1:
        return math.atanh(np.float64(x))
    return math.copysign(math.inf, x) if abs(x) == 1 else math.nan
ATANH = UNARY.register(atanh)


@register_jitable
def log2(x):
    return math.log2(np.float64(x)) if x > 0 else (-math.inf if x == 0 else math.nan)
LOG2 = UNARY.register(log2)


@register_jitable
def log10(x):
    return math.log10(np.float64(x)) if x > 0 else (-math.inf if x == 0 else math.nan)
LOG10 = UNARY.register(log10)


# ---- the everyday pointwise operators (UnaryOpsKernel.cpp, Math.h). Each
# guards where Python (the simulator) raises OverflowError or ValueError and C returns inf or NaN.
_LGAMMA_OVERFLOW = 2.5599833278516383e305     # the largest double whose lgamma is finite


# expm1, exp2 and lgamma compute in double: Numba's float32 versions are off by several ulps
# (torch's float32 loops, SLEEF's, are within one); the store rounds to the output's type.
@register_jitable
def expm1(x):
    return _expm1_of_the_build(x)


@register_jitable
def _expm1_in_double(x):
    """SLEEF's expm1, which torch's avx2/avx512 and aarch64 builds vectorise with
    (``Sleef_expm1f8_u10`` and kin): here the double result, rounded by the store. The guard
    keeps Python (the simulator) from raising OverflowError where C returns inf."""
    return math.inf if x > _LOG_DBL_MAX else math.expm1(np.float64(x))


def _expm1_of_the_build(x):
    """expm1 as the build torch runs on computes it; in Python (the CUDA simulator), SLEEF's."""
    return _expm1_in_double(x)


@overload(_expm1_of_the_build, target="cpu")
def _expm1_of_the_build_cpu(x):
    # Decided while compiling: the x86-64 default build maps ``std::expm1`` over the elements,
    # libm's expm1f for float32 (1 ulp below SLEEF's at 1.0). The kernel cache is keyed by
    # ATEN_CPU_CAPABILITY, so a change of capability compiles anew.
    if fma_contracted():
        return lambda x: _expm1_in_double(x)
    return lambda x: math.expm1(x)


@overload(_expm1_of_the_build, target="cuda")
def _expm1_of_the_build_cuda(x):
    return lambda x: _expm1_in_double(x)


EXPM1 = UNARY.register(expm1)


@register_jitable
def exp2(x):
    return math.inf if x >= 1024 else math.exp2(np.float64(x))
EXP2 = UNARY.register(exp2)


@register_jitable
def lgamma(x):
    """C's ``lgamma``: +inf at the poles (0 and the negative integers) and past the overflow."""
    wide = np.float64(x)        # (a float32 compared with the threshold would overflow it)
    if wide != wide:
        return wide
    if wide <= 0 and (not abs(wide) < _INTEGRAL or math.floor(wide) == wide):
        return math.inf
    return math.inf if wide > _LGAMMA_OVERFLOW else math.lgamma(wide)
LGAMMA = UNARY.register(lgamma)


@register_jitable
def signbit(x):
    return math.copysign(1.0, x) < 0       # -0.0 and NaNs with the sign bit set count as negative
SIGNBIT = UNARY.register(signbit)


@register_jitable
def signbit_int(x):
    return x < 0
SIGNBIT_INT = UNARY.register(signbit_int)


@register_jitable
def isposinf(x):
    return x == math.inf
ISPOSINF = UNARY.register(isposinf)


@register_jitable
def isneginf(x):
    return x == -math.inf
ISNEGINF = UNARY.register(isneginf)


@register_jitable
def log_sigmoid(x):
    """``log_sigmoid_cpu_kernel``: min(x, 0) - log1p(e^-|x|), which never exponentiates a large number."""
    return min(x, like(x, 0)) - math.log1p(exp(-abs(x))) if x == x else x
LOG_SIGMOID = UNARY.register(log_sigmoid)


@register_jitable
def exp_neg_abs(x):
    """The buffer ``log_sigmoid_forward`` saves for its backward: e^-|x|."""
    return exp(-abs(x))
EXP_NEG_ABS = UNARY.register(exp_neg_abs)


_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)
_TWO_OVER_SQRT_PI = 1.1283791670955126


@register_jitable
def erfinv(y):
    """``calc_erfinv`` (Math.h): a rational first guess, then two Newton steps, in y's own type."""
    a, b, c, d = _ERFINV_A, _ERFINV_B, _ERFINV_C, _ERFINV_D
    y_abs = abs(y)
    if not y_abs <= 1:
        return like(y, math.nan)
    if y_abs == 1:
        return like(y, math.copysign(math.inf, y))
    if y_abs <= like(y, 0.7):
        z = y * y
        num = ((like(y, a[3]) * z + like(y, a[2])) * z + like(y, a[1])) * z + like(y, a[0])
        dem = (((like(y, b[3]) * z + like(y, b[2])) * z + like(y, b[1])) * z + like(y, b[0])) * z + like(y, 1)
        x = y * num / dem
    else:
        z = math.sqrt(-math.log((like(y, 1) - y_abs) / like(y, 2)))
        num = ((like(y, c[3]) * z + like(y, c[2])) * z + like(y, c[1])) * z + like(y, c[0])
        dem = (like(y, d[1]) * z + like(y, d[0])) * z + like(y, 1)
        x = like(y, math.copysign(num, y)) / dem
    k = like(y, _TWO_OVER_SQRT_PI)
    x = x - (math.erf(x) - y) / (k * math.exp(-x * x))
    return x - (math.erf(x) - y) / (k * math.exp(-x * x))
ERFINV = UNARY.register(erfinv)


_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_PSI_10 = 2.25175258906672110764


@register_jitable
def digamma(x):
    """``calc_digamma`` (Math.h), in x's own type: the reflection pi / tan(pi r) for a negative x
    (r its fractional part, computed in double), the recurrence up to 10, then the asymptotic series."""
    if x == 0:
        return like(x, math.copysign(math.inf, -x))
    reflection = like(x, 0)
    if x < 0:
        if not abs(x) < _INTEGRAL or math.floor(x) == x:
            return like(x, math.nan)
        r = np.float64(x) - np.float64(math.floor(abs(x))) * math.copysign(1.0, x)      # modf's fraction
        reflection = like(x, math.pi / math.tan(math.pi * r))
        x = like(x, 1) - x
    result = like(x, 0)
    while x < 10:
        result -= like(x, 1) / x
        x += like(x, 1)
    if x == 10:
        return result + like(x, _PSI_10) - reflection
    y = like(x, 0)
    if x < like(x, 1.0e17):
        z = like(x, 1) / (x * x)
        poly = like(x, _DIGAMMA_A[0])
        for k in range(1, 7):
            poly = poly * z + like(x, _DIGAMMA_A[k])
        y = z * poly
    return result + math.log(x) - like(x, 0.5) / x - y - reflection
DIGAMMA = UNARY.register(digamma)


@register_jitable
def trigamma(x):
    """``trigamma`` (Math.h), in x's own type: below 1/2 the reflection -pi^2 / sin^2(pi x) and
    x -> 1 - x with the sign turned, six steps of the recurrence, then the asymptotic series."""
    sign = like(x, 1)
    result = like(x, 0)
    one = like(x, 1)
    if x < like(x, 0.5):
        sign = -sign
        pi = like(x, math.pi)
        sin_pi_x = like(x, math.sin(pi * x))
        result -= (pi * pi) / (sin_pi_x * sin_pi_x)
        x = one - x
    for _ in range(6):
        result += one / (x * x)
        x += one
    ixx = one / (x * x)
    series = contracted_fma(-ixx, contracted_fma(-ixx, like(x, 1.0 / 42), like(x, 1.0 / 30)), like(x, 1.0 / 6))
    result += contracted_fma(ixx, series, one + one / (like(x, 2) * x)) / x
    return sign * result
TRIGAMMA = UNARY.register(trigamma)


# ---- the modified Bessel functions of the first kind, I0 and I1, and their scaled forms
# e^-|x| I0(x), e^-|x| I1(x) (Math.h's calc_i0, calc_i0e, calc_i1, calc_i1e, from Cephes): a
# Chebyshev series in |x| / 2 - 2 on [0, 8], another in 32 / |x| - 2 beyond; I1 and I1e are odd.
# Everything is computed in x's own type with the coefficients rounded to it, as torch's templates
# do; for float32 the I1 series start later (torch keeps a shorter float table, whose terms are
# the double table's last ones: the first ones vanish in single precision).
_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)
_I1E_A_SINGLE_START, _I1E_B_SINGLE_START = 12, 18      # where torch's float tables begin in these


def is_single(x):
    """Whether x is a float32 (a compile-time constant in Numba, see below)."""
    return isinstance(x, np.float32)


@overload(is_single, target="generic")
def _is_single_jit(x):
    single = x == types.float32
    return lambda x: single


@register_jitable
def chbevl(x, coefficients, start):
    """Cephes' ``chbevl``: the Chebyshev series of ``coefficients[start:]`` (highest order first)
    at x / 2, by Clenshaw's recurrence, in x's own type. Where torch's build contracts, GCC fuses
    ``x * b1 - b2`` into one rounding (the coefficient is added after)."""
    b0, b1, b2 = like(x, coefficients[start]), like(x, 0), like(x, 0)
    for i in range(start + 1, len(coefficients)):
        b2 = b1
        b1 = b0
        b0 = contracted_fma(x, b1, -b2) + like(x, coefficients[i])
    return like(x, 0.5) * (b0 - b2)


@register_jitable
def _i0e_series(a):
    """e^-a I0(a) for a = |x| (NaN takes the second branch and stays NaN)."""
    if a <= like(a, 8):
        return chbevl(a / like(a, 2) - like(a, 2), _I0E_A, 0)
    return chbevl(like(a, 32) / a - like(a, 2), _I0E_B, 0) / math.sqrt(a)


@register_jitable
def _i1e_series(a):
    """e^-a I1(a) for a = |x|: on [0, 8] the series times a."""
    if a <= like(a, 8):
        start = _I1E_A_SINGLE_START if is_single(a) else 0
        return chbevl(a / like(a, 2) - like(a, 2), _I1E_A, start) * a
    start = _I1E_B_SINGLE_START if is_single(a) else 0
    return chbevl(like(a, 32) / a - like(a, 2), _I1E_B, start) / math.sqrt(a)


@register_jitable
def i0(x):
    """``calc_i0``: e^|x| times the scaled series, the e^|x| in x's type (inf past its range)."""
    a = abs(x)
    scale = like(x, exp(a))
    if a <= like(a, 8):
        return scale * _i0e_series(a)
    return scale * chbevl(like(a, 32) / a - like(a, 2), _I0E_B, 0) / math.sqrt(a)
I0 = UNARY.register(i0)


@register_jitable
def i0e(x):
    """``calc_i0e``."""
    return _i0e_series(abs(x))
I0E = UNARY.register(i0e)


@register_jitable
def i1(x):
    """``calc_i1``: odd, e^|x| times the scaled series, each product in x's type."""
    a = abs(x)
    scale = like(x, exp(a))
    if a <= like(a, 8):
        start = _I1E_A_SINGLE_START if is_single(a) else 0
        out = scale * a * chbevl(a / like(a, 2) - like(a, 2), _I1E_A, start)
    else:
        start = _I1E_B_SINGLE_START if is_single(a) else 0
        out = scale * chbevl(like(a, 32) / a - like(a, 2), _I1E_B, start) / math.sqrt(a)
    return -out if x < 0 else out
I1 = UNARY.register(i1)


@register_jitable
def i1e(x):
    """``calc_i1e``: odd."""
    out = _i1e_series(abs(x))
    return -out if x < 0 else out
I1E = UNARY.register(i1e)


# ---- sinc (``sinc_kernel``, UnaryOpsKernel.cpp): sin(pi x) / (pi x), 1 at 0; the product pi x
# is rounded to x's type before its sine is taken, as torch's opmath product is.
@register_jitable
def sinc(x):
    if x == 0:
        return like(x, 1)
    product = like(x, math.pi) * x
    return math.sin(product) / product
SINC = UNARY.register(sinc)


@register_jitable
def sinc_complex(x):
    """The complex product (pi + 0i)(x), each part's products kept (so an infinite part gives a
    NaN as c10's complex product does), its sine from the parts in their own type (-i sinh(iz),
    as ``sin_complex``), and c10's complex division."""
    if x.real == 0 and x.imag == 0:
        return complex(1, 0)
    pi, zero = like(x.real, math.pi), like(x.real, 0)
    re, im = pi * x.real - zero * x.imag, pi * x.imag + zero * x.real
    if abs(im) == math.inf and not abs(re) < math.inf:
        sine = complex(math.nan, math.inf)
    else:
        w = csinh(-im, re)
        sine = complex(w.imag, -w.real)
    return c10_div(sine, complex(re, im))
SINC_COMPLEX = UNARY.register(sinc_complex)


# ---- the normal distribution's tails (Math.h): erfc, its scaled form erfcx(x) = e^(x^2) erfc(x),
# the quantile function ndtri and log_ndtr, log of the CDF.
@register_jitable
def erfc(x):
    """1 - erf(x), without the cancellation: the C library's in double, rounded by the store
    (torch's float32 loop is SLEEF's erfc, within 1.5 ulps, its float64 tail the C library's)."""
    return math.erfc(np.float64(x))
ERFC = UNARY.register(erfc)


@register_jitable
def polevl(x, coefficients):
    """Cephes' ``polevl``: Horner's rule over ``coefficients`` (highest order first) in x's own
    type, each step one fused multiply-add where torch's build contracts."""
    result = like(x, 0)
    for i in range(len(coefficients)):
        result = contracted_fma(result, x, like(x, coefficients[i]))
    return result


# calc_ndtri's three rational fits (Cephes' ndtri): near the median, in y - 1/2 for
# |y - 1/2| <= 3/8; then in 1 / sqrt(-2 log y) for the tails down to e^-32, and beyond
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXP_MINUS_2 = 0.13533528323661269189
_SQRT_2PI = 2.50662827463100050242


@register_jitable
def ndtri(y):
    """``calc_ndtri``: the x whose normal CDF is y, in y's own type. The upper half is the lower
    one mirrored (x(1 - y) = -x(y)), so only the lower tail's fits are needed; NaN falls through
    every test and stays NaN."""
    one = like(y, 1)
    if y == 0 or y == one:
        return like(y, -math.inf) if y == 0 else like(y, math.inf)
    if y < 0 or y > one:
        return like(y, math.nan)
    lower = True
    if y > one - like(y, _EXP_MINUS_2):
        y, lower = one - y, False
    if y > like(y, _EXP_MINUS_2):
        y = y - like(y, 0.5)
        y2 = y * y
        x = contracted_fma(y, y2 * polevl(y2, _NDTRI_P0) / polevl(y2, _NDTRI_Q0), y)
        return x * like(y, _SQRT_2PI)
    # ``::sqrt`` and ``::log`` are the C library's double functions: a float32 y is widened for
    # them, and each line's double result rounded back to y's type
    x = like(y, math.sqrt(-2.0 * math.log(np.float64(y))))
    x0 = like(y, x - math.log(np.float64(x)) / x)
    z = one / x
    if x < like(x, 8):
        x1 = z * polevl(z, _NDTRI_P1) / polevl(z, _NDTRI_Q1)
    else:
        x1 = z * polevl(z, _NDTRI_P2) / polevl(z, _NDTRI_Q2)
    x = x0 - x1
    return -x if lower else x
NDTRI = UNARY.register(ndtri)


@register_jitable
def _erfcx_y100(y100):
    """``erfcx_y100``: erfcx on [0, 50] from y100 = 400 / (4 + x), by row int(y100) of the table
    (erfcx_table.py), t in y100's type and the polynomial in double (the table's literals are
    doubles), each product rounded (what matches torch's avx2 build bit for bit); 1 where y100
    reaches 100 (|x| under a few epsilons)."""
    k = int(y100)
    if k >= 100:
        return 1.0
    t = np.float64(like(y100, 2) * y100 - like(y100, 2 * k + 1))
    row = ERFCX_Y100[k]
    result = row[6]
    for i in range(5, -1, -1):
        result = result * t + row[i]
    return result


_FRAC_1_SQRT_PI = 0.56418958354775628694807945156


@register_jitable
def erfcx(x):
    """``calc_erfcx``: the table on [0, 50], a continued fraction beyond (its first term alone past
    5e7, where the others would overflow), and for x < 0 erfcx(x) = 2 e^(x^2) - erfcx(-x), whose
    second term is negligible below -6.1, and which overflows below -26.7."""
    if x != x:
        return x
    if x >= 0:
        if x > like(x, 50):
            if x > like(x, 5e7):
                return like(x, _FRAC_1_SQRT_PI) / x
            # x^2 in x's type; the literals 4.5 and 3.75 are doubles, 5 an integer (so x^2 + 5 stays
            # in x's type), which decides where a float32 x is widened
            x2 = x * x
            numerator = np.float64(x2) * (np.float64(x2) + 4.5) + 2.0
            denominator = np.float64(x) * (np.float64(x2 * (x2 + like(x, 5))) + 3.75)
            return like(x, np.float64(like(x, _FRAC_1_SQRT_PI)) * numerator / denominator)
        return like(x, _erfcx_y100(like(x, 400) / (like(x, 4) + x)))
    if x < -26.7:
        return like(x, math.inf)
    twice_exp = 2.0 * exp(np.float64(x * x))      # C's double exp, as the unqualified call resolves
    if x < -6.1:
        return like(x, twice_exp)
    return like(x, twice_exp - np.float64(like(x, _erfcx_y100(like(x, 400) / (like(x, 4) - x)))))
ERFCX = UNARY.register(erfcx)


@register_jitable
def log_ndtr(x):
    """``calc_log_ndtr`` (after SciPy's): for x < -1, where the CDF underflows, the log of
    erfcx(-t) / 2 minus t^2, t = x / sqrt(2); above, log1p of -erfc(t) / 2."""
    t = x * like(x, 0.7071067811865476)
    if x < like(x, -1):
        return log(erfcx(-t) / like(x, 2)) - t * t
    return log1p(-math.erfc(t) / like(x, 2))
LOG_NDTR = UNARY.register(log_ndtr)


# ---- more complex kernels: the inverse trigonometric and hyperbolic functions, sinh/cosh,
# log1p/expm1 (c10's own, ``c10/util/complex_math.h``), rsqrt, log2/log10, exp2. torch's CPU
# loops call ``std::asin`` etc. of a ``std::complex``, that is glibc's casin and kin (its vector
# types map the same functions over their lanes). The special values below (an infinite or NaN
# part, two zeros) are glibc's, branch for branch; finite values go to Numba's cmath, whose
# algorithms (CPython's) are as accurate as glibc's without being its bits. A part's class
# is tested by comparisons, which work on float32 and float64 alike.
_HALF_PI = math.pi / 2


@register_jitable
def _finite(v):
    return abs(v) < math.inf


@register_jitable
def casinh(re, im):
    """glibc's ``casinh``: an infinite imaginary part gives an infinite real part."""
    if not (_finite(re) and _finite(im)):
        if abs(im) == math.inf:
            return complex(math.copysign(math.inf, re),
                           math.nan if re != re else math.copysign(_HALF_PI if _finite(re) else _HALF_PI / 2, im))
        if re != re or abs(re) == math.inf:
            if (abs(re) == math.inf and im == im) or (re != re and im == 0):
                return complex(re, math.copysign(0.0, im))
            return complex(re, math.nan)
        return complex(math.nan, math.nan)
    if re == 0 and im == 0:
        return complex(re, im)
    return cmath.asinh(complex(re, im))


@register_jitable
def casin(re, im):
    """glibc's ``casin``: -i casinh(iz), after its own NaN cases."""
    if re != re or im != im:
        if re == 0:
            return complex(re, im)
        if abs(re) == math.inf or abs(im) == math.inf:
            return complex(math.nan, math.copysign(math.inf, im))
        return complex(math.nan, math.nan)
    w = casinh(-im, re)
    return complex(w.imag, -w.real)


@register_jitable
def cacos(re, im):
    """glibc's ``cacos``: pi/2 - casin(z) where a part is not finite or both are zero (a zero
    real part made +0), the accurate algorithm elsewhere."""
    if not (_finite(re) and _finite(im)) or (re == 0 and im == 0):
        w = casin(re, im)
        r = _HALF_PI - w.real
        return complex(0.0 if r == 0 else r, -w.imag)
    return cmath.acos(complex(re, im))


@register_jitable
def cacosh(re, im):
    """glibc's ``cacosh``: the real part is never negative."""
    if not (_finite(re) and _finite(im)):
        if abs(im) == math.inf:
            if re != re:
                return complex(math.inf, math.nan)
            if _finite(re):
                return complex(math.inf, math.copysign(_HALF_PI, im))
            return complex(math.inf, math.copysign(3 * math.pi / 4 if re < 0 else math.pi / 4, im))
        if abs(re) == math.inf:
            if im == im:
                return complex(math.inf, math.copysign(math.pi if re < 0 else 0.0, im))
            return complex(math.inf, math.nan)
        return complex(math.nan, _HALF_PI if re == 0 else math.nan)
    if re == 0 and im == 0:
        return complex(0.0, math.copysign(_HALF_PI, im))
    return cmath.acosh(complex(re, im))


@register_jitable
def catanh(re, im):
    """glibc's ``catanh``: at +-1 an infinite real part (Python's cmath raises there)."""
    if not (_finite(re) and _finite(im)):
        if abs(im) == math.inf:
            return complex(math.copysign(0.0, re), math.copysign(_HALF_PI, im))
        if abs(re) == math.inf or re == 0:
            return complex(math.copysign(0.0, re), math.copysign(_HALF_PI, im) if im == im else math.nan)
        return complex(math.nan, math.nan)
    if re == 0 and im == 0:
        return complex(re, im)
    if abs(re) == 1 and im == 0:
        return complex(math.copysign(math.inf, re), im)
    return cmath.atanh(complex(re, im))


@register_jitable
def catan(re, im):
    """glibc's ``catan``: its own non-finite cases, then -i catanh(iz)."""
    if not (_finite(re) and _finite(im)):
        if abs(re) == math.inf:
            return complex(math.copysign(_HALF_PI, re), math.copysign(0.0, im))
        if abs(im) == math.inf:
            return complex(math.copysign(_HALF_PI, re) if re == re else math.nan, math.copysign(0.0, im))
        if im == 0:
            return complex(math.nan, math.copysign(0.0, im))
        return complex(math.nan, math.nan)
    if re == 0 and im == 0:
        return complex(re, im)
    w = catanh(-im, re)
    return complex(w.imag, -w.real)


@register_jitable
def asin_complex(x):
    return casin(x.real, x.imag)
ASIN_COMPLEX = UNARY.register(asin_complex)


@register_jitable
def acos_complex(x):
    return cacos(x.real, x.imag)
ACOS_COMPLEX = UNARY.register(acos_complex)


@register_jitable
def atan_complex(x):
    return catan(x.real, x.imag)
ATAN_COMPLEX = UNARY.register(atan_complex)


@register_jitable
def asinh_complex(x):
    return casinh(x.real, x.imag)
ASINH_COMPLEX = UNARY.register(asinh_complex)


@register_jitable
def acosh_complex(x):
    return cacosh(x.real, x.imag)
ACOSH_COMPLEX = UNARY.register(acosh_complex)


@register_jitable
def atanh_complex(x):
    return catanh(x.real, x.imag)
ATANH_COMPLEX = UNARY.register(atanh_complex)


@register_jitable
def sinh_complex(x):
    return csinh(x.real, x.imag)
SINH_COMPLEX = UNARY.register(sinh_complex)


@register_jitable
def cosh_complex(x):
    return ccosh(x.real, x.imag)
COSH_COMPLEX = UNARY.register(cosh_complex)


@register_jitable
def _c_sin(v):
    """C's sin: NaN at an infinity, where Python's math.sin (the simulator's) raises."""
    return math.sin(v) if _finite(v) else v - v


@register_jitable
def _c_cos(v):
    return math.cos(v) if _finite(v) else v - v


@register_jitable
def expm1_complex(x):
    """c10's ``expm1``: expm1(re) cos(im) - 2 sin(im/2)^2 + i e^re sin(im), term by term as
    written there (so e^inf * sin(0) is NaN, as in torch)."""
    re, im = x.real, x.imag
    a = _c_sin(im / like(im, 2))
    return complex(expm1(re) * _c_cos(im) - like(a, 2) * a * a, exp(re) * _c_sin(im))
EXPM1_COMPLEX = UNARY.register(expm1_complex)


@register_jitable
def log1p_complex(x):
    """c10's CPU ``log1p`` (NumPy's, from numpy#22611): log(u) for u = 1 + z, scaled by
    z / (u - 1) where forming u rounded z away."""
    u = complex(x.real + 1, x.imag)
    if u.real == 1 and u.imag == 0:
        return x
    log_u = log_complex(u)
    um1 = complex(u.real - 1, u.imag)
    if um1.real == x.real and um1.imag == x.imag:
        return log_u
    return _cmul(log_u, c10_div(x, um1))
LOG1P_COMPLEX = UNARY.register(log1p_complex)


@register_jitable
def rsqrt_complex(x):
    """``1 / std::sqrt(z)`` with c10's division (``rsqrt_kernel``'s scalar loop)."""
    return c10_div(complex(1.0, 0.0), sqrt_complex(x))
RSQRT_COMPLEX = UNARY.register(rsqrt_complex)


@register_jitable
def log2_complex(x):
    """log(z) with each part divided by ln 2 in the part's type, as the vector types' ``log2``
    (AVX2, AVX-512) divides; the scalar ``c10_complex_math::log2`` divides by the complex ln 2,
    which makes an infinite part's partner NaN (log2(0) is -inf+nanj there, -inf+0j here)."""
    w = log_complex(x)
    return complex(w.real / like(w.real, math.log(2.0)), w.imag / like(w.real, math.log(2.0)))
LOG2_COMPLEX = UNARY.register(log2_complex)


@register_jitable
def log10_complex(x):
    """libstdc++'s ``log10``: log(z) with each part divided by ln 10."""
    w = log_complex(x)
    return complex(w.real / like(w.real, math.log(10.0)), w.imag / like(w.real, math.log(10.0)))
LOG10_COMPLEX = UNARY.register(log10_complex)


@register_jitable
def exp2_complex(x):
    """``exp2_impl``: e^(ln 2 * z), the real constant (in the part's type: a float32 angle is
    rounded to float32 before its sine is taken) multiplying each part."""
    ln2 = like(x.real, 0.6931471805599453)
    return exp_complex(complex(ln2 * x.real, ln2 * x.imag))
EXP2_COMPLEX = UNARY.register(exp2_complex)


# ----------------------------------------------------------------------------- binary ops
@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once (``std::fma``, and what GCC makes of ``a * b + c`` here)."""
    def codegen(context, builder, signature, args):      # in the type of c (alpha may be wider)
        args = [context.cast(builder, v, t, signature.return_type) for v, t in zip(args, signature.args)]
        return builder.fma(*args)
    return c(a, b, c), codegen


def multiply_add(a, b, c):
    """a * b + c, for floats rounded once where torch's build fuses it: torch's ``add``
    (``ufunc/add.h``) is ``vec::fmadd(other, alpha, self)``, and GCC fuses its scalar
    ``self + alpha * other`` too. In Python (the CUDA simulator) a float goes through the jitted
    version below, rounded once as nvcc's contraction does."""
    if isinstance(c, (float, np.floating)):
        return _host_fma(a, b, c)
    return a * b + c


@overload(multiply_add, target="cpu")
def _multiply_add_cpu(a, b, c):
    # Decided while compiling: the x86-64 ``default`` build has no FMA, so there ``fmadd`` is a
    # product and a sum, each rounded (``dispatch_stub.fma_contracted``; the kernel cache is keyed
    # by ATEN_CPU_CAPABILITY, so a change of capability compiles anew).
    if isinstance(c, types.Float) and fma_contracted():
        return lambda a, b, c: fma(a, b, c)
    return lambda a, b, c: a * b + c


@overload(multiply_add, target="cuda")
def _multiply_add_cuda(a, b, c):
    return lambda a, b, c: a * b + c        # NVVM contracts this to one fma, as nvcc does torch's


@njit(cache=True)
def _host_fma(a, b, c):
    return fma(a, b, c)


def contracted_fma(a, b, c):
    """``a * b + c`` as a C++ compiler builds it when it may contract: one rounding on CUDA (nvcc)
    and on CPU builds with FMA, two on torch's x86-64 ``default`` build. Unlike
    ``multiply_add`` the fused form is spelled out on CUDA too, so which product is fused is fixed."""
    return _host_fma(a, b, c)


@overload(contracted_fma, target="cpu")
def _contracted_fma_cpu(a, b, c):
    if fma_contracted():
        return lambda a, b, c: fma(a, b, c)
    return lambda a, b, c: a * b + c


@overload(contracted_fma, target="cuda")
def _contracted_fma_cuda(a, b, c):
    return lambda a, b, c: fma(a, b, c)


@register_jitable
def add(a, b, alpha):
    return multiply_add(alpha, b, a)
ADD = BINARY.register(add)


@register_jitable
def sub(a, b, alpha):
    return multiply_add(-alpha, b, a)       # torch's sub is add with -alpha
SUB = BINARY.register(sub)


@register_jitable
def mul(a, b, alpha):
    return a * b
MUL = BINARY.register(mul)


@register_jitable
def div(a, b, alpha):
    return a / b
DIV = BINARY.register(div)


@register_jitable
def power(a, b, alpha):
    return a ** b
POW = BINARY.register(power, "POW")


def like(x, value):
    """``value`` in x's own type: a float32 stays float32 (Numba widens a Python float to float64)."""
    return type(x)(value)


@overload(like, target="generic")
def _like_jit(x, value):
    ctor = as_dtype(x).type
    return lambda x, value: ctor(value)


def lowest_like(x):
    """The lowest value of x's type: -inf for a float, the smallest integer otherwise (where
    torch's max pools start their running maximum: ``-numeric_limits<T>::infinity()``, or
    ``::lowest()`` for a type without infinities)."""
    return like(x, _lowest(np.asarray(x).dtype))


def _lowest(dtype):
    return -math.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)


@overload(lowest_like, target="generic")
def _lowest_like_jit(x):
    value = _lowest(as_dtype(x))
    return lambda x: like(x, value)


def c_divide(a, b):
    """C's ``a / b`` for a value of a tensor's type and an integer count: in a's type, an integer
    quotient truncated toward zero (the average pools' ``sum / divide_factor``)."""
    return div_trunc_int(a, b, 1) if isinstance(a, (int, np.integer)) else a / like(a, b)


@overload(c_divide, target="generic")
def _c_divide_jit(a, b):
    if isinstance(a, types.Integer):
        return lambda a, b: div_trunc_int(a, like(a, b), 1)
    return lambda a, b: a / like(a, b)


@register_jitable
def pow_float_scalar(a, b, alpha):
    """``pow_tensor_scalar_kernel`` (``PowKernel.cpp``) for float and double: sqrt, 1 / sqrt and
    the reciprocal for exponents 0.5, -0.5 and -1, products for 2, 3 and -2, each in the
    tensor's own type (x ** 3 is x * x * x, rounded twice, not pow's one rounding); else pow."""
    if b == 2:
        return a * a
    if b == 3:
        return a * a * a
    one = like(a, 1)
    if b == -2:
        return one / (a * a)
    if b == -1:
        return one / a
    if b == 0.5 or b == -0.5:
        root = math.sqrt(a) if a >= 0 else like(a, math.nan)
        return root if b == 0.5 else one / root
    return a ** b
POW_FLOAT_SCALAR = BINARY.register(pow_float_scalar)


@register_jitable
def int_pow(base, exponent, alpha):
    """Integer power by squaring, wrapping like C; a negative exponent gives 0 unless |base| == 1."""
    if exponent < 0:
        if base == 1:
            return base
        if base == -1:
            return base if exponent % 2 else -base
        return base - base
    result = base - base + 1
    while exponent:
        if exponent & 1:
            result = result * base
        base = base * base
        exponent >>= 1
    return result
INT_POW = BINARY.register(int_pow)


@register_jitable
def maximum(a, b, alpha):
    return b if (b != b or b > a) else a    # NaN propagates; of equal values (-0.0, 0.0) ``a``, as std::max
MAXIMUM = BINARY.register(maximum)


@register_jitable
def minimum(a, b, alpha):
    return b if (b != b or b < a) else a
MINIMUM = BINARY.register(minimum)


@register_jitable
def eq(a, b, alpha):
    return a == b
EQ = BINARY.register(eq)


@register_jitable
def ne(a, b, alpha):
    return a != b
NE = BINARY.register(ne)


@register_jitable
def lt(a, b, alpha):
    return a < b
LT = BINARY.register(lt)


@register_jitable
def le(a, b, alpha):
    return a <= b
LE = BINARY.register(le)


@register_jitable
def gt(a, b, alpha):
    return a > b
GT = BINARY.register(gt)


@register_jitable
def ge(a, b, alpha):
    return a >= b
GE = BINARY.register(ge)


def fmod(a, b):
    """C's ``fmod``, exact: Python (and the CUDA simulator) has ``math.fmod``; in jitted code
    Numba has ``math.fmod`` on CUDA only, and NumPy's on the CPU (see the overloads below)."""
    return math.fmod(a, b)


@overload(fmod, target="cpu")
def _fmod_cpu(a, b):
    return lambda a, b: np.fmod(a, b)


@overload(fmod, target="cuda")
def _fmod_cuda(a, b):
    return lambda a, b: math.fmod(a, b)


# ---- math: BinaryOpsKernel.cpp's kernels. Integer and floating versions are separate
# ops where C++ computes them differently; the caller picks one by the compute dtype.
@register_jitable
def div_floor_int(a, b, alpha):
    if b == -1:
        return -a           # wraps for the most negative value, as torch's; Numba's // gives 0
    return a // b           # Python's // floors, as ``div_floor_kernel`` does for integers
DIV_FLOOR_INT = BINARY.register(div_floor_int)


@register_jitable
def div_floor_float(a, b, alpha):
    """``div_floor_floating``: floor(a / b) computed from fmod, so it is exact where a / b rounds up."""
    if b == 0:
        return a / b
    mod = fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div -= 1
    if div == 0:
        return math.copysign(0.0, a / b)
    if not abs(div) < _INTEGRAL:    # nan, inf or an integer already: Numba's math.floor returns an int64
        return div
    floordiv = math.floor(div)
    if div - floordiv > 0.5:
        floordiv += 1
    return floordiv
DIV_FLOOR_FLOAT = BINARY.register(div_floor_float)


@register_jitable
def div_trunc_int(a, b, alpha):
    q = a // b
    return q + 1 if q < 0 and q * b != a else q
DIV_TRUNC_INT = BINARY.register(div_trunc_int)


@register_jitable
def div_trunc_float(a, b, alpha):
    q = a / b
    # Numba's math.trunc returns an int64 (see div_floor_float), which would lose -0.0 too
    return math.copysign(math.trunc(q), q) if abs(q) < _INTEGRAL else q
DIV_TRUNC_FLOAT = BINARY.register(div_trunc_float)


@register_jitable
def remainder_int(a, b, alpha):
    return a % b            # Python's % takes the divisor's sign, as torch's remainder
REMAINDER_INT = BINARY.register(remainder_int)


@register_jitable
def remainder_float(a, b, alpha):
    mod = fmod(a, b) if b != 0 else math.nan
    return mod + b if mod != 0 and (b < 0) != (mod < 0) else mod
REMAINDER_FLOAT = BINARY.register(remainder_float)


@register_jitable
def fmod_int(a, b, alpha):
    r = a % b
    return r - b if r != 0 and (r < 0) != (a < 0) else r     # C's %: the dividend's sign
FMOD_INT = BINARY.register(fmod_int)


@register_jitable
def fmod_float(a, b, alpha):
    return fmod(a, b) if b != 0 and not math.isinf(a) else math.nan
FMOD_FLOAT = BINARY.register(fmod_float)


@register_jitable
def gcd(a, b, alpha):
    """``calc_gcd``: Euclid's algorithm on the magnitudes."""
    a, b = abs(a), abs(b)
    while a != 0:
        a, b = b % a, a
    return b
GCD = BINARY.register(gcd)


@register_jitable
def lcm(a, b, alpha):
    """``lcm_kernel``: |a / gcd * b|, 0 where the gcd is 0 (both zero)."""
    g = gcd(a, b, alpha)
    return a - a if g == 0 else abs(a // g * b)
LCM = BINARY.register(lcm)


@register_jitable
def bitwise_and(a, b, alpha):
    return a & b
BITWISE_AND = BINARY.register(bitwise_and)


@register_jitable
def bitwise_or(a, b, alpha):
    return a | b
BITWISE_OR = BINARY.register(bitwise_or)


@register_jitable
def bitwise_xor(a, b, alpha):
    return a ^ b
BITWISE_XOR = BINARY.register(bitwise_xor)


@register_jitable
def lshift(a, b, alpha):
    """Shifting by a negative count or past 63 bits gives 0 (``lshift_kernel``); narrower types
    lose the high bits on the store, which is their own past-the-width case."""
    return a << b if 0 <= b < 64 else a - a
LSHIFT = BINARY.register(lshift)


@register_jitable
def rshift(a, b, alpha):
    """Past the width, an arithmetic shift by width - 1 (the sign fills every bit)."""
    return a >> b if 0 <= b < 64 else a >> 63
RSHIFT = BINARY.register(rshift)


@register_jitable
def round_decimals(a, ten_pow, negative):
    """``round(decimals=d)``: ``ten_pow`` is 10 ** |d|; for negative d round a / 10**|d|."""
    if negative:
        return nearbyint(a / ten_pow) * ten_pow
    return nearbyint(a * ten_pow) / ten_pow
ROUND_DECIMALS = BINARY.register(round_decimals)


@register_jitable
def softplus(x, beta, threshold):
    """log(1 + exp(beta x)) / beta, or x itself past the threshold (``softplus_kernel``)."""
    return x if x * beta > threshold else math.log1p(exp(x * beta)) / beta
SOFTPLUS = BINARY.register(softplus)


@register_jitable
def lerp(start, end, weight):
    """``lerp`` with a scalar weight: from the nearer end, as ATen's, so weight 1 gives ``end``.
    One fma either way, as ``lerp_vec`` (``cpu/LerpKernel.cpp``): ``fmadd(weight - 1, diff, end)``."""
    diff = end - start
    return multiply_add(weight, diff, start) if abs(weight) < 0.5 else multiply_add(weight - 1, diff, end)
LERP = BINARY.register(lerp)


@register_jitable
def threshold_backward(x, grad, threshold):
    """relu's gradient: 0 where the saved output is at or below the threshold, else ``grad``
    (``threshold_kernel`` with value 0); a NaN output lets the gradient through. The saved
    output comes first, as in torch's iterator, whose output takes the first input's layout."""
    return 0 if x <= threshold else grad
THRESHOLD_BACKWARD = BINARY.register(threshold_backward)


@register_jitable
def div_complex(a, b, alpha):
    return c10_div(a, b)
DIV_COMPLEX = BINARY.register(div_complex)


@register_jitable
def _cmul(a, b):
    """C's complex product, term by term (inf * 0 parts give NaN, as the kernels' do)."""
    return complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


@register_jitable
def _box(x):
    """Annex G's "box": an infinite part becomes +-1, a finite one +-0."""
    return math.copysign(1.0 if abs(x) == math.inf else 0.0, x)


@register_jitable
def _zero_nan(x):
    return math.copysign(0.0, x) if x != x else x


@register_jitable
def c99_mul(x, y):
    """C's ``*`` on complex numbers (libgcc's ``__muldc3``, C99 Annex G): the product term by
    term, and where both parts come out NaN, infinities recovered from an infinite factor."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    ac, bd, ad, bc = a * c, b * d, a * d, b * c
    re, im = ac - bd, ad + bc
    if not (re != re and im != im):
        return complex(re, im)
    recalc = False
    if abs(a) == math.inf or abs(b) == math.inf:
        a, b, c, d = _box(a), _box(b), _zero_nan(c), _zero_nan(d)
        recalc = True
    if abs(c) == math.inf or abs(d) == math.inf:
        a, b, c, d = _zero_nan(a), _zero_nan(b), _box(c), _box(d)
        recalc = True
    if not recalc and (abs(ac) == math.inf or abs(bd) == math.inf or abs(ad) == math.inf
                       or abs(bc) == math.inf):
        a, b, c, d = _zero_nan(a), _zero_nan(b), _zero_nan(c), _zero_nan(d)
        recalc = True
    if recalc:
        return complex(math.inf * (a * c - b * d), math.inf * (a * d + b * c))
    return complex(re, im)


@register_jitable
def pow_complex(a, b, alpha):
    """``std::pow`` of two complex numbers: glibc's ``cpow``, cexp(b * clog(a)), no special case
    for a zero base (0 ** 2 is -0j that way, 0 ** 0 NaN)."""
    return exp_complex(c99_mul(b, log_complex(a)))
POW_COMPLEX = BINARY.register(pow_complex)


@register_jitable
def pow_complex_scalar(a, b, alpha):
    """``pow_tensor_scalar_kernel`` (``PowKernel.cpp``) for complex numbers: sqrt, 1 / sqrt and
    the reciprocal for exponents 0.5, -0.5 and -1, products for 2, 3 and -2, then ``cpow``."""
    if b == 0.5:
        return sqrt_complex(a)
    one = complex(1.0, 0.0)
    if b == -0.5:
        return c10_div(one, sqrt_complex(a))
    if b == -1:
        return c10_div(one, a)
    if b == 2:
        return _cmul(a, a)
    if b == 3:
        return _cmul(_cmul(a, a), a)
    if b == -2:
        return c10_div(one, _cmul(a, a))
    return pow_complex(a, b, alpha)
POW_COMPLEX_SCALAR = BINARY.register(pow_complex_scalar)


# ---- more binary operators (BinaryOpsKernel.cpp)
@register_jitable
def atan2(a, b, alpha):
    return math.atan2(a, b)
ATAN2 = BINARY.register(atan2)


@register_jitable
def copysign(a, b, alpha):
    return math.copysign(a, b)
COPYSIGN = BINARY.register(copysign)


@register_jitable
def hypot(a, b, alpha):
    return math.hypot(a, b)
HYPOT = BINARY.register(hypot)


@register_jitable
def fmax(a, b, alpha):
    """C's ``fmax``: a NaN loses to a number (maximum propagates it)."""
    return a if b != b else (b if a != a or b > a else a)
FMAX = BINARY.register(fmax)


@register_jitable
def fmin(a, b, alpha):
    return a if b != b else (b if a != a or b < a else a)
FMIN = BINARY.register(fmin)


@register_jitable
def xlogy(x, y, alpha):
    """``xlogy_kernel``: NaN for a NaN y, 0 where x is 0 (even for y == 0), else x log y."""
    if y != y:
        return y
    return x - x if x == 0 else x * log(y)
XLOGY = BINARY.register(xlogy)


@register_jitable
def xlog1py(x, y, alpha):
    """``xlog1py_kernel``: NaN for a NaN y, 0 where x is 0 (even for y <= -1), else x log1p(y)."""
    if y != y:
        return y
    return x - x if x == 0 else x * log1p(y)
XLOG1PY = BINARY.register(xlog1py)


# Cephes' zeta (Math.h): the Euler-Maclaurin tail's coefficients, (2k)! / B_2k
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042e-16


@register_jitable
def _is_whole(v):
    """C's ``floor(v) == v``: true for the infinities, false for NaN (where Python's math.floor
    raises, and which Numba's integer floor cannot hold)."""
    if v != v:
        return False
    return not abs(v) < _INTEGRAL or math.floor(v) == v


@register_jitable
def _zeta_sum(x, q, zero):
    """The Hurwitz zeta function, the sum over k >= 0 of (k + q)^-x (``zeta`` in Math.h, from
    Cephes), with every sum, power after the first, and constant in ``zero``'s type, torch's
    acc_type: inf at x = 1 and at the poles q = 0, -1, ...; NaN for x < 1, or for q < 0 with x
    not an integer. At least nine terms are summed directly, until k + q passes 9, then the
    Euler-Maclaurin formula adds the rest. The first power is taken in x's own type, as
    ``std::pow`` of two floats."""
    one = like(zero, 1)
    if x == 1:
        return like(zero, math.inf)
    if x < 1:
        return like(zero, math.nan)
    if q <= 0:
        if _is_whole(q):
            return like(zero, math.inf)
        if not _is_whole(x):
            return like(zero, math.nan)
    machep = like(zero, _MACHEP)
    xd = like(zero, x)
    s = like(zero, math.pow(q, -x))
    a = like(zero, q)
    b = zero
    i = 0
    while i < 9 or a <= like(zero, 9):
        i += 1
        a += one
        b = like(zero, math.pow(a, -xd))
        s += b
        if -machep * s < b < machep * s:
            return s
    w = a
    s += b * w / (xd - one)
    s = contracted_fma(like(zero, -0.5), b, s)
    a = one
    k = zero
    for j in range(12):
        a *= xd + k
        b /= w
        t = a * b / like(zero, _ZETA_A[j])
        s = s + t
        if abs(t / s) < machep:
            return s
        k += one
        a *= xd + k
        b /= w
        k += one
    return s


@register_jitable
def zeta(x, q, alpha):
    """``zeta`` for float and double: the sums run in double for float32 too (CPU's acc_type)."""
    return _zeta_sum(x, q, np.float64(0))
ZETA = BINARY.register(zeta)


@register_jitable
def polygamma(x, n, alpha):
    """``calc_polygamma`` for n >= 2 (n arrives as the second operand, in x's type):
    (-1)^(n+1) n! zeta(n + 1, x), with n! as exp(lgamma(n + 1)) in x's type."""
    order = like(x, n)
    factorial = like(x, math.exp(like(x, math.lgamma(order + like(x, 1)))))
    sign = like(x, 1) if int(n) % 2 else like(x, -1)
    return sign * factorial * like(x, zeta(order + like(x, 1), x, alpha))
POLYGAMMA = BINARY.register(polygamma)


@register_jitable
def _stored_in_16_bits(v, bits):
    """A float32 rounded to the nearest 16-bit float of ``bits`` significant bits (11: float16,
    8: bfloat16), ties to even, float16's subnormals and overflow included, and back: what a
    ``static_cast`` to ``c10::Half`` or ``c10::BFloat16`` keeps."""
    if v != v or v == 0 or abs(v) == math.inf:
        return v
    nbits = int(bits)
    e = math.frexp(np.float64(v))[1]
    k = min(nbits - e, 24) if nbits == 11 else nbits - e      # float16's subnormals: multiples of 2^-24
    r = nearbyint(math.ldexp(np.float64(v), k))     # ties to even (np.rint has no CUDA lowering)
    r = math.ldexp(r, -k)
    if nbits == 11 and abs(r) > 65504.0:
        return np.float32(math.copysign(math.inf, v))
    return np.float32(r)


@register_jitable
def polygamma_16_bit(x, n, bits):
    """``calc_polygamma<Half>`` (``<BFloat16>``) as torch's CPU kernel computes it, x in float32
    and ``bits`` the 16-bit type's significant bits: n + 1 rounds to the 16-bit type, n! is
    float32 (``exp(lgamma)`` of a float), zeta sums in float32 (the 16-bit floats' acc_type) and
    rounds to the 16-bit type on return, and the product stays float32 until the loop stores it."""
    order = _stored_in_16_bits(np.float32(n) + np.float32(1), bits)
    factorial = np.float32(math.exp(np.float32(math.lgamma(order))))
    sign = np.float32(1) if int(n) % 2 else np.float32(-1)
    return sign * factorial * _stored_in_16_bits(_zeta_sum(order, x, np.float32(0)), bits)
POLYGAMMA_16_BIT = BINARY.register(polygamma_16_bit)


@register_jitable
def logaddexp(a, b, alpha):
    """``logaddexp_kernel``: max + log1p(e^-|a - b|); equal infinities are their own sum."""
    if abs(a) == math.inf and a == b:
        return a
    m = a if a != a or a > b else b
    return m + math.log1p(exp(-abs(a - b)))
LOGADDEXP = BINARY.register(logaddexp)


@register_jitable
def logaddexp2(a, b, alpha):
    """``logaddexp2_kernel``: max + log1p(2^-|a - b|) / ln 2."""
    if abs(a) == math.inf and a == b:
        return a
    m = a if a != a or a > b else b
    return m + math.log1p(exp2(-abs(a - b))) * like(m, 1.4426950408889634)
LOGADDEXP2 = BINARY.register(logaddexp2)


@register_jitable
def heaviside(x, values, alpha):
    """``heaviside_kernel``: ``values`` where x is 0, else whether x > 0."""
    return values if x == 0 else like(values, x > 0)
HEAVISIDE = BINARY.register(heaviside)


@register_jitable
def logit(x, eps, alpha):
    """``logit_kernel``: log(x / (1 - x)), x first clamped to [eps, 1 - eps] unless eps < 0."""
    if eps >= 0:
        x = eps if x < eps else (like(x, 1) - eps if x > like(x, 1) - eps else x)
    one_minus = like(x, 1) - x
    return like(x, math.inf) if one_minus == 0 else log(x / one_minus)
LOGIT = BINARY.register(logit)


@register_jitable
def logit_backward(dy, x, eps):
    """``logit_backward_kernel``'s element loop: dy / (x (1 - x)) inside [eps, 1 - eps] (0
    outside), or with eps < 0 inside [0, 1] (NaN outside); at exactly 0 or 1, dy times inf.
    (Its vector loop, which torch runs on whole vectors, skips the 0-or-1 case and reads NaN
    as outside: the two differ only at -0.0 and, with eps, at NaN.)"""
    one = like(x, 1)
    if eps < 0:
        if x < 0 or x > one:
            return like(x, math.nan)
    elif x < eps or x > one - eps:
        return like(x, 0)
    if x == 0 or x == one:
        return dy * like(x, math.inf)
    return dy / (x * (one - x))
LOGIT_BACKWARD = BINARY.register(logit_backward)


# ``polar_kernel``'s two parts, a cos b and a sin b, in the inputs' float type, each written
# into its half of the complex output (a binary loop stores in its first input's type when it
# runs in place, so it cannot store complex numbers from float inputs). Term by term: an
# infinite modulus at angle 0 has a NaN imaginary part (inf * 0), as torch's.
@register_jitable
def polar_real(a, b, alpha):
    return a * _c_cos(b)
POLAR_REAL = BINARY.register(polar_real)


@register_jitable
def polar_imag(a, b, alpha):
    return a * _c_sin(b)
POLAR_IMAG = BINARY.register(polar_imag)


# ----------------------------------------------------------------------------- ternary ops
@register_jitable
def select(cond, a, b, value):
    """``where``: a or b by the condition (the loop only moves values)."""
    return a if cond else b
WHERE = TERNARY.register(select, "WHERE")


@register_jitable
def addcmul(x, t1, t2, value):
    """``addcmul_cpu_kernel`` (``PointwiseOpsKernel.cpp``): ``self + value * t1 * t2``, which GCC
    contracts to one fma of the rounded ``value * t1`` with ``t2`` and ``self``, as ``add``'s."""
    return multiply_add(value * t1, t2, x)
ADDCMUL = TERNARY.register(addcmul)


@register_jitable
def addcdiv(x, t1, t2, value):
    """``addcdiv_cpu_kernel``: ``self + value * t1 / t2``, each step rounded (no fma: a division)."""
    return x + value * t1 / t2
ADDCDIV = TERNARY.register(addcdiv)


@register_jitable
def log_sigmoid_backward(x, buffer, grad, value):
    """``log_sigmoid_backward_cpu_kernel``, from the input and the saved b = e^-|x|: with
    s = b / (1 + b), (1 - s) grad for a negative x, s grad otherwise."""
    s = buffer / (like(buffer, 1) + buffer)
    return (like(s, 1) - s) * grad if x < 0 else s * grad
LOG_SIGMOID_BACKWARD = TERNARY.register(log_sigmoid_backward)


@register_jitable
def lerp_tensor(start, end, weight, value):
    """``lerp`` with a weight per element (``lerp_kernel_tensor_weight``): the scalar-weight
    ``lerp``'s two fmas, picked by the element's weight (``value`` is unused)."""
    diff = end - start
    return multiply_add(weight, diff, start) if abs(weight) < 0.5 else multiply_add(weight - 1, diff, end)
LERP_TENSOR = TERNARY.register(lerp_tensor)


# ----------------------------------------------------------------------------- reductions


@register_jitable
def _sum_combine(acc, x):
    return acc + x
SUM = REDUCE.register(_sum_combine, "SUM")


@register_jitable
def _prod_combine(acc, x):
    return acc * x
PROD = REDUCE.register(_prod_combine, "PROD")


@register_jitable
def _amax_combine(acc, x):
    return acc if (acc != acc or acc >= x) else x     # NaN wins, as torch's max does
AMAX = REDUCE.register(_amax_combine, "AMAX")


@register_jitable
def _amin_combine(acc, x):
    return acc if (acc != acc or acc <= x) else x
AMIN = REDUCE.register(_amin_combine, "AMIN")


# argmax and argmin keep an index beside the value: their loops ask ``arg_better`` instead of
# combining, and their entries here say which way the comparison goes.
@register_jitable
def _argmax_better(best, x):
    return x > best
ARGMAX = REDUCE.register(_argmax_better, "ARGMAX")


@register_jitable
def _argmin_better(best, x):
    return x < best
ARGMIN = REDUCE.register(_argmin_better, "ARGMIN")


def reduce_combine(op, acc, x):
    """Fold ``x`` into ``acc``. In jitted code ``op`` is a literal and resolves while typing (see
    ``_reduce_combine_jit``), so a complex sum never types max's comparisons."""
    return REDUCE[op](acc, x)


@register_jitable
def arg_better(op, best, x):
    """Does ``x`` replace the current best for argmax/argmin? The first NaN wins and stays."""
    if best != best:
        return False
    if x != x:
        return True
    return x > best if op == ARGMAX else x < best


# ----------------------------------------------------------------------------- dispatch by op number
def unary_op(op, x):
    return UNARY[op](x)


def binary_op(op, a, b, alpha):
    return BINARY[op](a, b, alpha)


def ternary_op(op, a, b, c, value):
    return TERNARY[op](a, b, c, value)


def _literal_op(op):
    if not isinstance(op, (types.IntegerLiteral, types.Literal)):
        raise TypeError("the op number must be a compile-time constant (use numba.literally)")
    return op.literal_value


@overload(unary_op, target="generic", prefer_literal=True)
def _unary_op_jit(op, x):
    fn = UNARY[_literal_op(op)]
    return lambda op, x: fn(x)


@overload(reduce_combine, target="generic", prefer_literal=True)
def _reduce_combine_jit(op, acc, x):
    fn = REDUCE[_literal_op(op)]
    return lambda op, acc, x: fn(acc, x)


@overload(binary_op, target="generic", prefer_literal=True)
def _binary_op_jit(op, a, b, alpha):
    fn = BINARY[_literal_op(op)]
    return lambda op, a, b, alpha: fn(a, b, alpha)


@overload(ternary_op, target="generic", prefer_literal=True)
def _ternary_op_jit(op, a, b, c, value):
    fn = TERNARY[_literal_op(op)]
    return lambda op, a, b, c, value: fn(a, b, c, value)
