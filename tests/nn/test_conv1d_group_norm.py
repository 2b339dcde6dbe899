"""Differential tests of the 1-d convolution and group normalization against torch: ``F.conv1d``
and ``nn.Conv1d`` (a 2-d convolution of height 1 inside, as torch's ``view1d_as_2d``),
``F.group_norm`` and ``nn.GroupNorm`` (``native_group_norm``, ``NativeGroupNormBackward0``).

PyTorch's OpInfo samples (as given and non-contiguous); random geometries with hypothesis, on
non-contiguous inputs (values, every input's gradient, node names); second derivatives; the
operators a dispatch mode sees; errors; module reprs and state dicts; and a small conv1d +
GroupNorm model trained five steps from one seed in each library.
"""
import warnings

import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    assert_same_error,
    assert_within_ulps_of_largest,
    check_opinfo_samples,
    logging_modes,
    opinfo_cases,
)
from hypothesis import given
from hypothesis import strategies as hs

import internals

F, NNF = internals.nn.functional, torch.nn.functional
# im2col + matmul sums a window's products in another order than torch's oneDNN kernels; group
# norm takes its statistics in two passes where torch's loop uses one.
TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-12, 1e-12)}
ADAPTERS = {
    "nn.functional.conv1d": Adapter(F.conv1d, kwargs=("bias", "stride", "padding", "dilation", "groups"), tol=TOL),
    "nn.functional.group_norm": Adapter(F.group_norm, kwargs=("weight", "bias", "eps"), tol=TOL),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def _pair(t):
    """torch's leaf and internals' copy; from 2 dims on both non-contiguous."""
    theirs = t.transpose(-1, -2).contiguous().transpose(-1, -2) if t.dim() >= 2 else t.clone()
    theirs.requires_grad_()
    return internals.from_torch(theirs.detach()).requires_grad_(), theirs


def _first_and_second_order(ours, theirs, out_ours, out_theirs, tol):
    """Every input's gradient, then the gradient of their squared sum (create_graph), against torch's."""
    g = torch.randn(out_theirs.shape, dtype=out_theirs.dtype)
    grads_t = torch.autograd.grad(out_theirs, theirs, g, create_graph=True)
    grads_i = internals.autograd.grad(out_ours, ours, internals.from_torch(g), create_graph=True)
    for o, t in zip(grads_i, grads_t):
        assert_same(o, t, exact_layout=False, rtol=tol, atol=tol)
    second_t = torch.autograd.grad(sum((t * t).sum() for t in grads_t), theirs[:2], allow_unused=True)
    second_i = internals.autograd.grad(sum((t * t).sum() for t in grads_i), ours[:2], allow_unused=True)
    for o, t in zip(second_i, second_t):
        assert (o is None) == (t is None)
        if t is not None:
            assert_same(o, t, exact_layout=False, rtol=tol, atol=tol)


@given(n=hs.integers(1, 2), groups=hs.sampled_from([1, 2]), cin=hs.integers(1, 2), cout=hs.integers(1, 2),
       length=hs.integers(3, 9), k=hs.integers(1, 3), stride=hs.integers(1, 3), padding=hs.integers(0, 2),
       dilation=hs.integers(1, 2), bias=hs.booleans())
def test_conv1d_matches_torch(n, groups, cin, cout, length, k, stride, padding, dilation, bias):
    torch.manual_seed(0)
    x = torch.randn(n, cin * groups, length, dtype=torch.float64)
    weight = torch.randn(cout * groups, cin, k, dtype=torch.float64)
    b = torch.randn(cout * groups, dtype=torch.float64) if bias else None
    args = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    ours, theirs = zip(*[_pair(t) for t in (x, weight, b) if t is not None])

    def call(lib_f, tensors):
        return lib_f.conv1d(*tensors, **args) if bias else lib_f.conv1d(*tensors, None, **args)
    try:
        expected = call(NNF, theirs)
    except RuntimeError:
        assert_same_error(lambda: call(F, ours), lambda: call(NNF, theirs))
        return
    out = call(F, ours)
    assert out.grad_fn.name() == expected.grad_fn.name() == "ConvolutionBackward0"
    assert_same(out, expected, rtol=1e-12, atol=1e-12)
    _first_and_second_order(ours, theirs, out, expected, 1e-11)


@pytest.mark.parametrize("kwargs", [dict(padding="same"), dict(padding="same", dilation=2), dict(padding="valid"),
                                    dict(padding="same", stride=2), dict(padding="full")])
def test_conv1d_string_padding_and_unbatched(kwargs):
    torch.manual_seed(1)
    x, w = torch.randn(3, 7, dtype=torch.float64), torch.randn(2, 3, 4, dtype=torch.float64)
    for xx in (x, x.unsqueeze(0)):
        ours, theirs = zip(*[_pair(t) for t in (xx, w)])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = NNF.conv1d(*theirs, **kwargs)
        except RuntimeError:
            assert_same_error(lambda o=ours: F.conv1d(*o, **kwargs), lambda t=theirs: NNF.conv1d(*t, **kwargs))
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = F.conv1d(*ours, **kwargs)
        assert_same(out, expected, rtol=1e-12, atol=1e-12)
        _first_and_second_order(ours, theirs, out, expected, 1e-11)


@given(shape=hs.sampled_from([(2, 4), (3, 6, 5), (2, 4, 3, 2), (1, 6, 2, 2, 2)]), groups=hs.sampled_from([1, 2]),
       affine=hs.booleans(), eps=hs.sampled_from([1e-5, 0.1]))
def test_group_norm_matches_torch(shape, groups, affine, eps):
    torch.manual_seed(2)
    x = torch.randn(*shape, dtype=torch.float64) * 3 + 1
    params = [torch.randn(shape[1], dtype=torch.float64) for _ in range(2)] if affine else []
    ours, theirs = zip(*[_pair(t) for t in (x, *params)])
    expected = NNF.group_norm(theirs[0], groups, *theirs[1:], eps=eps)
    out = F.group_norm(ours[0], groups, *ours[1:], eps=eps)
    assert out.grad_fn.name() == expected.grad_fn.name() == "NativeGroupNormBackward0"
    assert_same(out, expected, rtol=1e-12, atol=1e-12)
    _first_and_second_order(ours, theirs, out, expected, 1e-10)


def test_group_norm_statistics_and_backward_operator():
    """native_group_norm's mean and rstd of shape (N, group); the backward kernel (no create_graph)
    against torch's; a second derivative of that kernel refuses as torch's does."""
    torch.manual_seed(3)
    x, w, b = torch.randn(2, 6, 5, dtype=torch.float64), torch.randn(6, dtype=torch.float64), torch.randn(6)
    b = b.double()
    out_t = torch.ops.aten.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5)
    out_i = internals.ops.aten.native_group_norm(*(internals.from_torch(t) for t in (x, w, b)), 2, 6, 5, 3, 1e-5)
    for o, t in zip(out_i, out_t):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    g = torch.randn(2, 6, 5, dtype=torch.float64)
    grads_t = torch.ops.aten.native_group_norm_backward(g, x, out_t[1], out_t[2], w, 2, 6, 5, 3, [True] * 3)
    ours = [internals.from_torch(t) for t in (g, x, out_t[1], out_t[2], w)]
    grads_i = internals.ops.aten.native_group_norm_backward(*ours, 2, 6, 5, 3, [True] * 3)
    for o, t in zip(grads_i, grads_t):
        assert_same(o, t, rtol=1e-12, atol=1e-12)


