"""The pooling backward operators (``aten/native/pooling.py``) torch declares structured:
``max_pool2d_with_indices_backward``, ``avg_pool2d_backward`` and ``adaptive_max_pool2d_backward``.
A meta step checks the geometry and grad_output's sizes and lays the gradient out as the input
(its sizes, dtype and suggested memory format); an impl step runs the loop. The ``.grad_input``
overload is primary, the functional form derived from it. Then ``F.avg_pool2d``/``nn.AvgPool2d``
and ``F.adaptive_avg_pool2d``/``nn.AdaptiveAvgPool2d``: OpInfo samples, everyday calls, gradients
(twice), finite differences and the CUDA kernels (at the end).
"""

import pytest
import torch
from helpers import (
    OPINFO_BY_NAME,
    Adapter,
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_out_variant_matches_torch,
    assert_same,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    opinfo_cases,
    same_error,
)
from helpers import run_everyday_call as _run

import internals
from internals.aten.native import pooling

OPERATORS = ("max_pool2d_with_indices_backward", "avg_pool2d_backward", "adaptive_max_pool2d_backward")


@pytest.mark.parametrize("name", OPERATORS)
def test_the_functional_form_is_derived_from_the_structured_out_kernel(name):
    assert_derived_from_structured_out(name, "grad_input", pooling)


def _x(L, channels_last=False):
    x = L.arange(2 * 3 * 4 * 4.).reshape(2, 3, 4, 4).sin()
    return x.contiguous(memory_format=L.channels_last) if channels_last else x


def _max_indices(L, channels_last=False):
    return L.nn.functional.max_pool2d(_x(L, channels_last), 2, return_indices=True)[1]


def _adaptive_indices(L):
    return L.nn.functional.adaptive_max_pool2d(_x(L), 3, return_indices=True)[1]


def _max_backward(L, grad_output, x, indices, **out):
    op = L.ops.aten.max_pool2d_with_indices_backward
    return (op.grad_input if out else op)(grad_output, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices, **out)


def _avg_backward(L, grad_output, x, *args, **out):
    op = L.ops.aten.avg_pool2d_backward
    return (op.grad_input if out else op)(grad_output, x, *(args or ([2, 2], [2, 2], [0, 0], False, True, None)),
                                          **out)


def _adaptive_backward(L, grad_output, x, indices, **out):
    op = L.ops.aten.adaptive_max_pool2d_backward
    return (op.grad_input if out else op)(grad_output, x, indices, **out)


def _g(L, size=2):
    return L.arange(2. * 3 * size * size).reshape(2, 3, size, size) / 3


CASES = {
    "max": lambda L: _max_backward(L, _g(L), _x(L), _max_indices(L)),
    "max, channels-last input": lambda L: _max_backward(L, _g(L), _x(L, True), _max_indices(L, True)),
    "average": lambda L: _avg_backward(L, _g(L), _x(L)),
    "average, padded, ceil mode": lambda L: _avg_backward(L, _g(L, 3), _x(L), [3, 3], [2, 2], [1, 1], True, False,
                                                          None),
    "average, channels-last input": lambda L: _avg_backward(L, _g(L), _x(L, True)),
    "adaptive max": lambda L: _adaptive_backward(L, _g(L, 3), _x(L), _adaptive_indices(L)),
    "adaptive max, channels-last input": lambda L: _adaptive_backward(L, _g(L, 3), _x(L, True),
                                                                      _adaptive_indices(L)),
}


@pytest.mark.parametrize("case", CASES)
def test_functional_forms_match_torch(case):
    assert_same(CASES[case](internals), CASES[case](torch))


