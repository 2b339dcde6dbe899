"""``F.soft_margin_loss`` and ``F.multi_margin_loss`` (torch's operators with their own backward
operators) and their modules against torch: values, reductions, node names, first and second
gradients (torch refuses the multi-margin one), dtypes, odd shapes, the errors."""
import numpy as np
import pytest
import torch
from helpers import assert_same, same_outcome

import internals


def _t(L, shape, seed, dtype="float64", requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)      # (flat, so that empty shapes survive)
    return L.tensor(a.ravel().tolist(), dtype=getattr(L, dtype)).reshape(shape).requires_grad_(requires_grad)


def _signs(L, shape, seed):
    return L.tensor(np.random.default_rng(seed).choice([-1.0, 1.0], shape).tolist(), dtype=L.float64)


def _classes(L, n, c, seed):
    return L.tensor(np.random.default_rng(seed).integers(0, c, n).tolist(), dtype=L.int64)


CASES = {        # input shape, then the loss of (F, L, x)
    "soft_margin": ((4, 5), lambda F, L, x, **k: F.soft_margin_loss(x, _signs(L, (4, 5), 2), **k)),
    "soft_margin_broadcast_target_values": ((3,), lambda F, L, x, **k: F.soft_margin_loss(x, _t(L, (3,), 2), **k)),
    "soft_margin_0d": ((), lambda F, L, x, **k: F.soft_margin_loss(x, L.tensor(-1.0, dtype=L.float64), **k)),
    "multi_margin": ((4, 5), lambda F, L, x, **k: F.multi_margin_loss(x, _classes(L, 4, 5, 3), **k)),
    "multi_margin_p2": ((4, 5), lambda F, L, x, **k: F.multi_margin_loss(x, _classes(L, 4, 5, 3), p=2, margin=0.5,
                                                                         **k)),
    "multi_margin_weight": ((4, 5), lambda F, L, x, **k: F.multi_margin_loss(
        x, _classes(L, 4, 5, 4), weight=_t(L, (5,), 5).abs(), **k)),
    "multi_margin_1d": ((5,), lambda F, L, x, **k: F.multi_margin_loss(x, L.tensor([2]), margin=2.0, **k)),
    "multi_margin_0d_target": ((5,), lambda F, L, x, **k: F.multi_margin_loss(x, L.tensor(4), **k)),
    "multi_margin_one_class": ((3, 1), lambda F, L, x, **k: F.multi_margin_loss(x, L.tensor([0, 0, 0]), **k)),
    "multi_margin_empty_batch": ((0, 4), lambda F, L, x, **k: F.multi_margin_loss(x, L.tensor([], dtype=L.int64),
                                                                                  **k)),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_gradients_and_nodes_match_torch(name, reduction):
    shape, loss = CASES[name]
    if name == "multi_margin_empty_batch" and reduction == "mean":
        pytest.skip("torch's kernel returns an uninitialized number for the mean over no samples")

    def run(L):
        x = _t(L, shape, 1, requires_grad=True)
        out = loss(L.nn.functional, L, x, reduction=reduction)
        grad, = L.autograd.grad((out * out).sum(), x)
        return out, grad, out.grad_fn.name()
    with np.errstate(all="ignore"):
        same_outcome(lambda L: run(L)[0], rtol=1e-12, atol=1e-12)
        same_outcome(lambda L: run(L)[1], rtol=1e-12, atol=1e-12)
        assert run(internals)[2] == run(torch)[2]


def test_noncontiguous_and_float32_inputs_match_torch():
    for make in (lambda L: _t(L, (5, 4), 1).t(), lambda L: _t(L, (4, 5), 1, dtype="float32")):
        same_outcome(lambda L, make=make: L.nn.functional.soft_margin_loss(
            make(L), _signs(L, (4, 5), 2).to(make(L).dtype)), rtol=1e-6, atol=1e-6)
        same_outcome(lambda L, make=make: L.nn.functional.multi_margin_loss(
            make(L), _classes(L, 4, 5, 3), reduction="none"), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_multi_margin_loss_refuses_16_bit_floats_on_the_cpu_as_torch(dtype):
    """torch's CPU kernels (forward and backward) are dispatched for float and double only."""
    same_outcome(lambda L: L.nn.functional.multi_margin_loss(_t(L, (4, 5), 1).to(getattr(L, dtype)),
                                                             _classes(L, 4, 5, 3)))
    same_outcome(lambda L: L.ops.aten.multi_margin_loss_backward(
        L.ones(()).to(getattr(L, dtype)), _t(L, (4, 5), 1).to(getattr(L, dtype)), _classes(L, 4, 5, 3), 1, 1.0))


SECOND_ORDER = {
    "soft_margin_loss": lambda L: (lambda x: (L.nn.functional.soft_margin_loss(x * x, _signs(L, (3, 2), 2)), x))(
        _t(L, (3, 2), 6, requires_grad=True)),
    "soft_margin_loss_none": lambda L: (lambda x: (L.nn.functional.soft_margin_loss(
        x, _signs(L, (3, 2), 2), reduction="none") ** 2, x))(_t(L, (3, 2), 6, requires_grad=True)),
    "multi_margin_loss": lambda L: (lambda x: (L.nn.functional.multi_margin_loss(x.tanh(), _classes(L, 3, 4, 2)), x))(
        _t(L, (3, 4), 7, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch_or_refuse_as_torch(name):
    def run(L):
        out, x = SECOND_ORDER[name](L)
        g, = L.autograd.grad(out.sum(), x, create_graph=True)
        return L.autograd.grad((g * g).sum(), x)[0]
    same_outcome(run, rtol=1e-12, atol=1e-12)


BAD = {
    "soft_margin_int": lambda F, L, x: F.soft_margin_loss(x.long(), x.long()),
    "soft_margin_shapes": lambda F, L, x: F.soft_margin_loss(x, x[:2]),
    "soft_margin_reduction": lambda F, L, x: F.soft_margin_loss(x, x, reduction="max"),
    "multi_p3": lambda F, L, x: F.multi_margin_loss(x, _classes(L, 4, 5, 1), p=3),
    "multi_weight_2d": lambda F, L, x: F.multi_margin_loss(x, _classes(L, 4, 5, 1), weight=x),
    "multi_weight_size": lambda F, L, x: F.multi_margin_loss(x, _classes(L, 4, 5, 1), weight=x[0, :3]),
    "multi_target_size": lambda F, L, x: F.multi_margin_loss(x, _classes(L, 3, 5, 1)),
    "multi_target_2d": lambda F, L, x: F.multi_margin_loss(x, _classes(L, 4, 5, 1)[:, None]),
    "multi_target_high": lambda F, L, x: F.multi_margin_loss(x, L.tensor([0, 1, 5, 2])),
    "multi_target_negative": lambda F, L, x: F.multi_margin_loss(x, L.tensor([0, -1, 2, 2])),
    "multi_target_float": lambda F, L, x: F.multi_margin_loss(x, L.tensor([0.0, 1, 2, 2])),
    "multi_3d": lambda F, L, x: F.multi_margin_loss(x[None], _classes(L, 4, 5, 1)),
    "multi_empty_classes": lambda F, L, x: F.multi_margin_loss(x[:, :0], _classes(L, 4, 5, 1)),
    "multi_int_input": lambda F, L, x: F.multi_margin_loss(x.long(), _classes(L, 4, 5, 1)),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_torch_errors(name):
    same_outcome(lambda L: BAD[name](L.nn.functional, L, _t(L, (4, 5), 8)))


def test_modules_match_torch():
    def run(L):
        x = _t(L, (4, 5), 9)
        soft = L.nn.SoftMarginLoss(reduction="sum")
        multi = L.nn.MultiMarginLoss(p=2, margin=0.3, weight=_t(L, (5,), 3).abs(), reduction="none")
        return soft(x, _signs(L, (4, 5), 1)), multi(x, _classes(L, 4, 5, 2)), repr(soft), repr(multi)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    assert_same(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    assert ours[2:] == theirs[2:]
    for make in (lambda L: L.nn.MultiMarginLoss(p=3), lambda L: L.nn.MultiMarginLoss(weight=L.ones(2, 2))):
        same_outcome(lambda L, make=make: make(L))


def _second_backward(lib, loss):
    """The grad_fn of a gradient taken with create_graph, the names of its next nodes, and the
    error a backward through it meets."""
    x = lib.tensor([[0.3, -1.2, 0.5, 2.0], [1.1, 0.2, -0.4, 0.0], [-0.7, 0.9, 1.3, 0.1]],
                   dtype=lib.float64, requires_grad=True)
    g, = lib.autograd.grad(loss(lib, x), x, create_graph=True)
    with pytest.raises(RuntimeError) as error:
        g.sum().backward()
    return (type(g.grad_fn).__name__.removesuffix("Node"),
            [type(n).__name__ for n, _ in g.grad_fn.next_functions], str(error.value))


@pytest.mark.parametrize("loss", [
    lambda L, x: L.nn.functional.multi_margin_loss(x, L.tensor([0, 1, 2]), p=2),
    lambda L, x: L.nn.functional.multilabel_margin_loss(x, L.tensor([[0, 1, -1, 0]] * 3)),
])
def test_a_second_derivative_meets_torchs_not_implemented_node(loss):
    """torch has no formula for these losses' backward operators: the gradient's grad_fn is its
    NotImplemented node, linked to the inputs that require grad, and refuses a backward."""
    assert _second_backward(internals, loss) == _second_backward(torch, loss)
