"""The ranking, embedding and likelihood losses (``margin_ranking_loss``, ``hinge_embedding_loss``,
``cosine_embedding_loss``, ``triplet_margin_loss``, ``poisson_nll_loss``: torch's
CompositeImplicitAutograd operators; ``gaussian_nll_loss``, ``multilabel_soft_margin_loss`` and
``triplet_margin_with_distance_loss``:
Python in torch/nn/functional.py) against torch: values, the input's gradient, the grad_fn chain's
names, the errors."""
import numpy as np
import pytest
import torch
from helpers import assert_same, same_error

import internals


def _t(L, shape, seed, requires_grad=False, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    a = np.abs(a) + 0.1 if positive else a
    return L.tensor(a.tolist(), dtype=L.float64, requires_grad=requires_grad)


def _signs(L, n, seed):
    return L.tensor(np.random.default_rng(seed).choice([-1.0, 1.0], n).tolist(), dtype=L.float64)


CALLS = {
    "margin_ranking": lambda L, F, x: F.margin_ranking_loss(x[:, 0], _t(L, (4,), 2), _signs(L, 4, 3), margin=0.3),
    "hinge_embedding": lambda L, F, x: F.hinge_embedding_loss(x, _signs(L, 12, 3).reshape(4, 3), margin=0.5),
    "hinge_other_targets": lambda L, F, x: F.hinge_embedding_loss(x, _t(L, (4, 3), 3)),
    "cosine_embedding": lambda L, F, x: F.cosine_embedding_loss(x, _t(L, (4, 3), 2), _signs(L, 4, 3), margin=0.2),
    "cosine_embedding_1d": lambda L, F, x: F.cosine_embedding_loss(x[0], _t(L, (3,), 2), L.tensor(-1.0)),
    # a zero row: its squared magnitude is Loss.cpp's epsilon alone, a C++ float (9.99999996e-13 in
    # float64), and the gradient 1/sqrt of it shows the last digits
    "cosine_embedding_zero_row": lambda L, F, x: F.cosine_embedding_loss(
        x - x.detach() * L.tensor([[1.], [0], [0], [1]], dtype=L.float64), _t(L, (4, 3), 2), _signs(L, 4, 3)),
    "triplet": lambda L, F, x: F.triplet_margin_loss(x, _t(L, (4, 3), 2), _t(L, (4, 3), 3), margin=0.7, p=1.5),
    "triplet_swap": lambda L, F, x: F.triplet_margin_loss(x, _t(L, (4, 3), 2), _t(L, (4, 3), 3), swap=True),
    "poisson_log": lambda L, F, x: F.poisson_nll_loss(x, _t(L, (4, 3), 2, positive=True) * 3),
    "poisson_full": lambda L, F, x: F.poisson_nll_loss(x.exp(), _t(L, (4, 3), 2, positive=True) * 3, log_input=False,
                                                       full=True),
    "gaussian": lambda L, F, x: F.gaussian_nll_loss(x, _t(L, (4, 3), 2), _t(L, (4, 3), 3, positive=True)),
    "gaussian_shared_var": lambda L, F, x: F.gaussian_nll_loss(x, _t(L, (4, 3), 2), _t(L, (4,), 3, positive=True),
                                                               full=True),
    "gaussian_float_var": lambda L, F, x: F.gaussian_nll_loss(x, _t(L, (4, 3), 2), 0.5),
    "multilabel": lambda L, F, x: F.multilabel_soft_margin_loss(x, _t(L, (4, 3), 2).gt(0).to(L.float64)),
    "multilabel_weight": lambda L, F, x: F.multilabel_soft_margin_loss(x, _t(L, (4, 3), 2).gt(0).to(L.float64),
                                                                       weight=_t(L, (3,), 5, positive=True)),
}


def _names(node):
    """The grad_fn names of the graph, depth first (AccumulateGrad spelled as torch spells it)."""
    if node is None:
        return []
    name = node.name().split("::")[-1]
    return [name] + [n for child, _ in node.next_functions for n in _names(child)]

# triplet_margin_with_distance_loss: torch's Python composite, with pairwise_distance or any function
CALLS.update({
    "triplet_with_distance": lambda L, F, x: F.triplet_margin_with_distance_loss(x, _t(L, (4, 3), 2),
                                                                               _t(L, (4, 3), 3)),
    "triplet_with_distance_swap": lambda L, F, x: F.triplet_margin_with_distance_loss(
        x, _t(L, (4, 3), 2), _t(L, (4, 3), 3), margin=2.0, swap=True),
    "triplet_with_cosine_distance": lambda L, F, x: F.triplet_margin_with_distance_loss(
        x, _t(L, (4, 3), 2), _t(L, (4, 3), 3), swap=True,
        distance_function=lambda a, b: 1 - L.nn.functional.cosine_similarity(a, b)),
})


def _run(L, call, reduction):
    x = _t(L, (4, 3), 1, requires_grad=True)
    out = call(L, L.nn.functional, x) if reduction is None else None
    if out is None:
        F = L.nn.functional
        kwargs = {"reduction": reduction}
        out = _with_reduction(call, L, F, x, kwargs)
    grad, = L.autograd.grad(out.sum(), x)
    return out, grad, _names(out.grad_fn)


def _with_reduction(call, L, F, x, kwargs):
    class Wrapped:
        def __getattr__(self, name):
            return lambda *a, **k: getattr(F, name)(*a, **k, **kwargs)
    return call(L, Wrapped(), x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(CALLS))
def test_loss_values_gradients_and_graph_match_torch(name, reduction):
    ours, theirs = _run(internals, CALLS[name], reduction), _run(torch, CALLS[name], reduction)
    assert_same(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    assert_same(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("reduction", ["none", "sum"])
@pytest.mark.parametrize("name", list(CALLS))
def test_gradient_layout_of_a_transposed_input_matches_torch(name, reduction):
    """The input's gradient is a sum of several terms; which term reaches it first (torch's operand
    order, and C++'s right-to-left evaluation of ``exp(x) - t * x``) decides its strides."""
    def run(L):
        x = _t(L, (3, 4), 1).t().requires_grad_()
        out = _with_reduction(CALLS[name], L, L.nn.functional, x, {"reduction": reduction})
        return L.autograd.grad(out.sum(), x)[0]
    assert_same(run(internals), run(torch), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
                                  "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss",
                                  "TripletMarginWithDistanceLoss"])
def test_loss_modules_call_their_functions(name):
    def run(L):
        x = _t(L, (4, 3), 1, requires_grad=True)
        args = {"MarginRankingLoss": (x[:, 0], _t(L, (4,), 2), _signs(L, 4, 3)),
                "HingeEmbeddingLoss": (x, _signs(L, 12, 3).reshape(4, 3)),
                "CosineEmbeddingLoss": (x, _t(L, (4, 3), 2), _signs(L, 4, 3)),
                "TripletMarginLoss": (x, _t(L, (4, 3), 2), _t(L, (4, 3), 3)),
                "TripletMarginWithDistanceLoss": (x, _t(L, (4, 3), 2), _t(L, (4, 3), 3)),
                "PoissonNLLLoss": (x, _t(L, (4, 3), 2, positive=True)),
                "GaussianNLLLoss": (x, _t(L, (4, 3), 2), _t(L, (4, 3), 3, positive=True)),
                "MultiLabelSoftMarginLoss": (x, _t(L, (4, 3), 2).gt(0).to(L.float64))}[name]
        module = getattr(L.nn, name)(reduction="sum")
        return module(*args), repr(module)
    ours, theirs = run(internals), run(torch)
    assert_same(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("call", [
    lambda L, F: F.margin_ranking_loss(L.ones(3), L.ones(3), L.ones(3, 1)),
    lambda L, F: F.margin_ranking_loss(L.ones(3), L.ones(2), L.ones(3)),
    lambda L, F: F.margin_ranking_loss(L.ones(3), L.ones(3), L.ones(3), reduction="foo"),
    lambda L, F: F.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 1)),
    lambda L, F: F.cosine_embedding_loss(L.ones(3), L.ones(3), L.ones(2)),
    lambda L, F: F.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.tensor(1.0)),
    lambda L, F: F.triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3)),
    lambda L, F: F.triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), margin=0),
    lambda L, F: L.nn.TripletMarginLoss(margin=-1.0),
    lambda L, F: F.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3)),
    lambda L, F: F.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), margin=0),
    lambda L, F: F.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), reduction="foo"),
    lambda L, F: L.nn.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda L, F: F.poisson_nll_loss(L.ones(3), L.ones(3), reduction="foo"),
    lambda L, F: F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3, 3)),
    lambda L, F: F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), -L.ones(2, 3)),
    lambda L, F: F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), -1.0),
    lambda L, F: F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), reduction="foo"),
    lambda L, F: F.multilabel_soft_margin_loss(L.ones(2, 3), L.ones(2, 3), reduction="foo"),
    lambda L, F: F.hinge_embedding_loss(L.ones(2, 3), L.ones(2, 3), reduction="foo"),
])
def test_loss_errors_match_torch(call):
    same_error(lambda L: call(L, L.nn.functional))


def test_pairwise_distance_adds_eps_as_a_scalar():
    """torch's ``x1 - x2 + eps`` is add.Scalar (AddBackward1); it was recorded as add.Tensor."""
    def names(L):
        x = _t(L, (4, 3), 1, requires_grad=True)
        return _names(L.nn.functional.pairwise_distance(x, _t(L, (4, 3), 2)).grad_fn)
    assert names(internals) == names(torch)