OUT_CASES = {
    "max into an empty out": lambda L: _max_backward(L, _g(L), _x(L), _max_indices(L), grad_input=L.empty(0)),
    "max, channels-last layout given to a resized out": lambda L: _max_backward(
        L, _g(L), _x(L, True), _max_indices(L), grad_input=L.empty(0)),
    "max, an out that fits keeps its strides": lambda L: _max_backward(
        L, _g(L), _x(L), _max_indices(L), grad_input=L.empty(2, 4, 4, 3).permute(0, 3, 1, 2)),
    "average into an empty out": lambda L: _avg_backward(L, _g(L), _x(L, True), grad_input=L.empty(0)),
    "adaptive max into an empty out": lambda L: _adaptive_backward(L, _g(L, 3), _x(L), _adaptive_indices(L),
                                                                   grad_input=L.empty(0)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variants_match_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


RESIZE_CASES = {
    "max": lambda L: _max_backward(L, _g(L), _x(L), _max_indices(L), grad_input=L.empty(5)),
    "average": lambda L: _avg_backward(L, _g(L), _x(L), grad_input=L.empty(2, 2)),
    "adaptive max": lambda L: _adaptive_backward(L, _g(L, 3), _x(L, True), _adaptive_indices(L),
                                                 grad_input=L.empty(5)),
}


@pytest.mark.parametrize("case", RESIZE_CASES)
def test_a_wrong_sized_out_is_resized_with_torchs_warning(case, capfd):
    assert_ops_out_resized_with_torchs_warning(RESIZE_CASES[case], capfd)


ERROR_CASES = {
    "max, grad_output of other sizes": lambda L: _max_backward(L, L.ones(2, 3, 2, 3), _x(L), _max_indices(L)),
    "max, int32 indices": lambda L: _max_backward(L, _g(L), _x(L), _max_indices(L).int()),
    "max, out of another dtype": lambda L: _max_backward(L, _g(L), _x(L), _max_indices(L),
                                                         grad_input=L.empty(0, dtype=L.float64)),
    "average, grad_output of other sizes": lambda L: _avg_backward(L, L.ones(2, 3, 3, 2), _x(L)),
    "average, a zero divisor": lambda L: _avg_backward(L, _g(L), _x(L), [2, 2], [2, 2], [0, 0], False, True, 0),
    "average, out of another dtype": lambda L: _avg_backward(L, _g(L), _x(L), grad_input=L.empty(0, dtype=L.float64)),
    "adaptive max, grad_output of another dtype": lambda L: _adaptive_backward(L, _g(L, 3).double(), _x(L),
                                                                               _adaptive_indices(L)),
    "adaptive max, int32 indices": lambda L: _adaptive_backward(L, _g(L, 3), _x(L), _adaptive_indices(L).int()),
    "adaptive max, a 2-d grad_output": lambda L: _adaptive_backward(L, L.ones(3, 3), _x(L), _adaptive_indices(L)),
    "adaptive max, out of another dtype": lambda L: _adaptive_backward(L, _g(L, 3), _x(L), _adaptive_indices(L),
                                                                       grad_input=L.empty(0, dtype=L.float64)),
    "out= of an input that requires grad": lambda L: _avg_backward(L, _g(L).requires_grad_(), _x(L),
                                                                   grad_input=L.empty(0)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


GRADIENT_CASES = {
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x * 2, 2),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x * 2, 3, 2, 1),
    "adaptive_max_pool2d": lambda L, x: L.nn.functional.adaptive_max_pool2d(x * 2, 3),
}


@pytest.mark.parametrize("case", GRADIENT_CASES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_gradients_and_nodes_match_torch(case, channels_last):
    """The backward operator's gradient (laid out as the input), and differentiated again."""
    def run(L):
        x = _x(L, channels_last).double().requires_grad_()
        y = GRADIENT_CASES[case](L, x)
        (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        return [y.grad_fn.name(), g.grad_fn.name()], [g, gg]
    (our_nodes, (g, gg)), (their_nodes, (their_g, their_gg)) = run(internals), run(torch)
    assert our_nodes == their_nodes
    assert_same(g.detach(), their_g)
    # torch's second derivative of a channels-last input comes back contiguous, internals' keeps
    # the input's layout (the engine's accumulation, not the pooling operators): values only there
    assert_same(gg, their_gg, exact_layout=not channels_last)


FAKE_PROGRAMS = {
    "max": lambda L, x: _max_backward(L, L.ones(2, 3, 2, 2), x, L.zeros(2, 3, 2, 2, dtype=L.int64)),
    "average, out resized": lambda L, x: _avg_backward(L, L.ones(2, 3, 2, 2), x, grad_input=L.empty(0)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program], lambda: (_x(internals, True),))


# ---- the pooling forwards torch structures: ``max_pool2d_with_indices``, ``avg_pool2d`` and
# ``adaptive_max_pool2d``, each an out= kernel (``.out``) with the functional form derived
FORWARDS = {"max_pool2d_with_indices": "out", "avg_pool2d": "out", "adaptive_max_pool2d": "out"}


@pytest.mark.parametrize("name", FORWARDS)
def test_the_forward_is_derived_from_the_structured_out_kernel(name):
    assert_derived_from_structured_out(name, FORWARDS[name], pooling)


def _max_forward(L, x, *args, **out):
    op = L.ops.aten.max_pool2d_with_indices
    return (op.out if out else op)(x, *(args or ([2, 2],)), **out)


def _avg_forward(L, x, *args, **out):
    op = L.ops.aten.avg_pool2d
    return (op.out if out else op)(x, *(args or ([2, 2],)), **out)


def _adaptive_forward(L, x, size=(3, 3), **out):
    op = L.ops.aten.adaptive_max_pool2d
    return (op.out if out else op)(x, list(size), **out)


def _two(L, dtype=None):
    return {"out": L.empty(0, dtype=dtype), "indices": L.empty(0, dtype=L.int64)}


FORWARD_CASES = {
    "max": lambda L: _max_forward(L, _x(L)),
    "max, channels-last, padded, ceil mode": lambda L: _max_forward(L, _x(L, True), [3, 3], [2, 2], [1, 1], [1, 1],
                                                                    True),
    "max of a 3-d input": lambda L: _max_forward(L, _x(L)[0]),
    "average": lambda L: _avg_forward(L, _x(L)),
    "average, channels-last, padding not counted": lambda L: _avg_forward(L, _x(L, True), [3, 3], [2, 2], [1, 1],
                                                                          True, False),
    "average, divisor overridden": lambda L: _avg_forward(L, _x(L), [2, 2], [1, 1], [0, 0], False, True, 3),
    "adaptive max": lambda L: _adaptive_forward(L, _x(L)),
    "adaptive max, channels-last": lambda L: _adaptive_forward(L, _x(L, True), (3, 2)),
}


def _assert_all_same(ours, theirs):
    ours, theirs = (ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)


@pytest.mark.parametrize("case", FORWARD_CASES)
def test_forward_functional_forms_match_torch(case):
    _assert_all_same(FORWARD_CASES[case](internals), FORWARD_CASES[case](torch))


FORWARD_OUT_CASES = {
    "max into empty outs": lambda L: _max_forward(L, _x(L), **_two(L)),
    "max, channels-last layout given to resized outs": lambda L: _max_forward(L, _x(L, True), **_two(L)),
    "max, outs that fit keep their strides": lambda L: _max_forward(
        L, _x(L), out=L.empty(2, 2, 2, 3).permute(0, 3, 1, 2), indices=L.empty(3, 2, 2, 2, dtype=L.int64)[0:3]
        .permute(1, 0, 2, 3)),
    "average into an empty out": lambda L: _avg_forward(L, _x(L, True), out=L.empty(0)),
    "average, an out that fits keeps its strides": lambda L: _avg_forward(L, _x(L), out=L.empty(2, 2, 2, 3)
                                                                          .permute(0, 3, 1, 2)),
    "adaptive max into empty outs": lambda L: _adaptive_forward(L, _x(L), **_two(L)),
}


@pytest.mark.parametrize("case", FORWARD_OUT_CASES)
def test_forward_out_variants_match_torch(case):
    _assert_all_same(FORWARD_OUT_CASES[case](internals), FORWARD_OUT_CASES[case](torch))


FORWARD_RESIZE_CASES = {
    "max": lambda L: _max_forward(L, _x(L), out=L.empty(5), indices=L.empty(0, dtype=L.int64))[0],
    "average": lambda L: _avg_forward(L, _x(L), out=L.empty(2, 2)),
    "adaptive max": lambda L: _adaptive_forward(L, _x(L, True), out=L.empty(0), indices=L.empty(4, dtype=L.int64))[1],
}


@pytest.mark.parametrize("case", FORWARD_RESIZE_CASES)
def test_a_wrong_sized_forward_out_is_resized_with_torchs_warning(case, capfd):
    assert_ops_out_resized_with_torchs_warning(FORWARD_RESIZE_CASES[case], capfd)


FORWARD_ERROR_CASES = {
    "max, out of another dtype": lambda L: _max_forward(L, _x(L), **_two(L, L.float64)),
    "max, int32 indices": lambda L: _max_forward(L, _x(L), out=L.empty(0), indices=L.empty(0, dtype=L.int32)),
    "max, a zero stride": lambda L: _max_forward(L, _x(L), [2, 2], [0, 1], **_two(L)),
    "max, padding over half the kernel": lambda L: _max_forward(L, _x(L), [2, 2], [2, 2], [2, 2], **_two(L)),
    "max of bools": lambda L: _max_forward(L, _x(L) > 0, out=L.empty(0, dtype=L.bool),
                                           indices=L.empty(0, dtype=L.int64)),
    "average, out of another dtype": lambda L: _avg_forward(L, _x(L), out=L.empty(0, dtype=L.float64)),
    "average, a zero divisor": lambda L: _avg_forward(L, _x(L), [2, 2], [2, 2], [0, 0], False, True, 0,
                                                      out=L.empty(0)),
    "average, a window larger than the input": lambda L: _avg_forward(L, _x(L), [5, 5], out=L.empty(0)),
    "adaptive max, out of another dtype": lambda L: _adaptive_forward(L, _x(L), **_two(L, L.float64)),
    "adaptive max of integers": lambda L: _adaptive_forward(L, _x(L).long(), out=L.empty(0, dtype=L.int64),
                                                            indices=L.empty(0, dtype=L.int64)),
    "adaptive max, an empty plane": lambda L: _adaptive_forward(L, L.ones(2, 3, 0, 4), **_two(L)),
    "out= of an input that requires grad": lambda L: _avg_forward(L, _x(L).requires_grad_(), out=L.empty(0)),
}


@pytest.mark.parametrize("case", FORWARD_ERROR_CASES)
def test_forward_errors_match_torch(case):
    same_error(FORWARD_ERROR_CASES[case])


FORWARD_FAKE_PROGRAMS = {
    "max": lambda L, x: _max_forward(L, x),
    "average, out resized": lambda L, x: _avg_forward(L, x, out=L.empty(0)),
    "adaptive max": lambda L, x: _adaptive_forward(L, x),
}


@pytest.mark.parametrize("program", FORWARD_FAKE_PROGRAMS)
def test_forward_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FORWARD_FAKE_PROGRAMS[program], lambda: (_x(internals, True),))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_a_max_pool_window_wholly_in_the_padding_gives_torchs_lowest_value(dtype, device):
    """Padding 1 and dilation 3 over two rows: the first output's window starts in the padding and
    its next row lies past the input, so it holds no element. torch's loop keeps its running
    maximum's start (-inf, or the type's lowest integer) and the index of the row past the input;
    the loop reads nothing outside the plane for it (it once read the next plane's first value,
    or whatever lay past the last plane)."""
    def run(L):
        x = L.arange(2 * 3 * 2 * 2).reshape(2, 3, 2, 2).to(getattr(L, dtype))
        out, indices = L.nn.functional.max_pool2d(x.to(device) if L is internals else x, (2, 1), stride=1,
                                                  padding=(1, 0), dilation=(3, 1), return_indices=True)
        return out.cpu(), indices.cpu()
    for o, t in zip(run(internals), run(torch), strict=True):
        assert_same(o, t, rtol=0, atol=0)


# =============================================================================================
# F.avg_pool2d/nn.AvgPool2d and F.adaptive_avg_pool2d/nn.AdaptiveAvgPool2d:
# PyTorch's OpInfo samples (as given and non-contiguous), then everyday calls compared for values,
# strides, dtypes, grad_fn names, gradients (twice where torch differentiates twice), warnings and
# error messages
# =============================================================================================
F = internals.nn.functional
IMG = "lib.arange(50.).reshape(1, 2, 5, 5)"
ADAPTERS = {
    "nn.functional.avg_pool2d": Adapter(F.avg_pool2d, kwargs=("kernel_size", "stride", "padding", "ceil_mode",
                                                              "count_include_pad", "divisor_override")),
    "nn.functional.adaptive_avg_pool2d": Adapter(F.adaptive_avg_pool2d),
}
OPINFO_CASES = opinfo_cases(list(ADAPTERS), (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    f"lib.nn.functional.avg_pool2d({IMG}, 2)",
    f"lib.nn.AvgPool2d(3, stride=2, padding=1)({IMG})",
    f"lib.nn.AvgPool2d(3, 2, 1, count_include_pad=False)({IMG})",
    f"lib.nn.functional.avg_pool2d({IMG}[0], 2)",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, ceil_mode=True)",
    f"lib.nn.functional.avg_pool2d({IMG}, (2, 3), divisor_override=3)",
    f"lib.nn.functional.avg_pool2d({IMG}.to(memory_format=lib.channels_last), 2)",
    f"lib.nn.functional.avg_pool2d({IMG}.requires_grad_(), 2)",
    "lib.nn.functional.avg_pool2d(lib.ones(4, 4), 2)",
    f"lib.nn.functional.avg_pool2d({IMG}, (1, 2, 3))",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, divisor_override=0)",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, padding=2)",
    f"lib.nn.functional.avg_pool2d({IMG}, 7)",
    f"lib.nn.functional.avg_pool2d({IMG}, 2, stride=0)",
    "lib.nn.functional.avg_pool2d(lib.ones(1, 0, 4, 4), 2)",
    f"lib.nn.functional.adaptive_avg_pool2d({IMG}, (2, 3))",
    f"lib.nn.AdaptiveAvgPool2d(1)({IMG})",
    f"lib.nn.AdaptiveAvgPool2d((None, 2))({IMG})",
    f"lib.nn.AdaptiveAvgPool2d(3)({IMG}[0])",
    f"lib.nn.AdaptiveAvgPool2d(1)({IMG}.to(memory_format=lib.channels_last))",
    f"lib.nn.AdaptiveAvgPool2d((2, 4))({IMG}.to(memory_format=lib.channels_last))",
    f"lib.nn.AdaptiveAvgPool2d((3, 3))({IMG}.requires_grad_())",
    "lib.nn.functional.adaptive_avg_pool2d(lib.ones(4, 4), 2)",
    "lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 0, 4), 2)",
    f"lib.nn.functional.adaptive_avg_pool2d({IMG}, (1, 2, 3))",
    f"lib.nn.functional.adaptive_avg_pool2d({IMG}, -1)",
    "lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 2, 3, 3, dtype=lib.int64), 2)",
    "repr(lib.nn.AvgPool2d(2)) + repr(lib.nn.AdaptiveAvgPool2d((2, 3)))",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    assert _run(internals, program) == _run(torch, program)


GRAD_CASES = {
    "avg_pool2d": lambda lib, x, t: lib.nn.functional.avg_pool2d((x * x * t).reshape(1, 1, 2, 3), 2, 1, 1,
                                                                 count_include_pad=False),
    "avg_pool2d, divisor": lambda lib, x, t: lib.nn.functional.avg_pool2d(
        (x * x + t).reshape(1, 2, 3), 2, 1, divisor_override=3),
    "adaptive_avg_pool2d": lambda lib, x, t: lib.nn.functional.adaptive_avg_pool2d(
        (x * x * t).reshape(1, 1, 2, 3), (2, 2)),
    "adaptive_avg_pool2d of a 3-d input": lambda lib, x, t: lib.nn.functional.adaptive_avg_pool2d(
        (x * x + t).reshape(1, 2, 3), (2, 2)),
    "adaptive_avg_pool2d to 1x1 (mean)": lambda lib, x, t: lib.nn.AdaptiveAvgPool2d(1)((x * t).reshape(1, 1, 2, 3)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


GRADCHECKS = {
    "avg_pool2d": lambda x: F.avg_pool2d(x.reshape(1, 1, 2, 3), 2, 1, 1, False, False),
    "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x.reshape(1, 2, 3), (2, 2)),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


CUDA_PROGRAMS = {
    "avg_pool2d": lambda lib, d: lib.nn.functional.avg_pool2d(lib.arange(32.0, device=d).reshape(2, 4, 4), 3, 2, 1),
    "adaptive_avg_pool2d": lambda lib, d: lib.nn.functional.adaptive_avg_pool2d(
        lib.arange(30.0, device=d).reshape(1, 5, 6), (2, 4)),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives."""
    build = CUDA_PROGRAMS[name]
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), build(torch, "cpu"), rtol=0, atol=0)


def test_pool_backward_on_cuda():
    x = internals.arange(32.0).reshape(2, 4, 4)
    grads = []
    for device in ("cpu", "cuda"):
        y = x.to(device).detach().requires_grad_()
        (F.avg_pool2d(y, 3, 2, 1).sum() + F.adaptive_avg_pool2d(y, (3, 2)).sum()).backward()
        grads.append(y.grad.cpu())
    xt = torch.arange(32.0).reshape(2, 4, 4).requires_grad_()
    (torch.nn.functional.avg_pool2d(xt, 3, 2, 1).sum() + torch.nn.functional.adaptive_avg_pool2d(xt, (3, 2)).sum()
     ).backward()
    assert_same(grads[0], xt.grad, rtol=0, atol=0)
    assert_same(grads[1], xt.grad, rtol=0, atol=0)
