"""A third round of hostile inputs (issue 15): each case differed from torch 2.13 before its fix.

Thread tests run at a one-microsecond switch interval, so that threads interleave inside the
code under test.
"""
import itertools
import sys
import threading

import pytest
import torch
from conftest import assert_same, assert_same_error

import internals


def same_error(fn):
    """Both libraries raise the same class with the same first line."""
    ours, theirs = assert_same_error(lambda: fn(internals), lambda: fn(torch))
    assert str(ours).splitlines()[0] == str(theirs).splitlines()[0]


def in_threads(work, n=4):
    """Run ``work(k)`` on ``n`` threads at a one-microsecond switch interval; the exceptions raised."""
    errors, barrier = [], threading.Barrier(n)

    def body(k):
        barrier.wait()
        try:
            work(k)
        except Exception as e:      # noqa: BLE001 - every failure is reported by the test
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    return errors


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
