"""The layout of a layer's gradients: torch's backward kernels allocate the input's gradient in the
input's suggested memory format (convolution, pooling, padding, batch and group norm), and its
activation backward kernels run a TensorIterator over (grad_output, self), or (self, grad_output)
for ``threshold_backward``, whose output takes its layout from the first operand that orders the
dims. The values matched before; the strides of channels-last or transposed inputs' gradients did
not."""
import numpy as np
import pytest
import torch
from helpers import assert_same

import internals


def _input(L, layout):
    a = np.random.default_rng(1).standard_normal((2, 3, 5, 6))
    x = L.tensor(a.tolist(), dtype=L.float64)
    if layout == "channels_last":
        x = x.contiguous(memory_format=L.channels_last)
    elif layout == "transposed":
        x = L.tensor(a.transpose(0, 1, 3, 2).tolist(), dtype=L.float64).transpose(2, 3)
    return x.requires_grad_()


def _param(L, shape, seed):
    return L.tensor(np.random.default_rng(seed).standard_normal(shape).tolist(), dtype=L.float64,
                    requires_grad=True)


LAYERS = {
    # a grouped weight of one channel per group has strides that differ only on that size-1 dim,
    # by backend (mkldnn for float32, a concatenation of per-group products for float64)
    "conv2d": lambda L, F, x: (F.conv2d(x, w := _param(L, (4, 3, 3, 2), 2), stride=(2, 1), padding=1), [x, w]),
    "conv_transpose2d": lambda L, F, x: (F.conv_transpose2d(x, w := _param(L, (3, 2, 3, 3), 2), stride=2), [x, w]),
    "max_pool2d": lambda L, F, x: (F.max_pool2d(x, (2, 3), (1, 2), dilation=(2, 1)), [x]),
    "batch_norm": lambda L, F, x: (F.batch_norm(x, None, None, w := _param(L, (3,), 4), None, True), [x, w]),
    "group_norm": lambda L, F, x: (F.group_norm(x, 3, w := _param(L, (3,), 4)), [x, w]),
    "layer_norm": lambda L, F, x: (F.layer_norm(x, (5, 6)), [x]),
    "reflect": lambda L, F, x: (F.pad(x, (2, 1, 0, 3), mode="reflect"), [x]),
    "replicate": lambda L, F, x: (F.pad(x, (2, 1, 1, 3), mode="replicate"), [x]),
}
ACTIVATIONS = ["relu", "elu", "selu", "celu", "softplus", "hardswish", "hardsigmoid", "hardtanh", "relu6", "logsigmoid",
               "softshrink", "hardshrink", "gelu", "silu", "mish", "leaky_relu"]


def _grads(L, build, layout):
    x = _input(L, layout)
    out, leaves = build(L, L.nn.functional, x)
    v = L.tensor(np.random.default_rng(9).standard_normal(tuple(out.shape)).tolist(), dtype=L.float64)
    return (out, *L.autograd.grad(out, leaves, v))


