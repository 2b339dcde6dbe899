"""``avg_pool3d`` / ``F.avg_pool3d`` / ``nn.AvgPool3d`` and ``F.adaptive_avg_pool3d`` /
``nn.AdaptiveAvgPool3d`` (``aten/native/average_pool3d.py``), ``F.max_pool3d`` / ``nn.MaxPool3d``
(``aten/native/dilated_max_pool3d.py``) and ``F.adaptive_max_pool3d`` / ``nn.AdaptiveMaxPool3d``
(``aten/native/adaptive_max_pooling3d.py``) against torch.

torch's CPU kernel sums each window in the element type, frames then rows then columns, and
divides once: IEEE-exact steps in torch's order, so values and gradients are compared bit for bit.
The output is contiguous whatever the input's layout (channels_last_3d included); float32,
float64 and int64 only. ``F.local_response_norm`` of a 4-d or wider input averages with it. The
adaptive operator's loop sums the same way and divides one dimension's count at a time."""

import warnings

import numpy as np
import pytest
import torch
from helpers import (
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_same,
    assert_second_derivatives_match_torch,
    check_opinfo_samples,
    opinfo_cases,
    same_outcome,
)

import internals
from internals.aten.native import adaptive_max_pooling3d, average_pool3d

ADAPTERS = {
    "nn.functional.avg_pool3d": Adapter(internals.nn.functional.avg_pool3d, kwargs=(
        "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")),
    "nn.functional.adaptive_avg_pool3d": Adapter(internals.nn.functional.adaptive_avg_pool3d),
    "nn.functional.max_pool3d": Adapter(internals.nn.functional.max_pool3d, kwargs=(
        "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")),
    "nn.functional.adaptive_max_pool3d": Adapter(internals.nn.functional.adaptive_max_pool3d),
}


# max_pool3d's OpInfo makes 576 samples (6 shapes x 96 argument sets), every one running the one
# pooling loop compiled per dtype: float32 runs them all; every other dtype runs every 11th,
# which still holds all six shapes, each value of each argument and all 24 mixes of ceil_mode,
# padding, dilation and stride (11 is prime to the argument grid's 2s and 3s).
MAX_POOL_STEP = 11


def _step(name, dtype):
    return MAX_POOL_STEP if name == "nn.functional.max_pool3d" and dtype != torch.float32 else 1


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64)))
def test_opinfo_samples(name, dtype):
    """PyTorch's own sample inputs, as given and made non-contiguous (exact strides)."""
    check_opinfo_samples(name, dtype, ADAPTERS[name], step=_step(name, dtype))


def _t(L, shape, seed=0, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    x = L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape)
    return x.requires_grad_(requires_grad)


CASES = {
    "cube": ((2, 3, 4, 5, 6), dict(kernel_size=2)),
    "unbatched": ((3, 4, 5, 6), dict(kernel_size=(2, 3, 2), stride=1)),
    "padded": ((1, 2, 5, 5, 5), dict(kernel_size=3, stride=2, padding=1)),
    "padded_exclusive": ((1, 2, 5, 6, 5), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    "ceil": ((1, 2, 5, 7, 6), dict(kernel_size=(3, 2, 3), stride=(2, 2, 2), padding=(1, 1, 0), ceil_mode=True)),
    "ceil_exclusive": ((2, 1, 6, 5, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                             count_include_pad=False)),
    "divisor": ((1, 2, 4, 4, 4), dict(kernel_size=2, stride=1, divisor_override=3)),
    "one_stride": ((1, 1, 3, 4, 5), dict(kernel_size=(1, 2, 2), stride=[2])),
}


def _input(L, shape, layout):
    x = _t(L, shape, requires_grad=True)
    if layout == "channels_last_3d":
        return x.contiguous(memory_format=L.channels_last_3d)
    if layout == "transposed":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x * 1.0


@pytest.mark.parametrize("layout", ["contiguous", "channels_last_3d", "transposed"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_layout_nodes_and_two_gradients_are_torchs_bit_for_bit(name, layout):
    shape, kwargs = CASES[name]
    if layout == "channels_last_3d" and len(shape) != 5:
        pytest.skip("channels_last_3d is a 5-d layout")

    def run(L):
        x = _input(L, shape, layout)
        y = L.nn.functional.avg_pool3d(x, **kwargs)
        nodes = (y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions if n is not None])
        w = _t(L, tuple(y.shape), seed=2, requires_grad=True)
        g, = L.autograd.grad((y * w).sum(), x, create_graph=True)
        g_nodes = (g.grad_fn.name(), [n.name() for n, _ in g.grad_fn.next_functions if n is not None])
        v = _t(L, tuple(g.shape), seed=3)
        gg, = L.autograd.grad((g * v).sum(), w)      # the gradient is linear in w: the pooling again
        return y, g, gg, nodes, g_nodes
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t, rtol=0, atol=0)
    assert ours[3:] == theirs[3:]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_float32_and_int64_follow_torchs_element_type_sums(dtype):
    """float32 sums in float32; int64 divides as C does, truncating toward zero."""
    def run(L):
        x = _t(L, (2, 2, 5, 4, 6), seed=4) * 7
        x = x.to(getattr(L, dtype))
        return (L.nn.functional.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True),
                L.nn.functional.avg_pool3d(x, 2, count_include_pad=False, divisor_override=5))
    for o, t in zip(run(internals), run(torch)):
        assert_same(o, t, rtol=0, atol=0)


