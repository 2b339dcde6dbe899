"""``nn.BatchNorm3d``, ``F.local_response_norm`` / ``nn.LocalResponseNorm`` and ``F.lp_pool1d/2d/3d`` /
``nn.LPPool1d/2d/3d`` against torch: torch builds the last two in Python over operators the package has
(``torch/nn/functional.py``), so values, layouts, node names, gradients and errors follow."""
import numpy as np
import pytest
import torch
from helpers import assert_fake_matches_real, assert_same, assert_same_error, same_outcome

import internals


def _t(L, shape, seed=1, requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return L.tensor(a.ravel().tolist(), dtype=L.float64).reshape(shape).requires_grad_(requires_grad)


CALLS = {
    "lrn_3d": ((2, 5, 7), lambda F, x: F.local_response_norm(x, 3)),
    "lrn_3d_even": ((2, 5, 7), lambda F, x: F.local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0)),
    "lp1d_p2": ((2, 3, 9), lambda F, x: F.lp_pool1d(x, 2, 3)),
    "lp1d_p3_stride_ceil": ((2, 3, 9), lambda F, x: F.lp_pool1d(x, 3, 2, stride=2, ceil_mode=True)),
    "lp1d_inf": ((2, 3, 9), lambda F, x: F.lp_pool1d(x, float("inf"), 3)),
    "lp1d_minus_inf": ((2, 3, 9), lambda F, x: F.lp_pool1d(x, -float("inf"), 3)),
    "lp2d_p2": ((2, 3, 6, 6), lambda F, x: F.lp_pool2d(x, 2, 2)),
    "lp2d_p1_5_rect": ((1, 2, 6, 7), lambda F, x: F.lp_pool2d(x.abs(), 1.5, (2, 3), stride=(1, 2))),
    "lp2d_inf": ((1, 2, 6, 6), lambda F, x: F.lp_pool2d(x, float("inf"), 3)),
    "lp3d_p2": ((1, 2, 4, 4, 4), lambda F, x: F.lp_pool3d(x, 2, 2)),
    "lp3d_p3_rect_stride_ceil": ((2, 2, 5, 4, 6),
                                 lambda F, x: F.lp_pool3d(x, 3, (2, 1, 3), stride=(2, 1, 2), ceil_mode=True)),
    "lp3d_unbatched_p1_5": ((2, 4, 5, 4), lambda F, x: F.lp_pool3d(x.abs(), 1.5, 2, stride=1)),
    "lp3d_inf": ((1, 2, 4, 5, 4), lambda F, x: F.lp_pool3d(x, float("inf"), (2, 3, 2))),
    "lp3d_minus_inf_ceil": ((1, 2, 5, 5, 5), lambda F, x: F.lp_pool3d(x, -float("inf"), 2, ceil_mode=True)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_values_nodes_and_gradients_match_torch(name):
    shape, call = CALLS[name]

    def run(L):
        x = _t(L, shape, requires_grad=True)
        y = call(L.nn.functional, x * 1.0)
        nodes = (y.grad_fn.name(), [n[0].name() for n in y.grad_fn.next_functions if n[0] is not None])
        g, = L.autograd.grad((y * y).sum(), x, create_graph=True)
        gg, = L.autograd.grad(g.sum(), x)
        return y, g, gg, nodes
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:3], theirs[:3]):
        assert_same(o, t, ulps=16)      # pow and its roots: library math, compounded in the gradients
    assert ours[3] == theirs[3]


def test_local_response_norm_of_4d_and_5d_inputs_matches_torch_values():
    """torch averages these with ``avg_pool3d``, and so does the package (its node is checked in
    tests/nn/test_pooling_3d.py)."""
    for shape in [(2, 6, 3, 4), (1, 4, 2, 3, 2)]:
        def run(L, shape=shape):
            x = _t(L, shape, requires_grad=True)
            y = L.nn.functional.local_response_norm(x, 3, alpha=0.5)
            g, = L.autograd.grad((y * y).sum(), x)
            return y, g, y.grad_fn.name()
        ours, theirs = run(internals), run(torch)
        assert_same(ours[0], theirs[0], ulps=16)
        # the gradient sums terms of both signs over the window: near a cancellation ulps of the
        # result say little, so it is compared relative to its terms' scale
        assert_same(ours[1], theirs[1], rtol=1e-12, atol=1e-14)
        assert ours[2] == theirs[2]


def test_local_response_norm_of_an_empty_input_is_the_input_and_of_2d_a_value_error():
    def empty(L):
        x = _t(L, (0, 3, 4))
        return L.nn.functional.local_response_norm(x, 2) is x
    assert empty(internals) is empty(torch) is True
    same_outcome(lambda L: L.nn.functional.local_response_norm(_t(L, (3, 4)), 2))


