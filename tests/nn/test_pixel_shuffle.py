"""``F.pixel_shuffle``/``F.pixel_unshuffle`` and their modules against torch: values, layouts
(channels-last in, channels-last out), dtypes, node names, first and second gradients, errors."""
import numpy as np
import pytest
import torch
from helpers import assert_same, assert_second_derivatives_match_torch, same_outcome

import internals


def _t(L, shape, seed, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)      # (flat, so that empty shapes survive)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


CASES = {        # function, input shape, factor
    "shuffle": ("pixel_shuffle", (2, 8, 3, 3), 2),
    "shuffle_unbatched": ("pixel_shuffle", (9, 2, 4), 3),
    "shuffle_more_batch_dims": ("pixel_shuffle", (2, 3, 4, 2, 2), 2),
    "shuffle_factor_1": ("pixel_shuffle", (1, 3, 2, 2), 1),
    "unshuffle": ("pixel_unshuffle", (2, 2, 6, 4), 2),
    "unshuffle_unbatched": ("pixel_unshuffle", (1, 6, 6), 3),
    "unshuffle_more_batch_dims": ("pixel_unshuffle", (2, 2, 1, 4, 4), 4),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_layout_and_gradient_match_torch(name):
    fn, shape, r = CASES[name]

    def run(L):
        x = _t(L, shape, 1, requires_grad=True)
        out = getattr(L.nn.functional, fn)(x, r)
        grad, = L.autograd.grad((out * out).sum(), x)
        return out, grad, out.grad_fn.name()
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0])
    assert_same(ours[1], theirs[1])
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("shape", [(0, 4, 2, 2), (1, 4, 2, 0)])
@pytest.mark.parametrize("fn", ["pixel_shuffle", "pixel_unshuffle"])
def test_empty_inputs_match_torch(fn, shape):
    """torch's pixel_unshuffle gives an empty input back unchanged in shape (a copy), so the
    gradient of an empty pixel_shuffle is refused, in both libraries, by the engine's shape check."""
    def run(L):
        x = _t(L, shape, 1, requires_grad=True)
        out = getattr(L, fn)(x, 2)
        return out, L.autograd.grad(out.sum(), x)[0]
    same_outcome(lambda L: run(L)[0])
    same_outcome(lambda L: run(L)[1])


@pytest.mark.parametrize("fn", ["pixel_shuffle", "pixel_unshuffle"])
def test_channels_last_and_noncontiguous_inputs_match_torch(fn):
    same_outcome(lambda L: getattr(L, fn)(_t(L, (2, 8, 4, 4), 2).to(memory_format=L.channels_last), 2))
    same_outcome(lambda L: getattr(L, fn)(_t(L, (2, 4, 4, 8), 3).transpose(1, 3), 2))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8", "bool", "complex64"])
def test_dtypes_match_torch(dtype):
    same_outcome(lambda L: L.pixel_shuffle(_t(L, (1, 4, 2, 2), 3).mul(3).to(getattr(L, dtype)), 2))


SECOND_ORDER = {
    "pixel_shuffle": lambda L: (lambda x: (L.pixel_shuffle(x.tanh(), 2) ** 3, x))(
        _t(L, (1, 4, 2, 3), 4, requires_grad=True)),
    "pixel_unshuffle": lambda L: (lambda x: (L.pixel_unshuffle(x.tanh(), 2) ** 3, x))(
        _t(L, (1, 1, 4, 2), 5, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    assert_second_derivatives_match_torch(SECOND_ORDER[name], rtol=1e-12, atol=1e-12)


BAD = {
    "shuffle_2d": lambda L, x: L.pixel_shuffle(x[0, 0], 2),
    "shuffle_factor_0": lambda L, x: L.pixel_shuffle(x, 0),
    "shuffle_negative": lambda L, x: L.pixel_shuffle(x, -2),
    "shuffle_channels": lambda L, x: L.pixel_shuffle(x, 3),
    "unshuffle_2d": lambda L, x: L.pixel_unshuffle(x[0, 0], 2),
    "unshuffle_factor_0": lambda L, x: L.pixel_unshuffle(x, 0),
    "unshuffle_height": lambda L, x: L.pixel_unshuffle(x[:, :, :3], 2),
    "unshuffle_width": lambda L, x: L.pixel_unshuffle(x[..., :3], 2),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torch_errors(name):
    same_outcome(lambda L: BAD[name](L, _t(L, (2, 8, 4, 4), 6)))


def test_modules_match_torch():
    def run(L):
        x = _t(L, (2, 8, 4, 6), 7)
        shuffle, unshuffle = L.nn.PixelShuffle(2), L.nn.PixelUnshuffle(2)
        return shuffle(x), unshuffle(shuffle(x)), repr(shuffle), repr(unshuffle)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0])
    assert_same(ours[1], theirs[1])
    assert ours[2:] == theirs[2:]


# ---- channel_shuffle / native_channel_shuffle / nn.ChannelShuffle: groups of channels interleaved
SHUFFLES = {        # input shape, groups, channels-last input
    "3d": ((2, 6, 5), 3, False),
    "4d": ((2, 4, 3, 3), 2, False),
    "4d_channels_last": ((2, 6, 2, 3), 3, True),
    "5d": ((1, 4, 2, 2, 3), 4, False),
    "one_group": ((2, 3, 4), 1, False),
}


@pytest.mark.parametrize("name", list(SHUFFLES))
def test_channel_shuffle_values_layout_and_gradients_match_torch(name):
    shape, groups, channels_last = SHUFFLES[name]

    def run(L):
        x = _t(L, shape, 1)
        if channels_last:
            x = x.contiguous(memory_format=L.channels_last)
        x = x.requires_grad_()
        out = L.nn.functional.channel_shuffle(x, groups)
        native = L.nn.functional.native_channel_shuffle(x.detach(), groups)
        module = L.nn.ChannelShuffle(groups)
        return out, native, module(x.detach()), type(out.grad_fn).__name__, repr(module), x
    ours, theirs = run(internals), run(torch)
    for mine, their in zip(ours[:3], theirs[:3]):
        assert_same(mine, their, rtol=0, atol=0)
    assert ours[3:5] == theirs[3:5]

    def twice(L):
        """The gradient, and through its node (a shuffle back) the second derivative with
        respect to the weights of the sum."""
        x, w = _t(L, shape, 1, requires_grad=True), _t(L, shape, 2, requires_grad=True)
        g, = L.autograd.grad((L.channel_shuffle(x, groups) * w).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), w)
        return g, gg, type(g.grad_fn).__name__
    ours, theirs = twice(internals), twice(torch)
    assert_same(ours[0], theirs[0], rtol=0, atol=0)
    assert_same(ours[1], theirs[1], rtol=0, atol=0)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("program", [
    "lib.channel_shuffle(lib.ones(2, 4), 2)", "lib.channel_shuffle(lib.ones(2, 4, 3), 0)",
    "lib.channel_shuffle(lib.ones(2, 4, 3), 3)", "lib.native_channel_shuffle(lib.ones(2, 4, 3), -2)",
    "lib.native_channel_shuffle(lib.ones(2, 4), 2)", "lib.native_channel_shuffle(lib.ones(2, 4, 3), 3)",
    "lib.channel_shuffle(lib.ones(0, 4, 3), 2)",
])
def test_channel_shuffle_edges_and_errors(program):
    same_outcome(lambda lib: eval(program, {"lib": lib}))
