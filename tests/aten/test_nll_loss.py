"""``nll_loss_forward`` and ``nll_loss_backward`` (``aten/native/loss.py``), declared structured as
torch's ``LossNLL.cpp`` declares them: a meta step (the shapes checked, the outputs laid out in the
input's dtype) and an impl step (the dtypes the loops take, then the values); the
``.output``/``.grad_input`` overloads primary, the functional ones derived from them.
"""

import pytest
import torch
from helpers import (
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_out_variant_matches_torch,
    assert_same,
    same_error,
)

import internals
from internals.aten.native import loss

NONE, MEAN, SUM = 0, 1, 2


@pytest.mark.parametrize("name, out", [("nll_loss_forward", "output"), ("nll_loss_backward", "grad_input")])
def test_the_functional_form_is_derived_from_the_structured_out_kernel(name, out):
    assert_derived_from_structured_out(name, out, loss)


def _x(L):
    return L.arange(12.).reshape(3, 4) / -5


def _forward(L, *args):
    return L.ops.aten.nll_loss_forward(*args)


def _backward(L, *args):
    return L.ops.aten.nll_loss_backward(*args)


CASES = {
    "none": lambda L: _forward(L, _x(L), L.tensor([0, 3, 1]), None, NONE, -100),
    "one sample, no reduction": lambda L: _forward(L, _x(L)[1], L.tensor(2), L.arange(4.) + 1, NONE, -100),
    "weighted mean, one ignored": lambda L: _forward(L, _x(L), L.tensor([0, 3, -100]), L.arange(4.) + 1, MEAN, -100),
    "sum of a transposed input": lambda L: _forward(L, _x(L).t(), L.tensor([0, 1, 2, 0]), None, SUM, 1),
    "backward, none": lambda L: _backward(L, L.tensor([1., 2, 3]), _x(L), L.tensor([0, 3, 1]), None, NONE, -100,
                                          L.tensor(0.)),
    "backward, weighted mean": lambda L: _backward(L, L.tensor(2.), _x(L), L.tensor([0, 3, -100]), L.arange(4.) + 1,
                                                   MEAN, -100, L.tensor(5.)),
    "backward, one sample": lambda L: _backward(L, L.tensor(2.), L.ones(4), L.tensor(1), None, SUM, -100,
                                                L.tensor(1.)),
}


@pytest.mark.parametrize("case", CASES)
def test_functional_forms_match_torch(case):
    ours, theirs = CASES[case](internals), CASES[case](torch)
    for o, t in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,),
                    strict=True):
        assert_same(o, t)


