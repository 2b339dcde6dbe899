"""Complex tensors: complex64 and complex128 against torch.

The dtypes and their promotion, ``tensor()``'s inference, printing, the elementwise math that
has complex kernels here (add, sub, mul, div, neg, abs, angle, exp, log, sqrt, conj_physical),
the reductions sum/mean/prod, comparisons, the views ``real``/``imag``/``view_as_real``/
``view_as_complex``, ``torch.complex``, conversions to Python and NumPy, and torch's errors;
complex ``pow`` in every overload and complex math at infinite and NaN inputs (at the end).

Where internals differs on purpose, a test says so: its complex32 tensors have no arithmetic
(tests/c10/test_complex32.py). Complex autograd is tested in
``tests/autograd/test_complex_autograd.py``. The lazy conjugate view (``conj()``, the conjugate bit) is tested in
``test_conjugate_view.py``.
"""
import contextlib
import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from helpers import (
    DTYPE_PAIRS,
    LIBM_ULPS,
    assert_same,
    error_text,
    ours_and_torchs,
    same,
)
from hypothesis import given
from hypothesis import strategies as hst

import internals

COMPLEX_PAIRS = [(internals.complex64, torch.complex64), (internals.complex128, torch.complex128)]
ALL_PAIRS = DTYPE_PAIRS + COMPLEX_PAIRS
TO_INTERNALS = {theirs: ours for ours, theirs in ALL_PAIRS}
TORCH_DTYPES = [theirs for _, theirs in ALL_PAIRS]
NOT_HALF = [d for d in TORCH_DTYPES if d is not torch.float16]     # a float16 tensor + 1j: complex32
EXACT = dict(rtol=0, atol=0)
CLOSE = dict(rtol=2e-6, atol=1e-6)    # transcendental functions: a libm of another rounding


def both(data, dtype=None):
    """``tensor(data)`` in torch and internals."""
    theirs = torch.tensor(data, dtype=dtype)
    return internals.tensor(data, dtype=None if dtype is None else TO_INTERNALS[dtype]), theirs


@contextlib.contextmanager
def default_dtype(dtype):
    torch.set_default_dtype(dtype)
    internals.set_default_dtype(TO_INTERNALS[dtype])
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)
        internals.set_default_dtype(internals.float32)


# ---------------------------------------------------------------------------------- dtypes
def test_dtype_names_and_properties():
    for name in ("complex64", "cfloat", "complex128", "cdouble"):
        ours, theirs = getattr(internals, name), getattr(torch, name)
        assert ours.name == str(theirs).split(".")[1]
        assert (ours.is_complex, ours.is_floating_point, ours.itemsize) == \
            (theirs.is_complex, theirs.is_floating_point, theirs.itemsize)
        assert TO_INTERNALS[theirs.to_real()] is ours.to_real()
    for ours, theirs in ALL_PAIRS:
        assert ours.is_complex == theirs.is_complex
        if theirs.is_floating_point and theirs is not torch.float16:
            assert TO_INTERNALS[theirs.to_complex()] is ours.to_complex()
    t, tt = both([1j])
    assert (t.is_complex(), t.is_floating_point(), t.element_size()) == \
        (tt.is_complex(), tt.is_floating_point(), tt.element_size())


@pytest.mark.parametrize("a, b", [pytest.param(a, b, id=f"{a}-{b}")
                                  for a, b in itertools.product(TORCH_DTYPES, TORCH_DTYPES)])
def test_promote_types_and_can_cast(a, b):
    assert internals.promote_types(TO_INTERNALS[a], TO_INTERNALS[b]) is TO_INTERNALS[torch.promote_types(a, b)]
    assert internals.can_cast(TO_INTERNALS[a], TO_INTERNALS[b]) == torch.can_cast(a, b)


def test_a_float16_tensor_with_a_python_complex_is_complex32():
    """A float16 tensor with a Python complex is complex32 in torch, and in internals' type
    promotion and sum too (tests/c10/test_complex32.py has the rest of complex32)."""
    assert torch.result_type(torch.ones(2, dtype=torch.float16), 1j) is torch.complex32
    assert internals.result_type(internals.ones(2, dtype=internals.float16), 1j) is internals.complex32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # complex32's "experimental" warning
        theirs = torch.tensor([1.5, -2.0], dtype=torch.float16) + 1j
        ours = internals.tensor([1.5, -2.0], dtype=internals.float16) + 1j
    assert ours.dtype is internals.complex32 and theirs.dtype is torch.complex32
    assert_same(ours.to(internals.complex64), theirs.to(torch.complex64), rtol=0, atol=0)


