"""Differential tests of sampling at grid points against torch: ``F.grid_sample`` on 4-D input
(``grid_sampler`` -> ``grid_sampler_2d`` and ``grid_sampler_2d_backward``; modes bilinear, nearest
and bicubic) and on 5-D volumes (``grid_sampler_3d`` and its backward; bilinear and nearest, as
torch), paddings zeros, border and reflection, ``align_corners`` both ways; the backward
operators differentiated again (``GridSampler{2,3}DBackwardBackward0``); and ``F.affine_grid``
(``affine_grid_generator`` and its backward), on the CPU and through the CUDA kernels.

Values, layouts, node names and the gradients of input, grid and theta; first and second
derivatives against torch's and against finite differences in float64; errors and warnings.
Nearest reads copy values and compare bit for bit; bilinear and bicubic weigh 4, 8 or 16 values
with products torch's vectorised loop may fuse and sums it may order otherwise, so within a few
ulps (bicubic's weights go negative: a few ulps of the values read, not of the output).
"""
import itertools
import warnings

import pytest
import torch
from helpers import assert_same, assert_same_error, compare_call, opinfo_samples, to_ours
from torch.testing._internal.common_methods_invocations import op_db

import internals

F, NNF = internals.nn.functional, torch.nn.functional
TOL = {torch.float32: dict(rtol=4e-6, atol=4e-6), torch.float64: dict(rtol=1e-13, atol=1e-13)}
CUBIC_TOL = {torch.float32: dict(rtol=2e-5, atol=2e-5), torch.float64: dict(rtol=1e-12, atol=1e-12)}
PADDINGS = ("zeros", "border", "reflection")
COMBINATIONS = list(itertools.product(("bilinear", "nearest", "bicubic"), PADDINGS, (False, True)))
VOLUME_COMBINATIONS = list(itertools.product(("bilinear", "nearest"), PADDINGS, (False, True)))


def _tol(mode, dtype):
    return {} if mode == "nearest" else (CUBIC_TOL if mode == "bicubic" else TOL)[dtype]


def _run(lib, x, grid, **kwargs):
    """Output, its node name, and the gradients of input and grid for a fixed upstream gradient."""
    xi = (internals.from_torch(x) if lib is internals else x.clone()).requires_grad_()
    gi = (internals.from_torch(grid) if lib is internals else grid.clone()).requires_grad_()
    y = lib.nn.functional.grid_sample(xi, gi, **kwargs)
    g = torch.linspace(-1, 1, y.numel(), dtype=x.dtype).reshape(tuple(y.shape))
    gx, gg = lib.autograd.grad(y, (xi, gi), internals.from_torch(g) if lib is internals else g)
    return y, type(y.grad_fn).__name__, gx, gg


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
@pytest.mark.parametrize("mode, padding_mode, align_corners", COMBINATIONS)
def test_grid_sample_matches_torch(mode, padding_mode, align_corners, dtype):
    """Points inside, on the edge and well outside the image (|coordinate| up to 2.5), so every
    padding rule folds some of them; a transposed (non-contiguous) and a channels-last input."""
    torch.manual_seed(0)
    kwargs = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    for x in (torch.randn(2, 3, 4, 5, dtype=dtype), torch.randn(2, 3, 5, 4, dtype=dtype).transpose(2, 3),
              torch.randn(2, 3, 4, 5, dtype=dtype).contiguous(memory_format=torch.channels_last)):
        grid = torch.rand(2, 3, 7, 2, dtype=dtype) * 5 - 2.5
        grid[0, 0, :4] = torch.tensor([[-1, -1], [1, 1], [0, 0], [1, -1]], dtype=dtype)
        theirs, ours = _run(torch, x, grid, **kwargs), _run(internals, x, grid, **kwargs)
        assert ours[1] == theirs[1] == "GridSampler2DBackward0"
        for i in (0, 2, 3):
            assert_same(ours[i], theirs[i], exact_layout=True, **_tol(mode, dtype))


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64), ids=str)
@pytest.mark.parametrize("mode, padding_mode, align_corners", VOLUME_COMBINATIONS)
def test_volumes_match_torch(mode, padding_mode, align_corners, dtype):
    """5-D input: eight corners per point (trilinear) or the nearest voxel, the grid's (x, y, z)
    reading along W, H and D."""
    torch.manual_seed(6)
    kwargs = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    for x in (torch.randn(2, 2, 3, 4, 5, dtype=dtype), torch.randn(2, 2, 5, 4, 3, dtype=dtype).transpose(2, 4)):
        grid = torch.rand(2, 2, 3, 4, 3, dtype=dtype) * 5 - 2.5
        grid[0, 0, 0, :3] = torch.tensor([[-1, -1, -1], [1, 1, 1], [0, 0, 0]], dtype=dtype)
        theirs, ours = _run(torch, x, grid, **kwargs), _run(internals, x, grid, **kwargs)
        assert ours[1] == theirs[1] == "GridSampler3DBackward0"
        for i in (0, 2, 3):
            assert_same(ours[i], theirs[i], exact_layout=True, **_tol(mode, dtype))


