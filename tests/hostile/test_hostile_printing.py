"""Printing tensors and numbers as torch prints them.

Each case differed from torch 2.13 before it was fixed."""

import pytest
import torch
from helpers import same_error

import internals

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


@pytest.mark.parametrize("kw", ["rtol=-1", "atol=-1e-5", "atol=float('nan')", "rtol=float('nan')",
                                "atol=-1234567.5", "rtol=L.tensor(-1)"])
def test_isclose_prints_its_tolerance_as_a_cpp_double(kw):
    same_error(lambda L: eval(f"L.isclose(L.ones(2), L.ones(2), {kw})"))