def _operand(kind, dtype, value):
    """(torch, internals) operands of a priority group: a (2,) tensor, a 0-dim one, a Python number."""
    if kind == "scalar":
        return value, value
    t = torch.tensor([1, 0] if kind == "dim" else 1).to(dtype)
    return t, internals.from_torch(t)


@given(kinds=hst.tuples(*[hst.sampled_from(["dim", "zero", "scalar"])] * 2),
       dtypes=hst.tuples(*[hst.sampled_from(NOT_HALF)] * 2),
       values=hst.tuples(*[hst.sampled_from([True, 3, 2.5, 1j, 1 + 2j])] * 2),
       double=hst.booleans())
def test_result_type_and_add_promote_as_torch(kinds, dtypes, values, double):
    """Three priority groups; a wrapped Python complex is the default complex dtype; a complex
    lower group keeps a float higher group's width (float64 tensor + 1j is complex128)."""
    operands = [_operand(k, d, v) for k, d, v in zip(kinds, dtypes, values)]
    if all(k == "scalar" for k in kinds):
        operands[0] = _operand("dim", dtypes[0], None)
    with default_dtype(torch.float64 if double else torch.float32):
        expected = torch.result_type(operands[0][0], operands[1][0])
        assert internals.result_type(operands[0][1], operands[1][1]) is TO_INTERNALS[expected]
        if expected is not torch.bool:       # bool + bool is an add of its own; add checks it elsewhere
            theirs = torch.add(operands[0][0], operands[1][0]) if torch.is_tensor(operands[0][0]) else None
            if theirs is not None:
                assert_same(internals.add(operands[0][1], operands[1][1]), theirs, **EXACT)


# ---------------------------------------------------------------------------------- tensor()
INFERRED = [[1 + 2j], 1j, [1, 2.5, 3j], [[1j, 2], [True, 4.5]], [np.complex64(1 + 1j)], np.array([1j, 2]),
            [np.complex128(2j), 1.0], [1e39 + 0j], [1e300j, 2], [1j, 2**64], [-0.0 - 0.0j, 0.0 - 0.0j],
            [complex(math.nan, math.inf)]]


@pytest.mark.parametrize("data", INFERRED, ids=range(len(INFERRED)))
@pytest.mark.parametrize("double", [False, True])
def test_tensor_infers_the_default_complex_dtype(data, double):
    """complex64 under a float32 default, complex128 under float64; out-of-range parts are inf."""
    with default_dtype(torch.float64 if double else torch.float32):
        ours, theirs = both(data)
    assert_same(ours, theirs, **EXACT)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.bool, torch.float32, torch.float64,
                                   torch.int64, torch.uint8])
def test_tensor_with_a_dtype(dtype):
    """Into a complex dtype or bool, anything goes; a real dtype refuses Python complex numbers
    (TypeError, as Python's float() and int() do)."""
    for data in ([1 + 2j, 0j], [[1, 2.5], [3, 4]]):
        try:
            theirs = torch.tensor(data, dtype=dtype)
        except TypeError:
            error_text(lambda data=data: internals.tensor(data, dtype=TO_INTERNALS[dtype]),
                       lambda data=data: torch.tensor(data, dtype=dtype))
            continue
        assert_same(internals.tensor(data, dtype=TO_INTERNALS[dtype]), theirs, **EXACT)


def test_factories():
    for ours, theirs in COMPLEX_PAIRS:
        assert_same(internals.zeros(2, 3, dtype=ours), torch.zeros(2, 3, dtype=theirs), **EXACT)
        assert_same(internals.ones(2, dtype=ours), torch.ones(2, dtype=theirs), **EXACT)
        assert_same(internals.full((2,), 1 - 2j, dtype=ours), torch.full((2,), 1 - 2j, dtype=theirs), **EXACT)
        x, xt = both([[1j, 2]], theirs)
        assert_same(internals.zeros_like(x.t()), torch.zeros_like(xt.t()), **EXACT)
    assert_same(internals.full((3,), 2j), torch.full((3,), 2j), **EXACT)
    with default_dtype(torch.float64):
        assert_same(internals.full((3,), 2j), torch.full((3,), 2j), **EXACT)


@pytest.mark.parametrize("dtype, value", [(torch.float32, 1j), (torch.int32, 1j), (torch.complex64, 1e39),
                                          (torch.complex64, 1e39j), (torch.complex128, 1e39)])
