"""The complex kernels of rsqrt, log1p, expm1, sinh, cosh, asin, acos, atan, asinh, acosh, atanh,
log2, log10 and exp2 against torch's CPU (their gradients: tests/autograd/test_complex_autograd.py),
then those of sin, cos, tan, tanh and sigmoid (at the end of this file). Tests the complex loops of
``internals.aten.native.unary_ops`` (aten/src/ATen/native/UnaryOps.cpp).

torch's loops call glibc's casin and kin (``std::asin`` of a ``std::complex``) or c10's own
formulas (log1p, expm1); internals computes finite values with Numba's cmath (CPython's
algorithms), so values are compared within COMPLEX_ULPS of the larger part, never bit for bit.
The special values (infinite and NaN parts, signed zeros) are glibc's constants, compared with
their signs, except where torch's own answer follows the CPU: complex128 acos on AVX2/AVX-512 is
pi/2 - asin(z) (its signed zeros and its values near 1 differ from glibc's cacos), and log2's
vector path divides each part by ln 2 where its scalar path divides by a complex ln 2 (the
partner of an infinite part: NaN in one, a number in the other).
"""
import math

import pytest
import torch
from helpers import (
    COMPLEX,
    COMPLEX_ULPS,
    assert_same,
    assert_same_error,
    noncontiguous,
    opinfo_samples,
    rotated_cases,
)
from torch.testing._internal.common_methods_invocations import op_db

import internals

NAMES = ("rsqrt", "log1p", "expm1", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
         "atanh", "log2", "log10", "exp2")
DTYPES = (torch.complex64, torch.complex128)
# each op on one of the two in ``make test`` (helpers.ROTATED), on both in ``make test-slow``
CASES = [case for name in NAMES for case in rotated_cases(name, DTYPES)]
OPINFOS = {op.name: op for op in op_db if op.name in NAMES and not op.variant_test_name}


def ours_of(x):
    return internals.from_torch(x)


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_opinfo_samples(name, dtype):
    """OpInfo's samples of the op at a complex dtype, as given and non-contiguous, as function,
    method and out= (complex tensors are not in test_ops' dtype table, so they run here)."""
    samples = list(opinfo_samples(OPINFOS[name], dtype))
    assert samples
    for sample in samples:
        for x in (sample.input, noncontiguous(sample.input)):
            theirs = getattr(torch, name)(x)
            assert_same(getattr(internals, name)(ours_of(x)), theirs, ulps=COMPLEX_ULPS)
            assert_same(getattr(ours_of(x), name)(), theirs, ulps=COMPLEX_ULPS)
            out = internals.empty(0, dtype=internals.from_torch(theirs).dtype)
            assert getattr(internals, name)(ours_of(x), out=out) is out
            assert_same(out, theirs, ulps=COMPLEX_ULPS)


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_values_out_of_place_and_in_place(name, dtype):
    """A thousand random values up to about |9| in each part, zeros of both signs, the units."""
    gen = torch.Generator().manual_seed(3)
    z = torch.complex(torch.randn(1000, generator=gen, dtype=torch.float64) * 3,
                      torch.randn(1000, generator=gen, dtype=torch.float64) * 3).to(dtype)
    z[:8] = torch.tensor([0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, -1 + 0j, 2j, -1j, -1.5 - 0.5j])
    if name == "log2":      # log2(0): -inf with a NaN or a zero beside it, by CPU path
        z = z[3:]
    theirs = getattr(torch, name)(z)
    assert_same(getattr(internals, name)(ours_of(z)), theirs, ulps=COMPLEX_ULPS)
    ours = ours_of(z.clone())
    assert getattr(ours, name + "_")() is ours
    assert_same(ours, theirs, ulps=COMPLEX_ULPS)


def _assert_same_specials(ours, theirs):
    """Within COMPLEX_ULPS (NaN and infinities at the same places), and each zero part of
    torch's with its sign."""
    assert_same(ours, theirs, ulps=COMPLEX_ULPS)
    got, expected = torch.view_as_real(ours.to_torch()), torch.view_as_real(theirs)
    zeros = expected == 0
    assert torch.equal(got[zeros] == 0, torch.ones_like(got[zeros], dtype=torch.bool))
    assert torch.equal(got[zeros].signbit(), expected[zeros].signbit()), (
        f"signs of zeros differ: {ours.to_torch()[zeros.any(-1)]} != {theirs[zeros.any(-1)]}")


PARTS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.0, math.inf, -math.inf, math.nan, 1e30, -1e30, 1e-30, 100.0)
NOT_PORTABLE = {("acos", torch.complex128), ("log2", torch.complex64), ("log2", torch.complex128)}


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_special_values(name, dtype):
    """Every pair of zeros of both signs, units, infinities, NaN, huge and tiny parts: C99
    Annex G's values as glibc gives them (and c10's formulas' for log1p, expm1, rsqrt, exp2)."""
    if (name, dtype) in NOT_PORTABLE:
        pytest.skip("torch's answer follows its CPU path here (see the module's docstring)")
    z = torch.tensor([complex(a, b) for a in PARTS for b in PARTS], dtype=dtype)
    _assert_same_specials(getattr(internals, name)(ours_of(z)), getattr(torch, name)(z))