@pytest.mark.parametrize("output_mask", ([True, False], [False, True]), ids=str)
@pytest.mark.parametrize("mode, dims", [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3)])
def test_backward_operator_output_mask_matches_torch(mode, dims, output_mask):
    """grid_sampler_{2,3}d_backward called directly: grad_input only where the mask asks for it,
    grad_grid always (torch's CPU kernels compute it whatever the mask says)."""
    torch.manual_seed(9)
    shape, points = ((1, 2, 3, 4), (1, 2, 3, 2)) if dims == 2 else ((1, 2, 2, 3, 4), (1, 2, 2, 3, 3))
    x, grid = torch.randn(shape), torch.rand(points) * 3 - 1.5
    go = torch.randn(*shape[:2], *points[1:-1])
    args = (1 if mode == "nearest" else 2 if mode == "bicubic" else 0, 2, False, output_mask)
    name = f"grid_sampler_{dims}d_backward"
    theirs = getattr(torch.ops.aten, name)(go, x, grid, *args)
    ours = getattr(internals.ops.aten, name)(*(internals.from_torch(t) for t in (go, x, grid)), *args)
    assert [t is None for t in ours] == [t is None for t in theirs]
    for got, expected in zip(ours, theirs):
        if expected is not None:
            assert_same(got, expected, exact_layout=True, **_tol(mode, torch.float32))


def _second_derivatives(lib, x, grid, go, **kwargs):
    """The first derivatives' node, and the gradients of two functions of them (one reading
    grad_input, one grad_grid, one both) in (input, grid, grad_output): None where torch's
    formula gives none."""
    conv = internals.from_torch if lib is internals else torch.Tensor.clone
    xi, gi, goi = (conv(t).requires_grad_() for t in (x, grid, go))
    y = lib.nn.functional.grid_sample(xi, gi, **kwargs)
    gx, gg = lib.autograd.grad(y, (xi, gi), goi, create_graph=True)
    results = [type(gx.grad_fn).__name__]
    for loss in ((gx * gx).sum(), (gg * gg).sum(), (gx * gx).sum() + (gg * gg).sum() + (gx * 2).sum()):
        results.append(lib.autograd.grad(loss, (xi, gi, goi), allow_unused=True, retain_graph=True))
    return results


@pytest.mark.parametrize("mode, padding_mode, align_corners",
                         [c for c in COMBINATIONS if c[2] or c[1] == "reflection"] +
                         [("volume-" + m, p, a) for m, p, a in VOLUME_COMBINATIONS if a])
def test_second_derivatives_match_torch(mode, padding_mode, align_corners):
    """grid_sampler's backward differentiated again: the node names, and which gradients exist
    and their values (float64, points folded by the padding rules included)."""
    torch.manual_seed(7)
    volume = mode.startswith("volume-")
    mode = mode.removeprefix("volume-")
    shape, points = ((1, 2, 3, 4, 3), (1, 2, 2, 2, 3)) if volume else ((2, 2, 4, 5), (2, 3, 2, 2))
    x, grid = torch.randn(shape, dtype=torch.float64), torch.rand(points, dtype=torch.float64) * 4 - 2
    go = torch.randn(*shape[:2], *points[1:-1], dtype=torch.float64)
    kwargs = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    theirs, ours = _second_derivatives(torch, x, grid, go, **kwargs), _second_derivatives(internals, x, grid, go,
                                                                                        **kwargs)
    assert ours[0] == theirs[0] == f"GridSampler{3 if volume else 2}DBackwardBackward0"
    for got, expected in zip(ours[1:], theirs[1:]):
        assert [g is None for g in got] == [e is None for e in expected]
        for g, e in zip(got, expected):
            if e is not None:
                assert_same(g, e, exact_layout=False, **_tol(mode, torch.float64))