def test_fill_overflow_errors(dtype, value):
    """A value a dtype cannot hold is an error (``c10::checked_convert``): a nonzero imaginary
    part for a real dtype, a part out of the component type's range for a complex one."""
    def run(lib, d):
        return lib.zeros(2, dtype=d).fill_(value)
    try:
        theirs = run(torch, dtype)
    except RuntimeError:
        return error_text(lambda: run(internals, TO_INTERNALS[dtype]), lambda: run(torch, dtype))
    assert_same(run(internals, TO_INTERNALS[dtype]), theirs, **EXACT)


def test_fill_with_a_complex_value_of_zero_imaginary_part():
    for dtype in (torch.float32, torch.int32, torch.bool):
        ours = internals.zeros(2, dtype=TO_INTERNALS[dtype]).fill_(3 + 0j)
        assert_same(ours, torch.zeros(2, dtype=dtype).fill_(3 + 0j), **EXACT)
    assert_same(internals.zeros(2, dtype=internals.bool).fill_(1j), torch.zeros(2, dtype=torch.bool).fill_(1j))


# ---------------------------------------------------------------------------------- printing
PRINTED = ["[1+2j, 3-4j]", "[1j]", "1j", "-2.5+0j", "[1.5e-5+1j, 1e4]", "[1.5+1e10j, 1e4]",
           "[float('nan')+1j, float('inf')]", "[-0.0-0.0j]", "[0.0-0.0j]", "[[1+2j, 3.25-4j],[2,1j]]",
           "[1e-3+1e-3j, 1e3]", "[0.1+0.2j, 0.3]", "[123456.789+1j]", "[complex(float('nan'), float('nan'))]",
           "[complex(float('inf'), float('-inf'))]", "[1e9+0j]", "[1e8+0j, 1]", "[[[1+1j,2],[3,4]],[[5,6],[7,8j]]]",
           "[x*(1+0.5j) for x in range(40)]", "[x*(1.5+0.25j) for x in range(2000)]",
           "[[x*(1+0.5j) for x in range(50)] for _ in range(30)]", "[-1-1j, 10+100j]", "[0.5-0.5j]",
           "[100+1000j, 0.001j]", "[[x+1j for x in range(3)]]*500", "[1e-5j, 0]", "[3+0j]", "[0j, 0j]"]


@pytest.mark.parametrize("source", PRINTED)
@pytest.mark.parametrize("dtype", [None, torch.complex128])
def test_repr_matches_torch(source, dtype):
    """torch's format for complex numbers: one format for the real parts and one for the
    imaginary parts (integer, fixed or scientific, each its own width), summarized past 1000
    elements, and a ``dtype=`` suffix that wraps to its own line when it does not fit."""
    ours, theirs = both(eval(source), dtype)
    assert repr(ours) == repr(theirs).replace("torch.", "internals.")


def test_repr_of_empty_views_and_default_dtypes():
    cases = [lambda lib: lib.zeros(2, 3, dtype=lib.complex64), lambda lib: lib.zeros(0, dtype=lib.complex64),
             lambda lib: lib.zeros(0, 2, dtype=lib.complex128), lambda lib: lib.tensor([1 + 2j]).real,
             lambda lib: lib.tensor([1 + 2j, 3], dtype=lib.complex128).imag,
             lambda lib: lib.tensor([[1 + 2j, 3], [4j, 5]]).t()]
    for make in cases:
        assert repr(make(internals)) == repr(make(torch)).replace("torch.", "internals.")
    for double in (False, True):
        with default_dtype(torch.float64 if double else torch.float32):
            for dtype in (torch.complex64, torch.complex128):
                ours, theirs = both([1 + 2j, 3], dtype)
                assert repr(ours) == repr(theirs).replace("torch.", "internals.")


def test_long_real_tensors_wrap_their_dtype_suffix_too():
    """The suffix wrapping is torch's ``_add_suffixes``, shared with real dtypes."""
    ours, theirs = both([1.5] * 8, torch.float64)
    assert repr(ours) == repr(theirs).replace("torch.", "internals.")
    assert "\n       dtype=" in repr(ours)


# ---------------------------------------------------------------------------------- elementwise
VALUES = [[1 + 2j, 3 - 4j, -0.5j, 2.25], [0j, -1 + 1e-3j, 1e4 + 7j, -3.5 - 2.5j]]


