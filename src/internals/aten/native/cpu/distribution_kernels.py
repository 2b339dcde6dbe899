"""From 32/64-bit words to distributions, as torch's CPU kernels compute them.

Mirrors ``aten/src/ATen/core/TransformationHelper.h`` (the transforms),
``aten/src/ATen/core/DistributionsHelper.h`` (which word width each distribution takes) and
``aten/src/ATen/native/cpu/DistributionTemplates.h`` (the kernels, including ``normal_fill``).

Each function takes the words a kernel drew from the generator, in draw order, and returns the
values in that order; the caller places them in TensorIterator's order. Two details decide the
last bit of a value, and both depend on which build of the kernels torch runs (the CPU
capability, ``dispatch_stub.cpu_capability``); the caller passes what its build does:

- ``fused``: torch's x86-64 avx2 and avx512 builds are compiled with FMA enabled and GCC's default
  ``-ffp-contract=fast``, so ``x * (to - from) + from`` and ``normal * std + mean`` are single fused
  multiply-adds (one rounding); aarch64 builds fuse them too. The x86-64 default build (a CPU
  without AVX2 and FMA, or ``ATEN_CPU_CAPABILITY=default``) rounds the product, then the sum.
  :func:`fma` (``scalar_ops``) is LLVM's ``llvm.fma``, exact on every machine.
- ``avx2``: ``normal_fill`` (randn of 16 or more contiguous floats) has an AVX2 specialisation of
  ``NormalFill16<float>``, which the avx512 build also runs
  (``REGISTER_NO_AVX512_DISPATCH(normal_stub)``): its ``log`` and ``sincos`` are Cephes polynomials
  in float32 (``avx_mathfun.h``), which :func:`_log_ps` and :func:`_sincos_ps` evaluate step by
  step, with the multiply-adds GCC fuses. Every other build (x86-64 default, aarch64 default and
  sve256) runs the generic ``NormalFill16``: the C library's ``logf``, ``cosf`` and ``sinf``, which
  :func:`_chunks_float_libm` calls too (Numba lowers ``math.log`` of a float32 to ``logf``).
  That equality holds where Numba's calls reach the same C library as torch's (Linux and macOS);
  with Intel's SVML installed for Numba, a loop it vectorises could take SVML's versions instead.

Checked bit for bit against torch 2.13's x86-64 wheel under ``ATEN_CPU_CAPABILITY=default``,
``avx2`` and ``avx512`` (``tests/aten/test_cpu_capability.py``); the aarch64 paths are read from
torch's source, not run.
"""
import math

import numpy as np
from numba import njit

from ....c10 import mt19937
from ..scalar_ops import fma

__all__ = ["uniform_float", "uniform_double", "normal_scalar", "normal_fill_float", "normal_fill_double",
           "exponential_double", "cauchy_double", "log_normal_double", "geometric_double", "sample_poisson",
           "bernoulli_below", "multinomial_with_replacement"]

f32 = np.float32
_MASK24 = np.uint32((1 << 24) - 1)       # float's 24-bit mantissa: uniform_real<float> keeps 24 bits
_MASK53 = np.uint64((1 << 53) - 1)       # double's 53
_INV24 = f32(1.0 / (1 << 24))
_INV53 = 1.0 / (1 << 53)


# ---------------------------------------------------------------------- uniform (uniform_real)
@njit(inline="always")
def _multiply_add(a, b, c, fused):
    """``a * b + c`` as the kernel's build computes it: one rounding if ``fused``, else two."""
    return fma(a, b, c) if fused else a * b + c


@njit(cache=True)
def uniform_float(words, low, high, fused):
    """``uniform_real<float>``: the low 24 bits of each 32-bit word, scaled into [low, high)."""
    out = np.empty(words.shape[0], np.float32)
    span = high - low
    for i in range(words.shape[0]):
        out[i] = _multiply_add(f32(words[i] & _MASK24) * _INV24, span, low, fused)
    return out


@njit(cache=True)
def uniform_double(words64, low, high, fused):
    """``uniform_real<double>``: the low 53 bits of each 64-bit value."""
    out = np.empty(words64.shape[0], np.float64)
    span = high - low
    for i in range(words64.shape[0]):
        out[i] = _multiply_add(np.float64(words64[i] & _MASK53) * _INV53, span, low, fused)
    return out