def _second_derivative_nodes(lib, x, grid, input_requires_grad, loss, **kwargs):
    """The nodes and strides of the second derivatives (taken with create_graph) of a function of
    the first ones, in input (where it requires grad) and grid."""
    conv = internals.from_torch if lib is internals else torch.Tensor.clone
    xi, gi = conv(x).requires_grad_(input_requires_grad), conv(grid).requires_grad_()
    inputs = (xi, gi) if input_requires_grad else (gi,)
    y = lib.nn.functional.grid_sample(xi, gi, **kwargs)
    first = lib.autograd.grad(y.sum(), inputs, create_graph=True)
    second = lib.autograd.grad(loss(first), inputs, create_graph=True, allow_unused=True)
    return [None if t is None else (type(t.grad_fn).__name__, t.stride()) for t in second], second


SECOND_LOSSES = {"first_gradient": lambda g: (g[0] * g[0]).sum(), "last_gradient": lambda g: (g[-1] * g[-1]).sum(),
                 "both": lambda g: sum((t * t).sum() for t in g)}


@pytest.mark.parametrize("loss", SECOND_LOSSES)
@pytest.mark.parametrize("input_requires_grad", [True, False], ids=["input_requires_grad", "input_constant"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic", "volume-bilinear", "volume-nearest"])
def test_second_derivative_nodes_match_torch(mode, input_requires_grad, loss):
    """The grid's second derivative is the backward operator's grid gradient with gg_input
    sampled (its node GridSampler{2,3}DBackwardBackward0), plus, with gg_grid, the per-coordinate
    stack of the bent weights (StackBackward0; both: AddBackward0), as torch's formula builds it."""
    volume = mode.startswith("volume-")
    gen = torch.Generator().manual_seed(3)
    shape, points = ((1, 2, 3, 4, 3), (1, 2, 2, 2, 3)) if volume else ((1, 2, 4, 5), (1, 3, 2, 2))
    x = torch.randn(shape, dtype=torch.float64, generator=gen)
    grid = torch.rand(points, dtype=torch.float64, generator=gen) * 2 - 1
    kwargs = dict(mode=mode.removeprefix("volume-"), padding_mode="border", align_corners=False)
    theirs = _second_derivative_nodes(torch, x, grid, input_requires_grad, SECOND_LOSSES[loss], **kwargs)
    ours = _second_derivative_nodes(internals, x, grid, input_requires_grad, SECOND_LOSSES[loss], **kwargs)
    assert ours[0] == theirs[0]
    for got, expected in zip(ours[1], theirs[1]):
        if expected is not None:
            assert_same(got.detach(), expected.detach(), **_tol(kwargs["mode"], torch.float64))


@pytest.mark.slow
@pytest.mark.parametrize("mode, padding_mode, align_corners", [c for c in COMBINATIONS if c[0] != "nearest"])
def test_gradcheck_in_float64(mode, padding_mode, align_corners):
    """Gradients of input and grid against finite differences, then the gradient of the first
    derivatives (grid_sampler_2d_backward's own backward) in all three of its inputs."""
    torch.manual_seed(1)
    x = internals.from_torch(torch.randn(1, 2, 3, 4, dtype=torch.float64)).requires_grad_()
    grid = internals.from_torch(torch.rand(1, 2, 3, 2, dtype=torch.float64) * 2.4 - 1.2).requires_grad_()
    go = internals.from_torch(torch.randn(1, 2, 2, 3, dtype=torch.float64)).requires_grad_()

    def sample(inp, g):
        return F.grid_sample(inp, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)

    def first_derivatives(inp, g, upstream):
        with internals.enable_grad():   # gradcheck's finite differences run without grad mode
            return internals.autograd.grad(sample(inp, g), (inp, g), upstream, create_graph=True)
    assert internals.autograd.gradcheck(sample, (x, grid))
    assert internals.autograd.gradcheck(first_derivatives, (x, grid, go))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ("bilinear", "nearest"))
def test_volume_gradcheck_in_float64(mode):
    torch.manual_seed(8)
    x = internals.from_torch(torch.randn(1, 1, 2, 3, 2, dtype=torch.float64)).requires_grad_()
    grid = internals.from_torch(torch.rand(1, 1, 2, 2, 3, dtype=torch.float64) * 2.4 - 1.2).requires_grad_()

    def sample(inp, g):
        return F.grid_sample(inp, g, mode=mode, padding_mode="reflection", align_corners=False)
    assert internals.autograd.gradcheck(sample, (x, grid))


# float64 runs the loops float32 runs, in their other specialisation: it reads the samples whose
# input is small (all of them but grid_sampler_3d's three volumes of 240,000 to 5 million values;
# its two small volumes still meet every padding rule both ways), float32 reads them all.
SAMPLE_NUMEL_IN_FLOAT64 = 100_000


@pytest.mark.parametrize("name", ("nn.functional.grid_sample", "grid_sampler_2d",
                                  pytest.param("grid_sampler_3d", marks=pytest.mark.slow)))
def test_opinfo_samples(name):
    """PyTorch's OpInfo samples of ``nn.functional.grid_sample`` (4-D and 5-D, every mode) and of
    the two operators called directly."""
    op, ran = next(op for op in op_db if op.name == name), 0
    ours_fn = getattr(internals, name) if name.startswith("grid") else F.grid_sample
    for dtype in (torch.float32, torch.float64):
        for sample in opinfo_samples(op, dtype):
            if dtype == torch.float64 and sample.input.numel() > SAMPLE_NUMEL_IN_FLOAT64:
                continue
            ours = (to_ours(sample.input), to_ours(tuple(sample.args)), {k: to_ours(v) for k, v in
                                                                         sample.kwargs.items()})
            tol = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-12, 1e-12)}
            compare_call(ours_fn, op.op, (sample.input, sample.args, sample.kwargs), ours, tol)
            ran += 1
    assert ran >= 30