def pair(dtype=torch.complex64, shape=(2, 4)):
    ours, theirs = both(VALUES, dtype)
    return ours.reshape(shape), theirs.reshape(shape)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("other_dtype", [torch.complex64, torch.complex128, torch.float32, torch.float64,
                                         torch.int64, torch.bool])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_with_other_dtypes(dtype, other_dtype, op):
    x, xt = pair(dtype)
    other = torch.tensor([[1, 0, 2, -3]]).to(other_dtype) + (0.5j if other_dtype.is_complex else 0)
    y = internals.from_torch(other)
    tol = EXACT if op in ("add", "sub") else CLOSE
    assert_same(getattr(internals, op)(x, y), getattr(torch, op)(xt, other), **tol)
    assert_same(getattr(internals, op)(y.t(), x.t()), getattr(torch, op)(other.t(), xt.t()), **tol)


@pytest.mark.parametrize("scalar", [2, 2.5, 1j, -1.5 + 0.25j, True])
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.float32, torch.float64, torch.int32])
def test_arithmetic_with_python_scalars(scalar, dtype):
    """A Python complex makes a float32 tensor complex64, a float64 one complex128, an integer
    one complex64; a complex tensor keeps its dtype whatever the scalar."""
    x, xt = pair() if dtype.is_complex else both([[1, 2, -3]], dtype)
    if dtype.is_complex:
        x, xt = x.to(TO_INTERNALS[dtype]), xt.to(dtype)
    for name in ("add", "mul"):
        assert_same(getattr(internals, name)(x, scalar), getattr(torch, name)(xt, scalar), **CLOSE)
    assert_same(x / scalar, xt / scalar, **CLOSE)
    if scalar is True:       # sub_check: no bool operand at all
        return error_text(lambda: scalar - x, lambda: scalar - xt)
    assert_same(scalar - x, scalar - xt, **CLOSE)


def test_division_by_zero_and_in_place_ops():
    x, xt = pair()
    assert_same(x / 0, xt / 0, **EXACT)
    assert_same(x / internals.zeros(4, dtype=internals.complex64), xt / torch.zeros(4, dtype=torch.complex64))
    assert_same(x.clone().add_(x, alpha=2 - 1j), xt.clone().add_(xt, alpha=2 - 1j), **CLOSE)
    assert_same(x.clone().mul_(1j), xt.clone().mul_(1j), **EXACT)
    assert_same(x.clone().sub_(1), xt.clone().sub_(1), **EXACT)
    error_text(lambda: internals.zeros(2).add_(internals.tensor([1j, 2])),
               lambda: torch.zeros(2).add_(torch.tensor([1j, 2])))
    error_text(lambda: x.abs_(), lambda: xt.abs_())


@pytest.mark.parametrize("dtype", [torch.complex64, torch.int64, torch.float32, torch.bool])
@pytest.mark.parametrize("alpha", [1j, 2.5, 2, True])
def test_add_alpha_checks(dtype, alpha):
    """``alpha_check``: a complex alpha needs a complex result; a float one a float or complex one."""
    x, xt = both([1, 0], dtype)
    for name in ("add", "sub"):
        try:
            theirs = getattr(torch, name)(xt, xt, alpha=alpha)
        except RuntimeError:
            error_text(lambda name=name: getattr(internals, name)(x, x, alpha=alpha),
                       lambda name=name: getattr(torch, name)(xt, xt, alpha=alpha))
            continue
        assert_same(getattr(internals, name)(x, x, alpha=alpha), theirs, **EXACT)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_unary_math(dtype):
    x, xt = pair(dtype)
    assert_same(-x, -xt, **EXACT)
    assert_same(x.abs(), xt.abs(), **CLOSE)
    assert_same(x.angle(), xt.angle(), **CLOSE)
    assert_same(x.conj_physical(), xt.conj_physical(), **EXACT)
    for name in ("exp", "sqrt", "log"):
        assert_same(getattr(x, name)(), getattr(xt, name)(), **CLOSE)
    special, st_ = both([0j, complex(-0.0, 0.0), complex(math.inf, 0), -4 + 0j], dtype)
    assert_same(special.log(), st_.log(), **CLOSE)
    assert_same(special.sqrt(), st_.sqrt(), **CLOSE)


def test_angle_of_real_tensors():
    for data, dtype in (([1.0, -2.0, 0.0, math.nan], torch.float32), ([1, -2, 0], torch.int64),
                        ([-1.5, 2.0], torch.float64)):
        x, xt = both(data, dtype)
        assert_same(x.angle(), xt.angle(), **EXACT)