def test_a_negative_zero_mean_is_written_as_torchs_positive_zero():
    def run(L):
        return L.nn.functional.avg_pool3d(L.full((1, 1, 2, 2, 2), -0.0), 2)
    ours, theirs = run(internals), run(torch)
    assert_same(ours, theirs, rtol=0, atol=0)
    assert repr(ours.item()) == repr(theirs.item())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32", "uint8", "bool"])
def test_dtypes_torchs_kernel_has_no_loop_for_are_refused_as_torch_refuses_them(dtype):
    same_outcome(lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2, dtype=getattr(L, dtype)), 2))


BAD = {
    "kernel_length": lambda F, x: F.avg_pool3d(x, (2, 2)),
    "stride_length": lambda F, x: F.avg_pool3d(x, 2, stride=(1, 1)),
    "padding_length": lambda F, x: F.avg_pool3d(x, 2, padding=(1, 1)),
    "3d_input": lambda F, x: F.avg_pool3d(x[0, 0], 2),
    "divisor_zero": lambda F, x: F.avg_pool3d(x, 2, divisor_override=0),
    "stride_zero": lambda F, x: F.avg_pool3d(x, 2, stride=0),
    "negative_padding": lambda F, x: F.avg_pool3d(x, 2, padding=-1),
    "padding_over_half": lambda F, x: F.avg_pool3d(x, 2, padding=2),
    "kernel_zero": lambda F, x: F.avg_pool3d(x, (0, 1, 1)),
    "kernel_larger_than_input": lambda F, x: F.avg_pool3d(x, (5, 1, 1)),
    "empty_channel": lambda F, x: F.avg_pool3d(x[:, :0], 2),
    "empty_batch": lambda F, x: F.avg_pool3d(x[:0], 2),
    "negative_stride": lambda F, x: F.avg_pool3d(x, 2, stride=-1),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torchs_error_in_torchs_words(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, _t(L, (2, 3, 4, 4, 4))))