@pytest.mark.parametrize("align_corners", (False, True))
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (1, 2, 3, 4, 5)], ids=str)
def test_affine_grid_matches_torch(size, align_corners):
    torch.manual_seed(2)
    rows = len(size) - 2
    theta = torch.randn(size[0], rows, rows + 1, dtype=torch.float64)
    results = []
    for lib in (torch, internals):
        t = (internals.from_torch(theta) if lib is internals else theta.clone()).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
        g = torch.linspace(-1, 1, grid.numel(), dtype=torch.float64).reshape(tuple(grid.shape))
        (gt,) = lib.autograd.grad(grid, t, internals.from_torch(g) if lib is internals else g)
        results.append((grid, type(grid.grad_fn).__name__, gt))
    (theirs, theirs_name, theirs_gt), (ours, ours_name, ours_gt) = results
    assert ours_name == theirs_name == "AffineGridGeneratorBackward0"
    assert_same(ours, theirs, exact_layout=True, rtol=1e-14, atol=1e-14)
    assert_same(ours_gt, theirs_gt, exact_layout=True, rtol=1e-13, atol=1e-13)


def test_affine_grid_gradcheck_and_a_spatial_transformer_step():
    """theta's gradient against finite differences, through affine_grid then grid_sample, as a
    spatial transformer network uses them."""
    torch.manual_seed(3)
    theta = internals.from_torch(torch.tensor([[[0.9, 0.2, 0.1], [-0.1, 1.1, -0.2]]], dtype=torch.float64))
    x = internals.from_torch(torch.randn(1, 2, 4, 4, dtype=torch.float64))

    def transform(t):
        return F.grid_sample(x, F.affine_grid(t, [1, 2, 3, 3], align_corners=False), align_corners=False)
    assert internals.autograd.gradcheck(transform, (theta.requires_grad_(),))


