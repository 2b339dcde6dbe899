"""Differential tests of resizing against torch: ``F.interpolate`` (nearest and nearest-exact on
3-D to 5-D input, linear, bilinear, bicubic and trilinear with ``align_corners`` both ways, area),
``F.upsample_nearest``, ``F.upsample_bilinear``, ``nn.Upsample`` and the operators underneath
(``upsample_nearest{1,2,3}d``, ``_upsample_nearest_exact{1,2,3}d``, ``upsample_linear1d``,
``upsample_bilinear2d``, ``upsample_bicubic2d``, ``upsample_trilinear3d`` and their backward
operators), on the CPU and through the CUDA kernels.

PyTorch's OpInfo samples of the modes internals has (as given and non-contiguous); sizes and
scale factors drawn at random, with and without ``recompute_scale_factor``: values, gradients,
second derivatives and node names; errors. Nearest copies values, so it is compared bit for bit;
the linear and cubic modes weigh two or four values per dim, where torch's compiled loop may fuse
a multiply and an add, so within a few ulps.
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
# bicubic's weights go negative, so an output near zero can be the difference of values near the
# input's largest (9 in the OpInfo samples): a few ulps of those, not of the output
CUBIC_TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-13, 1e-13)}
# (OpInfo name, variant) -> the input dims internals resizes in that mode
SUPPORTED = {("nn.functional.interpolate", "nearest"): (3, 4, 5), ("nn.functional.interpolate", "linear"): (3,),
             ("nn.functional.interpolate", "bilinear"): (4,), ("nn.functional.interpolate", "area"): (3, 4, 5),
             ("nn.functional.interpolate", "nearest-exact"): (3, 4, 5),
             ("nn.functional.interpolate", "bicubic"): (4,), ("nn.functional.interpolate", "trilinear"): (5,),
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
                compare_call(_ours(key[0]), op.op, (x, args, kwargs), ours, CUBIC_TOL if key[1] == "bicubic" else TOL)
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


MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "linear": (3,), "bilinear": (4,), "bicubic": (4,),
         "trilinear": (5,), "area": (3, 4, 5)}
EXACT = ("nearest", "nearest-exact")


@settings(deadline=None, max_examples=80)
@given(mode=hs.sampled_from(sorted(MODES)), dims=hs.integers(3, 5), sizes=hs.lists(hs.integers(1, 6), min_size=3,
       max_size=3), use_scale=hs.booleans(), scale=hs.sampled_from([0.5, 0.7, 1.0, 1.5, 2.0, 2.3, 3.0]),
       out=hs.lists(hs.integers(1, 8), min_size=3, max_size=3), align=hs.booleans(), recompute=hs.booleans(),
       dtype=hs.sampled_from([torch.float32, torch.float64]))
def test_interpolate_matches_torch(mode, dims, sizes, use_scale, scale, out, align, recompute, dtype):
    if dims not in MODES[mode]:
        return
    torch.manual_seed(0)
    spatial = dims - 2
    x = torch.randn(2, 3, *sizes[:spatial], dtype=dtype)
    kwargs = dict(mode=mode)
    if mode not in EXACT and mode != "area":
        kwargs["align_corners"] = align
    if use_scale:
        kwargs.update(scale_factor=scale, recompute_scale_factor=recompute)
    else:
        kwargs.update(size=out[:spatial])
    _compare(x, mode in EXACT, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("mode, dims", [("nearest", 3), ("nearest", 5), ("nearest-exact", 3), ("nearest-exact", 4),
                                        ("nearest-exact", 5)])
@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
def test_nearest_picks_the_positions_torch_picks(mode, dims, dtype):
    """The 2-d kernels index with the float ``nearest_idx`` (and its short cut for doubled sizes),
    the 1-d and 3-d ones with the generic loop's sums in the input's precision: every input length
    to 24 and scale factors whose positions fall near a boundary, bit for bit, forward and backward."""
    for length in range(1, 25):
        shape = (1, 2) + (1,) * (dims - 3) + (length,)
        x = torch.arange(float(2 * length), dtype=dtype).reshape(shape)
        for scale in (0.3, 1 / 3, 0.7, 5 / 7, 1.3, 1.7, 2.3, 2.9, 3.3):
            if int(length * scale) < 1:
                continue
            _compare(x, True, scale_factor=(1.0,) * (dims - 3) + (scale,), mode=mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode, shape", [("bicubic", (1, 2, 3, 4)), ("trilinear", (1, 2, 2, 3, 2)),
                                         ("nearest-exact", (1, 2, 3, 2, 2)), ("nearest", (1, 1, 2, 3, 3))])
@pytest.mark.parametrize("align", (False, True))
def test_gradcheck_in_float64(mode, shape, align):
    """Each operator's backward is its forward's derivative, and the backward's own derivative
    (the forward operator again) too: first and second derivatives against finite differences."""
    if align and mode.startswith("nearest"):
        return
    torch.manual_seed(0)
    x = internals.from_torch(torch.randn(shape, dtype=torch.float64)).requires_grad_()
    kwargs = dict(scale_factor=1.7, mode=mode, **({} if mode.startswith("nearest") else dict(align_corners=align)))

    def resize(t):
        return F.interpolate(t, **kwargs)

    def input_gradient(g):           # linear in g: its derivative is the forward operator again
        with internals.enable_grad():   # gradcheck's finite differences run without grad mode
            return internals.autograd.grad(resize(x), x, g, create_graph=True)[0]
    g = internals.from_torch(torch.randn(tuple(resize(x).shape), dtype=torch.float64)).requires_grad_()
    assert internals.autograd.gradcheck(resize, (x,))
    assert internals.autograd.gradcheck(input_gradient, (g,))


@pytest.mark.parametrize("mode, shape", [("bicubic", (1, 2, 3, 3)), ("trilinear", (1, 1, 2, 2, 3)),
                                         ("nearest-exact", (1, 2, 2, 3)), ("nearest", (1, 1, 2, 2, 2))])
def test_cuda_kernels_match_cpu(mode, shape):
    """The same index and weight arrays drive the CUDA indexing kernels (on the simulator without
    a GPU): forward and input gradient equal the CPU's."""
    torch.manual_seed(0)
    x, g = torch.randn(shape, dtype=torch.float64), None
    results = []
    for device in ("cpu", "cuda"):
        leaf = internals.from_torch(x).to(device).requires_grad_()
        kwargs = dict(size=tuple(s + 1 for s in shape[2:]), mode=mode)
        y = F.interpolate(leaf, **kwargs, **({} if mode.startswith("nearest") else dict(align_corners=False)))
        g = g if g is not None else torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(tuple(y.shape))
        (gx,) = internals.autograd.grad(y, leaf, internals.from_torch(g).to(device))
        results.append((y.cpu(), gx.cpu(), type(y.grad_fn).__name__))
    assert results[0][2] == results[1][2]
    for cpu, cuda in zip(results[0][:2], results[1][:2]):
        assert_same(cuda, cpu.to_torch(), rtol=1e-12, atol=1e-12)


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