# ---------------------------------------------------------------------- normal, scalar path
@njit(cache=True)
def normal_scalar(words64, n, cached, has_cached, mean, std, fused):
    """``normal_distribution<double>`` for ``n`` values (Box-Muller, two at a time).

    A draw of a pair (two 64-bit uniforms u1, u2) returns r·cos θ and keeps r·sin θ for the next
    call; a kept value is used first. Returns the values and the value left kept (NaN if none).
    """
    out = np.empty(n, np.float64)
    w = 0
    for i in range(n):
        if has_cached:
            out[i] = _multiply_add(cached, std, mean, fused)
            has_cached = False
            continue
        u1 = np.float64(words64[w] & _MASK53) * _INV53
        u2 = np.float64(words64[w + 1] & _MASK53) * _INV53
        w += 2
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        cached, has_cached = r * math.sin(theta), True
        out[i] = _multiply_add(r * math.cos(theta), std, mean, fused)
    return out, (cached if has_cached else np.nan)


def normal_scalar_words(n, has_cached):
    """How many 64-bit words :func:`normal_scalar` consumes for ``n`` values."""
    fresh = n - 1 if has_cached and n else n
    return 2 * ((fresh + 1) // 2)


# ---------------------------------------------------------------------- normal, normal_fill path
_SQRTHF = f32(0.707106781186547524)
_LOG_P = np.array([7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                   -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1], np.float32)
_LOG_Q1, _LOG_Q2 = f32(-2.12194440e-4), f32(0.693359375)
_DP = np.array([-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8], np.float32)
_COSCOF = np.array([2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002], np.float32)
_SINCOF = np.array([-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1], np.float32)
_FOPI = f32(1.27323954473516)    # 4 / pi
_TWO_PI = f32(2.0 * math.pi)
_HALF, _ONE = f32(0.5), f32(1.0)


@njit(cache=True)
def _log_ps(x, box, bits):
    """``log256_ps`` for one positive float: split off the exponent, then a degree-9 polynomial.
    (``box`` is a 1-float scratch array and ``bits`` its int32 view: how to read a float's bits.)"""
    box[0] = x
    b = bits[0]
    e = f32((b >> 23) - 0x7F) + _ONE
    bits[0] = (b & np.int32(~0x7F800000)) | np.int32(0x3F000000)     # the mantissa, scaled into [0.5, 1)
    m = box[0]
    if m < _SQRTHF:
        e = e - _ONE
        m = (m - _ONE) + m
    else:
        m = m - _ONE
    z = m * m
    y = _LOG_P[0]
    for k in range(1, 9):
        y = fma(y, m, _LOG_P[k])
    y = fma(y * m, z, e * _LOG_Q1)
    y = fma(-z, _HALF, y)
    return fma(e, _LOG_Q2, m + y)


@njit(cache=True)
def _sincos_ps(x):
    """``sincos256_ps`` for one float: reduce by pi/4 in three parts, two polynomials, signs."""
    negative = x < 0
    x = abs(x)
    j = np.int32(x * _FOPI)
    j = (j + 1) & np.int32(~1)
    y = f32(j)
    for k in range(3):
        x = fma(y, _DP[k], x)
    z = x * x
    c = fma(fma(_COSCOF[0], z, _COSCOF[1]), z, _COSCOF[2]) * z
    c = fma(c, z, -(z * _HALF)) + _ONE
    s = fma(fma(_SINCOF[0], z, _SINCOF[1]), z, _SINCOF[2]) * z
    s = fma(s, x, x)
    if (j & 2) != 0:
        s, c = c, s
    if negative != ((j & 4) != 0):
        s = -s
    if ((j - 2) & 4) == 0:
        c = -c
    return s, c


@njit(cache=True)
def _chunks_float(d, mean, std):
    """``NormalFill16<float>`` (AVX2) on each whole chunk of 16: uniforms j and j + 8 become two
    normals, with the Cephes log and sincos."""
    box = np.zeros(1, np.float32)
    bits = box.view(np.int32)
    for i in range(0, d.shape[0] - 15, 16):
        for j in range(i, i + 8):
            radius = np.sqrt(f32(-2.0) * _log_ps(_ONE - d[j], box, bits))
            s, c = _sincos_ps(_TWO_PI * d[j + 8])
            d[j] = fma(radius * c, std, mean)
            d[j + 8] = fma(radius * s, std, mean)


@njit(cache=True)
def _chunks_float_libm(d, mean, std):
    """The generic ``NormalFill16<float>`` on each whole chunk of 16: the C library's float log,
    cos and sin. The angle is 2·pi in double times the uniform, rounded to float once (the C++
    multiplies ``2.0f * c10::pi<double>``, a double, by the float uniform)."""
    for i in range(0, d.shape[0] - 15, 16):
        for j in range(i, i + 8):
            radius = np.sqrt(f32(-2.0) * math.log(_ONE - d[j]))
            theta = f32(2.0 * math.pi * np.float64(d[j + 8]))
            d[j] = fma(radius * math.cos(theta), std, mean)
            d[j + 8] = fma(radius * math.sin(theta), std, mean)


@njit(cache=True)
def _chunks_double(d, mean, std):
    """``NormalFill16<double>`` on each whole chunk of 16, with libm's log, cos and sin."""
    for i in range(0, d.shape[0] - 15, 16):
        for j in range(i, i + 8):
            radius = math.sqrt(-2.0 * math.log(1.0 - d[j]))
            theta = 2.0 * math.pi * d[j + 8]
            d[j] = fma(radius * math.cos(theta), std, mean)
            d[j + 8] = fma(radius * math.sin(theta), std, mean)


def _normal_fill(d, tail, mean, std, chunks):
    """``normal_fill``: chunks of 16; a ragged end redoes the last 16 places from 16 new uniforms."""
    chunks(d, mean, std)
    if d.shape[0] % 16:
        d[-16:] = tail
        chunks(d[-16:], mean, std)
    return d


def normal_fill_float(words, n, mean, std, all_uniforms, avx2):
    """For float32, float16 and bfloat16 (computed in float). ``all_uniforms``: float32 first
    draws a uniform for every place, then 16 more for a ragged end; the 16-bit types draw only
    each full chunk's 16, then the ragged end's 16 (see :func:`normal_fill_words`). ``avx2``:
    the AVX2 chunks (Cephes polynomials), else the generic ones (C library)."""
    u = uniform_float(words, f32(0.0), f32(1.0), True)       # x * 1 + 0: fused or not, the same
    chunks = _chunks_float if avx2 else _chunks_float_libm
    return _normal_fill(_places(u, n, all_uniforms), u[u.shape[0] - 16:], f32(mean), f32(std), chunks)


def normal_fill_double(words64, n, mean, std):
    u = uniform_double(words64, 0.0, 1.0, True)
    return _normal_fill(_places(u, n, True), u[u.shape[0] - 16:], float(mean), float(std), _chunks_double)


def _places(u, n, all_uniforms):
    """The ``n`` places before the ragged end is redone (what is left there is overwritten)."""
    if all_uniforms:
        return u[:n].copy()
    d = np.zeros(n, u.dtype)
    d[:n - n % 16] = u[:n - n % 16]
    return d


def normal_fill_words(n, all_uniforms):
    """How many uniforms ``normal_fill`` draws for ``n`` >= 16 values."""
    return (n if all_uniforms else n - n % 16) + (16 if n % 16 else 0)


# ---------------------------------------------------------------------- exponential, bernoulli, multinomial
@njit(cache=True)
def exponential_double(words64, lambd):
    """``exponential_distribution<double>``: -1/lambda * log1p(-u)."""
    out = np.empty(words64.shape[0], np.float64)
    scale = -1.0 / lambd
    for i in range(words64.shape[0]):
        out[i] = scale * math.log1p(-(np.float64(words64[i] & _MASK53) * _INV53))
    return out


@njit(cache=True)
def cauchy_double(words64, median, sigma, fused):
    """``cauchy_distribution<double>``: median + sigma * tan(pi * (u - 1/2)), the multiply-add
    fused as the kernel's build fuses it."""
    out = np.empty(words64.shape[0], np.float64)
    for i in range(words64.shape[0]):
        u = np.float64(words64[i] & _MASK53) * _INV53
        out[i] = _multiply_add(sigma, math.tan(math.pi * (u - 0.5)), median, fused)
    return out


@njit(cache=True)
def log_normal_double(normals):
    """``lognormal_distribution<double>``: exp of a ``normal_distribution<double>`` value."""
    out = np.empty(normals.shape[0], np.float64)
    for i in range(normals.shape[0]):
        out[i] = math.exp(normals[i])
    return out


@njit(cache=True, error_model="numpy")
def geometric_double(words64, p):
    """``geometric_distribution<double>``: ceil(log(u) / log1p(-p)), the number of trials up to
    the first success."""
    out = np.empty(words64.shape[0], np.float64)
    log_q = math.log1p(-p)
    for i in range(words64.shape[0]):
        u = np.float64(words64[i] & _MASK53) * _INV53
        out[i] = np.ceil(math.log(u) / log_q)      # u = 0 gives inf, as C's ceil
    return out


# ---------------------------------------------------------------------- poisson (Distributions.cpp)
_INT64_MIN = np.int64(-(1 << 63))


@njit(inline="always")
def _standard_uniform(words, cursor, pair):
    """One ``uniform_real_distribution<double>(0, 1)`` draw: a 64-bit value (two words, the first
    the high half), its low 53 bits scaled into [0, 1)."""
    mt19937.draw32(words, cursor, pair)
    bits = (np.uint64(pair[0]) << np.uint64(32)) | np.uint64(pair[1])
    return np.float64(bits & _MASK53) * _INV53


@njit(inline="always")
def _to_int64(x):
    """C's ``(int64_t)x`` as x86-64's cvttsd2si computes it: truncation, and the integer
    indefinite value (INT64_MIN) for NaN or a value out of range (lambda = inf)."""
    if not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return _INT64_MIN
    return np.int64(x)


@njit(inline="always", error_model="numpy")
def _poisson_one(lam, words, cursor, pair):
    """``sample_poisson``: Hoermann's transformed rejection (1993) for lambda >= 10, Knuth's
    product of uniforms below; each draw in the engine's order."""
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = _standard_uniform(words, cursor, pair) - 0.5
            V = _standard_uniform(words, cursor, pair)
            us = 0.5 - abs(U)
            k = _to_int64(np.floor((2 * a / us + b) * U + lam + 0.43))
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(np.float64(k) + 1)):
                return k
    if lam == 0:
        return np.int64(0)
    enlam = math.exp(-lam)
    x = np.int64(0)
    prod = 1.0
    while True:
        prod *= _standard_uniform(words, cursor, pair)
        if prod > enlam:
            x += 1
        else:
            return x


