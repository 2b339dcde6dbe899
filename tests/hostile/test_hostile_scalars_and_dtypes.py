"""Python numbers and dtypes at their edges: overflow, unsigned scalars, conversions.

Each case differed from torch 2.13 before it was fixed."""
import collections
import fractions
import warnings

import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error, same_error, same_or_same_error

import internals


def same_first_error_line(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


# ----------------------------------------------------------------------------- Python numbers
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "uint8", "int8", "bool"])
@pytest.mark.parametrize("value", [1e6, 1e39, 70000, 300, -300, 2**40, 2.5, float("inf")])
@pytest.mark.parametrize("op", ["pow", "pow_", "clamp min", "clamp max", "rpow"])
def test_scalar_exponents_and_bounds_must_fit_the_dtype(dtype, value, op):
    """``uint8.pow(300)`` and ``int8.clamp(max=300)`` are torch's overflow errors; they used to wrap."""
    def run(lib):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        return {"pow": lambda: x.pow(value), "pow_": lambda: x.pow_(value), "clamp min": lambda: x.clamp(min=value),
                "clamp max": lambda: lib.clamp(x, max=value), "rpow": lambda: value ** x}[op]()
    try:
        theirs = run(torch)
    except RuntimeError:
        same_first_error_line(run)
        return
    assert_same(run(internals), theirs)


# ----------------------------------------------------------------------------- NumPy
@pytest.mark.parametrize("how", ["tensor", "from_numpy"])
@pytest.mark.parametrize("dtype", [">f4", ">i8", ">f8"])
def test_a_byte_swapped_numpy_array_is_refused(how, dtype):
    import numpy as np
    same_first_error_line(lambda lib: getattr(lib, how)(np.array([1, 2], dtype=dtype)))


# ----------------------------------------------------------------------------- Python ints beyond int64
BEYOND = [-2**63 - 1, 2**64, -2**64, 10**30]


SCALAR_CALLS = [
    lambda L, v: L.tensor(v), lambda L, v: L.tensor([1, v]), lambda L, v: L.tensor([v], dtype=L.uint8),
    lambda L, v: L.full((2,), v), lambda L, v: L.full((2,), v, dtype=L.float32),
    lambda L, v: L.zeros(2).fill_(v), lambda L, v: L.zeros(2, dtype=L.int64).fill_(v),
    lambda L, v: L.zeros(2).masked_fill(L.tensor([True, False]), v),
]


BINARY_CALLS = [lambda L, v: L.ones(2) + v, lambda L, v: L.ones(2, dtype=L.int64) * v,
                lambda L, v: L.ones(2).clamp(max=v), lambda L, v: v - L.ones(2)]


@pytest.mark.parametrize("value", BEYOND)
@pytest.mark.parametrize("call", SCALAR_CALLS + BINARY_CALLS)
def test_python_ints_beyond_uint64_or_int64_raise_as_torch_parses_them(value, call):
    """A Scalar unpacks as a long long, else an unsigned long long (``scalar_slow``): outside
    [-2**63, 2**64) that is Python's OverflowError; ``tensor()`` of an integral dtype overflows
    a long long. They used to be accepted (``full((2,), -2**63 - 1, dtype=float32)``) or raise
    NumPy's ``Python int too large to convert to C long``."""
    same_error(lambda L: call(L, value))


@pytest.mark.parametrize("call", SCALAR_CALLS)
def test_two_to_the_63(call):
    """Accepted where the value goes to a float (``fill_``, ``full(dtype=float32)``), refused as
    torch refuses it where it must fit int64."""
    try:
        expected = call(torch, 2**63)
    except Exception:           # noqa: BLE001 - then internals must raise the same
        same_error(lambda L: call(L, 2**63))
    else:
        assert_same(call(internals, 2**63), expected)


def same(fn, **kw):
    assert_same(fn(internals), fn(torch), **kw)