def test_the_backward_checks_grad_output_as_torch_does():
    def run(L, shape):
        x = _t(L, (2, 3, 4, 4, 4))
        return L.ops.aten.avg_pool3d_backward(_t(L, shape), x, [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None)
    for shape in [(2, 3, 2, 2, 2), (2, 3, 2, 2, 3), (2, 4, 2, 2, 2), (3, 2, 2, 2)]:
        same_outcome(lambda L, shape=shape: run(L, shape))


@pytest.mark.parametrize("name", [("avg_pool3d", "out"), ("avg_pool3d_backward", "grad_input")])
def test_the_functional_forms_are_derived_from_the_structured_out_kernels(name):
    assert_derived_from_structured_out(*name, average_pool3d)


def test_out_variants_match_torch_and_resize_with_its_warning(capfd):
    def fitting(L):
        out = L.empty(1, 2, 4, 4, 4, dtype=L.float64)
        return L.ops.aten.avg_pool3d.out(_t(L, (1, 2, 4, 4, 4)), [3, 3, 3], [1], [1], out=out) is out, out
    (same_ours, ours), (same_theirs, theirs) = fitting(internals), fitting(torch)
    assert same_ours and same_theirs
    assert_same(ours, theirs, rtol=0, atol=0)
    assert_ops_out_resized_with_torchs_warning(
        lambda L: L.ops.aten.avg_pool3d.out(_t(L, (1, 2, 4, 4, 4)), [2, 2, 2], out=L.empty(3, dtype=L.float64)),
        capfd)
    assert_ops_out_resized_with_torchs_warning(
        lambda L: L.ops.aten.avg_pool3d_backward.grad_input(
            _t(L, (1, 2, 2, 2, 2)), _t(L, (1, 2, 4, 4, 4)), [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None,
            grad_input=L.empty(3, dtype=L.float64)), capfd)


def test_fake_tensors_get_the_real_layout():
    def operands():
        return (_t(internals, (2, 3, 4, 5, 6)).contiguous(memory_format=internals.channels_last_3d),)
    assert_fake_matches_real(lambda L, x: L.nn.functional.avg_pool3d(x, 3, 2, 1, True), operands)
    assert_fake_matches_real(
        lambda L, x: L.ops.aten.avg_pool3d_backward(L.ones(2, 3, 3, 3, 4, dtype=L.float64), x, [3, 3, 3],
                                                    [2, 2, 2], [1, 1, 1], True, True, None), operands)


def test_the_module_matches_torch_and_prints_alike():
    def run(L):
        m = L.nn.AvgPool3d((2, 3, 2), stride=1, padding=(1, 1, 0), count_include_pad=False)
        return m(_t(L, (1, 2, 3, 4, 5))), repr(m)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=0, atol=0)
    assert ours[1] == theirs[1]


def test_cuda_kernels_give_the_cpu_values():
    x = _t(internals, (1, 2, 4, 5, 3))
    for kwargs in (dict(kernel_size=2, stride=1, padding=1), dict(kernel_size=3, ceil_mode=True, stride=2)):
        xc = x.to("cuda").requires_grad_(True)
        y = internals.nn.functional.avg_pool3d(xc, **kwargs)
        g, = internals.autograd.grad(y.sum(), xc)
        xr = x.to_torch().requires_grad_(True)
        yt = torch.nn.functional.avg_pool3d(xr, **kwargs)
        gt, = torch.autograd.grad(yt.sum(), xr)
        assert_same(y.cpu(), yt, rtol=0, atol=0)
        assert_same(g.cpu(), gt, rtol=0, atol=0)


def test_local_response_norm_of_a_wide_input_records_torchs_avg_pool3d_node():
    def run(L, shape):
        x = _t(L, shape, requires_grad=True)
        y = L.nn.functional.local_response_norm(x, 3, alpha=0.5)
        names, node = [], y.grad_fn
        while node is not None:           # down the chain of first inputs
            names.append(node.name())
            node = next((n for n, _ in node.next_functions if n is not None and n.name() != "AccumulateGrad"
                         and not n.name().endswith("AccumulateGrad")), None)
        return names
    for shape in [(2, 6, 3, 4), (1, 4, 2, 3, 2)]:
        ours, theirs = run(internals, shape), run(torch, shape)
        assert ours == theirs
        assert "AvgPool3DBackward0" in ours


# Built twice, through the backward operator's own derivative (``AvgPool3DBackwardBackward0``);
# tests/autograd/test_autograd.py counts the nodes these reach.
SECOND_ORDER = {
    "adaptive_avg_pool3d": lambda L: (lambda x: (L.nn.functional.adaptive_avg_pool3d(x * x, (2, 3, 2)) ** 2, x))(
        _t(L, (1, 2, 3, 5, 4), 6, requires_grad=True)),
    "avg_pool3d": lambda L: (lambda x: (L.nn.functional.avg_pool3d(x * x, 2, 1, 1) ** 2, x))(
        _t(L, (1, 2, 3, 4, 3), 5, requires_grad=True)),
    "max_pool3d": lambda L: (lambda x: (L.nn.functional.max_pool3d(x * x, 2, 1, 1, dilation=(1, 2, 1)) ** 2, x))(
        _t(L, (1, 2, 3, 4, 3), 5, requires_grad=True)),
    "adaptive_max_pool3d": lambda L: (lambda x: (L.nn.functional.adaptive_max_pool3d(x * x, (2, 3, 2)) ** 2, x))(
        _t(L, (1, 2, 3, 5, 4), 6, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    assert_second_derivatives_match_torch(SECOND_ORDER[name])


ADAPTIVE = {
    "shrink": ((2, 3, 5, 7, 6), (2, 3, 4)),
    "unbatched_grow": ((3, 2, 3, 2), (3, 5, 4)),
    "none_keeps_a_size": ((1, 2, 4, 5, 6), (None, 2, 3)),
    "int": ((1, 2, 4, 5, 6), 3),
    "one": ((2, 3, 4, 5, 6), 1),
    "ones": ((2, 3, 4, 5, 6), (1, 1, 1)),
}


@pytest.mark.parametrize("layout", ["contiguous", "channels_last_3d", "transposed"])
@pytest.mark.parametrize("name", list(ADAPTIVE))
def test_adaptive_values_layout_nodes_and_two_gradients_match_torch(name, layout):
    shape, size = ADAPTIVE[name]
    if layout == "channels_last_3d" and len(shape) != 5:
        pytest.skip("channels_last_3d is a 5-d layout")

    def run(L):
        x = _input(L, shape, layout)
        y = L.nn.functional.adaptive_avg_pool3d(x, size)
        nodes = (y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions if n is not None])
        w = _t(L, tuple(y.shape), seed=2, requires_grad=True)
        g, = L.autograd.grad((y * w).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * _t(L, tuple(g.shape), seed=3)).sum(), w)
        return y, g, gg, nodes
    ours, theirs = run(internals), run(torch)
    # a 1 x 1 x 1 output is a mean: a vector-width reduction in torch, whose sums of both signs
    # are compared relative to their terms' scale
    mean = size in (1, (1, 1, 1))
    tol = dict(rtol=1e-12, atol=1e-15) if mean else dict(rtol=0, atol=0)
    for i, (o, t) in enumerate(zip(ours[:3], theirs[:3])):
        # the mean's second-order gradient of a channels-last input has size-1 dims strided
        # otherwise than torch's (the package's 2-d adaptive mean does the same): values only
        assert_same(o, t, exact_layout=not (mean and i == 2 and layout == "channels_last_3d"), **tol)
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64"])
def test_adaptive_dtypes_match_torch(dtype):
    """float32 bit for bit; integers are refused. torch sums 16-bit floats in their own type,
    rounding at each step, the package in float32: torch's answer is the less accurate one, so the
    two are compared within its accumulated rounding, not in ulps."""
    def run(L):
        x = (_t(L, (1, 2, 5, 4, 6), seed=8)).to(getattr(L, dtype))
        return L.nn.functional.adaptive_avg_pool3d(x, (2, 3, 4))
    if dtype == "int64":
        same_outcome(run)
        return
    assert_same(run(internals), run(torch), **(dict(rtol=0, atol=0) if dtype == "float32" else dict(rtol=1e-2,
                                                                                                    atol=1e-2)))


ADAPTIVE_BAD = {
    "two_sizes": lambda F, x: F.adaptive_avg_pool3d(x, (2, 2)),
    "negative": lambda F, x: F.adaptive_avg_pool3d(x, (2, -1, 2)),
    "3d_input": lambda F, x: F.adaptive_avg_pool3d(x[0, 0], 2),
    "empty_channel": lambda F, x: F.adaptive_avg_pool3d(x[:, :0], 2),
}


@pytest.mark.parametrize("name", list(ADAPTIVE_BAD))
def test_adaptive_bad_arguments_raise_torchs_error(name):
    same_outcome(lambda L: ADAPTIVE_BAD[name](L.nn.functional, _t(L, (2, 3, 4, 4, 4))))


def test_adaptive_module_fake_tensors_and_cuda():
    def run(L):
        m = L.nn.AdaptiveAvgPool3d((2, None, 3))
        return m(_t(L, (1, 2, 3, 4, 5))), repr(m)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=0, atol=0)
    assert ours[1] == theirs[1]

    def operands():
        return (_t(internals, (2, 3, 4, 5, 6)).contiguous(memory_format=internals.channels_last_3d),)
    assert_fake_matches_real(lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, (2, 3, 4)), operands)
    assert_fake_matches_real(lambda L, x: L.nn.functional.adaptive_avg_pool3d(x, 1), operands)
    x = _t(internals, (1, 2, 3, 4, 5))
    xc = x.to("cuda").requires_grad_(True)
    y = internals.nn.functional.adaptive_avg_pool3d(xc, (2, 3, 2))
    g, = internals.autograd.grad(y.sum(), xc)
    xt = x.to_torch().requires_grad_(True)
    yt = torch.nn.functional.adaptive_avg_pool3d(xt, (2, 3, 2))
    assert_same(y.cpu(), yt, rtol=0, atol=0)
    assert_same(g.cpu(), torch.autograd.grad(yt.sum(), xt)[0], rtol=0, atol=0)