@pytest.mark.parametrize("kwargs", [dict(size=(7, 3), mode="bilinear", align_corners=True),
                                    dict(scale_factor=(2, 0.5), mode="nearest"), dict(size=(5, 4), mode="bicubic"),
                                    dict(size=(6, 6), mode="bicubic"), dict(size=(6, 6), mode="nearest-exact")],
                         ids=["bilinear", "nearest", "bicubic_same_size", "bicubic", "nearest_exact"])
def test_channels_last_input_gradient_layout_matches_torch(kwargs):
    """The 2d nearest and bilinear backward operators allocate the input's gradient in the
    gradient's suggested memory format (channels last here); bicubic's is contiguous."""
    def run(lib):
        x = lib.arange(120.0, dtype=lib.float64).reshape(2, 3, 5, 4).sin()
        x = x.to(memory_format=lib.channels_last).requires_grad_()
        out = lib.nn.functional.interpolate(x, **kwargs)
        return lib.autograd.grad((out * out).sum(), x)[0]
    ours, theirs = run(internals), run(torch)
    assert ours.stride() == theirs.stride() == ((60, 20, 4, 1) if kwargs["mode"] == "bicubic" else (60, 1, 12, 3))
    assert_same(ours, theirs, rtol=1e-12, atol=1e-12)


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
    lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2, 2), mode="trilinear"),
    lambda lib, x: lib.nn.functional.interpolate(x[None], size=(2, 2, 2), mode="bicubic"),
    lambda lib, x: lib.nn.functional.interpolate(x[0], size=2, mode="bicubic"),
    lambda lib, x: lib.nn.functional.interpolate(x.long(), size=(3, 3), mode="bicubic"),
    lambda lib, x: lib.nn.functional.interpolate(x[None].long(), size=(3, 3, 3), mode="trilinear"),
    lambda lib, x: lib.nn.functional.interpolate(x[None].long(), size=(3, 3, 3), mode="nearest"),
    lambda lib, x: lib.nn.functional.interpolate(x[0].long(), size=3, mode="nearest-exact"),
    lambda lib, x: lib.nn.functional.interpolate(x[None], size=(0, 3, 3), mode="trilinear"),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(3, 0), mode="bicubic", align_corners=True),
    lambda lib, x: lib.nn.functional.interpolate(x[None], size=(3, 0, 3), mode="nearest-exact"),
    lambda lib, x: lib.nn.functional.interpolate(x, size=3, mode="nearest-exact", align_corners=False),
    lambda lib, x: lib.nn.functional.interpolate(x[None], size=(3, 3, 3), mode="trilinear", antialias=True),
], ids=["linear_on_4d", "bilinear_on_3d", "size_and_scale", "neither", "size_too_long", "scale_too_short",
        "nearest_with_align", "recompute_with_size", "zero_size", "scale_to_nothing", "unknown_mode", "2d_input",
        "integer_bilinear", "antialias_on_linear", "trilinear_on_4d", "bicubic_on_5d", "bicubic_on_3d",
        "integer_bicubic", "integer_trilinear", "integer_nearest_3d", "integer_nearest_exact_1d",
        "zero_size_trilinear", "zero_size_bicubic", "zero_size_nearest_exact", "nearest_exact_with_align",
        "antialias_on_trilinear"])
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
               lambda lib: lib.nn.UpsamplingBilinear2d(size=4),
               lambda lib: lib.nn.Upsample(scale_factor=1.5, mode="bicubic"),
               lambda lib: lib.nn.Upsample(size=(4, 5), mode="bicubic", align_corners=True),
               lambda lib: lib.nn.Upsample(scale_factor=1.7, mode="nearest-exact")]
    for make in modules:
        ours, theirs = make(internals), make(torch)
        assert repr(ours) == repr(theirs)
        assert ours.scale_factor == theirs.scale_factor and ours.align_corners == theirs.align_corners
        assert_same(ours(internals.from_torch(x)), theirs(x), rtol=4e-6, atol=4e-6)
    x3 = torch.randn(1, 2, 2, 3, 2)
    for make in (lambda lib: lib.nn.Upsample(scale_factor=2, mode="trilinear"),
                 lambda lib: lib.nn.Upsample(size=(3, 4, 5), mode="trilinear", align_corners=True),
                 lambda lib: lib.nn.Upsample(scale_factor=(1.5, 2, 2.5))):
        ours, theirs = make(internals), make(torch)
        assert repr(ours) == repr(theirs)
        assert_same(ours(internals.from_torch(x3)), theirs(x3), rtol=4e-6, atol=4e-6)


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


