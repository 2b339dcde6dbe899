"""``F.unfold``/``F.fold`` (torch's ``im2col``/``col2im`` operators) and ``nn.Unfold``/``nn.Fold``
against torch: values, layouts, dtypes, node names, first and second gradients, the errors."""
import numpy as np
import pytest
import torch
from helpers import assert_same, assert_second_derivatives_match_torch, same_outcome

import internals


def _t(L, shape, seed, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)      # (flat, so that empty shapes survive)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


UNFOLDS = {      # input shape, then unfold's arguments
    "plain": ((2, 3, 5, 6), dict(kernel_size=2)),
    "all_args": ((2, 3, 5, 6), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
    "unbatched": ((3, 4, 4), dict(kernel_size=3, padding=1)),
    "empty_batch": ((0, 2, 4, 4), dict(kernel_size=2)),
    "whole_image": ((1, 2, 3, 3), dict(kernel_size=3)),
    "big_stride": ((1, 1, 7, 7), dict(kernel_size=2, stride=4, padding=1)),
}


@pytest.mark.parametrize("name", list(UNFOLDS))
def test_unfold_values_layout_and_gradient_match_torch(name):
    shape, kwargs = UNFOLDS[name]

    def run(L):
        x = _t(L, shape, 1, requires_grad=True)
        out = L.nn.functional.unfold(x, **kwargs)
        grad, = L.autograd.grad((out * out).sum(), x)
        return out, grad, out.grad_fn.name()
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0])
    assert_same(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    assert ours[2] == theirs[2] == "Im2ColBackward0"


FOLDS = {        # input shape, then fold's arguments
    "plain": ((2, 12, 12), dict(output_size=(4, 5), kernel_size=2)),
    "overlap_sums": ((1, 9, 9), dict(output_size=5, kernel_size=3)),
    "all_args": ((2, 12, 12), dict(output_size=(5, 6), kernel_size=(2, 3), dilation=(1, 2), padding=1,
                                  stride=(2, 1))),
    "unbatched": ((8, 9), dict(output_size=(4, 4), kernel_size=2, padding=1, stride=2)),
    "empty_batch": ((0, 4, 9), dict(output_size=4, kernel_size=2)),
}


@pytest.mark.parametrize("name", list(FOLDS))
def test_fold_values_layout_and_gradient_match_torch(name):
    shape, kwargs = FOLDS[name]

    def run(L):
        x = _t(L, shape, 2, requires_grad=True)
        out = L.nn.functional.fold(x, **kwargs)
        grad, = L.autograd.grad((out * out).sum(), x)
        return out, grad, out.grad_fn.name()
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    assert_same(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    assert ours[2] == theirs[2] == "Col2ImBackward0"


def _leaf(L, shape, seed):
    return _t(L, shape, seed, requires_grad=True)


# Each builds (output, leaf) with a non-linear step around the operator, so that its second
# derivative goes through the operator's backward (for these linear ones: the other operator).
SECOND_ORDER = {
    "unfold": lambda L: (lambda x: (L.nn.functional.unfold(x.tanh(), 2, padding=1) ** 3, x))(
        _leaf(L, (1, 2, 4, 4), 3)),
    "fold": lambda L: (lambda x: (L.nn.functional.fold(x.tanh(), (3, 4), 2, padding=1) ** 3, x))(
        _leaf(L, (1, 8, 20), 4)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    assert_second_derivatives_match_torch(SECOND_ORDER[name], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8", "bool", "complex64"])
def test_dtypes_match_torch(dtype):
    def run(L):
        x = _t(L, (1, 2, 4, 4), 4).mul(3).to(getattr(L, dtype))
        return L.nn.functional.fold(L.nn.functional.unfold(x, 2, stride=1), (4, 4), 2)
    same_outcome(run)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kwargs", [dict(kernel_size=3),
                                    dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(1, 2))])
def test_fold_16_bit_rounds_each_add_as_torch_cpu(dtype, kwargs):
    """torch's CPU col2im adds into the 16-bit image, rounding after every add: bit for bit."""
    def run(L):
        blocks = L.nn.functional.unfold(_t(L, (2, 3, 7, 6), 8), **kwargs).shape[-1]
        cols = _t(L, (2, 3 * 6, blocks), 9).mul(300).to(getattr(L, dtype))
        return L.nn.functional.fold(cols, (7, 6), **kwargs), cols
    (ours, _), (theirs, cols) = run(internals), run(torch)
    assert_same(ours, theirs, rtol=0, atol=0)
    # the inputs tell the two orders apart: summed in float32 and rounded once, they differ
    rounded_once = torch.nn.functional.fold(cols.float(), (7, 6), **kwargs).to(cols.dtype)
    assert not torch.equal(rounded_once, theirs)


def test_noncontiguous_and_channels_last_inputs_match_torch():
    def run(L):
        x = _t(L, (2, 5, 4, 3), 5).permute(0, 3, 2, 1)          # (2, 3, 4, 5), no contiguous strides
        cl = _t(L, (2, 3, 4, 5), 6).to(memory_format=L.channels_last)
        cols = _t(L, (2, 4, 18), 7).transpose(1, 2).contiguous().transpose(1, 2)
        F = L.nn.functional
        return F.unfold(x, 2), F.unfold(cl, (2, 3), stride=2), F.fold(cols, (4, 7), 2)
    same_outcome(lambda L: run(L)[0])
    same_outcome(lambda L: run(L)[1])
    same_outcome(lambda L: run(L)[2], rtol=1e-12, atol=1e-12)


BAD = {
    "unfold_2d": lambda F, x: F.unfold(x[0, 0], 2),
    "unfold_1d": lambda F, x: F.unfold(x[0, 0, 0], 2),
    "unfold_0d": lambda F, x: F.unfold(x[0, 0, 0, 0], 2),
    "unfold_5d": lambda F, x: F.unfold(x[None], 2),
    "unfold_zero_channels": lambda F, x: F.unfold(x[:, :0], 2),
    "unfold_kernel_0": lambda F, x: F.unfold(x, 0),
    "unfold_dilation_0": lambda F, x: F.unfold(x, 2, dilation=0),
    "unfold_negative_padding": lambda F, x: F.unfold(x, 2, padding=-1),
    "unfold_stride_0": lambda F, x: F.unfold(x, 2, stride=0),
    "unfold_too_big": lambda F, x: F.unfold(x, 6),
    "unfold_three_ints": lambda F, x: F.unfold(x, (2, 2, 2)),
    "fold_wrong_blocks": lambda F, x: F.fold(x.reshape(2, 12, 5), (4, 4), 2),
    "fold_channels_not_divisible": lambda F, x: F.fold(x.reshape(2, 10, 6), (3, 4), 2),
    "fold_4d": lambda F, x: F.fold(x, (4, 4), 2),
    "fold_1d": lambda F, x: F.fold(x.reshape(-1), (4, 4), 2),
    "fold_empty_blocks": lambda F, x: F.fold(x.reshape(2, 60, 1)[:, :, :0], (4, 4), 2),
    "fold_output_too_small": lambda F, x: F.fold(x.reshape(2, 4, 15), (1, 1), 2),
    "fold_stride_0": lambda F, x: F.fold(x.reshape(2, 12, 5), (4, 4), 2, stride=0),
    "fold_padding_negative": lambda F, x: F.fold(x.reshape(2, 12, 5), (4, 4), 2, padding=-1),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torch_errors(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, _t(L, (2, 3, 4, 5), 8)))


def test_modules_match_torch():
    def run(L):
        x = _t(L, (2, 3, 5, 5), 9)
        unfold, fold = L.nn.Unfold((2, 3), padding=1, stride=2), L.nn.Fold((5, 5), (2, 3), padding=1, stride=2)
        return unfold(x), fold(unfold(x)), repr(unfold), repr(fold)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0])
    assert_same(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    assert ours[2:] == theirs[2:]