# ---------------------------------------------------------------------- max pooling
@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16,
                                   torch.int32, torch.int64), ids=str)
@pytest.mark.parametrize("name", ["nn.functional.max_pool3d", "nn.functional.adaptive_max_pool3d"])
def test_max_pool_opinfo_samples_in_every_dtype_torch_pools(name, dtype):
    """torch's max_pool3d pools every integer type and the 16-bit floats; the adaptive one only
    floats (integers are refused, as torch refuses them). A maximum is one of the inputs: exact."""
    check_opinfo_samples(name, dtype, ADAPTERS[name], step=_step(name, dtype))


MAX_CASES = {
    "cube": ((2, 3, 4, 5, 6), dict(kernel_size=2)),
    "unbatched": ((3, 4, 5, 6), dict(kernel_size=(2, 3, 2), stride=1)),
    "padded": ((1, 2, 5, 5, 5), dict(kernel_size=3, stride=2, padding=1)),
    "dilated": ((1, 2, 5, 7, 6), dict(kernel_size=(2, 3, 2), stride=1, padding=(1, 1, 0), dilation=(2, 2, 3))),
    "ceil": ((2, 1, 6, 5, 7), dict(kernel_size=(3, 2, 3), stride=2, padding=(1, 1, 0), ceil_mode=True)),
    "overlapping_dilated_ceil": ((1, 2, 4, 6, 5), dict(kernel_size=2, stride=1, padding=1, dilation=2,
                                                        ceil_mode=True)),
    "one_stride": ((1, 1, 3, 4, 5), dict(kernel_size=(1, 2, 2), stride=[2])),
}