def test_modules_match_torch_and_print_alike():
    pairs = [((2, 5, 4, 4), lambda L: L.nn.LocalResponseNorm(3, alpha=0.2)),
             ((2, 3, 9), lambda L: L.nn.LPPool1d(2, 3, stride=2)),
             ((2, 3, 6, 6), lambda L: L.nn.LPPool2d(3, (2, 3), ceil_mode=True)),
             ((2, 2, 4, 5, 6), lambda L: L.nn.LPPool3d(2, (2, 2, 3), stride=(1, 2, 2))),
             ((2, 5, 5, 5), lambda L: L.nn.LPPool3d(1.5, 3, ceil_mode=True))]
    for shape, make in pairs:
        x = _t(torch, shape)
        ours, theirs = make(internals), make(torch)
        assert_same(ours(internals.from_torch(x)), theirs(x), ulps=16)
        assert repr(ours) == repr(theirs)


def test_batch_norm_3d_trains_and_evaluates_as_torchs():
    def run(L):
        L.manual_seed(0)
        m = L.nn.BatchNorm3d(3, momentum=0.2).double()
        x = _t(L, (2, 3, 2, 3, 4), requires_grad=True)
        y = m(x)
        g, = L.autograd.grad((y * y * x).sum(), x)
        m.eval()
        z = m(_t(L, (1, 3, 2, 2, 2), seed=2))
        return y, g, m.running_mean, m.running_var, z, y.grad_fn.name(), repr(m)
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[:5], theirs[:5]):
        # sums over the batch and positions in another order; the gradient's terms cancel, so
        # it is compared relative to their scale rather than in ulps of the result
        assert_same(o, t, rtol=1e-12, atol=1e-14)
    assert ours[5:] == theirs[5:]


def test_batch_norm_3d_refuses_a_4d_input_as_torch_does():
    same_outcome(lambda L: L.nn.BatchNorm3d(3)(L.zeros(2, 3, 4, 4)))


RMS_CASES = {     # input shape, normalized shape, with a weight, eps, dtype
    "last_dim_weight": ((2, 3, 4), [4], True, None, "float64"),
    "two_dims_no_weight": ((2, 3, 4), [3, 4], False, None, "float64"),
    "eps": ((3, 5), [5], True, 1e-3, "float64"),
    "float32_default_eps": ((2, 6), [6], True, None, "float32"),
}


@pytest.mark.parametrize("name", list(RMS_CASES))
def test_rms_norm_records_torchs_composite_and_differentiates_twice(name):
    """On the CPU torch's ``rms_norm`` is its composite (pow, mean, add_, rsqrt, mul): the same nodes."""
    shape, normalized, with_weight, eps, dtype = RMS_CASES[name]

    def run(L):
        x = _t(L, shape, requires_grad=True).to(getattr(L, dtype))
        w = (_t(L, shape[-1:], seed=3) if normalized == [shape[-1]] else None) if with_weight else None
        w = w.to(getattr(L, dtype)).requires_grad_() if w is not None else None
        y = L.nn.functional.rms_norm(x * 1.0, normalized, w, eps)
        nodes = (y.grad_fn.name(), [n[0].name() for n in y.grad_fn.next_functions if n[0] is not None])
        wanted = [x] + ([w] if w is not None else [])
        grads = L.autograd.grad((y * y * y).sum(), wanted, create_graph=True)
        gg = L.autograd.grad(sum(g.sum() for g in grads), x)
        return (y, *grads, *gg), nodes
    ours, theirs = run(internals), run(torch)
    for o, t in zip(ours[0], theirs[0], strict=True):
        # rsqrt and the mean's sum: library math and reduction order; the gradients' terms cancel
        assert_same(o, t, rtol=1e-12 if o.dtype is internals.float64 else 1e-5, atol=1e-12)
    assert_same(ours[0][0], theirs[0][0], ulps=16)
    assert ours[1] == theirs[1]


def test_rms_norm_errors_and_the_module_match_torch():
    same_outcome(lambda L: L.nn.functional.rms_norm(_t(L, (2, 3)), [4]))
    same_outcome(lambda L: L.nn.functional.rms_norm(_t(L, (2, 3)), []))
    same_outcome(lambda L: L.nn.functional.rms_norm(_t(L, (2, 3)), [3], _t(L, (2,))))
    # more normalized dims than the input has: torch's ValueError, before the sizes are compared
    same_outcome(lambda L: L.nn.functional.rms_norm(_t(L, (2, 3)), [1, 2, 3]))
    same_outcome(lambda L: L.nn.functional.rms_norm(_t(L, (3,)), [5, 4]))
    # an integer or bool input: the kernel's NotImplementedError, after the shape checks
    same_outcome(lambda L: L.nn.functional.rms_norm(L.ones(2, 3, dtype=L.long), [3]))
    same_outcome(lambda L: L.nn.functional.rms_norm(L.ones(2, 3, dtype=L.bool), [3]))
    same_outcome(lambda L: L.nn.functional.rms_norm(L.ones(2, 3, dtype=L.long), [2]))
    x = _t(torch, (2, 3, 4))
    for args in [(4,), ([3, 4],), (4, 1e-4, False)]:
        ours, theirs = internals.nn.RMSNorm(*args).double(), torch.nn.RMSNorm(*args).double()
        assert repr(ours) == repr(theirs)
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
        assert_same(ours(internals.from_torch(x)), theirs(x), ulps=16)