@pytest.mark.parametrize("value", [2**63, -2**63 - 1, 2**64 - 1, 2**64, -2**70])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "bool"])
def test_tensor_of_a_huge_int_with_a_float_or_bool_dtype(value, dtype):
    """``store_scalar`` unpacks a number as a double (or a truth value) for these dtypes:
    ``tensor(2**63, dtype=float32)`` is 9.2234e+18; it used to fail to unpack a long long."""
    same(lambda L: L.tensor(value, dtype=getattr(L, dtype)))
    same(lambda L: L.tensor([[value, 1]], dtype=getattr(L, dtype)))


def test_an_int_too_large_for_a_double():
    same_error(lambda L: L.tensor(10**400, dtype=L.float32))
    same_error(lambda L: L.tensor([1.5, 10**400]))


def test_float_scalars_in_the_unsigned_range_still_accepted():
    same(lambda L: L.full((2,), 2**64 - 1, dtype=L.float32))
    same(lambda L: L.zeros(2).fill_(2**63))


@pytest.mark.parametrize("seed", [2**64, -2**63 - 1, 2**64 - 1, -2**63])
@pytest.mark.parametrize("how", ["manual_seed", "generator"])
def test_a_seed_past_64_bits_is_a_value_error(seed, how):
    def run(L):
        if how == "manual_seed":
            L.manual_seed(seed)
            return L.rand(2)
        return L.rand(2, generator=L.Generator().manual_seed(seed))
    same_or_same_error(run)


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(2).view(2, 2**63),
    lambda L: L.zeros(2).expand(-2**63 - 1),
    lambda L: L.zeros(2).view(2, "a"),
])
def test_an_int_list_element_past_int64_fails_to_unpack(call):
    """torch's message goes on with a C++ stack trace: compared up to it."""
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(theirs).startswith(str(ours))


@pytest.mark.parametrize("x", ["L.tensor([1, 2])", "L.empty(0)", "L.ones(1, 1)", "L.tensor(2.5)", "L.tensor([1j])"])
@pytest.mark.parametrize("convert", [int, float, complex])
def test_python_number_conversions_need_one_element(x, convert):
    """``int``, ``float`` and ``complex`` of a tensor of several elements raised ``item``'s
    RuntimeError; torch checks the count first, with a ValueError."""
    same_or_same_error(lambda L: L.tensor(convert(eval(x))))


# ----------------------------------------------------------------------------- dtype conversions
EDGES = [float("inf"), -float("inf"), float("nan"), 1e10, -1e10, 2.0**31, -2.0**31 - 1, -2.0**40 - 3,
         300.5, -0.7, 255.9, -128.5, -1.5, 1e30]


@pytest.mark.parametrize("src", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_float_reaches_uint8_through_int64(src, device):
    """c10's ``static_cast_with_inter_type<uint8_t>`` casts a float to int64 first: -2**31 - 1.0
    is 255 in torch; a direct cast (through int32) gave 0."""
    theirs = torch.tensor(EDGES, dtype=getattr(torch, src))
    ours = internals.tensor(EDGES, dtype=getattr(internals, src), device=device)
    assert ours.to(internals.uint8).tolist() == theirs.to(torch.uint8).tolist()
    assert [ours[i].to(internals.uint8).item() for i in range(len(EDGES))] == theirs.to(torch.uint8).tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([2.0**63], dtype=L.int64),
    lambda L: L.tensor(2.0**63, dtype=L.int64),
    lambda L: L.full((2,), 2.0**63, dtype=L.int64),
    lambda L: L.zeros(2, dtype=L.int64).fill_(2.0**63),
    lambda L: L.zeros(2, dtype=L.int64).masked_fill(L.tensor([True, False]), 2.0**63),
    lambda L: L.tensor([-2.0**63 - 4096], dtype=L.int64),
    lambda L: L.zeros(2, dtype=L.int32).fill_(2.0**31),
])
def test_a_float_fits_an_integer_dtype_as_a_double(call):
    """``c10::overflows`` compares in double, where int64's max is 2**63: 2.0**63 fits (and
    becomes -2**63, as x86 converts); the package compared exactly and refused it."""
    same_or_same_error(call)


# Values inside each type's range only: a float outside it is a C cast with no defined result,
# whose bits follow the CPU's conversion instructions (neither tested nor promised).
@pytest.mark.parametrize("method, values", [("byte", [1.7, 0.4, 255.9, 0.0]), ("char", [1.7, -1.7, 127.9, -128.9]),
                                            ("short", [1.7, -1.7, 300.0, -32768.9])])