@pytest.mark.parametrize("layout", ["contiguous", "channels_last_3d", "transposed"])
@pytest.mark.parametrize("name", list(MAX_CASES))
def test_max_pool_values_indices_layout_nodes_and_two_gradients_are_torchs(name, layout):
    """Values, indices, their layout (channels-last-3d kept for such an input, as torch's CPU
    kernel keeps it), the nodes, the gradient and the gradient of the gradient, bit for bit."""
    shape, kwargs = MAX_CASES[name]
    if layout == "channels_last_3d" and len(shape) != 5:
        pytest.skip("channels_last_3d is a 5-d layout")

    def run(L):
        x = _input(L, shape, layout)
        y, i = L.nn.functional.max_pool3d(x, **kwargs, return_indices=True)
        nodes = (y.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions if n is not None])
        w = _t(L, tuple(y.shape), seed=2, requires_grad=True)
        g, = L.autograd.grad((y * w).sum(), x, create_graph=True)
        g_nodes = (g.grad_fn.name(), [n.name() for n, _ in g.grad_fn.next_functions if n is not None])
        gg, = L.autograd.grad((g * _t(L, tuple(g.shape), seed=3)).sum(), w)     # a gather at the indices
        return y, i, g, gg, L.nn.functional.max_pool3d(x.detach(), **kwargs), nodes, g_nodes
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:5], theirs[:5]):
        assert_same(o, t, rtol=0, atol=0)
    assert ours[5:] == theirs[5:]


