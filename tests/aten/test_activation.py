"""Activation functions and their backward kernels (``aten/native/activation.py``), declared
structured where torch 2.13's ``native_functions.yaml`` declares them: a meta step (the unary
iterator forward, the binary one over gradient and input backward) and an impl step, out= (or
``grad_input=``) the primary kernel, the functional and in-place kernels derived from it.
"""

import pytest
import torch
from helpers import (
    LIBM_ULPS,
    TORCH_NATIVE_FUNCTIONS,
    assert_fake_matches_real,
    assert_same,
    both_with_warnings,
    native_entries,
    same_error,
)

import internals
from internals.aten import dispatcher
from internals.aten.native import activation
from internals.c10.dispatch_key import DispatchKey

ACTIVATIONS = ("gelu", "silu", "softplus", "leaky_relu", "elu", "hardsigmoid", "hardshrink", "softshrink",
               "threshold", "mish", "hardswish", "hardtanh", "log_sigmoid", "glu")
FAMILIES = ACTIVATIONS + tuple(name + "_backward" for name in ACTIVATIONS)



def _marks(entry):
    return entry.get("structured", False), entry.get("structured_delegate")


def test_structured_marks_are_torchs():
    """Each activation's entries carry torch's marks, and torch's structured out entries exist."""
    ours, theirs = native_entries(), native_entries(TORCH_NATIVE_FUNCTIONS)
    family = [name for name in theirs if name.split(".")[0].rstrip("_") in FAMILIES]
    structured = [name for name in family if theirs[name].get("structured")]
    assert len(structured) == 20
    for name in family:
        if name in ours:
            assert _marks(ours[name]) == _marks(theirs[name]), name
    assert set(structured) <= set(ours)


@pytest.mark.parametrize("name", ["leaky_relu", "elu_", "hardsigmoid_", "threshold_", "mish", "gelu_", "silu",
                                  "softplus", "hardshrink", "softshrink", "gelu_backward", "threshold_backward",
                                  "elu_backward", "leaky_relu_backward", "softshrink_backward", "glu"])
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    entry = native_entries()[name]
    out_kernel = dispatcher.find(entry["structured_delegate"]).table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta
    assert derived.__module__ == out_kernel.meta.__module__ == activation.__name__
    assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl.__name__.startswith("impl_")



def _x(L):
    """A transposed input with both signs, the thresholds' edges and a NaN."""
    return L.tensor([[-4., -3., -0.5, 0.], [0.25, 0.5, 3., float("nan")]]).t()


def _g(L):
    return L.arange(1., 9.).reshape(4, 2)