def test_the_integer_conversion_methods(method, values):
    same_or_same_error(lambda L: getattr(L.tensor(values), method)())


def test_no_warning_is_left_behind_by_the_uint8_cast():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert internals.tensor(2.0**63).to(internals.uint8).item() == torch.tensor(2.0**63).to(torch.uint8).item()


U64 = [2**63, 2**63 + 2**40 + 1, 2**64 - 2**11, 2**64 - 1]


# ----------------------------------------------------------------------------- uint64 Python ints
@pytest.mark.parametrize("value", U64)
# int32 behaves here as int8 does (a narrower signed type the value wraps into), and each of its
# nineteen operators compiles a loop of its own: it runs in ``make test-slow``
@pytest.mark.parametrize("dtype", ["int64", pytest.param("int32", marks=pytest.mark.slow), "int8", "uint8",
                                   "float32", "float64", "float16", "complex64", "bool"])
@pytest.mark.parametrize("op", [
    lambda L, x, v: x + v, lambda L, x, v: v + x, lambda L, x, v: x - v, lambda L, x, v: v - x,
    lambda L, x, v: x * v, lambda L, x, v: x / v, lambda L, x, v: v / x, lambda L, x, v: x // v,
    lambda L, x, v: x % v, lambda L, x, v: x ** v, lambda L, x, v: v ** x, lambda L, x, v: x == v,
    lambda L, x, v: x < v, lambda L, x, v: x & v, lambda L, x, v: x.clone().add_(v),
    lambda L, x, v: L.add(x, v, out=L.empty(0, dtype=x.dtype)), lambda L, x, v: x.clamp(min=v),
    lambda L, x, v: L.where(x == x, x, v), lambda L, x, v: x.clone().fill_(v),
])
def test_a_python_int_past_int64_is_a_uint64_scalar(value, dtype, op):
    """torch reads such an int as a uint64 Scalar: an integer tensor sees its bits (2**63 is
    -2**63 in int64, 0 in uint8), a float one its unsigned value, and bool refuses to promote.
    internals raised Python's OverflowError for all of them."""
    same_or_same_error(lambda L: op(L, L.tensor([1, 2, 0], dtype=getattr(L, dtype)), value))


@pytest.mark.parametrize("value", [2**63, 2**64 - 1])
def test_a_uint64_scalar_joining_a_cuda_op_keeps_its_unsigned_value(value):
    x = internals.tensor([1., 2., 0.], device="cuda")
    theirs = torch.tensor([1., 2., 0.])
    for op in (lambda x: x + value, lambda x: x / value, lambda x: value - x, lambda x: x >= value):
        assert_same(op(x).cpu(), op(theirs))


# ----------------------------------------------------------------------------- 16-bit fills and alpha
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("value", [70000, 1e39, 2.0**63, 2**63, float("inf"), 1e-9])
@pytest.mark.parametrize("op", [
    lambda L, d, v: L.zeros(1, dtype=d).fill_(v), lambda L, d, v: L.zeros(2, dtype=d).fill_(v),
    lambda L, d, v: L.scalar_tensor(v, dtype=d), lambda L, d, v: L.full((1,), v, dtype=d),
    lambda L, d, v: L.where(L.tensor([False]), L.zeros(1, dtype=d), v),
    lambda L, d, v: L.zeros(1, dtype=d).masked_fill(L.tensor([True]), v),
    lambda L, d, v: L.add(L.ones(2, dtype=d), L.ones(2, dtype=d), alpha=v),
])
def test_a_16_bit_float_checks_a_scalar_where_torch_does(dtype, value, op):
    """torch's one-element CPU fill (``scalar_fill``) reads the value as a double and casts it
    unchecked, so ``scalar_tensor``, ``full`` and ``where`` give inf; ``masked_fill`` and a
    two-element fill check it, and so does ``alpha`` (as the 16-bit type, not as float)."""
    same_or_same_error(lambda L: op(L, getattr(L, dtype), value))


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8"])
def test_a_complex_fill_names_the_type_it_was_read_as(n, dtype):
    """One CPU element reads the value as a double first: ``type double`` in the message."""
    same_error(lambda L: L.zeros(n, dtype=getattr(L, dtype)).fill_(1 + 1j))