def test_max_pool_nans_win_the_last_one_first_ties_go_to_the_first_element():
    """torch's loop takes a value over the running maximum when it is larger or NaN: the last NaN
    of a window wins, and among equal values the first, in frames-rows-columns order; in every
    layout and through the adaptive windows too."""
    def run(L):
        a = np.zeros((1, 2, 3, 4, 4))
        a[0, 0, 0, 0, 0] = a[0, 0, 1, 1, 1] = a[0, 1, 2, 3, 3] = np.nan
        a[0, 1, 0, 0, 1] = np.inf
        x = L.tensor(a.ravel().tolist(), dtype=L.float32).reshape(a.shape)
        results = []
        for t in (x, x.contiguous(memory_format=L.channels_last_3d), -x):
            results += L.nn.functional.max_pool3d(t, 2, 1, 1, dilation=(1, 2, 1), return_indices=True)
            results += L.nn.functional.max_pool3d(t, 3, return_indices=True, ceil_mode=True)
            results += L.nn.functional.adaptive_max_pool3d(t, (2, 3, 2), return_indices=True)
        return results
    for o, t in zip(run(internals), run(torch), strict=True):
        assert_same(o, t, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int64"])
def test_a_window_wholly_in_the_padding_gives_torchs_lowest_value_and_index(dtype):
    """A dilation can step a window over the whole input (padding 1, dilation 3, input length 2):
    torch's running maximum keeps its start, -inf or the integer type's lowest value, and the
    index of the window's first position past the padding, which lies outside the input."""
    def run(L):
        x = L.tensor([[[[[5.]], [[7.]]]]]).to(getattr(L, dtype))
        return L.nn.functional.max_pool3d(x, (2, 1, 1), stride=1, padding=(1, 0, 0), dilation=(3, 1, 1),
                                          return_indices=True)
    for o, t in zip(run(internals), run(torch), strict=True):
        assert_same(o, t, rtol=0, atol=0)


def test_max_pool_16_bit_floats_pool_exactly_and_their_gradients_within_torchs_rounding():
    """The maxima and indices are torch's bit for bit. Where windows overlap, several gradients
    meet at one input: torch adds them in the 16-bit type, rounding at each step, the package in
    float32, rounding once, so the two are compared within torch's accumulated rounding."""
    def run(L, dtype):
        x = _t(L, (1, 2, 4, 5, 4), seed=9).to(dtype).requires_grad_(True)
        y, i = L.nn.functional.max_pool3d(x, 3, stride=1, padding=1, return_indices=True)
        g, = L.autograd.grad(y, x, _t(L, tuple(y.shape), seed=10).to(dtype))
        return y, i, g
    for name in ("float16", "bfloat16"):
        ours, theirs = run(internals, getattr(internals, name)), run(torch, getattr(torch, name))
        assert_same(ours[0], theirs[0], rtol=0, atol=0)
        assert_same(ours[1], theirs[1], rtol=0, atol=0)
        assert_same(ours[2], theirs[2], rtol=2e-2, atol=2e-2)


MAX_BAD = {
    "kernel_length": lambda F, x: F.max_pool3d(x, (2, 2)),
    "stride_length": lambda F, x: F.max_pool3d(x, 2, stride=(1, 1)),
    "padding_length": lambda F, x: F.max_pool3d(x, 2, padding=(1, 1)),
    "dilation_length": lambda F, x: F.max_pool3d(x, 2, dilation=(1, 1)),
    "3d_input": lambda F, x: F.max_pool3d(x[0, 0], 2),
    "6d_input": lambda F, x: F.max_pool3d(x.unsqueeze(0), 2),
    "stride_zero": lambda F, x: F.max_pool3d(x, 2, stride=0),
    "negative_stride": lambda F, x: F.max_pool3d(x, 2, stride=-1),
    "negative_padding": lambda F, x: F.max_pool3d(x, 2, padding=-1),
    "padding_over_half": lambda F, x: F.max_pool3d(x, 2, padding=2),
    "padding_over_half_the_dilated_kernel": lambda F, x: F.max_pool3d(x, 2, padding=1, dilation=3),
    "kernel_zero": lambda F, x: F.max_pool3d(x, (0, 1, 1)),
    "dilation_zero": lambda F, x: F.max_pool3d(x, 2, dilation=0),
    "negative_dilation": lambda F, x: F.max_pool3d(x, 2, dilation=-1),
    "kernel_larger_than_input": lambda F, x: F.max_pool3d(x, (5, 1, 1)),
    "dilated_kernel_larger_than_input": lambda F, x: F.max_pool3d(x, 3, padding=1, dilation=3),
    "empty_channel": lambda F, x: F.max_pool3d(x[:, :0], 2),
    "empty_batch": lambda F, x: F.max_pool3d(x[:0], 2, return_indices=True),
    "bool": lambda F, x: F.max_pool3d(x > 0, 2),
    "adaptive_two_sizes": lambda F, x: F.adaptive_max_pool3d(x, (2, 2)),
    "adaptive_negative": lambda F, x: F.adaptive_max_pool3d(x, (2, -1, 2)),
    "adaptive_zero": lambda F, x: F.adaptive_max_pool3d(x, (0, 2, 2), return_indices=True),
    "adaptive_3d_input": lambda F, x: F.adaptive_max_pool3d(x[0, 0], 2),
    "adaptive_6d_input": lambda F, x: F.adaptive_max_pool3d(x.unsqueeze(0), 2),
    "adaptive_empty_channel": lambda F, x: F.adaptive_max_pool3d(x[:, :0], 2),
    "adaptive_empty_batch": lambda F, x: F.adaptive_max_pool3d(x[:0], 2, return_indices=True),
    "adaptive_integers": lambda F, x: F.adaptive_max_pool3d(x.long(), 2),
}


@pytest.mark.parametrize("name", list(MAX_BAD))
def test_max_pool_bad_arguments_raise_torchs_error_in_torchs_words(name):
    same_outcome(lambda L: MAX_BAD[name](L.nn.functional, _t(L, (2, 3, 4, 4, 4))))


def _max_backward(L, g_shape, x_shape, indices=None, g_dtype="float64", x_dtype="float64"):
    x = _t(L, (2, 3, 4, 4, 4)).to(getattr(L, x_dtype))
    _, i = L.nn.functional.max_pool3d(x.double(), 2, return_indices=True)
    i = i if indices is None else indices(i)
    g = _t(L, g_shape, seed=1).to(getattr(L, g_dtype))
    return L.ops.aten.max_pool3d_with_indices_backward(g, _t(L, x_shape).to(getattr(L, x_dtype)), [2, 2, 2],
                                                       [2, 2, 2], [0, 0, 0], [1, 1, 1], False, i)


MAX_BACKWARD_BAD = {
    "fits": lambda L: _max_backward(L, (2, 3, 2, 2, 2), (2, 3, 4, 4, 4)),
    "grad_output_frames": lambda L: _max_backward(L, (2, 3, 1, 2, 2), (2, 3, 4, 4, 4)),
    "grad_output_channels": lambda L: _max_backward(L, (2, 4, 2, 2, 2), (2, 3, 4, 4, 4)),
    "grad_output_rank": lambda L: _max_backward(L, (3, 2, 2, 2), (2, 3, 4, 4, 4)),
    "indices_frames": lambda L: _max_backward(L, (2, 3, 2, 2, 2), (2, 3, 4, 4, 4), lambda i: i[:, :, :1]),
    "grad_output_dtype": lambda L: _max_backward(L, (2, 3, 2, 2, 2), (2, 3, 4, 4, 4), g_dtype="float32"),
    "indices_dtype": lambda L: _max_backward(L, (2, 3, 2, 2, 2), (2, 3, 4, 4, 4), lambda i: i.int()),
    "integers": lambda L: _max_backward(L, (2, 3, 2, 2, 2), (2, 3, 4, 4, 4), g_dtype="int64", x_dtype="int64"),
    "adaptive_fits": lambda L: L.ops.aten.adaptive_max_pool3d_backward(*_adaptive_backward_args(L)),
    "adaptive_grad_output_sizes": lambda L: L.ops.aten.adaptive_max_pool3d_backward(
        *_adaptive_backward_args(L, g=lambda g: g[:, :, :1])),
    "adaptive_grad_output_empty": lambda L: L.ops.aten.adaptive_max_pool3d_backward(
        *_adaptive_backward_args(L, g=lambda g: g[:, :, :0])),
    "adaptive_grad_output_dtype": lambda L: L.ops.aten.adaptive_max_pool3d_backward(
        *_adaptive_backward_args(L, g=lambda g: g.float())),
    "adaptive_indices_rank": lambda L: L.ops.aten.adaptive_max_pool3d_backward(
        *_adaptive_backward_args(L, i=lambda i: i[0])),
    "adaptive_indices_dtype": lambda L: L.ops.aten.adaptive_max_pool3d_backward(
        *_adaptive_backward_args(L, i=lambda i: i.int())),
}


def _adaptive_backward_args(L, g=lambda g: g, i=lambda i: i):
    x = _t(L, (2, 3, 4, 5, 4))
    _, indices = L.nn.functional.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True)
    return g(_t(L, (2, 3, 2, 3, 2), seed=1)), x, i(indices)