def test_ops_without_complex_kernels_raise():
    x, xt = pair()
    error_text(lambda: x < 1, lambda: xt < 1)
    error_text(lambda: x.ge(x), lambda: xt.ge(xt))
    error_text(lambda: x.to(internals.complex128) > 1, lambda: xt.to(torch.complex128) > 1)
    error_text(lambda: x.maximum(x), lambda: xt.maximum(xt))
    error_text(lambda: x.minimum(x), lambda: xt.minimum(xt))
    error_text(lambda: x.relu(), lambda: xt.relu())
    error_text(lambda: x.sign(), lambda: xt.sign())
    # complex sin and pow have kernels (tests/aten/test_complex_unary.py and the complex pow
    # tests below compare them with torch)
    assert_same(x.sin(), xt.sin(), **EXACT)
    assert_same(x ** 2, xt ** 2, **CLOSE)
    assert_same(x ** 1, xt ** 1, **EXACT)      # pow's short cuts come first, as in torch
    assert_same(x ** 0, xt ** 0, **EXACT)


def test_equality_and_reductions():
    x, xt = pair()
    y, yt = both([[1 + 2j, 3 + 4j, -0.5j, 2.25]] * 2)
    assert_same(x == y, xt == yt, **EXACT)
    assert_same(x != 2.25, xt != 2.25, **EXACT)
    assert internals.equal(x, x.clone()) == torch.equal(xt, xt.clone())
    for dtype in (torch.complex64, torch.complex128):
        x, xt = pair(dtype)
        assert_same(x.sum(), xt.sum(), **CLOSE)
        assert_same(x.sum(1), xt.sum(1), **CLOSE)
        assert_same(x.mean(0, keepdim=True), xt.mean(0, keepdim=True), **CLOSE)
        assert_same(x.mean(), xt.mean(), **CLOSE)
        assert_same(x.prod(1), xt.prod(1), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------- views
@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.t(), lambda t: t[:, 1:3], lambda t: t[1], lambda t: t[0, 2]])
def test_real_imag_and_view_as_real_are_views(view):
    """The floats behind a complex tensor: strides doubled plus a last dim of stride 1; real
    and imag select its two halves (offset doubled, plus one for imag)."""
    x, xt = pair(torch.complex128)
    x, xt = view(x), view(xt)
    assert_same(internals.view_as_real(x), torch.view_as_real(xt), **EXACT)
    assert_same(x.real, xt.real, **EXACT)
    assert_same(x.imag, xt.imag, **EXACT)
    assert_same(internals.real(x), torch.real(xt), **EXACT)
    assert x.imag.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_writing_through_real_and_imag():
    x, xt = pair()
    x.real.mul_(10)
    xt.real.mul_(10)
    x.imag[0].fill_(-1)
    xt.imag[0].fill_(-1)
    assert_same(x, xt, **EXACT)


def test_real_and_imag_of_real_tensors():
    x, xt = both([1.0, 2.0])
    assert x.real is x and xt.real is xt
    error_text(lambda: x.imag, lambda: xt.imag)
    error_text(lambda: internals.view_as_real(x), lambda: torch.view_as_real(xt))


@pytest.mark.parametrize("make", [lambda lib: lib.tensor([[1.0, 2], [3, 4]]),
                                  lambda lib: lib.tensor([[1.0, 2, 3, 4]]).reshape(2, 2)[1:],
                                  lambda lib: lib.tensor([1.0, 2], dtype=lib.float64),
                                  lambda lib: lib.tensor([[1.0, 2, 3, 4]] * 2).reshape(2, 2, 2).transpose(0, 1)])
def test_view_as_complex(make):
    assert_same(internals.view_as_complex(make(internals)), torch.view_as_complex(make(torch)), **EXACT)


@pytest.mark.parametrize("make", [lambda lib: lib.tensor([1.0, 2, 3]), lambda lib: lib.tensor(1.0),
                                  lambda lib: lib.tensor([[1.0, 2, 3, 4]]).t(), lambda lib: lib.tensor([1, 2]),
                                  lambda lib: lib.tensor([[1.0, 2, 3], [4, 5, 6]])[:, 1:],
                                  lambda lib: lib.tensor([1.0, 2, 3])[1:],
                                  lambda lib: lib.tensor([1j, 2j])])
def test_view_as_complex_errors(make):
    error_text(lambda: internals.view_as_complex(make(internals)), lambda: torch.view_as_complex(make(torch)))


def test_view_as_complex_under_autocast():
    """An fp32 op of CPU autocast: a bfloat16 input becomes float32 first (then complex64)."""
    x = torch.tensor([[1.0, 2.0]], dtype=torch.bfloat16)
    with torch.autocast("cpu"), internals.autocast("cpu"):
        assert_same(internals.view_as_complex(internals.from_torch(x)), torch.view_as_complex(x), **EXACT)


