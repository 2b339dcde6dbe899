"""Differential tests of resizing against torch: ``F.interpolate`` (nearest on 3-D and 4-D input,
linear, bilinear with ``align_corners`` both ways, area), ``F.upsample_nearest``,
``F.upsample_bilinear``, ``nn.Upsample`` and the operators underneath
(``upsample_nearest{1,2}d``, ``upsample_linear1d``, ``upsample_bilinear2d`` and their backward
operators).

PyTorch's OpInfo samples of the modes internals has (as given and non-contiguous); sizes and
scale factors drawn at random, with and without ``recompute_scale_factor``: values, gradients,
second derivatives and node names; errors. Nearest copies values, so it is compared bit for bit;
the linear modes weigh two (four) values, where torch's compiled loop may fuse a multiply and an
add, so within a few ulps.
"""
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error, compare_call, noncontiguous, opinfo_samples, to_ours
from hypothesis import given, settings
from hypothesis import strategies as hs
from torch.testing._internal.common_methods_invocations import op_db

import internals

F, NNF = internals.nn.functional, torch.nn.functional
TOL = {torch.float32: (2e-6, 2e-6), torch.float64: (1e-14, 1e-14)}
# (OpInfo name, variant) -> the input dims internals resizes in that mode
SUPPORTED = {("nn.functional.interpolate", "nearest"): (3, 4), ("nn.functional.interpolate", "linear"): (3,),
             ("nn.functional.interpolate", "bilinear"): (4,), ("nn.functional.interpolate", "area"): (4,),
             ("nn.functional.upsample_nearest", ""): (3, 4), ("nn.functional.upsample_bilinear", ""): (4,)}
OPINFOS = {(op.name, op.variant_test_name): op for op in op_db if (op.name, op.variant_test_name) in SUPPORTED}
assert set(OPINFOS) == set(SUPPORTED)


def _ours(name):
    return getattr(F, name.rpartition(".")[2])


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
@pytest.mark.parametrize("key", sorted(SUPPORTED), ids=lambda k: f"{k[0]}.{k[1]}" if k[1] else k[0])
def test_opinfo_samples(key, dtype):
    op, ran = OPINFOS[key], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in opinfo_samples(op, dtype):
            if sample.input.dim() not in SUPPORTED[key]:
                continue
            for x, args, kwargs in ((sample.input, sample.args, sample.kwargs),
                                    (noncontiguous(sample.input), sample.args, sample.kwargs)):
                ours = (to_ours(x), to_ours(tuple(args)), {k: to_ours(v) for k, v in kwargs.items()})
                compare_call(_ours(key[0]), op.op, (x, args, kwargs), ours, TOL)
                ran += 1
    assert ran >= 8


def _run(lib, x, **kwargs):
    """The resized input, its grad_fn name, the input's gradient for a fixed upstream gradient,
    and the second derivative's node (the backward operator's own backward)."""
    leaf = (internals.from_torch(x) if lib is internals else x.clone()).requires_grad_()
    y = lib.nn.functional.interpolate(leaf, **kwargs)
    g = torch.linspace(-1, 1, y.numel(), dtype=x.dtype).reshape(tuple(y.shape))
    g = internals.from_torch(g) if lib is internals else g
    g.requires_grad_()
    (gx,) = lib.autograd.grad(y, leaf, g, create_graph=True)
    (gg,) = lib.autograd.grad(gx.pow(2).sum(), g)
    return y, type(y.grad_fn).__name__, gx, type(gx.grad_fn).__name__, gg


def _compare(x, exact, **kwargs):
    try:
        expected = _run(torch, x, **kwargs)
    except Exception:
        assert_same_error(lambda: _run(internals, x, **kwargs), lambda: _run(torch, x, **kwargs))
        return
    got = _run(internals, x, **kwargs)
    assert got[1] == expected[1] and got[3] == expected[3]
    tol = {} if exact else dict(rtol=4e-6, atol=4e-6) if x.dtype == torch.float32 else dict(rtol=1e-13, atol=1e-13)
    for i in (0, 2, 4):
        assert_same(got[i], expected[i], exact_layout=False, **tol)


MODES = {"nearest": (3, 4), "linear": (3,), "bilinear": (4,)}