@pytest.mark.parametrize("name", list(MAX_BACKWARD_BAD))
def test_the_max_backwards_check_their_operands_as_torch_does(name):
    same_outcome(MAX_BACKWARD_BAD[name])


@pytest.mark.parametrize("program", [
    lambda L, g, x, i: L.ops.aten.max_pool3d_with_indices_backward(g, x, [2], [2], [0], [1], False, i),
    lambda L, g, x, i: L.ops.aten.adaptive_max_pool3d_backward(g, x, i),
], ids=["max_pool3d", "adaptive_max_pool3d"])
@pytest.mark.parametrize("bad", ["past_the_volume", "negative", "batch_not_the_inputs"])
def test_the_backwards_refuse_indices_that_would_write_outside_the_gradient(program, bad):
    """torch's loop writes where an index points and checks nothing: an index past the volume
    corrupts the heap there (an abort, or a silently wrong neighbour), as does a grad_output
    with more images than the input. Here each one is refused before the loop runs."""
    x = _t(internals, (1, 2, 4, 4, 4))
    g = _t(internals, (1, 2, 2, 2, 2), seed=1)
    _, i = internals.nn.functional.max_pool3d(x, 2, return_indices=True)
    if bad == "past_the_volume":
        i = i + 64
    elif bad == "negative":
        i = i - 64
    else:
        g, i = g.expand(2, 2, 2, 2, 2), i.expand(2, 2, 2, 2, 2)
    with pytest.raises(RuntimeError):
        program(internals, g, x, i)


def test_max_pool_out_variants_resize_as_torchs_kernels_do(capfd):
    """max_pool3d_with_indices is not structured in torch: its out= kernel resizes ``out`` and
    ``indices`` with ``resize_`` (no warning), restrided to a 5-d input's suggested format (a
    fitting transposed out of a 5-d input is made contiguous, a 4-d one's is kept); the
    structured adaptive operator resizes with its warning and keeps a fitting out."""
    def run(L, x, out, indices):
        result = L.ops.aten.max_pool3d_with_indices.out(x, [2, 2, 2], out=out, indices=indices)
        return (result[0] is out and result[1] is indices), out, indices
    cases = [
        lambda L: (_t(L, (1, 2, 4, 4, 4)), L.empty(3, dtype=L.float64), L.empty(3, dtype=L.int64)),
        lambda L: (_t(L, (1, 2, 4, 4, 4)).contiguous(memory_format=L.channels_last_3d),
                   L.empty(0, dtype=L.float64), L.empty(16, dtype=L.int64)),
        lambda L: (_t(L, (1, 2, 4, 4, 4)), L.empty(2, 2, 2, 2, 1, dtype=L.float64).permute(4, 3, 2, 1, 0),
                   L.empty(0, dtype=L.int64)),
        lambda L: (_t(L, (2, 4, 4, 4)), L.empty(2, 2, 2, 2, dtype=L.float64).permute(3, 2, 1, 0),
                   L.empty(0, dtype=L.int64)),
    ]
    for case in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ours = run(internals, *case(internals))
        assert not caught
        theirs = run(torch, *case(torch))
        assert "Warning" not in capfd.readouterr().err
        assert ours[0] and theirs[0]
        for o, t in zip(ours[1:], theirs[1:]):
            assert_same(o, t, rtol=0, atol=0)
    for out_dtype, indices_dtype in (("float32", "int64"), ("float64", "int32")):     # each refused
        same_outcome(lambda L, o=out_dtype, i=indices_dtype: L.ops.aten.max_pool3d_with_indices.out(
            _t(L, (1, 2, 4, 4, 4)), [2], out=L.empty(0, dtype=getattr(L, o)), indices=L.empty(0, dtype=getattr(L, i))))
    assert_ops_out_resized_with_torchs_warning(
        lambda L: L.ops.aten.adaptive_max_pool3d.out(_t(L, (1, 2, 4, 4, 4)), [2, 2, 2],
                                                     out=L.empty(3, dtype=L.float64),
                                                     indices=L.empty(0, dtype=L.int64))[0], capfd)