# error_model="numpy": a draw of exactly 1/2 divides by zero (us = 0) and gives inf, as in C
@njit(cache=True, error_model="numpy")
def sample_poisson(lambdas, words, cursor):
    """A Poisson sample per rate, drawing from the engine state (``words``, ``cursor``) as it goes:
    how many words a sample takes depends on the draws. Stops at the first rate that is not
    >= 0 (NaN included), whose index it returns (-1 when all were valid), as torch's check
    inside the kernel stops it after the draws of the rates before."""
    out = np.zeros(lambdas.shape[0], np.int64)
    pair = np.empty(2, np.uint32)
    for i in range(lambdas.shape[0]):
        if not lambdas[i] >= 0:
            return out, i
        out[i] = _poisson_one(lambdas[i], words, cursor, pair)
    return out, -1


def bernoulli_below(uniforms, p):
    """``transformation::bernoulli``: 1 where the uniform is below p (p a scalar or an array)."""
    return uniforms < p


@njit(cache=True)
def multinomial_with_replacement(cum_dist, uniforms, out):
    """Per row, each uniform's slot in the row's normalised cumulative distribution (binary search
    for the first bucket >= u, the last bucket forced to 1), as ``multinomial_with_replacement_apply``."""
    n_categories = cum_dist.shape[1]
    for row in range(cum_dist.shape[0]):
        cum_dist[row, n_categories - 1] = 1
        for k in range(out.shape[1]):
            u = uniforms[row, k]
            left, right = 0, n_categories
            while right - left > 0:
                mid = left + (right - left) // 2
                if cum_dist[row, mid] < u:
                    left = mid + 1
                else:
                    right = mid
            out[row, k] = left


# ---------------------------------------------------------------------- randperm
@njit(cache=True)
def shuffle_small(words, n):
    """``randperm_cpu`` for n below 2**32 / 20: 0..n-1, then position i swaps with i + word % (n - i)."""
    perm = np.arange(n)
    for i in range(n - 1):
        z = np.int64(words[i] % np.uint32(n - i))
        perm[i], perm[i + z] = perm[i + z], perm[i]
    return perm


@njit(cache=True)
def shuffle_inside_out(words64, n):
    """``randperm_cpu`` for larger n: the "inside-out" Fisher-Yates with 64-bit words."""
    perm = np.empty(n, np.int64)
    for i in range(n):
        z = np.int64(words64[i] % np.uint64(i + 1))
        perm[i] = i             # so that z == i keeps i
        perm[i] = perm[z]
        perm[z] = i
    return perm