# (program, ulps): library math (exp, erf, tanh) rounds as the CPU's does, so within LIBM_ULPS
OUT_CASES = {
    "leaky_relu into an empty out, resized": (lambda L: L.ops.aten.leaky_relu.out(_x(L), 0.2, out=L.empty(0)), 0),
    "hardshrink resized, warns": (lambda L: L.hardshrink(_x(L), out=L.empty(3)), 0),
    "threshold in place through out=": (lambda L: (lambda x: L.threshold(x, 0., -1., out=x))(_x(L)), 0),
    "elu keeps out's strides": (lambda L: L.ops.aten.elu.out(_x(L), 2., out=L.empty(2, 4).t()), LIBM_ULPS),
    "hardsigmoid": (lambda L: L.ops.aten.hardsigmoid.out(_x(L), out=L.empty(0)), 0),
    "hardshrink": (lambda L: L.hardshrink(_x(L), 0.5, out=L.empty(0)), 0),
    "softshrink": (lambda L: L.ops.aten.softshrink.out(_x(L), 0.5, out=L.empty(0)), 0),
    "threshold into a wider out": (lambda L: L.threshold(_x(L), 0.3, 7., out=L.empty(0, dtype=L.float64)), 0),
    "threshold of integers": (lambda L: L.threshold(L.tensor([-2, 1, 5]), 1, 9, out=L.empty(0, dtype=L.int64)), 0),
    "mish": (lambda L: L.ops.aten.mish.out(_x(L), out=L.empty(0)), LIBM_ULPS),
    "softplus": (lambda L: L.ops.aten.softplus.out(L.tensor([-1., 30.]), 2, 10, out=L.empty(0)), LIBM_ULPS),
    "gelu tanh": (lambda L: L.ops.aten.gelu.out(L.tensor([-1., 0.5]), approximate="tanh", out=L.empty(0)),
                  LIBM_ULPS),
    "gelu_backward into grad_input": (lambda L: L.ops.aten.gelu_backward.grad_input(
        _g(L), _x(L), grad_input=L.empty(0)), LIBM_ULPS),
    "silu_backward into a wider grad_input": (lambda L: L.ops.aten.silu_backward.grad_input(
        _g(L), _x(L), grad_input=L.empty(0, dtype=L.float64)), LIBM_ULPS),
    "softplus_backward": (lambda L: L.ops.aten.softplus_backward.grad_input(
        _g(L), _x(L), 1., 2., grad_input=L.empty(0)), LIBM_ULPS),
    "leaky_relu_backward, laid out by the input": (lambda L: L.ops.aten.leaky_relu_backward.grad_input(
        _g(L).t().contiguous().t(), _x(L).contiguous(), 0.1, False, grad_input=L.empty(0)), 0),
    "elu_backward from the result": (lambda L: L.ops.aten.elu_backward.grad_input(
        _g(L), 1., 1., 1., True, _x(L), grad_input=L.empty(0)), 0),
    "hardsigmoid_backward": (lambda L: L.ops.aten.hardsigmoid_backward.grad_input(
        _g(L), _x(L), grad_input=L.empty(0)), 0),
    "hardshrink_backward": (lambda L: L.ops.aten.hardshrink_backward.grad_input(
        _g(L), _x(L), 0.5, grad_input=L.empty(0)), 0),
    "softshrink_backward": (lambda L: L.ops.aten.softshrink_backward.grad_input(
        _g(L), _x(L), 0.5, grad_input=L.empty(0)), 0),
    "threshold_backward": (lambda L: L.ops.aten.threshold_backward.grad_input(
        _g(L), _x(L), 0., grad_input=L.empty(0)), 0),
    "threshold_backward of mixed dtypes": (lambda L: L.ops.aten.threshold_backward(
        _g(L).double(), _x(L), 0.), 0),
    "glu of the halves of a transposed input": (lambda L: L.ops.aten.glu.out(
        _x(L)[:, :2].t(), 0, out=L.empty(0)), LIBM_ULPS),
    "glu into a wider out": (lambda L: L.ops.aten.glu.out(_g(L), out=L.empty(0, dtype=L.float64)), LIBM_ULPS),
    "glu keeps out's strides": (lambda L: L.ops.aten.glu.out(_g(L).t(), 1, out=L.empty(2, 2).t()), LIBM_ULPS),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    program, ulps = OUT_CASES[case]
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(program)
    assert_same(ours, theirs, ulps=ulps or None)
    assert our_warnings == their_warnings


ERROR_CASES = {
    "forward out keeps the dtype": lambda L: L.ops.aten.elu.out(L.tensor([1.]), out=L.empty(1, dtype=L.float64)),
    "out dtype before the loop's": lambda L: L.ops.aten.leaky_relu.out(L.tensor([1]), out=L.empty(1)),
    "integer input": lambda L: L.ops.aten.hardsigmoid(L.tensor([1])),
    "backward cannot cast down": lambda L: L.ops.aten.gelu_backward.grad_input(
        L.ones(2), L.ones(2), grad_input=L.empty(2, dtype=L.int64)),
    "threshold of bool": lambda L: L.threshold(L.tensor([True]), 0, 1),
    "threshold cannot cast down": lambda L: L.threshold(L.tensor([1.5]), 0, 1, out=L.empty(1, dtype=L.int64)),
    "softshrink lambda": lambda L: L.ops.aten.softshrink(L.ones(2), -1.),
    "softshrink of integers": lambda L: L.ops.aten.softshrink(L.tensor([1])),
    "leaky_relu in place with a negative slope": lambda L: L.ops.aten.leaky_relu_backward(
        L.ones(2), L.ones(2), -0.1, True),
    "elu in place with a negative alpha": lambda L: L.ops.aten.elu_backward(L.ones(2), -1., 1., 1., True, L.ones(2)),
    "gelu of integers": lambda L: L.ops.aten.gelu(L.tensor([1])),
    "gelu approximation": lambda L: L.ops.aten.gelu(L.tensor([1.]), approximate="exact"),
    "in place on a broadcast shape": lambda L: L.ops.aten.elu_(L.ones(1, 3).expand(2, 3)),
    "partial overlap": lambda L: (lambda x: L.ops.aten.mish.out(x[:4], out=x[1:5]))(L.arange(6.)),
    "glu of a scalar": lambda L: L.ops.aten.glu(L.tensor(1.)),
    "glu of an odd dimension": lambda L: L.ops.aten.glu(L.ones(2, 3), -1),
    "glu of integers": lambda L: L.ops.aten.glu(L.ones(2, 4, dtype=L.int64)),
    "glu cannot cast down": lambda L: L.ops.aten.glu.out(L.ones(2, 4), out=L.empty(2, 2, dtype=L.int64)),
    "glu_backward of a scalar": lambda L: L.ops.aten.glu_backward(L.tensor(1.), L.tensor(1.), 0),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def _forms(L):
    """The functional and in-place forms, on a transposed input."""
    x, g = _x(L), _g(L)
    F = L.nn.functional
    return [F.leaky_relu(x, 0.2), F.leaky_relu(x.clone(), 0.2, inplace=True), F.hardsigmoid(x),
            F.hardsigmoid(x.clone(), inplace=True), F.threshold(x, 0.1, 20.), F.threshold(x.clone(), 0.1, 20., True),
            F.hardshrink(x), F.softshrink(x, 1.), L.ops.aten.threshold_backward(g, x, 0.5),
            L.ops.aten.hardshrink_backward(g, x, 0.5), L.ops.aten.leaky_relu_backward(g, x, 0.3, False),
            L.ops.aten.hardsigmoid_backward(g, x), L.ops.aten.elu_backward(g, 1., 1., 1., True, x)]


def _math_forms(L):
    """The forms whose values go through library math (gelu's forward is left to its out= case:
    on negative inputs its loop is a few ulps from torch's, whose bits follow its CPU path)."""
    x, g = _x(L), _g(L)
    F = L.nn.functional
    return [F.elu(x), F.elu(x.clone(), inplace=True), F.mish(x), F.mish(x.clone(), inplace=True),
            F.silu(x.clone(), inplace=True), F.celu(x, 2.), F.selu(x), L.ops.aten.gelu_backward(g, x),
            L.ops.aten.silu_backward(g, x), L.ops.aten.softplus_backward(g, x, 1., 20.),
            L.ops.aten.elu_backward(g, 1., 1., 1., False, x)]


def test_functional_and_in_place_forms_match_torch():
    for ours, theirs in zip(_forms(internals), _forms(torch), strict=True):
        assert_same(ours, theirs)
    for ours, theirs in zip(_math_forms(internals), _math_forms(torch), strict=True):
        assert_same(ours, theirs, ulps=LIBM_ULPS)


def test_reduced_floats_round_once():
    """float16 inputs compute in float32 and round once, as torch's vector loops do."""
    def forms(L):
        x = L.linspace(-4., 4., 17, dtype=L.float16)
        return [L.nn.functional.elu(x), L.nn.functional.hardsigmoid(x), L.ops.aten.silu_backward(x, x)]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs, ulps=1)


def test_gradients_match_torch():
    def grads(L):
        out = []
        for f in (lambda x: L.nn.functional.elu(x, 0.5), L.nn.functional.leaky_relu, L.nn.functional.hardsigmoid,
                  L.nn.functional.softshrink, lambda x: L.nn.functional.threshold(x, 0.1, 2.)):
            x = L.tensor([-2., -0.2, 0.3, 2.5], requires_grad=True)
            y = f(x)
            y.backward(L.arange(1., 5.))
            out.append((x.grad, type(y.grad_fn).__name__))
        return out
    for (ours, our_node), (theirs, their_node) in zip(grads(internals), grads(torch), strict=True):
        assert our_node == their_node
        assert_same(ours, theirs, ulps=LIBM_ULPS)


FAKE_PROGRAMS = {
    "forward": lambda L, x: L.nn.functional.elu(x.t()),
    "in place": lambda L, x: L.nn.functional.leaky_relu(x, inplace=True),
    "out resized": lambda L, x: L.threshold(x, 0., 1., out=L.empty(0, dtype=L.float64)),
    "backward": lambda L, x: L.ops.aten.gelu_backward(x.t(), x.t().contiguous()),
    "glu": lambda L, x: L.nn.functional.glu(x.t(), 1),
    "glu out resized": lambda L, x: L.ops.aten.glu.out(x, 0, out=L.empty(0, dtype=L.float64)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


# ---- sigmoid's, tanh's and logit's backward kernels (BinaryOps.cpp): structured in torch, so here
POINTWISE_BACKWARD = ("sigmoid_backward", "tanh_backward", "logit_backward")


@pytest.mark.parametrize("name", POINTWISE_BACKWARD)
def test_pointwise_backward_kernels_are_structured_as_torchs(name):
    ours, theirs = native_entries(), native_entries(TORCH_NATIVE_FUNCTIONS)
    for overload in (name, name + ".grad_input"):
        assert _marks(ours[overload]) == _marks(theirs[overload]), overload
    out_kernel = dispatcher.find(name + ".grad_input").table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta and out_kernel.meta.__module__ == activation.__name__


def _g3(L):
    return L.arange(1., 10.).reshape(3, 3)


def _y(L, dtype=None):
    """Saved outputs of sigmoid or tanh (and logit's inputs): inside (0, 1), its ends, outside."""
    return L.tensor([[0.25, 0.5, 0.0], [1.0, 0.75, -0.5], [1.5, 0.125, 0.9]], dtype=dtype or L.float32).t()


POINTWISE_BACKWARD_OUT_CASES = {
    "sigmoid_backward into grad_input": lambda L: L.ops.aten.sigmoid_backward.grad_input(
        _g3(L), _y(L), grad_input=L.empty(0)),
    "tanh_backward into an empty grad_input, resized": lambda L: L.ops.aten.tanh_backward.grad_input(
        _g3(L), _y(L), grad_input=L.empty(0)),
    "logit_backward keeps grad_input's strides": lambda L: L.ops.aten.logit_backward.grad_input(
        _g3(L), _y(L), grad_input=L.empty(3, 3).t()),
    "logit_backward with eps, into a wider grad_input": lambda L: L.ops.aten.logit_backward.grad_input(
        _g3(L), _y(L), 0.2, grad_input=L.empty(0, dtype=L.float64)),
    "logit_backward of mixed dtypes": lambda L: L.ops.aten.logit_backward(_g3(L).double(), _y(L), 0.),
    "sigmoid_backward of complex": lambda L: L.ops.aten.sigmoid_backward(
        L.tensor([1 + 2j, 3 - 1j]), L.tensor([0.5 + 0.5j, 2 + 1j])),
    "tanh_backward of complex": lambda L: L.ops.aten.tanh_backward(
        L.tensor([1 + 2j, 3 - 1j]), L.tensor([0.5 + 0.5j, 2 + 1j])),
}


@pytest.mark.parametrize("case", POINTWISE_BACKWARD_OUT_CASES)
def test_pointwise_backward_out_variants_match_torch(case):
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(POINTWISE_BACKWARD_OUT_CASES[case])
    assert_same(ours, theirs)       # IEEE arithmetic in torch's order: the same bits
    assert our_warnings == their_warnings


POINTWISE_BACKWARD_ERRORS = {
    "sigmoid_backward of integers": lambda L: L.ops.aten.sigmoid_backward(L.tensor([1]), L.tensor([0])),
    "tanh_backward of bool": lambda L: L.ops.aten.tanh_backward(L.tensor([True]), L.tensor([False])),
    "logit_backward of integers": lambda L: L.ops.aten.logit_backward(L.tensor([1]), L.tensor([0])),
    "logit_backward of complex": lambda L: L.ops.aten.logit_backward(L.tensor([1j]), L.tensor([0.5j])),
    "logit_backward cannot cast down": lambda L: L.ops.aten.logit_backward.grad_input(
        L.ones(2), L.ones(2), grad_input=L.empty(0, dtype=L.long)),
    "grad_input= of an input that requires grad": lambda L: L.ops.aten.sigmoid_backward.grad_input(
        L.ones(2, requires_grad=True), L.ones(2), grad_input=L.empty(0)),
}


@pytest.mark.parametrize("case", POINTWISE_BACKWARD_ERRORS)
def test_pointwise_backward_errors_match_torch(case):
    same_error(POINTWISE_BACKWARD_ERRORS[case])


# logit_backward at its edges: x at exactly 0 or 1 gives grad·inf, outside [eps, 1 − eps] 0 (NaN
# with no eps), NaN propagates. Fewer than eight elements: torch runs its element loop on every
# CPU (its vector loop, for longer rows, differs at -0.0 and at NaN with an eps).
LOGIT_EDGES = [-0.0, 0.0, 1.0, float("nan"), 0.05, 0.5, 1.2]


@pytest.mark.parametrize("eps", [None, -1.0, 0.0, 0.1, float("nan")])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_logit_backward_at_its_edges_matches_torch(dtype, eps):
    def program(L):
        x = L.tensor(LOGIT_EDGES, dtype=getattr(L, dtype))
        return L.ops.aten.logit_backward(L.tensor([1., -2., 3., 1., -1., 2., 1.], dtype=x.dtype), x, eps)
    assert_same(program(internals), program(torch))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sigmoid_and_tanh_backward_round_as_torchs_loops(dtype):
    """bfloat16 computes sigmoid's in float32 and rounds once, float16 rounds each step; tanh's
    computes both in float32."""
    def forms(L):
        y = L.tensor([-0.9, -0.6667, -0.3333, 0.1, 0.3333, 0.6667, 0.97], dtype=getattr(L, dtype))
        g = L.tensor([0.3, 1.75, 3.2, 4.6, 6.1, 7.55, 9.0], dtype=y.dtype)
        return [L.ops.aten.sigmoid_backward(g, y), L.ops.aten.tanh_backward(g, y)]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)


def test_logit_sigmoid_and_tanh_gradients_match_torch():
    def grads(L):
        out = []
        for f in (lambda x: x.sigmoid(), lambda x: x.tanh(), lambda x: x.logit(), lambda x: x.logit(0.3)):
            x = L.tensor([0.1, 0.25, 0.5, 0.95], requires_grad=True)
            y = f(x)
            (g,) = L.autograd.grad(y, x, L.arange(1., 5.), create_graph=True)
            (gg,) = L.autograd.grad(g.sum(), x)     # through the backward kernel's own derivative
            out.append((g.detach(), gg, type(y.grad_fn).__name__))
        return out
    for (ours, our_second, our_node), (theirs, their_second, their_node) in zip(grads(internals), grads(torch),
                                                                                strict=True):
        assert our_node == their_node
        # sigmoid's and tanh's results are library math: their gradients amplify that ulp
        assert_same(ours, theirs, ulps=2 * LIBM_ULPS)
        assert_same(our_second, their_second, ulps=2 * LIBM_ULPS)
