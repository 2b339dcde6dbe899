"""``avg_pool3d`` / ``F.avg_pool3d`` / ``nn.AvgPool3d`` and ``F.adaptive_avg_pool3d`` /
``nn.AdaptiveAvgPool3d`` (``aten/native/average_pool3d.py``) against torch.

torch's CPU kernel sums each window in the element type, frames then rows then columns, and
divides once: IEEE-exact steps in torch's order, so values and gradients are compared bit for bit.
The output is contiguous whatever the input's layout (channels_last_3d included); float32,
float64 and int64 only. ``F.local_response_norm`` of a 4-d or wider input averages with it. The
adaptive operator's loop sums the same way and divides one dimension's count at a time."""

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
from internals.aten.native import average_pool3d

ADAPTERS = {
    "nn.functional.avg_pool3d": Adapter(internals.nn.functional.avg_pool3d, kwargs=(
        "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")),
    "nn.functional.adaptive_avg_pool3d": Adapter(internals.nn.functional.adaptive_avg_pool3d),
}


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64)))
def test_opinfo_samples(name, dtype):
    """PyTorch's own sample inputs, as given and made non-contiguous (exact strides)."""
    check_opinfo_samples(name, dtype, ADAPTERS[name])


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
