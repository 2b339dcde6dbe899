"""``renorm`` (``Normalization.cpp``) against torch's: each slice along ``dim`` whose p-norm
exceeds maxnorm scaled down to it, for several p and dims, in place and into ``out=``, in
float32 (its norm's rounding follows the CPU's reduction order, so within ulps), its gradient
and grad_fn, and torch's errors."""
import math

import pytest
import torch
from helpers import assert_same, assert_within_ulps_of_largest, outcome

import internals


def _x(lib, dtype="float64"):
    g = lib.Generator().manual_seed(0)
    return lib.randn(3, 4, 5, generator=g, dtype=getattr(lib, dtype))


VALUES = {
    "p2_dim0": lambda lib: _x(lib).renorm(2, 0, 1.0),
    "p1_last_dim": lambda lib: lib.renorm(_x(lib), 1, -1, 2.0),
    "p_inf": lambda lib: _x(lib).renorm(math.inf, 2, 1.5),
    "p_half_maxnorm_0": lambda lib: _x(lib).renorm(0.5, 1, 0),
    "nothing_scaled": lambda lib: _x(lib).renorm(2, 0, 100),
    "non_contiguous": lambda lib: _x(lib).transpose(0, 2).renorm(2, 1, 1.0),
    "inplace": lambda lib: _x(lib).renorm_(3, 0, 0.5),
    "out": lambda lib: lib.renorm(_x(lib), 2, 0, 1.0, out=lib.empty(0, dtype=lib.float64)),
    "empty_slices": lambda lib: lib.ones(0, 3, dtype=lib.float64).renorm(2, 1, 1.0),
}


@pytest.mark.parametrize("name", VALUES)
def test_values_match_torch(name):
    assert_same(VALUES[name](internals), VALUES[name](torch), ulps=4)


def test_float32_within_ulps():
    assert_same(_x(internals, "float32").renorm(2, 0, 1.0), _x(torch, "float32").renorm(2, 0, 1.0), ulps=4)


def test_gradient_and_node_match_torch():
    def run(lib):
        x = _x(lib).requires_grad_()
        y = x.renorm(2, 1, 1.0)
        (y * lib.arange(60.0, dtype=lib.float64).view(3, 4, 5)).sum().backward()
        return y.grad_fn.name(), x.grad
    (ours_node, ours), (theirs_node, theirs) = run(internals), run(torch)
    assert ours_node == theirs_node
    assert_within_ulps_of_largest(ours, theirs, 8)     # a difference of two terms that nearly cancel


ERRORS = {
    "p_zero": lambda lib: _x(lib).renorm(0, 0, 1.0),
    "p_complex": lambda lib: _x(lib).renorm(1j, 0, 1.0),
    "maxnorm_negative": lambda lib: _x(lib).renorm(2, 0, -1.5),
    "maxnorm_complex": lambda lib: _x(lib).renorm(2, 0, 1j),
    "one_dim": lambda lib: _x(lib)[0, 0].renorm(2, 0, 1.0),
    "dim_out_of_range": lambda lib: _x(lib).renorm(2, 3, 1.0),
    "integer_input": lambda lib: lib.ones(2, 2, dtype=lib.int64).renorm(2, 0, 1.0),
    "out_of_another_dtype": lambda lib: lib.renorm(_x(lib), 2, 0, 1.0, out=lib.empty(0)),
    "inplace_on_integer": lambda lib: lib.ones(2, 2, dtype=lib.int64).renorm_(2, 0, 1.0),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    ours, theirs = outcome(ERRORS[name], internals), outcome(ERRORS[name], torch)
    assert theirs[0] == "error" and ours == theirs
