"""The per-element math of every elementwise op, shared by the CPU and CUDA loops.

ATen hands each loop a small lambda (``cpu_kernel(iter, [](a, b) { return a + b; })`` in
``aten/src/ATen/native/cpu/BinaryOpsKernel.cpp``). Numba cannot cache a loop that takes a
function argument, so here a loop takes an op *number*: ``unary_op(op, x)`` and
``binary_op(op, a, b, alpha)`` index a table of small functions. In jitted code the op number is
a compile-time literal and the ``@overload`` below resolves it to the table's function while
typing, so each (op, dtype) pair compiles to its own straight-line loop. Under the CUDA
simulator these are plain Python calls into the same table.
"""
import math

from numba import types
from numba.extending import overload, register_jitable

# ----------------------------------------------------------------------------- unary ops
@register_jitable
def neg(x):
    return -x


@register_jitable
def absolute(x):
    return abs(x)


@register_jitable
def exp(x):
    # The guard keeps Python (the simulator) from raising OverflowError; written so that NaN
    # fails it and reaches math.exp, which returns NaN (exp(nan) is nan, sigmoid(nan) too).
    return math.inf if x >= 709.0 else math.exp(x)


@register_jitable
def log(x):
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


@register_jitable
def sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


@register_jitable
def relu(x):
    return 0 if x < 0 else x


@register_jitable
def sigmoid(x):
    return 1 / (1 + exp(-x))


@register_jitable
def tanh(x):
    return math.tanh(x)


@register_jitable
def logical_not(x):
    return not x


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


@register_jitable
def float_bits_to_bf16(bits):
    """float32 bits -> bfloat16 bits: keep the top half, rounding to nearest even."""
    bits = int(bits)                    # widen: see _widening below
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return 0x7FC0
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


@register_jitable
def bf16_bits_to_float(h):
    return int(h) << 16                 # widen: see _widening below


# _widening: the bit patterns arrive as uint16/uint32. Numba computes with them in 64 bits, but
# under the CUDA simulator they are NumPy scalars, which keep their width: ``uint16 << 16`` would
# be 0 and ``uint32 - 112`` would wrap around. ``int()`` makes both compute as Numba does.


@register_jitable
def identity(x):
    return x        # a CPU copy: the loop's store converts to the output's dtype, as C does


UNARY = (neg, absolute, exp, log, sqrt, relu, sigmoid, tanh, logical_not,
         float_bits_to_half, half_bits_to_float, float_bits_to_bf16, bf16_bits_to_float, identity)
(NEG, ABS, EXP, LOG, SQRT, RELU, SIGMOID, TANH, LOGICAL_NOT,
 FLOAT_BITS_TO_HALF, HALF_BITS_TO_FLOAT, FLOAT_BITS_TO_BF16, BF16_BITS_TO_FLOAT, IDENTITY) = range(len(UNARY))


# ----------------------------------------------------------------------------- binary ops
@register_jitable
def add(a, b, alpha):
    return a + alpha * b


@register_jitable
def sub(a, b, alpha):
    return a - alpha * b


@register_jitable
def mul(a, b, alpha):
    return a * b


@register_jitable
def div(a, b, alpha):
    return a / b


@register_jitable
def power(a, b, alpha):
    return a ** b


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


@register_jitable
def maximum(a, b, alpha):
    return a if (a != a or a > b) else b    # NaN propagates


@register_jitable
def minimum(a, b, alpha):
    return a if (a != a or a < b) else b


@register_jitable
def eq(a, b, alpha):
    return a == b


@register_jitable
def ne(a, b, alpha):
    return a != b


@register_jitable
def lt(a, b, alpha):
    return a < b


@register_jitable
def le(a, b, alpha):
    return a <= b


@register_jitable
def gt(a, b, alpha):
    return a > b


@register_jitable
def ge(a, b, alpha):
    return a >= b


BINARY = (add, sub, mul, div, power, int_pow, maximum, minimum, eq, ne, lt, le, gt, ge)
ADD, SUB, MUL, DIV, POW, INT_POW, MAXIMUM, MINIMUM, EQ, NE, LT, LE, GT, GE = range(len(BINARY))
COMPARISONS = (EQ, NE, LT, LE, GT, GE)
CHECKED = (SUB, POW)       # binary ops with checks of their own, besides a float alpha's

# ----------------------------------------------------------------------------- reductions
SUM, PROD, AMAX, AMIN, ARGMAX, ARGMIN = range(6)


@register_jitable
def reduce_combine(op, acc, x):
    """Fold ``x`` into ``acc``; max and min let NaN win, as torch's do."""
    if op == SUM:
        return acc + x
    elif op == PROD:
        return acc * x
    elif op == AMAX:
        return acc if (acc != acc or acc >= x) else x
    return acc if (acc != acc or acc <= x) else x


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


def _literal_op(op):
    if not isinstance(op, (types.IntegerLiteral, types.Literal)):
        raise TypeError("the op number must be a compile-time constant (use numba.literally)")
    return op.literal_value


@overload(unary_op, target="generic", prefer_literal=True)
def _unary_op_jit(op, x):
    fn = UNARY[_literal_op(op)]
    return lambda op, x: fn(x)


@overload(binary_op, target="generic", prefer_literal=True)
def _binary_op_jit(op, a, b, alpha):
    fn = BINARY[_literal_op(op)]
    return lambda op, a, b, alpha: fn(a, b, alpha)