@settings(deadline=None, max_examples=40)
@given(mode=hs.sampled_from(sorted(MODES)), dims=hs.integers(3, 4), sizes=hs.lists(hs.integers(1, 7), min_size=2,
       max_size=2), use_scale=hs.booleans(), scale=hs.sampled_from([0.5, 0.7, 1.0, 1.5, 2.0, 2.3, 3.0]),
       out=hs.lists(hs.integers(1, 9), min_size=2, max_size=2), align=hs.booleans(), recompute=hs.booleans(),
       dtype=hs.sampled_from([torch.float32, torch.float64]))
def test_interpolate_matches_torch(mode, dims, sizes, use_scale, scale, out, align, recompute, dtype):
    if dims not in MODES[mode]:
        return
    torch.manual_seed(0)
    spatial = dims - 2
    x = torch.randn(2, 3, *sizes[:spatial], dtype=dtype)
    kwargs = dict(mode=mode)
    if mode != "nearest":
        kwargs["align_corners"] = align
    if use_scale:
        kwargs.update(scale_factor=scale, recompute_scale_factor=recompute)
    else:
        kwargs.update(size=out[:spatial])
    _compare(x, mode == "nearest", **kwargs)


@pytest.mark.parametrize("align", (False, True))
def test_bilinear_on_channels_last_and_transposed_input(align):
    torch.manual_seed(1)
    x = torch.randn(2, 3, 5, 4).contiguous(memory_format=torch.channels_last)
    ours = F.interpolate(internals.from_torch(x), size=(7, 6), mode="bilinear", align_corners=align)
    theirs = NNF.interpolate(x, size=(7, 6), mode="bilinear", align_corners=align)
    assert ours.stride() == theirs.stride()
    assert_same(ours, theirs, rtol=4e-6, atol=4e-6)
    xt = torch.randn(2, 3, 6, 4).transpose(2, 3)
    _compare(xt, False, size=(5, 9), mode="bilinear", align_corners=align)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.interpolate(x, size=(4, 4), mode="linear"),
    lambda lib, x: lib.nn.functional.interpolate(x[0], size=4, mode="bilinear", align_corners=False),
    lambda lib, x: lib.nn.functional.interpolate(x, size=4, scale_factor=2.0),
    lambda lib, x: lib.nn.functional.interpolate(x),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2, 2)),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=(2.0,)),
    lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="nearest", align_corners=True),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(3, 3), recompute_scale_factor=True),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(0, 3)),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=0.1),
    lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="cubic"),
    lambda lib, x: lib.nn.functional.interpolate(x[0, 0], size=3),
    lambda lib, x: lib.nn.functional.interpolate(x.long(), size=(3, 3), mode="bilinear", align_corners=False),
    lambda lib, x: lib.nn.functional.interpolate(x[0], size=3, mode="linear", antialias=True),
], ids=["linear_on_4d", "bilinear_on_3d", "size_and_scale", "neither", "size_too_long", "scale_too_short",
        "nearest_with_align", "recompute_with_size", "zero_size", "scale_to_nothing", "unknown_mode", "2d_input",
        "integer_bilinear", "antialias_on_linear"])
def test_errors_match_torch(call):
    x = torch.randn(1, 2, 4, 4)
    assert_same_error(lambda: call(internals, internals.from_torch(x)), lambda: call(torch, x))


def test_upsample_modules():
    for lib in (torch, internals):
        lib.manual_seed(0)
    x = torch.randn(1, 2, 3, 3)
    modules = [lambda lib: lib.nn.Upsample(scale_factor=2), lambda lib: lib.nn.Upsample(size=(5, 4), mode="bilinear"),
               lambda lib: lib.nn.Upsample(scale_factor=(1.5, 2), mode="bilinear", align_corners=True),
               lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=3),
               lambda lib: lib.nn.UpsamplingBilinear2d(size=4)]
    for make in modules:
        ours, theirs = make(internals), make(torch)
        assert repr(ours) == repr(theirs)
        assert ours.scale_factor == theirs.scale_factor and ours.align_corners == theirs.align_corners
        assert_same(ours(internals.from_torch(x)), theirs(x), rtol=4e-6, atol=4e-6)


def test_operators_logged_by_a_dispatch_mode():
    """The aten operators torch's ``interpolate`` reaches, with the same arguments."""
    from helpers import logging_modes
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    x = torch.randn(1, 1, 3, 3)
    with mode_t:
        NNF.interpolate(x, scale_factor=2, mode="bilinear")
    with mode_i:
        F.interpolate(internals.from_torch(x), scale_factor=2, mode="bilinear")
    assert log_t[0] == log_i[0]