@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_gradients_take_the_inputs_memory_format(name, layout):
    for ours, theirs in zip(_grads(internals, LAYERS[name], layout), _grads(torch, LAYERS[name], layout)):
        assert_same(ours, theirs, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_gradients_follow_torchs_operand_order(name, layout):
    def build(L, F, x):
        return getattr(F, name)(x), [x]
    for ours, theirs in zip(_grads(internals, build, layout), _grads(torch, build, layout)):
        assert_same(ours, theirs, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
def test_threshold_gradient_follows_the_saved_input(layout):
    """``threshold_backward`` reads (self, grad): the gradient keeps the input's layout."""
    def build(L, F, x):
        return F.threshold(x, 0.1, 2.0), [x]
    for ours, theirs in zip(_grads(internals, build, layout), _grads(torch, build, layout)):
        assert_same(ours, theirs)


POOLS_AND_PADS = {
    "max_pool2d": lambda F, x: F.max_pool2d(x, 3, 2, padding=1),
    "avg_pool2d": lambda F, x: F.avg_pool2d(x, 2, ceil_mode=True),
    "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_max_pool2d": lambda F, x: F.adaptive_max_pool2d(x, (3, 2)),
    "lp_pool2d": lambda F, x: F.lp_pool2d(x, 2, 2),
    "reflect": lambda F, x: F.pad(x, (2, 1, 0, 3), mode="reflect"),
    "replicate": lambda F, x: F.pad(x, (2, 1, 1, 3), mode="replicate"),
}


def _gradients_of_every_order(L, name, layout):
    """The first, second and third gradients with respect to the input. A pooling or padding
    backward is linear in its incoming gradient and constant in the input: its derivative with
    respect to the input is ``zeros_like(self)`` in derivatives.yaml, which torch's codegen turns
    into contiguous zeros of the input's sizes (a ``TypeAndSize``), whatever the input's layout."""
    x = _input(L, layout)
    y = POOLS_AND_PADS[name](L.nn.functional, x)
    (g,) = L.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    (gg,) = L.autograd.grad(g.pow(2).sum(), x, create_graph=True)
    (ggg,) = L.autograd.grad(gg.pow(2).sum(), x, allow_unused=True)
    return [(t, type(t.grad_fn).__name__ if t is not None else None) for t in (y, g, gg, ggg)]


@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
@pytest.mark.parametrize("name", list(POOLS_AND_PADS))
def test_higher_order_gradients_have_torchs_strides(name, layout):
    ours = _gradients_of_every_order(internals, name, layout)
    theirs = _gradients_of_every_order(torch, name, layout)
    for (o, o_node), (t, t_node) in zip(ours, theirs, strict=True):
        assert o_node == t_node
        assert (o is None) == (t is None)
        if t is not None:
            assert_same(o, t, atol=1e-12, rtol=1e-12)


def test_zero_gradient_of_a_scatter_source_is_contiguous():
    """slice_scatter's gradient to ``self`` writes zeros shaped as ``src``: torch makes them
    contiguous, from the sizes saved instead of ``src`` itself."""
    def run(L):
        x = L.zeros(4, 6, dtype=L.float64).requires_grad_()
        src = L.ones(6, 2, dtype=L.float64).t().requires_grad_()
        y = L.slice_scatter(x, src, 0, 1, 3)
        g = L.autograd.grad(y, x, L.ones(4, 6, dtype=L.float64).t().contiguous().t())[0]
        return g, sorted(a for a in dir(y.grad_fn) if a.startswith("_saved"))
    (ours, saved_i), (theirs, saved_t) = run(internals), run(torch)
    assert_same(ours, theirs)
    assert saved_i == saved_t


def _conv_grads(L, dtype, in_channels, groups, out_channels, kernel, weight_channels_last):
    g = np.random.default_rng(3)
    x = L.tensor(g.standard_normal((2, in_channels, 5, 5)).tolist(), dtype=dtype)
    x = x.contiguous(memory_format=L.channels_last).requires_grad_()
    w = L.tensor(g.standard_normal((out_channels, in_channels // groups, kernel, kernel)).tolist(), dtype=dtype)
    if weight_channels_last:
        w = w.contiguous(memory_format=L.channels_last)
    w.requires_grad_()
    out = L.nn.functional.conv2d(x, w, groups=groups)
    return (out, *L.autograd.grad(out.sum(), [x, w]))


@pytest.mark.parametrize("weight_channels_last", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(4, 4, 8, 3), (4, 2, 4, 3), (3, 1, 2, 1), (1, 1, 2, 3)],
                         ids=["depthwise", "grouped", "1x1", "one_channel"])
def test_weight_gradient_of_a_channels_last_convolution_takes_its_backends_strides(shape, dtype, weight_channels_last):
    """float32 takes oneDNN, which allocates the weight's gradient channels-last; float64 takes
    slow_conv2d, which keeps the weight's own strides where they already read as channels-last (a
    weight of one channel per group, a 1x1 kernel): (9, 9, 3, 1), not (9, 1, 3, 1)."""
    ours = _conv_grads(internals, getattr(internals, dtype), *shape, weight_channels_last)
    theirs = _conv_grads(torch, getattr(torch, dtype), *shape, weight_channels_last)
    for o, t in zip(ours, theirs):
        assert_same(o, t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("memory_format", ["contiguous_format", "channels_last"])
def test_gradients_of_an_empty_batch_convolution_keep_the_tensors_strides(memory_format, transposed):
    """An empty batch takes convolution_backward's empty backend, whose gradients are zeros_like the
    input and the weight: strides included (an empty numpy array's are all 0)."""
    def grads(L):
        x = L.from_numpy(np.zeros((0, 2, 4, 4))) if L is internals else torch.from_numpy(np.zeros((0, 2, 4, 4)))
        if memory_format == "channels_last":
            x = x.contiguous(memory_format=L.channels_last)
        x.requires_grad_()
        w = L.ones(2, 3, 3, 3, dtype=L.float64, requires_grad=True)
        b = L.ones(3, dtype=L.float64, requires_grad=True)
        conv = L.nn.functional.conv_transpose2d if transposed else L.nn.functional.conv2d
        w_ = w if transposed else w.transpose(0, 1).contiguous()
        out = conv(x, w_, b, padding=1)
        return (out, *L.autograd.grad(out.sum(), [x, w, b]))
    for ours, theirs in zip(grads(internals), grads(torch)):
        assert_same(ours, theirs)


@pytest.mark.parametrize("op", ["mm", "linear"])
@pytest.mark.parametrize("sizes", [(4, 5, 1), (4, 1, 3), (5, 1, 1), (1, 5, 1), (1, 1, 1)])
def test_matrix_product_gradients_of_size_one_dims_keep_torchs_column_major_choice(sizes, op):
    """mm's backward computes a column-major operand's gradient transposed, and torch's test of
    column-major is only "first stride 1, second stride the row count", sizes of 1 included: the
    weight of a Linear with one output (its .t() is (5, 1) of strides (1, 5)) gets a gradient of
    strides (5, 1), not (1, 1)."""
    def grads(L):
        n, k, m = sizes
        a = L.tensor(np.arange(n * k, dtype=np.float64).reshape(n, k).tolist(), dtype=L.float64, requires_grad=True)
        w = L.tensor(np.arange(m * k, dtype=np.float64).reshape(m, k).tolist(), dtype=L.float64, requires_grad=True)
        out = a.mm(w.t()) if op == "mm" else L.nn.functional.linear(a, w, L.ones(m, dtype=L.float64))
        return L.autograd.grad(out.sum(), [a, w])
    for ours, theirs in zip(grads(internals), grads(torch)):
        assert_same(ours, theirs)


@pytest.mark.parametrize("transposed", [False, True])
def test_second_derivatives_of_an_empty_batch_convolution_are_none_as_torchs(transposed):
    """torch's _convolution_double_backward computes the input's and the weight's terms only for a
    non-empty input: through an empty batch's gradients nothing reaches the input or the weight
    (None with allow_unused), where zeros used to."""
    def second(L):
        x = L.zeros(0, 2, 4, 4, dtype=L.float64, requires_grad=True)
        w = L.ones(2, 3, 3, 3, dtype=L.float64, requires_grad=True)
        conv = L.nn.functional.conv_transpose2d if transposed else L.nn.functional.conv2d
        out = conv(x, w if transposed else w.transpose(0, 1), padding=1)
        gx, gw = L.autograd.grad((out * out.detach().cos()).sum(), [x, w], create_graph=True)
        return [L.autograd.grad((g * g).sum(), [x, w], allow_unused=True, retain_graph=True) for g in (gx, gw)]
    ours, theirs = second(internals), second(torch)
    assert [[t is None for t in pair] for pair in ours] == [[t is None for t in pair] for pair in theirs]
