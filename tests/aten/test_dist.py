"""``torch.dist`` (``Tensor.dist``): the p-norm of the broadcast difference against torch, for
the orders torch's examples and OpInfo samples use, with its node (DistBackward0), its first
and second derivatives in both arguments, and at::norm's error for integer inputs."""
import math

import pytest
import torch
from helpers import assert_same

import internals

ORDERS = [2, 1, 0, 3.5, math.inf, -math.inf]


def _observe(lib, p):
    lib.manual_seed(0)
    a = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
    b = lib.randn(4, dtype=lib.float64, requires_grad=True)
    d = lib.dist(a, b, p)
    seen = [d, d.grad_fn.name(), a.dist(b, p=p)]
    if p != 0:     # the 0-norm has no gradient: torch's graph leaves its inputs unused
        ga, gb = lib.autograd.grad(d, (a, b), create_graph=True)
        seen += [ga, gb, *lib.autograd.grad((ga * ga).sum() + gb.sum(), (a, b), allow_unused=True)]
    return seen


@pytest.mark.parametrize("p", ORDERS, ids=str)
def test_dist_values_nodes_and_derivatives(p):
    ours, theirs = _observe(internals, p), _observe(torch, p)
    assert len(ours) == len(theirs) and ours[1] == theirs[1] == "DistBackward0"
    for o, t in zip(ours, theirs):
        if isinstance(t, torch.Tensor) or t is None:
            assert (o is None) == (t is None)
            if t is not None:
                assert_same(o, t, exact_layout=False, rtol=1e-13, atol=1e-14)


def test_dist_promotes_and_refuses_integers_as_torch():
    for lib in (torch, internals):
        assert lib.dist(lib.ones(2), lib.zeros(2, dtype=lib.float64)).dtype == lib.float64
    messages = []
    for lib in (torch, internals):
        with pytest.raises(RuntimeError) as info:
            lib.dist(lib.ones(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