@pytest.mark.slow
@pytest.mark.parametrize("mode, dims", [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3)])
def test_cuda_kernels_match_cpu(mode, dims):
    """On the CUDA device (the simulator without a GPU) the same operators give the CPU's values,
    gradients and second derivatives."""
    torch.manual_seed(4)
    shape, points = ((1, 2, 3, 3), (1, 2, 2, 2)) if dims == 2 else ((1, 1, 2, 2, 3), (1, 1, 2, 2, 3))
    x, grid = torch.randn(shape, dtype=torch.float64), torch.rand(points, dtype=torch.float64) * 2.4 - 1.2
    results = []
    for device in ("cpu", "cuda"):
        xi = internals.from_torch(x).to(device).requires_grad_()
        gi = internals.from_torch(grid).to(device).requires_grad_()
        y = F.grid_sample(xi, gi, mode=mode, padding_mode="reflection", align_corners=False)
        gx, gg = internals.autograd.grad(y.pow(2).sum(), (xi, gi), create_graph=True)
        (second,) = internals.autograd.grad((gx * gx).sum() + (gg * gg).sum(), xi)
        results.append((y.cpu(), gx.cpu(), gg.cpu(), second.cpu()))
    for cpu, cuda in zip(*results):
        assert_same(cuda, cpu.to_torch(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib, x, g: lib.nn.functional.grid_sample(x, g, mode="cubic", align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x, g, padding_mode="wrap", align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x, g.double(), align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x, g[:1].expand(3, 2, 2, 2), align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x, g[..., :1], align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x[:, :, :0], g, align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x[0], g[0], align_corners=False),
    lambda lib, x, g: lib.nn.functional.affine_grid(x[0, :, :2, :].long(), [2, 1, 3, 3], align_corners=False),
    lambda lib, x, g: lib.nn.functional.affine_grid(x[0, :, :2, :], [2, 1, 3, 3], align_corners=False),
    lambda lib, x, g: lib.nn.functional.affine_grid(x[0, :, :2, :3], [2, 1, 3], align_corners=False),
    lambda lib, x, g: lib.nn.functional.affine_grid(x[0, :, :2, :3], [2, 1, 3, 3, 3], align_corners=False),
    lambda lib, x, g: lib.nn.functional.affine_grid(x[0, :, :2, :3], [2, 1, 0, 3], align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x[..., None], g[..., None, :1].expand(2, 2, 2, 2, 3),
                                                    mode="bicubic", align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x[..., None], g, align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x[..., None, None], g[..., None, None, :1].expand(
        2, 2, 2, 1, 1, 4), align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x[..., None].long(), g[..., None, :1].expand(
        2, 2, 2, 2, 3).long(), align_corners=False),
    lambda lib, x, g: lib.nn.functional.grid_sample(x.long(), g.long(), mode="bicubic", align_corners=False),
    lambda lib, x, g: lib.grid_sampler_2d(x[..., None], g[..., None, :1].expand(2, 2, 2, 2, 3), 0, 0, False),
    lambda lib, x, g: lib.grid_sampler_3d(x[..., None], g[..., None, :1].expand(2, 2, 2, 2, 3), 2, 0, False),
], ids=["unknown_mode", "unknown_padding", "dtypes_differ", "batches_differ", "grid_last_dim", "empty_input",
        "3d_input", "integer_theta", "theta_shape", "size_3d", "theta_for_volume", "empty_size", "bicubic_volume",
        "volume_with_4d_grid", "6d_input", "integer_volume", "integer_bicubic", "2d_operator_on_volume",
        "3d_operator_bicubic"])
def test_errors_match_torch(call):
    x, g = torch.randn(2, 2, 3, 4), torch.rand(2, 2, 2, 2) - 0.5
    ours, theirs = assert_same_error(lambda: call(internals, internals.from_torch(x), internals.from_torch(g)),
                                     lambda: call(torch, x, g))
    assert str(ours) == str(theirs)


def test_default_align_corners_warns_as_torch_does():
    x, g, theta = torch.randn(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), torch.eye(2, 3)[None]
    said = []
    for lib, conv in ((torch, lambda t: t), (internals, internals.from_torch)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.grid_sample(conv(x), conv(g))
            lib.nn.functional.affine_grid(conv(theta), [1, 1, 2, 2])
            lib.nn.functional.affine_grid(conv(theta), [1, 1, 1, 2], align_corners=True)
        said.append([(w.category, str(w.message)) for w in caught])
    assert said[0] == said[1] and len(said[0]) == 3
