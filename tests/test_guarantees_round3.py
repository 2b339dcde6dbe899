"""A third round of hostile inputs (issue 15): each case differed from torch 2.13 before its fix.

Thread tests run at a one-microsecond switch interval, so that threads interleave inside the
code under test.
"""
import itertools

import pytest
import torch
from conftest import assert_same, assert_same_error
from test_hostile import in_threads

import internals


def same_error(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


# ----------------------------------------------------------------------------- threads
def test_cuda_kernels_launched_from_four_threads():
    """The simulator swaps the kernel module's ``cuda`` for a fake while a kernel runs: a launch
    from another thread met the fake (AttributeError: 'FakeCUDAModule' has no 'to_device')."""
    results = {}

    def work(k):
        for n in range(10):
            x = internals.arange(float(n + k), device="cuda")
            results[k, n] = ((x * 2 + 1).sum().item(), x.cumsum(0).tolist())

    assert in_threads(work) == []
    for (k, n), got in results.items():
        x = torch.arange(float(n + k))
        assert got == ((x * 2 + 1).sum().item(), x.cumsum(0).tolist())


# ----------------------------------------------------------------------------- rounding division
VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, -7.0, float("inf"), -float("inf"), float("nan"), 1e308, 1e-308]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_rounding_division_keeps_nan_inf_huge_and_negative_zero(dtype, mode):
    """Numba's math.floor and math.trunc return int64: nan, inf and 1e308 came back as -2**63,
    and a -0.0 quotient as 0.0."""
    a, b = zip(*itertools.product(VALUES, VALUES))

    def run(lib):
        d = getattr(lib, dtype)
        return lib.div(lib.tensor(a, dtype=d), lib.tensor(b, dtype=d), rounding_mode=mode)
    ours, theirs = run(internals), run(torch)
    assert_same(ours, theirs)
    assert [str(v) for v in ours.tolist()] == [str(v) for v in theirs.tolist()]     # the signs of zeros


