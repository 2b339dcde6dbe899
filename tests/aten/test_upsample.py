"""The upsample operators and their backwards, declared as torch declares them
(``aten/native/upsample.py``): each an out= kernel (``.out``, ``.grad_input``) of a meta step
(the sizes checked, the output laid out: a forward's as the input suggests, the 2-d nearest and
the bi- and trilinear backwards' as grad_output suggests, the others contiguous) and an impl step, with the
functional form derived from it. The values themselves are compared in ``tests/nn/test_interpolate.py``.
"""

import pytest
import torch
from helpers import (
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_same,
    same_error,
)

import internals
from internals.aten.native import upsample

# name: (spatial dims, the arguments after output_size)
OPERATORS = {
    "upsample_nearest1d": (1, ()), "upsample_nearest2d": (2, ()), "upsample_nearest3d": (3, ()),
    "_upsample_nearest_exact1d": (1, ()), "_upsample_nearest_exact2d": (2, ()), "_upsample_nearest_exact3d": (3, ()),
    "upsample_linear1d": (1, (False,)), "upsample_bilinear2d": (2, (True,)), "upsample_trilinear3d": (3, (False,)),
    "upsample_bicubic2d": (2, (False,)), "_upsample_bilinear2d_aa": (2, (False,)),
    "_upsample_bicubic2d_aa": (2, (True,)), "_upsample_lanczos2d_aa": (2, (False,)),
}


@pytest.mark.parametrize("name", OPERATORS)
def test_forward_and_backward_are_derived_from_structured_out_kernels(name):
    assert_derived_from_structured_out(name, "out", upsample)
    assert_derived_from_structured_out(name + "_backward", "grad_input", upsample)


def _input(L, dims, channels_last=False, size=4):
    x = L.arange(2. * 3 * size ** dims).reshape(2, 3, *[size] * dims).cos()
    if channels_last:
        x = x.contiguous(memory_format=L.channels_last if dims == 2 else L.channels_last_3d)
    return x


def _sizes(dims, size):
    return [size + k for k in range(dims)]      # unequal sizes: a transposed layout would show


def _forward(L, name, channels_last=False, out_size=6, **out):
    dims, extra = OPERATORS[name]
    op = getattr(L.ops.aten, name)
    return (op.out if out else op)(_input(L, dims, channels_last), _sizes(dims, out_size), *extra, **out)


def _backward(L, name, channels_last=False, out_size=6, **out):
    dims, extra = OPERATORS[name]
    grad = _input(L, dims, size=1).new_ones(2, 3, *_sizes(dims, out_size)) * 0.5
    if channels_last:
        grad = grad.contiguous(memory_format=L.channels_last if dims == 2 else L.channels_last_3d)
    op = getattr(L.ops.aten, name + "_backward")
    return (op.grad_input if out else op)(grad, _sizes(dims, out_size), [2, 3, *[4] * dims], *extra, **out)


def _transposed_empty(L, shape):
    """An ``out`` of the right sizes with every dim's stride reversed."""
    return L.empty(*reversed(shape)).permute(*reversed(range(len(shape))))


CASES = {}
for _name, (_dims, _) in OPERATORS.items():
    _down = 3 if "_aa" in _name else 6          # the anti-aliased ones are for shrinking
    CASES[f"{_name}, functional"] = lambda L, n=_name, s=_down: _forward(L, n, out_size=s)
    CASES[f"{_name}, into an empty out"] = lambda L, n=_name, s=_down: _forward(L, n, out_size=s, out=L.empty(0))
    CASES[f"{_name}, an out that fits keeps its strides"] = lambda L, n=_name, d=_dims, s=_down: _forward(
        L, n, out_size=s, out=_transposed_empty(L, [2, 3, *_sizes(d, s)]))
    CASES[f"{_name}_backward, into an empty out"] = lambda L, n=_name, s=_down: _backward(
        L, n, out_size=s, grad_input=L.empty(0))
    if _name != "upsample_bicubic2d":      # torch's bicubic backward loop writes such an out as if it were
        # contiguous (its values then differ from its own functional form's): nothing to compare with
        CASES[f"{_name}_backward, an out that fits keeps its strides"] = lambda L, n=_name, d=_dims, s=_down: (
            _backward(L, n, out_size=s, grad_input=_transposed_empty(L, [2, 3, *[4] * d])))
    if _dims > 1:
        CASES[f"{_name}, channels-last into an empty out"] = lambda L, n=_name, s=_down: _forward(
            L, n, True, out_size=s, out=L.empty(0))
        CASES[f"{_name}_backward, channels-last into an empty out"] = lambda L, n=_name, s=_down: _backward(
            L, n, True, out_size=s, grad_input=L.empty(0))


