"""``_native_batch_norm_legit`` (and ``.no_stats``) and ``_native_batch_norm_legit_no_training``
against torch: ``native_batch_norm`` with a schema saying what it mutates. Outputs, saved
statistics, running statistics, grad_fn names and gradients; the errors; eager ``batch_norm``
still records ``native_batch_norm``, while torch's Python dispatcher (a symbolic trace) turns it
into these operators."""
import numpy as np
import pytest
import torch
from helpers import assert_same, assert_same_error

import internals
from internals.fx.experimental.proxy_tensor import make_fx


def _t(L, shape, seed, requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return L.tensor(a.tolist(), dtype=L.float64).requires_grad_(requires_grad)


def _operands(L, shape):
    C = shape[1]
    x, w, b = _t(L, shape, 1, True), _t(L, (C,), 2, True), _t(L, (C,), 3, True)
    mean, var = _t(L, (C,), 4), _t(L, (C,), 5).abs() + 0.5
    return x, w, b, mean, var


CALLS = {
    "training with running statistics": lambda L, x, w, b, m, v: L.ops.aten._native_batch_norm_legit(
        x, w, b, m, v, True, 0.3, 1e-3),
    "eval through the mutating overload": lambda L, x, w, b, m, v: L.ops.aten._native_batch_norm_legit(
        x, w, b, m, v, False, 0.3, 1e-3),
    "no_stats": lambda L, x, w, b, m, v: L.ops.aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.3, 1e-3),
    "no_stats without affine": lambda L, x, w, b, m, v: L.ops.aten._native_batch_norm_legit.no_stats(
        x, None, None, True, 0.3, 1e-3),
    "no_training": lambda L, x, w, b, m, v: L.ops.aten._native_batch_norm_legit_no_training(
        x, w, b, m, v, 0.3, 1e-3),
}


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
@pytest.mark.parametrize("name", CALLS)
def test_outputs_statistics_and_gradients_match_torch(name, shape):
    def run(L):
        x, w, b, mean, var = _operands(L, shape)
        out = CALLS[name](L, x, w, b, mean, var)
        grads = L.autograd.grad((out[0] ** 3).sum(), [x, w, b], allow_unused=True)
        return [*out, mean, var, *grads], type(out[0].grad_fn).__name__, [t.requires_grad for t in out]
    (ours, our_node, our_flags), (theirs, their_node, their_flags) = run(internals), run(torch)
    assert (our_node, our_flags) == (their_node, their_flags)
    for o, t in zip(ours, theirs, strict=True):
        assert (o is None) == (t is None)
        if t is not None:
            assert_same(o, t, rtol=1e-10, atol=1e-12)   # float64; the gradients cancel


@pytest.mark.parametrize("name", ["training with running statistics", "no_stats", "no_training"])
def test_an_input_without_channels_raises_torchs_error(name):
    """The kernels read the channel count as ``input.size(1)``: a 1-d input is out of range."""
    def call(L):
        _, w, b, mean, var = (t.detach() for t in _operands(L, (4, 1)))
        return lambda: CALLS[name](L, _t(L, (4,), 1), w, b, mean, var)
    ours, theirs = assert_same_error(call(internals), call(torch))
    assert str(ours) == str(theirs)


def test_an_integer_input_raises_torchs_error():
    def call(L):
        return lambda: L.ops.aten._native_batch_norm_legit.no_stats(L.ones(4, 3, dtype=L.int64), None, None, True,
                                                                     0.1, 1e-5)
    ours, theirs = assert_same_error(call(internals), call(torch))
    assert str(ours) == str(theirs)


def test_eager_batch_norm_keeps_native_batch_norm():
    """Outside the Python dispatcher ``F.batch_norm`` still differentiates ``native_batch_norm``."""
    def name(L):
        x = _t(L, (4, 3), 1, True)
        return type(L.nn.functional.batch_norm(x, None, None, training=True).grad_fn).__name__
    assert name(internals) == name(torch) == "NativeBatchNormBackward0"


@pytest.mark.parametrize("training", [True, False])
def test_symbolic_trace_of_batch_norm_with_running_statistics_is_torchs(training):
    """The running statistics given: ``_native_batch_norm_legit`` (training) or ``_no_training``."""
    def program(L):
        return lambda x, m, v: L.nn.functional.batch_norm(x, m, v, training=training)

    def calls(L, trace):
        x, _, _, m, v = (t.detach() for t in _operands(L, (4, 3)))
        gm = trace(program(L), tracing_mode="symbolic")(x, m, v)
        return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    ours, theirs = calls(internals, make_fx), calls(torch, torch.fx.experimental.proxy_tensor.make_fx)
    assert ours == theirs
    assert any("_native_batch_norm_legit" in c for c in ours)


def test_running_mean_without_running_var_raises_torchs_error_under_the_python_dispatcher():
    def call(L, trace):
        x, _, _, m, _ = (t.detach() for t in _operands(L, (4, 3)))
        return lambda: trace(lambda x, m: L.nn.functional.batch_norm(x, m, None, training=True),
                             tracing_mode="symbolic")(x, m)
    ours, theirs = assert_same_error(call(internals, make_fx), call(torch, torch.fx.experimental.proxy_tensor.make_fx))
    assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]