def _logged(lib, program):
    log_t, log_i = [], []
    mode_t, mode_i = logging_modes(log_t, log_i)
    x = lib.ones(2, 4, 6, requires_grad=True)
    w = lib.ones(3, 4, 3, requires_grad=True)
    with mode_t if lib is torch else mode_i:
        eval(program, {"lib": lib, "x": x, "w": w}).sum().backward()
    return log_t if lib is torch else log_i


@pytest.mark.parametrize("program", ["lib.nn.functional.conv1d(x, w, padding=1)",
                                     "lib.nn.functional.group_norm(x, 2, x[0, :, 0], x[1, :, 1])"])
def test_a_dispatch_mode_sees_torch_operators(program):
    ours, theirs = _logged(internals, program), _logged(torch, program)
    layer_ops = [op for op in theirs if "conv" in op or "group_norm" in op]
    assert layer_ops and [op for op in ours if op in layer_ops] == layer_ops


ERRORS = {
    "conv1d 4-d input": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 3, 4), lib.ones(1, 2, 1)),
    "conv1d channels": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 3, 5), lib.ones(2, 2, 3)),
    "conv1d kernel too large": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 2), lib.ones(2, 2, 3)),
    "conv1d 2-d weight": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 5), lib.ones(2, 2)),
    "conv1d groups": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 4, 5), lib.ones(3, 2, 3), groups=2),
    "conv1d bias": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 5), lib.ones(3, 2, 3), lib.ones(2)),
    "conv1d stride list": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 5), lib.ones(3, 2, 3), stride=(1, 2)),
    "conv1d dtype": lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 5), lib.ones(3, 2, 3, dtype=lib.float64)),
    "group_norm groups": lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 3), 4),
    "group_norm 1-d": lambda lib: lib.nn.functional.group_norm(lib.ones(6), 2),
    "group_norm weight": lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 3), 2, lib.ones(5)),
    "group_norm zero groups": lambda lib: lib.nn.functional.group_norm(lib.ones(2, 6, 3), 0),
    "group_norm one value": lambda lib: lib.nn.functional.group_norm(lib.ones(1, 2, 1), 2),
    "GroupNorm divisibility": lambda lib: lib.nn.GroupNorm(4, 6),
    "Conv1d groups": lambda lib: lib.nn.Conv1d(3, 4, 3, groups=2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(lambda: ERRORS[name](internals), lambda: ERRORS[name](torch))


def test_module_reprs_state_dicts_and_padding_modes():
    for make in (lambda nn: nn.Conv1d(4, 6, 3), lambda nn: nn.Conv1d(4, 6, 3, 2, 1, 2, 2, bias=False),
                 lambda nn: nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular"),
                 lambda nn: nn.GroupNorm(2, 6), lambda nn: nn.GroupNorm(3, 6, affine=False),
                 lambda nn: nn.GroupNorm(1, 4, eps=1e-3, bias=False)):
        ours, theirs = make(internals.nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
               {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    for mode in ("zeros", "reflect", "replicate", "circular"):
        torch.manual_seed(4)
        theirs = torch.nn.Conv1d(2, 3, 3, padding=1, padding_mode=mode).double()
        ours = internals.nn.Conv1d(2, 3, 3, padding=1, padding_mode=mode, dtype=internals.float64)
        ours.load_state_dict({k: internals.from_torch(v) for k, v in theirs.state_dict().items()})
        x = torch.randn(2, 2, 6, dtype=torch.float64)
        assert_same(ours(internals.from_torch(x)), theirs(x), rtol=1e-12, atol=1e-12)


def test_conv1d_group_norm_model_trains_like_torch_from_one_seed():
    """A small sequence classifier (Conv1d, GroupNorm, ReLU, Conv1d, GroupNorm, pooling by mean,
    Linear) built from one seed in each library, nothing copied: five Adam steps, each loss within
    float32 rounding of torch's, and the same state dict."""
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Conv1d(3, 8, 5, padding=2), nn.GroupNorm(2, 8), nn.ReLU(),
                              nn.Conv1d(8, 8, 3, stride=2, padding=1, groups=2), nn.GroupNorm(4, 8), nn.Mish())
        head = nn.Linear(8, 4)
        x, y = lib.randn(6, 3, 16), lib.randint(0, 4, (6,))
        params = list(model.parameters()) + list(head.parameters())
        opt = lib.optim.Adam(params, lr=1e-2)
        losses = []
        for _ in range(5):
            loss = lib.nn.functional.cross_entropy(head(model(x).mean(-1)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, {**model.state_dict(), **{f"head.{k}": v for k, v in head.state_dict().items()}}

    (losses_t, state_t), (losses_i, state_i) = run(torch), run(internals)
    assert max(abs(a - b) for a, b in zip(losses_i, losses_t)) <= 1e-5
    assert list(state_i) == list(state_t)
    for k in state_t:
        assert_same(state_i[k], state_t[k], rtol=1e-4, atol=1e-5)


def _group_norm_gradients(lib, values, affine):
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    w = lib.tensor([0.5, -1.5, 2.0, 1.25], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([0.1, 0.2, -0.3, 0.4], dtype=lib.float64, requires_grad=True)
    inputs = [x, w, b] if affine else [x]
    y = lib.nn.functional.group_norm(x.tanh(), 2, w if affine else None, b if affine else None)
    grads = lib.autograd.grad((y * y * y).sum(), inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs)
    return grads, second


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_gradients_under_create_graph_as_torch(affine):
    """With create_graph the gradients come from torch's differentiable formula: the weight and
    bias gradients end in a reshape (ViewBackward0), and their own gradients equal torch's."""
    values = [[[0.3, -1.2, 2.0], [0.7, 0.1, -0.4], [1.5, -0.9, 0.2], [-2.0, 0.6, 1.1]],
              [[0.9, 0.4, -0.3], [-1.1, 2.2, 0.5], [0.05, -0.6, 1.3], [0.8, -1.7, 0.0]]]
    ours, theirs = _group_norm_gradients(internals, values, affine), _group_norm_gradients(torch, values, affine)
    for o, t in zip(ours[0], theirs[0]):
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
        assert_same(o.detach(), t.detach(), ulps=64)
    for o, t in zip(ours[1], theirs[1]):
        assert_same(o, t, ulps=1024)


# which outputs of native_group_norm a loss reads: torch adds the statistics' gradients only when
# both the mean's and the rstd's are defined, and takes its composite formula whenever either is
STATISTICS_LOSSES = {
    "mean": lambda out, mean, rstd: mean.sum(),
    "rstd": lambda out, mean, rstd: rstd.sum(),
    "mean and rstd": lambda out, mean, rstd: (mean * mean + rstd).sum(),
    "output and mean": lambda out, mean, rstd: (out * out * out).sum() + mean.sum(),
    "all three": lambda out, mean, rstd: (out * out * out).sum() + (mean * rstd).sum(),
}


def _statistics_gradients(lib, loss, affine, create_graph):
    x = (lib.linspace(-2., 2., 24, dtype=lib.float64).reshape(2, 4, 3) ** 3).requires_grad_()
    w = lib.linspace(0.5, 1.5, 4, dtype=lib.float64).requires_grad_()
    b = lib.linspace(-0.3, 0.3, 4, dtype=lib.float64).requires_grad_()
    out, mean, rstd = lib.native_group_norm(x, w if affine else None, b if affine else None, 2, 4, 3, 2, 1e-5)
    inputs = [x, w, b] if affine else [x]
    return lib.autograd.grad(loss(out, mean, rstd), inputs, allow_unused=True, create_graph=create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("loss", STATISTICS_LOSSES)
def test_group_norm_mean_and_rstd_outputs_gradients_as_torch(loss, affine, create_graph):
    """A loss of native_group_norm's mean or rstd: torch's gradients (none for x when only one of
    the two is read), their strides and nodes, with or without create_graph."""
    ours = _statistics_gradients(internals, STATISTICS_LOSSES[loss], affine, create_graph)
    theirs = _statistics_gradients(torch, STATISTICS_LOSSES[loss], affine, create_graph)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if t is not None:
            assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
            # dX = a·dY + b·X + c cancels: its small elements' last bits are the large ones' rounding
            assert_within_ulps_of_largest(o.detach(), t.detach(), 64)


def _three_derivatives(lib, shape, groups, affine):
    n = shape[0] * shape[1] * shape[2] * shape[3]
    x = (lib.linspace(-2., 2., n, dtype=lib.float64).reshape(shape) ** 3).to(memory_format=lib.channels_last)
    w = lib.linspace(0.5, 1.5, shape[1], dtype=lib.float64)
    b = lib.zeros(shape[1], dtype=lib.float64)
    inputs = [t.requires_grad_() for t in ([x, w, b] if affine else [x])]
    out = lib.nn.functional.group_norm(x * x, groups, *inputs[1:])
    cot = (lib.linspace(0.5, 1.5, out.numel(), dtype=lib.float64) ** 2).reshape(out.shape)
    first = lib.autograd.grad((out * cot).sum(), inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in first), inputs, create_graph=True, allow_unused=True)
    third = lib.autograd.grad(sum(g.sum() for g in second if g is not None), inputs, allow_unused=True)
    return [out, *first, *second, *third]


@pytest.mark.parametrize("shape, groups, affine", [((2, 4, 1, 3), 2, True), ((2, 4, 1, 3), 4, True),
                                                   ((2, 4, 3, 4), 2, True), ((2, 4, 3, 1), 1, False)])
def test_group_norm_higher_derivatives_of_channels_last_input_as_torch(shape, groups, affine):
    """The gradients of gradients follow torch's composite formula over the saved statistics, so
    their strides are torch's too (a channels_last input whose height is 1 is the case to see)."""
    ours, theirs = (_three_derivatives(lib, shape, groups, affine) for lib in (internals, torch))
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if t is not None:
            assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
            assert_within_ulps_of_largest(o.detach(), t.detach(), 1024)