# ----------------------------------------------------------------------------- TypeMeta names
@pytest.mark.parametrize("call", [
    lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(2, dtype=L.complex64)),
    lambda L: L.mm(L.ones(2, 2), L.ones(2, 2), out=L.empty(0, dtype=L.complex64)),
    lambda L: L.argmax(L.ones(2, 2), 0, out=L.empty(0, dtype=L.complex128)),
    lambda L: L.lerp(L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.bool), 0.5),
])
def test_complex_dtypes_are_named_as_caffe2_names_them(call):
    """A complex dtype in a TypeMeta message is ``c10::complex<float>``; internals raised
    KeyError (a gradient, lerp) or printed ``ComplexFloat``."""
    same_error(call)


# ----------------------------------------------------------------------------- dtype arguments
DTYPE_SPELLINGS = [float, int, bool, complex, np.float32, np.dtype("float32"), np.dtype("int8"), "float32", 5, object,
                   type(None), collections.OrderedDict(), fractions.Fraction(1)]


@pytest.mark.parametrize("dtype", DTYPE_SPELLINGS)
@pytest.mark.parametrize("op", [lambda L, d: L.tensor([1, 2], dtype=d), lambda L, d: L.as_tensor([1, 2], dtype=d),
                                lambda L, d: L.zeros(2, dtype=d), lambda L, d: L.ones(2).cumsum(0, dtype=d),
                                lambda L, d: L.full((2,), 1, dtype=d), lambda L, d: L.ones(2).new_ones(2, dtype=d)])
def test_a_dtype_argument_is_a_dtype_or_a_python_type(dtype, op):
    """torch's parser takes a dtype or ``float``/``int``/``bool``/``complex`` and names any other
    type by its C ``tp_name`` (``numpy.dtypes.Float32DType``, ``collections.OrderedDict``).
    internals' ``tensor``/``as_tensor`` raised AttributeError, ``complex`` was refused, and NumPy's
    dtype classes lost their module."""
    same_or_same_error(lambda L: op(L, dtype))


# ----------------------------------------------------------------------------- uint16, uint32, uint64
# torch compiles few kernels for these: a refusal names the kernel torch's names (the product,
# the histogram's steps, index_add's loops), and the paths that reach no loop still run.
def _u(lib, dtype, *size):
    return lib.ones(*size, dtype=getattr(lib, dtype))