def test_torch_complex():
    for dtype in (torch.float32, torch.float64):
        re, ret = both([[1.0, -2.0, math.inf]], dtype)
        im, imt = both([[0.5], [-0.0]], dtype)
        assert_same(internals.complex(re, im), torch.complex(ret, imt), **EXACT)
        assert_same(internals.complex(re.t(), re.t()), torch.complex(ret.t(), ret.t()), **EXACT)
    error_text(lambda: internals.complex(internals.tensor([1.0]), internals.tensor([1.0], dtype=internals.float64)),
               lambda: torch.complex(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)))
    error_text(lambda: internals.complex(internals.tensor([1]), internals.tensor([1])),
               lambda: torch.complex(torch.tensor([1]), torch.tensor([1])))


# ---------------------------------------------------------------------------------- conversions
def test_python_and_numpy_conversions():
    x, xt = pair()
    assert x.tolist() == xt.tolist()
    assert x[0, 1].item() == xt[0, 1].item() and type(x[0, 1].item()) is complex
    array = x.numpy()
    assert array.dtype == xt.numpy().dtype and array.strides == xt.numpy().strides
    np.testing.assert_array_equal(array, xt.numpy())
    for value in (1 + 0j, 2.5j, 0j):
        s, st_ = both(value)
        for convert in (bool, complex):
            assert convert(s) == convert(st_)
        for convert in (float, int):
            try:
                expected = convert(st_)
            except RuntimeError:
                error_text(lambda f=convert, v=s: f(v), lambda f=convert, v=st_: f(v))
                continue
            assert convert(s) == expected
    for np_dtype in (np.complex64, np.complex128):
        a = (np.arange(6) * (1 - 1j)).astype(np_dtype).reshape(2, 3)[:, ::2]
        assert_same(internals.from_numpy(a), torch.from_numpy(a), **EXACT)
        assert_same(internals.tensor(a), torch.tensor(a), **EXACT)


# VALUES with every real part inside uint8's and int8's ranges: a float outside an integer
# type's range converts with no defined result (a C cast whose bits follow the CPU).
IN_RANGE = [[1 + 2j, 3 - 4j, 0.5j, 2.25], [0j, 1 + 1e-3j, 100 + 7j, 3.5 - 2.5j]]