def test_max_pool_backward_out_variants_are_laid_out_as_torchs():
    def run(L, grad_input, channels_last):
        x = _t(L, (1, 2, 4, 4, 4))
        x = x.contiguous(memory_format=L.channels_last_3d) if channels_last else x
        _, i = L.nn.functional.max_pool3d(x, 2, return_indices=True)
        r = L.ops.aten.max_pool3d_with_indices_backward.grad_input(
            _t(L, (1, 2, 2, 2, 2), seed=1), x, [2], [2], [0], [1], False, i, grad_input=grad_input(L))
        return r
    for grad_input in (lambda L: L.empty(0, dtype=L.float64), lambda L: L.empty(3, dtype=L.float64),
                       lambda L: L.empty(4, 4, 4, 2, 1, dtype=L.float64).permute(4, 3, 2, 1, 0)):
        for channels_last in (False, True):
            same_outcome(lambda L, grad_input=grad_input, channels_last=channels_last: run(L, grad_input,
                                                                                           channels_last))


@pytest.mark.parametrize("name", [("adaptive_max_pool3d", "out"), ("adaptive_max_pool3d_backward", "grad_input")])
def test_the_adaptive_max_pool_is_derived_from_its_structured_out_kernels(name):
    assert_derived_from_structured_out(*name, adaptive_max_pooling3d)


def test_max_pool_fake_tensors_get_the_real_layout():
    def operands():
        return (_t(internals, (2, 3, 4, 5, 6)).contiguous(memory_format=internals.channels_last_3d),)
    F = internals.nn.functional
    assert_fake_matches_real(lambda L, x: L.nn.functional.max_pool3d(x, 3, 2, 1, 2, True, True), operands)
    assert_fake_matches_real(lambda L, x: L.nn.functional.adaptive_max_pool3d(x, (2, 3, 4), True), operands)
    _, i = F.max_pool3d(operands()[0], 2, return_indices=True)
    _, ai = F.adaptive_max_pool3d(operands()[0], (2, 3, 4), return_indices=True)
    assert_fake_matches_real(lambda L, x: L.ops.aten.max_pool3d_with_indices_backward(
        L.ones(2, 3, 2, 2, 3, dtype=L.float64), x, [2], [2], [0], [1], False, i.contiguous()), operands)
    assert_fake_matches_real(lambda L, x: L.ops.aten.adaptive_max_pool3d_backward(
        L.ones(2, 3, 2, 3, 4, dtype=L.float64), x, ai), operands)


def test_the_max_pool_modules_match_torch_and_print_alike():
    def run(L):
        x = _t(L, (1, 2, 5, 4, 5))
        m = L.nn.MaxPool3d((2, 3, 2), stride=1, padding=(1, 1, 0), dilation=(1, 1, 2), return_indices=True)
        a = L.nn.AdaptiveMaxPool3d((2, None, 3), return_indices=True)
        return (*m(x), *a(x), L.nn.MaxPool3d(2, ceil_mode=True)(x), L.nn.AdaptiveMaxPool3d(1)(x)), repr(m), repr(a)
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0], strict=True):
        assert_same(o, t, rtol=0, atol=0)
    assert ours[1:] == theirs[1:]


def test_max_pools_autocast_to_float32_on_the_cpu_as_torchs_list_says():
    """torch's autocast_mode.cpp lists max_pool3d and adaptive_max_pool3d among the CPU's float32
    operators; max_pool3d_with_indices (``return_indices=True``) is not listed, so it keeps bfloat16."""
    def run(L):
        x = _t(L, (1, 2, 4, 4, 4)).to(L.bfloat16)
        with L.autocast("cpu"):
            return (L.nn.functional.max_pool3d(x, 2), L.nn.functional.adaptive_max_pool3d(x, 2),
                    L.nn.functional.max_pool3d(x, 2, return_indices=True)[0])
    for o, t in zip(run(internals), run(torch), strict=True):
        assert_same(o, t, rtol=0, atol=0)


def test_max_pool_cuda_kernels_give_the_cpu_values():
    x = _t(internals, (1, 2, 4, 5, 3))
    x[0, 0, 1, 1, 1] = float("nan")
    for pool in (lambda F, t: F.max_pool3d(t, 2, stride=1, padding=1, dilation=(2, 1, 1), return_indices=True),
                 lambda F, t: F.max_pool3d(t, 3, ceil_mode=True, stride=2, return_indices=True),
                 lambda F, t: F.adaptive_max_pool3d(t, (3, 2, 2), return_indices=True)):
        xc = x.to("cuda").requires_grad_(True)
        y, i = pool(internals.nn.functional, xc)
        g, = internals.autograd.grad(y.sum(), xc)
        xr = x.to_torch().requires_grad_(True)
        yt, it = pool(torch.nn.functional, xr)
        gt, = torch.autograd.grad(yt.sum(), xr)
        assert_same(y.cpu(), yt, rtol=0, atol=0)
        assert_same(i.cpu(), it, rtol=0, atol=0)
        assert_same(g.cpu(), gt, rtol=0, atol=0)
