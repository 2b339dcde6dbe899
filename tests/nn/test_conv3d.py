"""``F.conv3d`` / ``nn.Conv3d`` and ``F.conv_transpose3d`` / ``nn.ConvTranspose3d`` against torch: all
through ``convolution`` (vol2col + matrix product, ``col2vol`` for the adjoint), so autograd records
torch's ``ConvolutionBackward0``.

torch's CPU wheel runs a float32 3-d convolution through oneDNN and a float64 one through
``slow_conv3d``: both sum each output's products in their own order, so values are compared within
a tolerance (as the 2-d convolutions' tests do), layouts exactly: channels-last-3d out of a float32
convolution of a channels-last-3d operand, contiguous out of a float64 one.
"""
import itertools
import warnings

import numpy as np
import pytest
import torch
from helpers import (
    Adapter,
    assert_fake_matches_real,
    assert_same,
    check_opinfo_samples,
    opinfo_cases,
    same_outcome,
)

import internals

F, NNF = internals.nn.functional, torch.nn.functional
TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-12, 1e-12)}
ADAPTERS = {
    "nn.functional.conv3d": Adapter(F.conv3d, kwargs=("bias", "stride", "padding", "dilation", "groups"), tol=TOL),
    "nn.functional.conv_transpose3d": Adapter(F.conv_transpose3d, kwargs=("bias", "stride", "padding",
                                                                           "output_padding", "groups", "dilation"),
                                              tol=TOL),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64)))
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name])


def _t(L, shape, seed, dtype="float64", requires_grad=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


def _nodes(y):
    """The output's node and its inputs' nodes: two levels of torch's graph."""
    return y.grad_fn.name(), [n.name() if n is not None else None for n, _ in y.grad_fn.next_functions]


def _run(L, fn, shapes, kwargs, layout=None, dtype="float64"):
    x, w, b = (_t(L, s, i, dtype) for i, s in enumerate(shapes))
    if layout == "input":
        x = x.detach().contiguous(memory_format=L.channels_last_3d).requires_grad_()
    elif layout == "weight":
        w = w.detach().contiguous(memory_format=L.channels_last_3d).requires_grad_()
    y = getattr(L.nn.functional, fn)(x * 1, w, b, **kwargs)
    v = _t(L, tuple(y.shape), 7, dtype, requires_grad=False)
    grads = L.autograd.grad((y * v).sum(), (x, w, b), create_graph=True)
    # second order: the input's gradient differentiated again with respect to the weight
    gg = L.autograd.grad((grads[0] * grads[0]).sum(), w)[0]
    return (y, *grads, gg), (_nodes(y), _nodes(grads[0]))


PLAIN = [dict(stride=s, padding=p, dilation=d, groups=g) for s, p, d, g in
         itertools.product([1, (2, 1, 2)], [0, (1, 2, 0)], [1, (2, 1, 1)], [1, 2])]


@pytest.mark.parametrize("kwargs", PLAIN, ids=str)
def test_conv3d_values_two_gradients_and_nodes_match_torch(kwargs):
    g = kwargs["groups"]
    shapes = ((2, 2 * g, 5, 6, 5), (3 * g, 2, 3, 2, 3), (3 * g,))
    ours, theirs = _run(internals, "conv3d", shapes, kwargs), _run(torch, "conv3d", shapes, kwargs)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]


TRANSPOSED = [dict(stride=s, padding=p, output_padding=o, dilation=d, groups=g) for s, p, o, d, g in
              itertools.product([1, 2], [0, (1, 0, 1)], [0, 1], [1, (1, 2, 1)], [1, 2]) if o < s]


