"""``torch.conv_tbc`` (``ConvolutionTBC.cpp``): a 1-d convolution of a (time, batch, channel)
input by a (width, in, out) weight, one matrix product per kernel tap, against torch: values and
gradients (within the ulps of torch's BLAS), shapes, strides, the ConvTbcBackward0 node, the
errors, and the lower precision autocast gives it."""
import pytest
import torch
from helpers import PRODUCT_ULPS, assert_same_error, assert_within_ulps_of_largest

import internals


def _conv_tbc(L, time, batch, c_in, c_out, width, pad, dtype):
    d = getattr(L, dtype)
    x = L.linspace(-2., 2., time * batch * c_in, dtype=d).reshape(time, batch, c_in).sin()
    x = x.requires_grad_()
    w = L.linspace(-1., 1.5, width * c_in * c_out, dtype=d).reshape(width, c_in, c_out).cos().requires_grad_()
    b = L.linspace(-0.5, 0.5, c_out, dtype=d).requires_grad_()
    y = L.conv_tbc(x, w, b, pad)
    cotangent = L.linspace(-1., 1., y.numel(), dtype=d).reshape(y.shape)
    return [y, *L.autograd.grad(y, (x, w, b), cotangent)], type(y.grad_fn).__name__


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("time, batch, c_in, c_out, width, pad", [
    (5, 2, 3, 4, 2, 0), (5, 2, 3, 4, 3, 1), (4, 1, 2, 2, 5, 2), (6, 3, 2, 3, 1, 0), (5, 2, 3, 4, 2, -1),
    (5, 2, 3, 4, 4, 3)])
def test_conv_tbc_as_torch(time, batch, c_in, c_out, width, pad, dtype):
    args = (time, batch, c_in, c_out, width, pad, dtype)
    (ours, ours_node), (theirs, theirs_node) = (_conv_tbc(L, *args) for L in (internals, torch))
    assert ours_node == theirs_node == "ConvTbcBackward0"
    for o, t in zip(ours, theirs):
        assert_within_ulps_of_largest(o.detach(), t.detach(), PRODUCT_ULPS)


@pytest.mark.parametrize("program", [
    lambda L: L.conv_tbc(L.ones(5, 2), L.ones(2, 3, 4), L.ones(4)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(2, 3), L.ones(4)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(2, 3, 4), L.ones(4, 1)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(2, 4, 4), L.ones(4)),
    lambda L: L.conv_tbc(L.ones(5, 2, 3), L.ones(2, 3, 4), L.ones(5)),
    lambda L: L.conv_tbc(L.ones(3, 2, 3), L.ones(6, 3, 4), L.ones(4)),          # no output step left
    lambda L: L.conv_tbc(L.ones(2, 5, 3).transpose(0, 1), L.ones(2, 3, 4), L.ones(4), 1),   # no view of it
])
def test_conv_tbc_refuses_as_torch(program):
    ours, theirs = assert_same_error(lambda: program(internals), lambda: program(torch))
    assert str(ours) == str(theirs)


def test_conv_tbc_runs_in_lower_precision_under_autocast():
    def program(L):
        with L.autocast("cpu", dtype=L.bfloat16):
            return L.conv_tbc(L.ones(5, 2, 3), L.ones(2, 3, 4), L.ones(4)).dtype
    assert str(program(internals)).split(".")[-1] == str(program(torch)).split(".")[-1] == "bfloat16"