def test_rms_norm_under_fake_tensors_gets_the_real_layout():
    def program(L, x):
        return L.ops.aten.rms_norm(x.transpose(0, 1), [2], None, None)
    assert_fake_matches_real(program, lambda: (internals.arange(12.).reshape(3, 2, 2),))


@pytest.mark.parametrize("call", ["F.local_response_norm(lib.ones(2, 3, 4), 2.5)",
                                  "F.local_response_norm(lib.ones(2, 3, 4, 5), 2.5)",
                                  "F.pad(lib.ones(1, 2, 3), (1.5, 2))", "F.pad(lib.ones(1, 2, 3), (1, 2.0))",
                                  "F.pad(lib.ones(1, 2, 3), (1, 2), 'bogus')"])
def test_a_float_size_or_pad_is_refused_by_pads_parser_as_torchs(call):
    """torch's F.pad is the C++ binding, whose parser refuses a float in the pad; a float
    local_response_norm size reaches it through size // 2 (it failed later, with a RuntimeError)."""
    ours, theirs = assert_same_error(lambda: eval(call, {"lib": internals, "F": internals.nn.functional}),
                                     lambda: eval(call, {"lib": torch, "F": torch.nn.functional}))
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3, dtype=lib.int64), lib.zeros(3), lib.ones(3)),
    lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3, dtype=lib.int64), None, None, lib.ones(3),
                                             training=True),
    lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3, dtype=lib.int64), lib.zeros(3, dtype=lib.float64),
                                             lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3, dtype=lib.bool), lib.zeros(3), lib.ones(3)),
    lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3, dtype=lib.float64), lib.zeros(3), lib.ones(3)),
    lambda lib: lib.nn.functional.batch_norm(lib.ones(2, 3, dtype=lib.float16), lib.zeros(3, dtype=lib.float64),
                                             lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.layer_norm(lib.ones(2, 3, dtype=lib.int64), (3,), lib.ones(3)),
], ids=["int_eval", "int_train_weight", "int_double_stats", "bool", "double_float_stats", "half_double_stats",
        "layer_norm_int_weight"])
def test_batch_norm_refuses_an_integer_input_before_mixed_dtypes_as_torch(call):
    """torch's batch_norm_cpu dispatches on the input's dtype (NotImplementedError for integers and
    bool) before its loop checks the parameters' dtypes; an integer input beside float statistics
    used to raise the mixed-dtype RuntimeError. Layer norm checks the mixed dtypes first."""
    ours, theirs = assert_same_error(lambda: call(internals), lambda: call(torch))
    assert str(ours) == str(theirs)


def _cross_map_lrn(L, size, shape, dtype, transposed):
    x = L.linspace(-2., 3., int(np.prod(shape)), dtype=getattr(L, dtype)).reshape(shape)
    x = (x.transpose(2, 3) if transposed else x).requires_grad_()
    m = L.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=2.0)
    y = m(x)
    y.backward(L.linspace(-1., 1., y.numel(), dtype=y.dtype).reshape(y.shape))
    return y, x.grad, type(y.grad_fn).__name__, repr(m)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size, shape", [(2, (2, 4, 3, 3)), (3, (2, 4, 3, 3)), (5, (1, 7, 2, 5)),
                                         (8, (1, 7, 2, 5)), (3, (2, 1, 2, 2))])
def test_cross_map_lrn2d_as_torch(size, shape, dtype, transposed):
    """nn.CrossMapLRN2d: the sliding window sums and the backward's running sum in torch's order;
    the power x^-β is library math, so the values are within ulps. Its node is the autograd
    function's (CrossMapLRN2dBackward), its output and gradient contiguous as torch's."""
    ours, theirs = (_cross_map_lrn(L, size, shape, dtype, transposed) for L in (internals, torch))
    assert ours[2:] == theirs[2:]
    assert_same(ours[0].detach(), theirs[0].detach(), ulps=4)
    assert_same(ours[1], theirs[1], ulps=16)


@pytest.mark.parametrize("program", [
    lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)),
    # a window of one channel: torch's backward pads by one channel too few and refuses
    lambda L: L.nn.CrossMapLRN2d(1)(L.ones(1, 2, 2, 2, requires_grad=True)).sum().backward(),
])
def test_cross_map_lrn2d_refuses_as_torch(program):
    assert_same_error(lambda: program(internals), lambda: program(torch))