# ---- anti-aliased resizing (``_upsample_{bilinear,bicubic,lanczos}2d_aa`` and their backward)
AA_MODES = ("bilinear", "bicubic", "lanczos")


@settings(deadline=None, max_examples=60)
@given(mode=hs.sampled_from(AA_MODES), sizes=hs.lists(hs.integers(1, 13), min_size=2, max_size=2),
       out=hs.lists(hs.integers(1, 9), min_size=2, max_size=2), use_scale=hs.booleans(),
       scale=hs.sampled_from([0.2, 1 / 3, 0.45, 0.5, 0.7, 1.0, 1.6]), align=hs.booleans(), recompute=hs.booleans(),
       dtype=hs.sampled_from([torch.float32, torch.float64]))
def test_antialias_matches_torch(mode, sizes, out, use_scale, scale, align, recompute, dtype):
    """Filtered resizing down (and up, where the filter keeps its unit width) from sizes or scale
    factors: values, node names (``UpsampleBilinear2DAaBackward0``, ...), the input's gradient and
    the second derivative (the backward operator's node, whose gradient is the forward again)."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, *sizes, dtype=dtype)
    kwargs = dict(mode=mode, antialias=True, align_corners=align and mode != "lanczos")
    if use_scale:
        kwargs.update(scale_factor=scale, recompute_scale_factor=recompute)
    else:
        kwargs.update(size=out)
    out_size = [int(s * scale) for s in sizes] if use_scale else out
    if out_size[1] == 1 and out_size[0] not in (0, sizes[0]):
        return       # torch's forward goes wrong there: see test_antialias_on_one_column_images_differs_from_torch
    _compare(x, False, **kwargs)


def test_antialias_on_one_column_images_differs_from_torch():
    """A known difference: torch's CPU forward, when the output is one pixel wide and the height
    changes, does not resize the height as it resizes the same column laid along the width (its answer
    differs from its own on the transposed image), while its backward is the filter's transpose.
    internals resizes the column as torch resizes the row."""
    torch.manual_seed(5)
    x = torch.randn(1, 2, 4, 1, dtype=torch.float64)
    theirs = NNF.interpolate(x, size=(2, 1), mode="bilinear", antialias=True)
    theirs_transposed = NNF.interpolate(x.transpose(2, 3), size=(1, 2), mode="bilinear", antialias=True)
    ours = F.interpolate(internals.from_torch(x), size=(2, 1), mode="bilinear", antialias=True)
    assert not torch.allclose(theirs, theirs_transposed.transpose(2, 3))
    assert_same(ours, theirs_transposed.transpose(2, 3), exact_layout=False, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("mode", AA_MODES)
def test_antialias_weights_are_torchs(mode):
    """Every output position of a 1-row image is one window of the input, so an input that is 1
    at one position and 0 elsewhere reads back each window's weight: equal to torch's, for every
    input length to 20 shrunk to every shorter length (float64, within a few ulps)."""
    for length in range(2, 21):
        for out in range(1, length):
            eye = torch.eye(length, dtype=torch.float64).reshape(length, 1, 1, length)
            theirs = NNF.interpolate(eye, size=(1, out), mode=mode, antialias=True)
            ours = F.interpolate(internals.from_torch(eye), size=(1, out), mode=mode, antialias=True)
            assert_same(ours, theirs, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("mode", AA_MODES)
def test_antialias_layouts_match_torch(mode):
    """A channels-last input gives a channels-last output; the input gradient's layout is torch's."""
    torch.manual_seed(2)
    for x in (torch.randn(2, 3, 9, 8).contiguous(memory_format=torch.channels_last),
              torch.randn(2, 3, 8, 9).transpose(2, 3)):
        results = []
        for lib in (torch, internals):
            leaf = (internals.from_torch(x) if lib is internals else x.clone()).requires_grad_()
            y = lib.nn.functional.interpolate(leaf, size=(4, 3), mode=mode, antialias=True)
            results.append((y, lib.autograd.grad((y * y).sum(), leaf)[0]))
        for ours, theirs in zip(results[1], results[0]):
            assert_same(ours, theirs, exact_layout=True, rtol=4e-6, atol=4e-6)


@pytest.mark.slow
@pytest.mark.parametrize("mode", AA_MODES)
def test_antialias_gradcheck_in_float64(mode):
    torch.manual_seed(3)
    x = internals.from_torch(torch.randn(1, 2, 5, 6, dtype=torch.float64)).requires_grad_()
    assert internals.autograd.gradcheck(lambda t: F.interpolate(t, size=(3, 2), mode=mode, antialias=True), (x,))


@pytest.mark.parametrize("mode", ("bilinear", "bicubic"))
def test_antialias_cuda_kernels_match_cpu(mode):
    """The same window arrays drive the CUDA indexing kernels (the simulator without a GPU).
    torch has no CUDA kernel for lanczos, and neither has internals."""
    torch.manual_seed(4)
    x = torch.randn(1, 2, 5, 4, dtype=torch.float64)
    results = []
    for device in ("cpu", "cuda"):
        leaf = internals.from_torch(x).to(device).requires_grad_()
        y = F.interpolate(leaf, size=(2, 3), mode=mode, antialias=True)
        (gx,) = internals.autograd.grad((y * y).sum(), leaf)
        results.append((y.cpu(), gx.cpu()))
    for cpu, cuda in zip(*results):
        assert_same(cuda, cpu.to_torch(), rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError):
        F.interpolate(internals.from_torch(x).to("cuda"), size=(2, 3), mode="lanczos", antialias=True)


def test_antialias_opinfo_samples():
    """PyTorch's OpInfo samples of ``_upsample_bilinear2d_aa`` (the operator called directly, with
    sizes and scales, or as the ``.vec`` overload with sizes or scale factors)."""
    op, ran = next(op for op in op_db if op.name == "_upsample_bilinear2d_aa"), 0
    packet = internals.ops.aten._upsample_bilinear2d_aa
    for dtype in (torch.float32, torch.float64):
        for sample in opinfo_samples(op, dtype):
            ours = (to_ours(sample.input), to_ours(tuple(sample.args)), {k: to_ours(v) for k, v in
                                                                         sample.kwargs.items()})
            overload = packet.vec if "scale_factors" in sample.kwargs else packet.default
            compare_call(overload, op.op, (sample.input, sample.args, sample.kwargs), ours, TOL)
            ran += 1
    assert ran >= 7


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2), mode="nearest", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2), mode="area", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x[0], size=2, mode="bilinear", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2), mode="lanczos", align_corners=True, antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(2, 2), mode="lanczos"),
    lambda lib, x: lib.nn.functional.interpolate(x.long(), size=(2, 2), mode="bilinear", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x, size=(0, 2), mode="bicubic", antialias=True),
    lambda lib, x: lib.ops.aten._upsample_bilinear2d_aa_backward(x, [3, 3], [1, 2, 4, 4], False),
    lambda lib, x: lib.ops.aten._upsample_bicubic2d_aa(x[0], [3, 3], False),
], ids=["nearest", "area", "3d_input", "lanczos_align_corners", "lanczos_without_antialias", "integer_input",
        "zero_size", "backward_shape", "operator_on_3d"])
def test_antialias_errors_match_torch(call):
    x = torch.randn(1, 2, 4, 4)
    ours, theirs = assert_same_error(lambda: call(internals, internals.from_torch(x)), lambda: call(torch, x))
    assert str(ours) == str(theirs)


# ---- uint8 images: torch's integer path (int16 weights, exact int32 sums, PIL's rounding)
@settings(deadline=None, max_examples=80)
@given(mode=hs.sampled_from(["bilinear", "bicubic", "lanczos"]), antialias=hs.booleans(),
       sizes=hs.lists(hs.integers(1, 40), min_size=2, max_size=2),
       out=hs.lists(hs.integers(1, 30), min_size=2, max_size=2), use_scale=hs.booleans(),
       scale=hs.sampled_from([0.2, 1 / 3, 0.45, 0.5, 0.7, 1.0, 1.6, 2.0]), align=hs.booleans(),
       channels=hs.sampled_from([1, 3, 4, 5]), channels_last=hs.booleans())
def test_uint8_resize_matches_torch_bit_for_bit(mode, antialias, sizes, out, use_scale, scale, align, channels,
                                                channels_last):
    """Anti-aliased bilinear, bicubic and Lanczos, and plain bilinear and bicubic, of uint8
    images (torchvision's ``Resize`` on a uint8 tensor): the same bytes, shape and strides.
    Integer sums have one answer on every CPU, so the comparison is exact."""
    if mode == "lanczos" and not antialias:
        return
    torch.manual_seed(0)
    x = torch.randint(0, 256, (2, channels, *sizes), dtype=torch.uint8)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    kwargs = dict(mode=mode, antialias=antialias, align_corners=align and mode != "lanczos")
    if use_scale:
        kwargs.update(scale_factor=scale)
        if min(int(s * scale) for s in sizes) < 1:
            return
    else:
        kwargs.update(size=out)
    theirs = NNF.interpolate(x, **kwargs)
    ours = F.interpolate(internals.from_torch(x), **kwargs)
    assert_same(ours, theirs, rtol=0, atol=0)


def test_uint8_resize_rounds_and_clamps_as_torch():
    """Bicubic's negative lobes push a sharp edge below 0 and above 255: the sums are clamped,
    not wrapped; a flat image stays flat (the weights sum to one unit of their precision)."""
    edge = torch.zeros(1, 1, 6, 12, dtype=torch.uint8)
    edge[..., 6:] = 255
    flat = torch.full((1, 3, 7, 9), 77, dtype=torch.uint8)
    for x, size in ((edge, (6, 23)), (edge, (6, 5)), (flat, (3, 4)), (flat, (11, 20))):
        for mode, antialias in (("bicubic", True), ("bicubic", False), ("bilinear", True), ("lanczos", True)):
            theirs = NNF.interpolate(x, size=size, mode=mode, antialias=antialias)
            ours = F.interpolate(internals.from_torch(x), size=size, mode=mode, antialias=antialias)
            assert_same(ours, theirs, rtol=0, atol=0)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.interpolate(x.half(), size=(2, 2), mode="bilinear", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x.bfloat16(), size=(2, 2), mode="bicubic", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x.to(lib.int8), size=(2, 2), mode="bicubic", antialias=True),
    lambda lib, x: lib.nn.functional.interpolate(x.int(), size=(2, 2), mode="lanczos", antialias=True),
], ids=["half", "bfloat16", "int8", "int32"])
def test_antialias_refuses_the_dtypes_torch_refuses(call):
    """Only float, double and uint8 have anti-aliased kernels; the others raise torch's error."""
    x = torch.randn(1, 2, 4, 4)
    ours, theirs = assert_same_error(lambda: call(internals, internals.from_torch(x)), lambda: call(torch, x))
    assert str(ours) == str(theirs)
