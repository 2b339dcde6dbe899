"""``F.adaptive_max_pool1d/2d`` (torch's ``adaptive_max_pool2d`` operator and its 1-d composite)
and ``nn.AdaptiveMaxPool1d/2d`` against torch: values, indices, layouts, dtypes, node names,
first and second gradients, the errors."""
import numpy as np
import pytest
import torch
from helpers import assert_same, assert_second_derivatives_match_torch, same_outcome

import internals


def _t(L, shape, seed, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)      # (flat, so that empty shapes survive)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


CASES = {        # function, input shape, output size
    "2d_shrink": ("adaptive_max_pool2d", (2, 3, 7, 5), (3, 4)),
    "2d_int_size": ("adaptive_max_pool2d", (1, 2, 6, 6), 4),
    "2d_grow": ("adaptive_max_pool2d", (1, 2, 3, 2), (5, 4)),
    "2d_none_keeps": ("adaptive_max_pool2d", (2, 2, 5, 4), (None, 2)),
    "2d_unbatched": ("adaptive_max_pool2d", (3, 5, 5), (2, 3)),
    "2d_empty_batch": ("adaptive_max_pool2d", (0, 2, 4, 4), 2),
    "2d_one": ("adaptive_max_pool2d", (2, 3, 4, 5), 1),
    "1d": ("adaptive_max_pool1d", (2, 3, 7), 3),
    "1d_unbatched": ("adaptive_max_pool1d", (3, 9), 4),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_indices_and_gradient_match_torch(name):
    fn, shape, size = CASES[name]

    def run(L):
        x = _t(L, shape, 1, requires_grad=True)
        out, indices = getattr(L.nn.functional, fn)(x, size, return_indices=True)
        grad, = L.autograd.grad((out * out).sum(), x)
        return out, indices, grad, out.grad_fn.name()
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t)
    assert ours[3] == theirs[3]


def test_an_empty_output_pools_and_its_gradient_is_refused_as_in_torch():
    def run(L):
        x = _t(L, (1, 2, 4, 4), 1, requires_grad=True)
        out, indices = L.nn.functional.adaptive_max_pool2d(x, (0, 2), return_indices=True)
        return out, indices, L.autograd.grad(out.sum(), x)[0]
    for i in range(3):
        same_outcome(lambda L, i=i: run(L)[i])


def test_ties_and_nans_pick_what_torch_picks():
    """After a ReLU many windows tie at 0 (the first one wins, so it gets the gradient); a NaN wins."""
    def run(L):
        x = L.tensor([[[0.0, 0.0, 1.0, 1.0, 0.0], [0.0, float("nan"), 0.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0, 0.0]]])
        x.requires_grad_(True)
        out, indices = L.nn.functional.adaptive_max_pool2d(x, (2, 3), return_indices=True)
        return out, indices, L.autograd.grad(out.nan_to_num().sum(), x)[0]
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours, theirs):
        assert_same(o, t)


def test_channels_last_and_noncontiguous_inputs_match_torch():
    for make in (lambda L: _t(L, (2, 3, 5, 6), 2).to(memory_format=L.channels_last),
                 lambda L: _t(L, (2, 6, 5, 3), 3).transpose(1, 3)):
        same_outcome(lambda L, make=make: L.nn.functional.adaptive_max_pool2d(make(L), (2, 3), return_indices=True)[0])
        same_outcome(lambda L, make=make: L.nn.functional.adaptive_max_pool2d(make(L), (2, 3), return_indices=True)[1])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "bool"])
def test_dtypes_match_torch(dtype):
    same_outcome(lambda L: L.nn.functional.adaptive_max_pool2d(_t(L, (1, 2, 5, 5), 4).to(getattr(L, dtype)), 3))


SECOND_ORDER = {
    "adaptive_max_pool2d": lambda L: (lambda x: (L.nn.functional.adaptive_max_pool2d(x * x, (2, 3)) ** 3, x))(
        _t(L, (1, 2, 5, 4), 5, requires_grad=True)),
    "adaptive_max_pool1d": lambda L: (lambda x: (L.nn.functional.adaptive_max_pool1d(x.tanh(), 3) ** 2, x))(
        _t(L, (2, 7), 6, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    assert_second_derivatives_match_torch(SECOND_ORDER[name], rtol=1e-12, atol=1e-12)


BAD = {
    "2d_of_2d": lambda F, x: F.adaptive_max_pool2d(x[0, 0], 2),
    "2d_of_5d": lambda F, x: F.adaptive_max_pool2d(x[None], 2),
    "2d_empty_channels": lambda F, x: F.adaptive_max_pool2d(x[:, :0], 2),
    "2d_empty_height": lambda F, x: F.adaptive_max_pool2d(x[:, :, :0], 2),
    "2d_three_sizes": lambda F, x: F.adaptive_max_pool2d(x, (2, 2, 2)),
    "2d_negative": lambda F, x: F.adaptive_max_pool2d(x, (2, -1)),
    "2d_none_of_2d": lambda F, x: F.adaptive_max_pool2d(x[0, 0, 0], (None, 2)),
    "1d_of_1d": lambda F, x: F.adaptive_max_pool1d(x[0, 0, 0], 2),
    "1d_of_4d": lambda F, x: F.adaptive_max_pool1d(x, 2),
    "1d_two_sizes": lambda F, x: F.adaptive_max_pool1d(x[0], (2, 2)),
    "1d_empty_length": lambda F, x: F.adaptive_max_pool1d(x[0, :, :0, 0], 2),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torch_errors(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, _t(L, (2, 3, 4, 5), 7)))


def test_modules_match_torch():
    def run(L):
        x = _t(L, (2, 3, 6, 5), 8)
        pool2, pool1 = L.nn.AdaptiveMaxPool2d((3, None), return_indices=True), L.nn.AdaptiveMaxPool1d(2)
        return (*pool2(x), pool1(x[:, :, 0]), repr(pool2), repr(pool1))
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t)
    assert ours[3:] == theirs[3:]