@pytest.mark.parametrize("name", ["log2", "acos"])
def test_finite_values_where_the_special_ones_follow_the_cpu(name):
    """log2 and acos of finite, nonzero values away from acos's cancellation at 1 agree on every
    path, within COMPLEX_ULPS of the larger part (acos(1e30 + 1j)'s real part: pi/2 - asin(z) is
    0, glibc's cacos 1e-30)."""
    z = torch.tensor([0.5 + 1j, -2 - 3j, 1e30 + 1j, 1e-30 - 2j, 100j, -7 + 0j], dtype=torch.complex128)
    assert_same(getattr(internals, name)(ours_of(z)), getattr(torch, name)(z), ulps=COMPLEX_ULPS)


def test_on_the_cuda_simulator():
    """The same scalar functions in the CUDA loops (plain Python under the simulator: the domain
    errors and overflows Python's cmath and math raise are guarded)."""
    z = torch.tensor([0.5 + 1j, -2 - 0.25j, 0j, 1 + 0j, -1 + 0j, complex(800, 0.5), complex(math.inf, 1)],
                     dtype=torch.complex128)
    for name in NAMES:
        x = z[[0, 1, 3, 4, 5]] if name == "log2" else z
        ours = getattr(internals, name)(ours_of(x).to("cuda")).to("cpu")
        if name not in ("acos", "log2"):
            _assert_same_specials(ours, getattr(torch, name)(x))
        else:
            assert_same(ours, getattr(torch, name)(x), ulps=COMPLEX_ULPS)


@pytest.mark.parametrize("name", ["erf", "erfinv", "lgamma", "digamma"])
def test_ops_torch_has_no_complex_kernel_for_name_its_kernel(name):
    ours, theirs = assert_same_error(lambda: getattr(internals, name)(internals.tensor([1j])),
                                     lambda: getattr(torch, name)(torch.tensor([1j])))
    assert str(ours) == str(theirs)


# =============================================================================================
# sin, cos, tan, tanh, sigmoid of complex tensors
# =============================================================================================

# sin and cos agree with torch's (glibc's csin, ccos) bit for bit; tan and tanh (cmath's against
# glibc's ctan, ctanh) and sigmoid (whose vectorised reciprocal torch applies to full vectors
# only) within a few ulps (relative to |value|).
COMPLEX_TOL = {"sin": (0, 0), "cos": (0, 0)}
COMPLEX_DEFAULT_TOL = {torch.complex128: (1e-15, 0), torch.complex64: (6e-7, 0)}
COMPLEX_UNARY = ("sin", "cos", "tan", "tanh", "sigmoid")


def _complex_tol(name, dtype):
    return COMPLEX_TOL.get(name, COMPLEX_DEFAULT_TOL[dtype])


# each op on complex64 or complex128 in ``make test`` (helpers.ROTATED), on both in ``make test-slow``
COMPLEX_UNARY_CASES = [case for name in COMPLEX_UNARY for case in rotated_cases(name, COMPLEX)]


def _check_complex(ours, theirs, name):
    o = ours.to_torch()
    assert (o.dtype, o.shape, o.stride(), o.storage_offset()) == (
        theirs.dtype, theirs.shape, theirs.stride(), theirs.storage_offset())
    rtol, atol = _complex_tol(name, theirs.dtype)
    torch.testing.assert_close(o, theirs, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize(("name", "dtype"), COMPLEX_UNARY_CASES)
def test_complex_unary_opinfo_samples(name, dtype):
    """OpInfo's samples of the op at a complex dtype, as given and transposed (complex tensors
    are not in test_ops' dtype table, so they are converted here)."""
    (op,) = [op for op in op_db if op.name == name and not op.variant_test_name]
    torch.manual_seed(0)
    samples = list(op.sample_inputs_func(op, "cpu", dtype, False))
    assert samples
    for sample in samples:
        for x in (sample.input, sample.input.mT if sample.input.dim() >= 2 else sample.input):
            _check_complex(getattr(internals, name)(internals.from_torch(x)), getattr(torch, name)(x), name)
            _check_complex(getattr(internals.from_torch(x), name)(), getattr(x, name)(), name)


@pytest.mark.parametrize(("name", "dtype"), COMPLEX_UNARY_CASES)
def test_complex_unary_values(name, dtype):
    """Zeros of both signs, purely real and purely imaginary values, and a thousand random ones
    up to |9| in each part, out of place and in place."""
    gen = torch.Generator().manual_seed(3)
    z = torch.complex(torch.randn(1000, generator=gen, dtype=torch.float64) * 3,
                      torch.randn(1000, generator=gen, dtype=torch.float64) * 3).to(dtype)
    z[:6] = torch.tensor([0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, 2j, -1.5 - 0.5j])
    _check_complex(getattr(internals, name)(internals.from_torch(z)), getattr(torch, name)(z), name)
    ours = internals.from_torch(z.clone())
    assert getattr(ours, name + "_")() is ours
    _check_complex(ours, getattr(torch, name)(z), name)


def test_complex_unary_on_the_cuda_simulator():
    z = torch.tensor([0.5 + 1j, -2 - 0.25j, 0j], dtype=torch.complex128)
    for name in COMPLEX_UNARY:
        ours = getattr(internals, name)(internals.from_torch(z).to("cuda")).to("cpu")
        _check_complex(ours, getattr(torch, name)(z), name)
