"""``F.multilabel_margin_loss`` and ``nn.MultiLabelMarginLoss`` (aten's
``multilabel_margin_loss_forward`` with its ``is_target`` output, and its backward operator)
against torch: PyTorch's OpInfo samples, values and reductions, node names, gradients (torch
refuses a second one), odd shapes, fake tensors, and the errors for bad targets.

torch sums each sample's hinge terms in one loop, internals over a (position, class) grid: the
values agree within ``ULPS`` of torch's (float32 and float64); is_target and every layout exactly.
"""
import numpy as np
import pytest
import torch
from helpers import (
    Adapter,
    assert_fake_matches_real,
    assert_same,
    check_opinfo_samples,
    same_error,
    same_outcome,
)

import internals

ULPS = 8


def _ulps_compare(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    assert_same(ours_fn(ours_x, *ours_args, **ours_kwargs), theirs_fn(x, *args, **kwargs), ulps=ULPS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_opinfo_samples(dtype):
    adapter = Adapter(internals.nn.functional.multilabel_margin_loss, kwargs=("reduction",))
    check_opinfo_samples("nn.functional.multilabel_margin_loss", dtype, adapter, compare=_ulps_compare)


def _x(L, shape, seed=1, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape) * 0.6      # many hinge terms both sides of 0
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


TARGETS = {      # input shape, target rows: classes up to the first -1 (what follows it is not read)
    "rows": ((3, 4), [[3, 0, -1, 1], [0, 1, 2, 3], [2, -1, 0, 0]]),
    "a repeated class": ((2, 4), [[1, 1, -1, 0], [2, 0, 2, -1]]),
    "no class": ((2, 3), [[-1, 1, 2], [-1, -1, -1]]),
    "every class": ((1, 3), [[2, 0, 1]]),
    "a vector": ((5,), [4, 0, -1, 3, 3]),
    "a number": ((), [0]),
    "one class": ((3, 1), [[0], [-1], [0]]),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", TARGETS)
def test_values_gradients_and_nodes(case, reduction):
    shape, rows = TARGETS[case]

    def run(L):
        x = _x(L, shape, requires_grad=True)
        loss = L.nn.functional.multilabel_margin_loss(x, L.tensor(rows), reduction=reduction)
        (grad,) = L.autograd.grad((loss * loss).sum(), x)
        return loss, grad, loss.grad_fn.name()
    (loss_i, grad_i, node_i), (loss_t, grad_t, node_t) = run(internals), run(torch)
    assert node_i == node_t == "MultilabelMarginLossBackward0"
    assert_same(loss_i, loss_t, ulps=ULPS)
    assert_same(grad_i, grad_t, ulps=ULPS)


@pytest.mark.parametrize("case", TARGETS)
def test_forward_operator_and_is_target(case):
    """aten's forward operator: the per-sample losses and is_target (exact), laid out as torch's."""
    shape, rows = TARGETS[case]
    outs = [L.ops.aten.multilabel_margin_loss_forward(_x(L, shape), L.tensor(rows), 0) for L in (internals, torch)]
    assert_same(outs[0][0], outs[1][0], ulps=ULPS)
    assert_same(outs[0][1], outs[1][1])


def test_module_float32_and_noncontiguous_inputs():
    for make in (lambda L: _x(L, (4, 3)).t(), lambda L: _x(L, (3, 4), dtype="float32")):
        for reduction in ("mean", "none"):
            ours, theirs = (L.nn.MultiLabelMarginLoss(reduction=reduction)(
                make(L), L.tensor([[1, 0, -1, 2], [3, -1, 0, 0], [0, 1, 2, 3]])) for L in (internals, torch))
            assert_same(ours, theirs, ulps=ULPS)


def test_empty_batch():
    """No samples: an empty result, or a sum of 0 (torch's mean over none reads an uninitialized
    number, so it is not compared)."""
    for reduction in ("none", "sum"):
        same_outcome(lambda L, r=reduction: L.nn.functional.multilabel_margin_loss(
            L.ones(0, 3, dtype=L.float64), L.zeros(0, 3, dtype=L.int64), reduction=r))


def test_second_derivative_refused_as_torch():
    def run(L):
        x = _x(L, (2, 3), requires_grad=True)
        loss = L.nn.functional.multilabel_margin_loss(x * x, L.tensor([[0, -1, 1], [2, 1, -1]]))
        (g,) = L.autograd.grad(loss, x, create_graph=True)
        return L.autograd.grad(g.sum(), x)
    same_error(run)


ERROR_CASES = {
    "a class past the last": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3), L.tensor([[3, -1, 0],
                                                                                                      [0, 1, 2]])),
    "below -1": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3), L.tensor([[0, -2, 0], [0, 1, 2]])),
    "target's shape": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3), L.tensor([[0, 1, 2]])),
    "a vector's target": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(3), L.tensor([[0, 1, 2]])),
    "a float target": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3), L.zeros(2, 3)),
    "an int32 target": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3), L.zeros(2, 3, dtype=L.int32)),
    "no classes": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 0), L.zeros(2, 0, dtype=L.int64)),
    "three dims": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 2, 2), L.zeros(2, 2, 2, dtype=L.int64)),
    "integer input": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3, dtype=L.int64),
                                                                      L.zeros(2, 3, dtype=L.int64)),
    "half input on the CPU": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3, dtype=L.float16),
                                                                              L.zeros(2, 3, dtype=L.int64)),
    "a bad reduction": lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3), L.zeros(2, 3, dtype=L.int64),
                                                                        reduction="bad"),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    same_error(ERROR_CASES[case])


# The loss as the autograd test lists it: (input, target) -> a loss with torch's node.
GRAD_CASES = {
    "multilabel_margin_loss": lambda L, x, t: L.nn.functional.multilabel_margin_loss(
        x, L.tensor([[2, 0, -1], [1, -1, 0]]), reduction="sum"),
}


def test_fake_tensors():
    assert_fake_matches_real(
        lambda L, x: L.ops.aten.multilabel_margin_loss_forward(x, L.tensor([[2, 0, -1], [1, -1, 0], [0, 1, 2],
                                                                           [-1, 0, 0]]), 0),
        lambda: (internals.arange(12.0).reshape(4, 3) / 7,))


def test_fake_tensors_backward_operator():
    target = [[2, 0, -1], [1, -1, 0], [0, 1, 2], [-1, 0, 0]]
    assert_fake_matches_real(
        lambda L, x: L.ops.aten.multilabel_margin_loss_backward(
            L.ones(4, dtype=x.dtype), x, L.tensor(target), 0,
            L.ops.aten.multilabel_margin_loss_forward(x, L.tensor(target), 0)[1]),
        lambda: (internals.arange(12.0).reshape(4, 3) / 7,))