def test_casts_to_and_from_complex():
    x, xt = pair()
    for _, theirs in ALL_PAIRS:
        source, source_t = (x, xt) if theirs.is_floating_point or theirs.is_complex or theirs is torch.bool \
            else (t.reshape(2, 4) for t in both(IN_RANGE, xt.dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # the one-time warning: see the next test
            ours = source.to(TO_INTERNALS[theirs])
            expected = source_t.to(theirs)
        assert_same(ours, expected, **EXACT)
        y, yt = both([[0, 1, 2], [3, 4, 5]], theirs)
        assert_same(y.to(x.dtype), yt.to(xt.dtype), **EXACT)
        assert_same(y + x[:, :3], yt + xt[:, :3], **EXACT)


_TORCH_WARNING = """
import warnings, torch
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.tensor([1j]).to(torch.bool)
    torch.tensor([1j]).to(torch.float32)
    torch.tensor([1j]).to(torch.int64)
print(len(caught), caught[0].category.__name__, caught[0].message)
"""


def test_casting_complex_to_real_warns_once():
    """torch warns once per process (``TORCH_WARN_ONCE``), so its text comes from a process of its own."""
    count, category, message = subprocess.run([sys.executable, "-c", _TORCH_WARNING], capture_output=True,
                                              text=True, check=True).stdout.split(" ", 2)
    internals.c10.exception.reset_warn_once("_complex_to_real_copy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        internals.tensor([1j]).to(internals.bool)
        internals.tensor([1j]).to(internals.float32)
        internals.tensor([1j]).to(internals.int64)
    assert len(caught) == int(count) == 1
    assert caught[0].category.__name__ == category
    assert message.startswith(str(caught[0].message) + " (Triggered internally at")


def test_requires_grad():
    """Complex leaves require grad as torch's do (tests/autograd/test_complex_autograd.py
    compares their gradients)."""
    for lib in (torch, internals):
        z = lib.tensor([1j], requires_grad=True)
        assert z.requires_grad and z.is_leaf and z.grad is None


# ---------------------------------------------------------------------------------- cuda (simulator)
def test_cuda_kernels_take_complex_numbers():
    x, xt = pair()
    y = internals.tensor([[2.0], [-1.0]]).cuda()
    yt = torch.tensor([[2.0], [-1.0]])
    on = x.cuda()
    assert_same(on + y, xt + yt, **EXACT)
    assert_same(on * on, xt * xt, **CLOSE)
    assert_same(on / 0, xt / 0, **EXACT)
    assert_same(on.abs(), xt.abs(), **CLOSE)
    assert_same(on.exp(), xt.exp(), **CLOSE)
    assert_same(on.imag, xt.imag, **EXACT)
    assert_same(on.sum(1), xt.sum(1), **CLOSE)
    assert repr(on[0, :2]) == repr(xt[0, :2])[:-1] + ", device='cuda:0')"


# =============================================================================================
# Complex pow in every overload and complex math at infinite and NaN inputs. Complex results are
# compared with a tolerance where torch computes with fused multiply-adds (the last place may
# differ), and exactly where torch is exact: every infinity, NaN and signed zero it returns
# (C99's Annex G values, as glibc's complex functions give them) is checked part by part. CUDA
# runs on Numba's simulator here, through the same per-element functions.
# =============================================================================================
INF, NAN = math.inf, math.nan
PARTS = (0.0, -0.0, 1.5, -2.0, INF, -INF, NAN)
SPECIAL = [complex(a, b) for a, b in itertools.product(PARTS, PARTS)]          # 49 values, 7 x 7
FINITE = [1 + 2j, -0.5 + 0.25j, 3 - 4j, -2.5 - 1.5j, 0.75j, 1 + 90j, 2 + 760j, 400 + 1j, 30 - 1j, -800 + 3j]
COMPLEX = [torch.complex64, torch.complex128]
DEVICES = ["cpu", "cuda"]
# The CUDA simulator computes with NumPy scalars, which warn of inf - inf in threads of its own
# (the launch's np.errstate does not reach them); C computes NaN silently, as the CPU loops do.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
INTERNALS = {torch.complex64: internals.complex64, torch.complex128: internals.complex128,
             torch.float32: internals.float32, torch.float64: internals.float64, torch.int64: internals.int64,
             torch.int32: internals.int32, torch.bool: internals.bool, torch.uint8: internals.uint8}


# ---------------------------------------------------------------------------------- complex pow
EXPONENTS = [2, 3, -2, 0.5, -0.5, -1, 2.5, 1j, 2 + 1j, -1 + 0j, 2 + 0j, 0.5 + 0j, 0j, 1 + 0j, True, 0, 1, -3]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("exponent", EXPONENTS, ids=str)
def test_complex_tensor_to_a_scalar_power(exponent, dtype, device):
    """``pow.Tensor_Scalar``: torch's short cuts (fill for 0, copy for 1, sqrt, 1 / sqrt, the
    reciprocal and products for 0.5, -0.5, -1, 2, 3, -2, also as complex numbers), else cpow."""
    x, xt = ours_and_torchs(SPECIAL + FINITE, dtype, device)
    same(x ** exponent, xt ** exponent)
    same(internals.pow(x, exponent), torch.pow(xt, exponent))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_tensor_to_a_tensor_power(dtype, device):
    """``pow.Tensor_Tensor``: cpow for every pair, no short cut (0 ** 2 is -0j, 0 ** 0 NaN);
    broadcast, transposed and with a real exponent tensor."""
    x, xt = ours_and_torchs(SPECIAL, dtype, device, shape=(7, 7))
    same(x ** x.t(), xt ** xt.t())
    same(x ** x[:, :1], xt ** xt[:, :1])
    e, et = ours_and_torchs([[2.0], [0.5], [-1.0], [0.0], [3.0], [NAN], [-0.0]], torch.float32, device)
    same(x ** e, xt ** et)
    same(e.t() ** x, et.t() ** xt)
    ones, ones_t = ours_and_torchs([[1, 2, 0, -1, 5, 3, 2]], torch.int64, device)
    same(x.t() ** ones, xt.t() ** ones_t)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("base", [2, 1j, 0, 1, 1.5 - 2j, -1, 2.5, True], ids=str)
def test_scalar_to_a_complex_tensor_power(base, dtype, device):
    """``pow.Scalar``: a Python number raised to a tensor; 1 ** x is a fill with ones (even for
    NaN exponents), True is not 1 there. (Exponents of large imaginary parts are left out: the
    phase b * log(a) of several hundred radians keeps only float32's digits in torch's cpowf.)"""
    x, xt = ours_and_torchs(SPECIAL + FINITE[:5], dtype, device)
    same(base ** x, base ** xt)
    same(internals.pow(base, x), torch.pow(base, xt))


@pytest.mark.parametrize("exponent", [1j, 2 + 0.5j, 2, 0.5])
@pytest.mark.parametrize("dtype", [torch.int64, torch.uint8, torch.bool, torch.float32, torch.float64])
def test_real_tensors_to_complex_powers_promote(dtype, exponent):
    """An integer or bool tensor with a complex exponent becomes complex64, a float64 one
    complex128; a real tensor raised to a complex tensor takes the complex dtype."""
    x, xt = ours_and_torchs([0, 1, 2, 3], dtype)
    same(x ** exponent, xt ** exponent, real_ulps=LIBM_ULPS)       # a float64 ** 0.5 calls pow, not sqrt
    c, ct = ours_and_torchs([1j, 0.5 + 0j, -1 + 1j, 2], torch.complex128)
    same(x ** c, xt ** ct)
    same(c ** x, ct ** xt)
    same(exponent ** x if dtype is not torch.bool else x ** 2, exponent ** xt if dtype is not torch.bool else xt ** 2,
         real_ulps=LIBM_ULPS)


def test_complex_scalar_powers_under_a_float64_default():
    torch.set_default_dtype(torch.float64)
    internals.set_default_dtype(internals.float64)
    try:
        x, xt = ours_and_torchs([1, 2, 3], torch.int64)
        same(x ** 1j, xt ** 1j)
        same(1j ** x, 1j ** xt)
    finally:
        torch.set_default_dtype(torch.float32)
        internals.set_default_dtype(internals.float32)


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_complex_pow(device):
    """``__ipow__`` and ``pow_``: in place, the same tensor back; a real tensor cannot hold a
    complex result (torch's cast check)."""
    for exponent in (2, 1j, -1, 0.5, 2.5 - 1j):
        x, xt = ours_and_torchs(SPECIAL, torch.complex64, device)
        before = x
        x **= exponent
        xt **= exponent
        assert x is before
        same(x, xt)
    x, xt = ours_and_torchs(FINITE, torch.complex128, device)
    same(x.pow_(x.flip(0)), xt.pow_(xt.flip(0)))
    for dtype in (torch.float32, torch.int64):
        r, rt = ours_and_torchs([1, 2], dtype, device)
        error_text(lambda r=r: r.pow_(1j), lambda rt=rt: rt.pow_(1j))
        error_text(lambda r=r: r.pow_(internals.tensor([1j], device=device)), lambda rt=rt: rt.pow_(torch.tensor([1j])))


def test_complex_pow_keeps_torchs_errors():
    x, xt = ours_and_torchs([1j, 2], torch.complex64)
    error_text(lambda: x ** internals.ones(3), lambda: xt ** torch.ones(3))
    i, it = ours_and_torchs([1, 2], torch.int64)
    error_text(lambda: i ** -1, lambda: it ** -1)
    same(i ** (-1 + 0j), it ** (-1 + 0j))       # a complex exponent is no integer: no error


# ---------------------------------------------------------------------------------- special values
UNARY = ["sin", "cos", "tan", "tanh", "sigmoid", "exp", "log", "sqrt"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", UNARY)
def test_complex_functions_at_infinities_and_nans(name, dtype, device):
    """Every pair of parts from {0, -0, 1.5, -2, inf, -inf, nan}: Annex G's values as glibc gives
    them (csin(inf + i inf) is nan + i inf, ctanh(inf + iy) is 1 with the sign of sin 2y, ...),
    torch's own ``1 / (1 + exp(-z))`` for sigmoid; and values near the overflow thresholds of
    float32 (88) and float64 (709), where sinh and cosh are scaled."""
    x, xt = ours_and_torchs(SPECIAL + FINITE, dtype, device)
    same(getattr(x, name)(), getattr(xt, name)())
    same(getattr(internals, name)(x[::2]), getattr(torch, name)(xt[::2]))


@pytest.mark.parametrize("name", UNARY)
def test_complex_functions_of_random_values(name):
    """Finite values, in a short tensor (torch's scalar loop; a long one is vectorised, to the
    same values within the tolerance)."""
    torch.manual_seed(0)
    for dtype in COMPLEX:
        xt = torch.randn(6, 7, dtype=dtype) * 3
        x = internals.from_torch(xt)
        same(getattr(x, name)(), getattr(xt, name)())
        same(getattr(x.t(), name)(), getattr(xt.t(), name)())