@pytest.mark.parametrize("kwargs", TRANSPOSED, ids=str)
def test_conv_transpose3d_values_two_gradients_and_nodes_match_torch(kwargs):
    g = kwargs["groups"]
    shapes = ((2, 2 * g, 3, 4, 3), (2 * g, 3, 2, 3, 2), (3 * g,))
    ours, theirs = _run(internals, "conv_transpose3d", shapes, kwargs), _run(torch, "conv_transpose3d", shapes, kwargs)
    for o, t in zip(ours[0], theirs[0]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("fn", ["conv3d", "conv_transpose3d"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["input", "weight"])
def test_channels_last_3d_layouts_follow_torchs_backend(fn, dtype, layout):
    """oneDNN (float32) writes channels-last-3d outputs and gradients; slow_conv3d (float64) contiguous ones."""
    shapes = ((2, 4, 4, 5, 3), (4, 2, 2, 3, 2), (4,))
    kwargs = dict(groups=2)
    ours, theirs = _run(internals, fn, shapes, kwargs, layout, dtype), _run(torch, fn, shapes, kwargs, layout, dtype)
    tol = 1e-4 if dtype == "float32" else 1e-12
    for o, t in zip(ours[0][:4], theirs[0][:4]):
        assert_same(o, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("kernel, dilation", [((3, 3, 3), 1), ((2, 3, 4), 1), ((2, 2, 3), (1, 2, 3))])
def test_padding_same_and_valid_match_torch_and_warn_as_torch_does(kernel, dilation):
    # the package warns once per process, as torch's TORCH_WARN_ONCE: start this test afresh
    internals.c10.exception.reset_warn_once("_warn_uneven_same_padding")

    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = _t(L, (1, 2, 5, 6, 7), 0)
            y = L.nn.functional.conv3d(x, _t(L, (3, 2, *kernel), 1), None, 1, "same", dilation)
            v = L.nn.functional.conv3d(x, _t(L, (3, 2, *kernel), 1), padding="valid")
            g, = L.autograd.grad((y * y).sum(), x)
        return y, v, g, _nodes(y), [w.category for w in caught]
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[3] == theirs[3]
    # torch warns once a process (TORCH_WARN_ONCE), so only the package's warning is checked: where
    # an even kernel length meets an odd dilation, as torch's convolution_same warns
    odd = any(d * (k - 1) % 2 for k, d in zip(kernel, dilation if isinstance(dilation, tuple) else (dilation,) * 3))
    assert ours[4] == ([UserWarning] if odd else [])


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_the_module_pads_initialises_and_prints_as_torchs(mode):
    def run(L):
        L.manual_seed(3)
        m = L.nn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), padding=(1, 1, 2), groups=2, padding_mode=mode,
                        dtype=L.float64)
        x = _t(L, (2, 4, 4, 5, 6), 0)
        y = m(x)
        grads = L.autograd.grad(y.sum(), (x, m.weight, m.bias))
        return m.weight, m.bias, y, *grads, repr(m), _nodes(y)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=0, atol=0)      # the seeded initialisation draws torch's numbers
    assert_same(ours[1], theirs[1], rtol=0, atol=0)
    for o, t in zip(ours[2:6], theirs[2:6]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[6:] == theirs[6:]


def test_the_modules_same_padding_and_the_transposed_module_match_torch():
    def run(L):
        L.manual_seed(4)
        m = L.nn.Conv3d(2, 3, (2, 3, 2), padding="same", padding_mode="reflect", dtype=L.float64)
        t = L.nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, dtype=L.float64)
        x = _t(L, (1, 2, 4, 5, 4), 0)
        y = m(x)
        z = t(y, output_size=(8, 10, 8))
        return m.weight, t.weight, t.bias, y, z, repr(t), _nodes(z)
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t, rtol=0, atol=0)
    for o, t in zip(ours[3:5], theirs[3:5]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[5:] == theirs[5:]


def test_unbatched_and_empty_batch_inputs_match_torch():
    for fn, shape in (("conv3d", (2, 4, 4, 4)), ("conv3d", (0, 2, 4, 4, 4)), ("conv_transpose3d", (2, 3, 3, 3)),
                      ("conv_transpose3d", (0, 2, 3, 3, 3))):
        w = (3, 2, 2, 2, 2) if fn == "conv3d" else (2, 3, 2, 2, 2)
        same_outcome(lambda L, fn=fn, shape=shape, w=w: getattr(L.nn.functional, fn)(
            _t(L, shape, 0, requires_grad=False), _t(L, w, 1, requires_grad=False)), rtol=1e-12, atol=1e-12)


BAD = {
    "6d_input": lambda F, x, w: F.conv3d(x[None], w),
    "3d_input": lambda F, x, w: F.conv3d(x[0, 0], w),
    "channels": lambda F, x, w: F.conv3d(x[:, :1], w),
    "kernel_too_big": lambda F, x, w: F.conv3d(x[:, :, :1], w),
    "stride_with_same": lambda F, x, w: F.conv3d(x, w, stride=2, padding="same"),
    "bad_padding_string": lambda F, x, w: F.conv3d(x, w, padding="full"),
    "groups": lambda F, x, w: F.conv3d(x, w, groups=3),
    "negative_padding": lambda F, x, w: F.conv3d(x, w, padding=-1),
    "zero_stride": lambda F, x, w: F.conv3d(x, w, stride=0),
    "parameter_length": lambda F, x, w: F.conv3d(x, w, stride=(1, 1)),
    "bias_size": lambda F, x, w: F.conv3d(x, w, x.new_ones(2)),
    "transposed_5d_of_6d": lambda F, x, w: F.conv_transpose3d(x[None], w),
    "transposed_output_padding": lambda F, x, w: F.conv_transpose3d(x[:, :2], w[:2], stride=1, output_padding=1),
    "transposed_output_too_small": lambda F, x, w: F.conv_transpose3d(x[:, :3], w, padding=5),
    "transposed_one_side_too_small": lambda F, x, w: F.conv_transpose3d(x[:, :3], w, padding=(0, 3, 0)),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torchs_error(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, _t(L, (2, 4, 4, 4, 4), 0, requires_grad=False),
                                     _t(L, (3, 4, 2, 2, 2), 1, requires_grad=False)))


def test_fake_tensors_get_the_real_layout():
    def operands():
        x, w = _t(internals, (2, 4, 4, 5, 3), 0, "float32", False), _t(internals, (4, 2, 2, 3, 2), 1, "float32", False)
        return x.contiguous(memory_format=internals.channels_last_3d), w
    assert_fake_matches_real(lambda L, x, w: L.nn.functional.conv3d(x, w, groups=2, padding=1), operands)
    assert_fake_matches_real(lambda L, x, w: L.nn.functional.conv_transpose3d(x, w, groups=2, stride=2), operands)


def test_cuda_gives_the_cpu_values():
    x, w = _t(internals, (1, 2, 3, 4, 3), 0, requires_grad=False), _t(internals, (3, 2, 2, 2, 2), 1,
                                                                       requires_grad=False)
    xc, wc = x.to("cuda").requires_grad_(), w.to("cuda").requires_grad_()
    y = F.conv3d(xc, wc, padding=1, stride=(1, 2, 1))
    gx, gw = internals.autograd.grad(y.sum(), (xc, wc))
    xt, wt = x.to_torch().requires_grad_(), w.to_torch().requires_grad_()
    yt = NNF.conv3d(xt, wt, padding=1, stride=(1, 2, 1))
    for o, t in zip((y, gx, gw), (yt, *torch.autograd.grad(yt.sum(), (xt, wt)))):
        assert_same(o.cpu(), t, rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("dims", [2, 3])
def test_unbatched_same_padding_pads_the_batched_input_as_torch_does(dims):
    """torch's conv2d/conv3d with padding="same" give an unbatched input its batch of one before
    the odd padding's ``constant_pad_nd``: the input's gradient (with create_graph) ends in the
    unsqueeze's ``SqueezeBackward1``, not the pad's node."""
    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = _t(L, (2,) + (4,) * dims, 0)
            w = _t(L, (3, 2) + (2,) * dims, 1)
            y = getattr(L.nn.functional, f"conv{dims}d")(x, w, padding="same")
            (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        return y, g, type(g.grad_fn).__name__, _nodes(y)
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:2], theirs[:2]):
        assert_same(o, t, rtol=1e-12, atol=1e-12)
    assert ours[2:] == theirs[2:]