@pytest.mark.parametrize("case", CASES)
def test_forms_match_torch(case):
    """Sizes, strides and dtype exactly; the values within a float32 rounding of the inputs'
    magnitude (1), as ``tests/nn/test_interpolate.py`` compares them: the weighted modes add
    taps of both signs, and torch's vector loops round and fuse them differently, so a sum near
    zero can be many ulps of itself apart."""
    assert_same(CASES[case](internals), CASES[case](torch), rtol=1e-5, atol=1e-6)


RESIZE_CASES = {
    "nearest": lambda L: _forward(L, "upsample_nearest2d", out=L.empty(5)),
    "trilinear backward": lambda L: _backward(L, "upsample_trilinear3d", grad_input=L.empty(2, 2)),
    "anti-aliased bicubic": lambda L: _forward(L, "_upsample_bicubic2d_aa", out_size=3, out=L.empty(3)),
}


@pytest.mark.parametrize("case", RESIZE_CASES)
def test_a_wrong_sized_out_is_resized_with_torchs_warning(case, capfd):
    assert_ops_out_resized_with_torchs_warning(RESIZE_CASES[case], capfd)


ERROR_CASES = {
    "out of another dtype": lambda L: _forward(L, "upsample_bilinear2d", out=L.empty(0, dtype=L.float64)),
    "gradient out of another dtype": lambda L: _backward(L, "upsample_nearest1d",
                                                         grad_input=L.empty(0, dtype=L.float64)),
    "an input of the wrong rank": lambda L: L.ops.aten.upsample_nearest2d.out(L.ones(3, 4), [2, 2], out=L.empty(0)),
    "a zero output size": lambda L: L.ops.aten.upsample_linear1d.out(L.ones(1, 2, 3), [0], False, out=L.empty(0)),
    "too many output sizes": lambda L: L.ops.aten.upsample_trilinear3d.out(L.ones(1, 1, 2, 2, 2), [2, 2], False,
                                                                           out=L.empty(0)),
    "a gradient of other sizes": lambda L: L.ops.aten.upsample_bicubic2d_backward.grad_input(
        L.ones(2, 3, 5, 6), [6, 6], [2, 3, 4, 4], False, grad_input=L.empty(0)),
    "an anti-aliased input of the wrong rank": lambda L: L.ops.aten._upsample_lanczos2d_aa.out(
        L.ones(3, 4, 4), [2, 2], False, out=L.empty(0)),
    "out= of an input that requires grad": lambda L: L.ops.aten.upsample_nearest1d.out(
        L.ones(1, 2, 3, requires_grad=True), [6], out=L.empty(0)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


FAKE_PROGRAMS = {
    "bilinear": lambda L, x: L.ops.aten.upsample_bilinear2d(x, [6, 7], False),
    "nearest, out resized": lambda L, x: L.ops.aten.upsample_nearest2d.out(x, [6, 7], out=L.empty(0)),
    "bilinear backward, channels-last gradient": lambda L, x: L.ops.aten.upsample_bilinear2d_backward(
        x, [4, 4], [2, 3, 2, 2], False),
    "anti-aliased bicubic backward": lambda L, x: L.ops.aten._upsample_bicubic2d_aa_backward(
        x, [4, 4], [2, 3, 8, 8], False),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program], lambda: (_input(internals, 2, True),))