WIDE_UNSIGNED_CALLS = {
    "matmul": lambda lib, d: _u(lib, d, 2, 2) @ _u(lib, d, 2, 2),
    "mv": lambda lib, d: lib.mv(_u(lib, d, 2, 2), _u(lib, d, 2)),
    "matrix_at_vector": lambda lib, d: _u(lib, d, 2, 3) @ _u(lib, d, 3),
    "batch_at_vector": lambda lib, d: _u(lib, d, 2, 3, 3) @ _u(lib, d, 3),
    "vector_at_matrix": lambda lib, d: _u(lib, d, 3) @ _u(lib, d, 3, 2),
    "vector_at_vector": lambda lib, d: _u(lib, d, 3) @ _u(lib, d, 3),
    "dot_of_empty": lambda lib, d: lib.dot(_u(lib, d, 0), _u(lib, d, 0)),
    "vdot": lambda lib, d: lib.vdot(_u(lib, d, 3), _u(lib, d, 3)),
    "addmv": lambda lib, d: lib.addmv(_u(lib, d, 2), _u(lib, d, 2, 2), _u(lib, d, 2)),
    "addmv_of_an_empty_matrix": lambda lib, d: lib.addmv(_u(lib, d, 2), _u(lib, d, 2, 0), _u(lib, d, 0)),
    "mv_of_an_empty_matrix": lambda lib, d: lib.mv(_u(lib, d, 2, 0), _u(lib, d, 0)),
    "baddbmm": lambda lib, d: lib.baddbmm(_u(lib, d, 2, 2, 2), _u(lib, d, 2, 2, 2), _u(lib, d, 2, 2, 2)),
    "histc": lambda lib, d: lib.histc(_u(lib, d, 2)),
    "histc_with_a_range": lambda lib, d: lib.histc(_u(lib, d, 2), min=0, max=3),
    "histc_of_empty": lambda lib, d: lib.histc(_u(lib, d, 0)),
    "index_add": lambda lib, d: _u(lib, d, 3).index_add(0, lib.tensor([0]), _u(lib, d, 1)),
    "index_add_none": lambda lib, d: _u(lib, d, 3).index_add(0, lib.tensor([], dtype=lib.long), _u(lib, d, 0)),
    "index_add_rows": lambda lib, d: _u(lib, d, 3, 4).index_add(0, lib.tensor([0]), _u(lib, d, 1, 4)),
    "index_add_columns": lambda lib, d: _u(lib, d, 3, 4).index_add(1, lib.tensor([0]), _u(lib, d, 3, 1)),
    "index_add_no_rows": lambda lib, d: _u(lib, d, 3, 4).index_add(0, lib.tensor([], dtype=lib.long),
                                                                   _u(lib, d, 0, 4)),
    "index_add_in_place": lambda lib, d: _u(lib, d, 3).index_add_(0, lib.tensor([0]), _u(lib, d, 1), alpha=2),
    "index_add_out": lambda lib, d: lib.index_add(_u(lib, d, 3), 0, lib.tensor([0]), _u(lib, d, 1),
                                                  out=lib.empty(3, dtype=getattr(lib, d))),
}


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("call", WIDE_UNSIGNED_CALLS)
def test_wide_unsigned_refusals_name_torchs_kernels(call, dtype):
    same_or_same_error(lambda lib: WIDE_UNSIGNED_CALLS[call](lib, dtype))


# the same steps for the other dtypes histc's counting kernel refuses, and the few that run
OTHER_DTYPE_CALLS = {
    "histc_of_integers": lambda lib: lib.histc(lib.ones(2, dtype=lib.int64)),
    "histc_of_empty_bytes": lambda lib: lib.histc(lib.ones(0, dtype=lib.uint8)),    # an edge of -1
    "histc_of_bools": lambda lib: lib.histc(lib.ones(2, dtype=lib.bool)),
    "histc_of_integers_no_bins": lambda lib: lib.histc(lib.ones(2, dtype=lib.int64), bins=0),
    "linspace_of_bools": lambda lib: lib.linspace(0, 2, 3, dtype=lib.bool),
    "linspace_of_no_bools": lambda lib: lib.linspace(0, 2, 0, dtype=lib.bool),
    "linspace_below_uint8": lambda lib: lib.linspace(-1, 1, 3, dtype=lib.uint8),      # -1 wraps to 255 first
    "linspace_float_below_uint8": lambda lib: lib.linspace(-1.5, 1, 3, dtype=lib.uint8),
    "linspace_float_below_uint8_no_steps": lambda lib: lib.linspace(-1.5, 1, 0, dtype=lib.uint8),
    "linspace_past_int8": lambda lib: lib.linspace(0, 300, 3, dtype=lib.int8),
    "mv_of_bools_of_an_empty_matrix": lambda lib: lib.mv(lib.ones(2, 0, dtype=lib.bool), lib.ones(0, dtype=lib.bool)),
    "addmv_of_bools_beta_zero": lambda lib: lib.addmv(lib.ones(2, dtype=lib.bool), lib.ones(2, 0, dtype=lib.bool),
                                                      lib.ones(0, dtype=lib.bool), beta=0),
    "index_add_of_bools_alpha_two": lambda lib: lib.ones(3, dtype=lib.bool).index_add_(
        0, lib.tensor([0]), lib.ones(1, dtype=lib.bool), alpha=2),
    "index_add_of_integers_float_alpha": lambda lib: lib.ones(3, dtype=lib.int64).index_add(
        0, lib.tensor([0, 0]), lib.full((2,), 3), alpha=2.5),
}


@pytest.mark.parametrize("call", OTHER_DTYPE_CALLS)
def test_other_dtypes_at_the_same_steps(call):
    same_or_same_error(OTHER_DTYPE_CALLS[call])