def test_floor_divide_by_a_nan_scalar():
    for lib in (torch, internals):
        assert all(v != v for v in (lib.arange(4) // float("nan")).tolist())


# ----------------------------------------------------------------------------- messages
@pytest.mark.parametrize("call", [
    lambda L: L.ones(6).view((2, 3), 1), lambda L: L.ones(6).view([2, 3], 1),
    lambda L: L.ones(6).view((2, 3), (1,)), lambda L: L.ones(2).add((2, 3)),
])
def test_argument_types_are_named_as_torch_names_them(call):
    """``got (tuple, int)``: the given arguments by their Python type names, not ``tuple of (int, int)``."""
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(ours) == str(theirs)


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
        same_error(run)
        return
    assert_same(run(internals), theirs)


# ----------------------------------------------------------------------------- overlapping writes
@pytest.mark.parametrize("geometry", [((4,), (0,), 0), ((2, 3), (0, 1), 1), ((2, 2), (0, 0), 3)])
def test_scatter_into_a_self_overlapping_view_is_refused(geometry):
    """Two elements of ``self`` at one address: which scatter wins would be a race; torch refuses."""
    def run(lib):
        x = lib.arange(24.0).as_strided(*geometry)
        x.scatter_(0, lib.zeros((1,) + tuple(x.shape[1:]), dtype=lib.int64), 3.0)
    same_error(run)


@pytest.mark.parametrize("make", [lambda L: L.ones(1, 3).expand(4, 3), lambda L: L.tensor(1.0).expand(4),
                                  lambda L: L.arange(24.0).as_strided((2, 2), (0, 0), 3)])
def test_copying_a_tensor_onto_itself_is_a_no_op(make):
    """``copy_impl`` returns at once when source and destination are the same elements."""
    def run(lib):
        x = make(lib)
        return x.copy_(x)
    assert_same(run(internals), run(torch))


# ----------------------------------------------------------------------------- autograd
def _function_returning(lib, grads):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return grads(g)
    a = lib.ones(2, requires_grad=True)
    F.apply(a).sum().backward()
    return a.grad


def test_a_function_returning_too_many_gradients_is_refused():
    same_error(lambda lib: _function_returning(lib, lambda g: (g, g)))
    # ...unless the extra ones are None
    extra_nones = lambda g: (g, None, None)     # noqa: E731
    assert_same(_function_returning(internals, extra_nones), _function_returning(torch, extra_nones))


def test_backward_with_inputs():
    def run(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * 2
        (b * b).sum().backward(inputs=[b])
        return b.grad, b.retains_grad, a.grad
    (b_ours, kept_ours, a_ours), (b_theirs, kept_theirs, a_theirs) = run(internals), run(torch)
    assert_same(b_ours, b_theirs)
    assert (kept_ours, a_ours) == (kept_theirs, a_theirs) == (True, None)
    same_error(lambda lib: (lib.ones(2, requires_grad=True) * 2).sum().backward(inputs=[]))


@pytest.mark.parametrize("mode", [0, 1, "yes", None])
def test_set_grad_enabled_takes_a_bool(mode):
    try:
        same_error(lambda lib: lib.set_grad_enabled(mode))
    finally:
        torch.set_grad_enabled(True)
        internals.set_grad_enabled(True)


# ----------------------------------------------------------------------------- devices
@pytest.mark.parametrize("args", [
    ("cuda:01",), ("cuda:\u0661",), ("",), (" cuda",), ("cuda:",), (":0",), ("cuda:0:0",), ("cuda:+1",), ("cpu:-1",),
    ("cuda:0", 0), ("cuda", -1), ("cuda", "0"), (True,), (None,), (1.5,), (-1,),
])
def test_device_strings_and_arguments_refused_as_torch_refuses(args):
    same_error(lambda lib: lib.device(*args))


def test_a_bare_integer_is_an_accelerator_index():
    """torch.device(0) is the accelerator's device 0 (this torch build has none, so only internals runs it)."""
    assert internals.device(0) == internals.device("cuda:0") and internals.device(2).index == 2


# ----------------------------------------------------------------------------- printing
INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("values, dtype", [
    ([INF, 3.0], "float32"), ([-INF, 3.0, NAN], "float32"), ([INF, 3.0], "bfloat16"),
    ([1e-4], "float32"), ([65504.0], "float16"), ([1e8], "float64"), ([99999.5, -3.0, INF, 3.0, -0.0], "bfloat16"),
    ([0.3333, 1e-05, 0.0, 7.0, 0.0, 1e7, 1.5, 1e9], "float16"), ([100.0, -2.25, -3.0, 100.0, 0.0], "float16"),
    ([99999.5, -3.0, 0.0, -0.0, -1e10], "float64"), ([1.5] * 30 + [-INF], "float32"), ([NAN, 0.0], "float32"),
])
def test_float_formats_as_torch(values, dtype):
    """Widths come from the nonzero finite values only ("[inf, 3.]"), scientific notation by
    torch's rule, as many elements a line as the width allows, and suffixes wrap at 80 columns."""
    def text(lib):
        return repr(lib.tensor(values, dtype=getattr(lib, dtype))).replace("internals.", "torch.")
    assert text(internals) == text(torch)


@pytest.mark.parametrize("make", [
    lambda L: L.arange(60.0).reshape(2, 30) * 1000.5, lambda L: L.arange(1200.0) - 600,
    lambda L: (L.arange(343.0).reshape(7, 7, 7) / 3).requires_grad_() * 1,
    lambda L: L.arange(120, dtype=L.int8).reshape(2, 60), lambda L: L.arange(100, dtype=L.int16) * 300,
])
def test_rows_and_suffixes_wrap_as_torch(make):
    assert repr(make(internals)).replace("internals.", "torch.") == repr(make(torch))


# ----------------------------------------------------------------------------- masks
@pytest.mark.parametrize("index", [
    lambda L: (L.tensor(True),), lambda L: (L.tensor(False),), lambda L: (L.tensor([1, 0, 1], dtype=L.uint8),),
    lambda L: (L.tensor([True, False, True]),), lambda L: (L.tensor([True, False]),),
])
@pytest.mark.parametrize("value", [lambda L: L.tensor(-1.0), lambda L: L.tensor(7)])
def test_index_put_with_one_mask_and_one_value_is_masked_fill(index, value):
    """``canDispatchToMaskedFill``: a 0-dim mask fills everything (it was a NumPy ValueError), a
    uint8 mask is refused as masked_fill_ refuses it, and the value's dtype need not match."""
    def run(lib):
        return lib.arange(12.0).reshape(3, 4).index_put_(index(lib), value(lib))
    try:
        theirs = run(torch)
    except (RuntimeError, IndexError):
        same_error(run)
        return
    assert_same(run(internals), theirs)


def test_setitem_with_a_uint8_mask_is_refused():
    def run(lib):
        lib.arange(12.0).reshape(3, 4)[lib.tensor([1, 0, 1], dtype=lib.uint8)] = -1.0
    same_error(run)


def test_setitem_with_a_mask_after_a_slice():
    def run(lib):
        x = lib.arange(12.0).reshape(3, 4)
        x[:, lib.tensor([True, False, True, False])] = lib.tensor(7)
        return x
    assert_same(run(internals), run(torch))


# ----------------------------------------------------------------------------- NumPy
@pytest.mark.parametrize("how", ["tensor", "from_numpy"])
@pytest.mark.parametrize("dtype", [">f4", ">i8", ">f8"])
def test_a_byte_swapped_numpy_array_is_refused(how, dtype):
    import numpy as np
    same_error(lambda lib: getattr(lib, how)(np.array([1, 2], dtype=dtype)))