OUT_CASES = {
    "loss per sample into an empty out": lambda L: L.ops.aten.nll_loss_forward.output(
        _x(L), L.tensor([0, 3, 1]), None, NONE, -100, output=L.empty(0), total_weight=L.empty(0))[0],
    "gradient into an empty grad_input": lambda L: L.ops.aten.nll_loss_backward.grad_input(
        L.tensor(2.), _x(L).t(), L.tensor([0, 1, 2, 0]), None, MEAN, -100, L.tensor(4.), grad_input=L.empty(0)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variants_match_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


RESIZE_CASES = {
    "total weight resized": lambda L: L.ops.aten.nll_loss_forward.output(
        _x(L), L.tensor([0, 3, 1]), None, MEAN, -100, output=L.empty(()), total_weight=L.empty(3))[1],
    "gradient into a wrong-sized grad_input": lambda L: L.ops.aten.nll_loss_backward.grad_input(
        L.tensor(2.), _x(L).t(), L.tensor([0, 1, 2, 0]), None, MEAN, -100, L.tensor(4.), grad_input=L.empty(2)),
}


@pytest.mark.parametrize("case", RESIZE_CASES)
def test_a_wrong_sized_out_is_resized_with_torchs_warning(case, capfd):
    assert_ops_out_resized_with_torchs_warning(RESIZE_CASES[case], capfd)


ERROR_CASES = {
    "3-d input": lambda L: _forward(L, L.ones(1, 3, 4), L.tensor([0, 3, 1]), None, MEAN, -100),
    "2-d target": lambda L: _forward(L, L.ones(3, 4), L.tensor([[0, 3, 1]]), None, MEAN, -100),
    "batch sizes differ": lambda L: _forward(L, L.ones(3, 4), L.tensor([0, 3]), None, MEAN, -100),
    "int32 targets": lambda L: _forward(L, L.ones(3, 4), L.tensor([0, 3, 1], dtype=L.int32), None, MEAN, -100),
    "integer input": lambda L: _forward(L, L.ones(3, 4, dtype=L.long), L.tensor([0, 3, 1]), None, MEAN, -100),
    "weight of another size": lambda L: _forward(L, L.ones(3, 4), L.tensor([0, 3, 1]), L.ones(3), MEAN, -100),
    "target out of bounds": lambda L: _forward(L, L.ones(3, 4), L.tensor([0, 4, 1]), None, MEAN, -100),
    "output of another dtype": lambda L: L.ops.aten.nll_loss_forward.output(
        L.ones(3, 4), L.tensor([0, 3, 1]), None, SUM, -100, output=L.empty(3, dtype=L.float64),
        total_weight=L.empty(0)),
    "backward, grad_output per sample of another size": lambda L: _backward(
        L, L.ones(2), L.ones(3, 4), L.tensor([0, 3, 1]), None, NONE, -100, L.tensor(0.)),
    "backward, grad_output not one number": lambda L: _backward(
        L, L.ones(2), L.ones(3, 4), L.tensor([0, 3, 1]), None, MEAN, -100, L.tensor(0.)),
    "backward, total weight not one number": lambda L: _backward(
        L, L.tensor(1.), L.ones(3, 4), L.tensor([0, 3, 1]), None, MEAN, -100, L.ones(2)),
    "backward, weight of another size": lambda L: _backward(
        L, L.tensor(1.), L.ones(3, 4), L.tensor([0, 3, 1]), L.ones(3), MEAN, -100, L.tensor(3.)),
    "backward, grad_output of another dtype": lambda L: _backward(
        L, L.tensor(2., dtype=L.float64), L.ones(3, 4), L.tensor([0, 1, 2]), None, MEAN, -100, L.tensor(4.)),
    "backward, total weight of another dtype": lambda L: _backward(
        L, L.tensor(2.), L.ones(3, 4), L.tensor([0, 1, 2]), None, MEAN, -100, L.tensor(4., dtype=L.float64)),
    "backward into a grad_input of another dtype": lambda L: L.ops.aten.nll_loss_backward.grad_input(
        L.tensor(2.), L.ones(3, 4), L.tensor([0, 1, 2]), None, MEAN, -100, L.tensor(4.),
        grad_input=L.empty(2, dtype=L.float64)),
    "out= of an input that requires grad": lambda L: L.ops.aten.nll_loss_forward.output(
        L.ones(3, 4, requires_grad=True), L.tensor([0, 3, 1]), None, SUM, -100, output=L.empty(0),
        total_weight=L.empty(0)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gradients_and_nodes_match_torch(reduction):
    def run(L):
        x = L.tensor([[0.5, -1., 2.], [3., 0., 1.]], dtype=L.float64, requires_grad=True)
        y = L.nn.functional.nll_loss(x * 2, L.tensor([2, 0]), weight=L.tensor([1., 2., 3.], dtype=L.float64),
                                     reduction=reduction)
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        return [y.grad_fn.name(), g.grad_fn.name()], [y, g]
    (our_nodes, ours), (their_nodes, theirs) = run(internals), run(torch)
    assert our_nodes == their_nodes
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o.detach(), t.detach())


FAKE_PROGRAMS = {
    "forward": lambda L, x: L.ops.aten.nll_loss_forward(x, L.tensor([0, 1, 2, 0]), None, NONE, -100),
    "backward": lambda L, x: L.ops.aten.nll_loss_backward(L.tensor(1.), x.t(), L.tensor([0, 1, 2]), None, SUM, -100,
                                                          L.tensor(3.)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])
