"""cumsum and cumprod (``aten/native/sorting.py``, the scans), declared structured as torch
2.13's ``ReduceOps.cpp`` declares them: a meta step (the result's dtype: the one asked for, else
``out``'s, else the input's with integers widened to int64; the output allocated contiguous, or
``out`` checked and resized) and an impl step (the scan), out= the primary kernel, the
functional and in-place (``cumsum_``, ``cumprod_``) kernels derived from it.
"""

import pytest
import torch
from helpers import (
    COMPLEX_ULPS,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    native_entries,
    same_error,
)

import internals
from internals.aten import dispatcher
from internals.aten.native import sorting
from internals.c10.dispatch_key import DispatchKey


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cumsum_", "cumprod_"])
def test_the_functional_and_in_place_forms_are_derived_from_the_out_kernel(name):
    out_name = name.rstrip("_") + ".out"
    entries = native_entries()
    assert entries[name]["structured_delegate"] == out_name and entries[out_name]["structured"]
    out_kernel = dispatcher.find(out_name).table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta and derived.__module__ == sorting.__name__
    assert derived.__name__ == name



def _x(L):
    return L.tensor([[1., -2., 0.5], [3., 0.25, -1.]]).t()


OUT_CASES = {
    "cumsum into an empty out": lambda L: L.cumsum(_x(L), 0, out=L.empty(0)),
    "cumprod along the last dim": lambda L: L.cumprod(_x(L), -1, out=L.empty(0)),
    "resized, warns": lambda L: L.cumsum(_x(L), 1, out=L.empty(2)),
    "an out of the right shape keeps its strides": lambda L: L.cumsum(_x(L), 0, out=L.empty(2, 3).t()),
    "computed in out's dtype": lambda L: L.cumsum(L.tensor([1, 2, 3], dtype=L.int8), 0,
                                                  out=L.empty(0, dtype=L.float64)),
    "integers into a narrower out": lambda L: L.cumprod(L.tensor([100, 3, 2]), 0, out=L.empty(0, dtype=L.int8)),
    "a dtype asked for": lambda L: L.cumsum(L.tensor([1, 2]), 0, dtype=L.float32, out=L.empty(0)),
    "a 0-dim input": lambda L: L.cumprod(L.tensor(3.), 0, out=L.empty(0)),
    "an empty input": lambda L: L.cumsum(L.ones(0, 2), 1, out=L.empty(0)),
    "out is the input": lambda L: (lambda x: L.cumsum(x, 0, out=x))(L.arange(4.)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


ERROR_CASES = {
    "out's dtype is not the one asked for": lambda L: L.cumsum(L.ones(2), 0, dtype=L.float64, out=L.empty(2)),
    "dim out of range": lambda L: L.cumprod(L.ones(2), 1, out=L.empty(2)),
    "bool result": lambda L: L.cumsum(L.ones(2), 0, dtype=L.bool),
    "partial overlap after the resize": lambda L: (lambda x: L.cumsum(x, 0, out=x.t()))(L.ones(3, 3)),
    "in place into another dtype": lambda L: L.ones(2).cumsum_(0, dtype=L.float64),
    "in place of integers into float": lambda L: L.tensor([1, 2]).cumprod_(0, dtype=L.float32),
    "in place on a leaf that requires grad": lambda L: L.ones(2, requires_grad=True).cumsum_(0),
    "out= of an input that requires grad": lambda L: L.cumsum(L.ones(2, requires_grad=True), 0, out=L.empty(0)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def test_functional_forms_match_torch():
    def forms(L):
        x = _x(L)
        return [x.cumsum(0), x.cumprod(1), L.cumsum(L.tensor([True, True, False]), 0), L.tensor([2, 3]).cumprod(0),
                L.cumsum(x, 1, dtype=L.float64), x.half().cumsum(0), L.tensor(5).cumsum(0)]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)


def test_in_place_forms_match_torch():
    """``cumsum_``/``cumprod_`` (methods only, as torch's): the scan written into ``self``, its
    strides kept; integers stay integers; a dtype asked for must be self's."""
    def forms(L):
        x, ints = _x(L).clone(), L.tensor([[1, 2], [3, 4]]).t()
        return [x.cumsum_(0), x, _x(L).clone().cumprod_(1, dtype=L.float32), ints.clone().cumsum_(1),
                ints.clone().cumprod_(0), L.tensor(4.).cumsum_(0), L.ones(0, 3).cumprod_(1)]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)
    assert not hasattr(internals, "cumsum_") and not hasattr(torch, "cumsum_")


def test_in_place_gradients_match_torch():
    def grads(L):
        x = L.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        y = (x * 2).cumsum_(0).cumprod_(1)
        y.backward(L.ones(2, 2))
        return x.grad, type(y.grad_fn).__name__, type(y.grad_fn.next_functions[0][0]).__name__
    (ours, *our_nodes), (theirs, *their_nodes) = grads(internals), grads(torch)
    assert_same(ours, theirs)
    assert our_nodes == their_nodes


def test_gradients_match_torch():
    def grads(L):
        x = L.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        y = x.cumsum(0) * x.cumprod(1)
        y.backward(L.ones(2, 2))
        return x.grad, type(y.grad_fn.next_functions[0][0]).__name__
    (ours, our_node), (theirs, their_node) = grads(internals), grads(torch)
    assert_same(ours, theirs)
    assert our_node == their_node


def test_fake_tensors_get_the_real_kernels_metadata():
    def program(L, x):
        return L.cumsum(x.t(), 0, out=L.empty(5, dtype=L.float64))

    assert_fake_matches_real(program)


def _cumprod_gradients(lib, values, dim, complex_, create_graph):
    dtype = lib.complex128 if complex_ else lib.float64
    x = lib.tensor(values, dtype=dtype, requires_grad=True)
    weights = lib.tensor([[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 3.0]], dtype=dtype)
    weights = weights[:x.shape[0], :x.shape[1]].clone().requires_grad_(create_graph)
    g, = lib.autograd.grad(x.cumprod(dim), x, weights, create_graph=create_graph)
    node = type(g.grad_fn).__name__ if g.grad_fn is not None else None
    if not create_graph:
        return g, node, None
    g2 = lib.autograd.grad((g * g.conj()).real.sum(), (x, weights), allow_unused=True)
    return g, node, g2


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("create_graph", [False, True], ids=["once", "twice"])
@pytest.mark.parametrize("values, dim", [
    ([[1.5, -2.0, 0.5, 3.0], [0.25, 2.0, -1.0, 0.75]], 1),        # no zero
    ([[1.5, 0.0, 0.5, 3.0], [0.0, 2.0, -1.0, 0.0]], 1),          # a first zero, a second
    ([[1.5, 0.0, 0.0, 3.0], [0.5, 2.0, -1.0, 0.0]], 1),          # two zeros side by side, a last one
    ([[1.5, 0.0, 0.5, 3.0], [0.0, 2.0, 0.0, 1.0]], 0),           # along the first dimension
    ([[0.0], [2.0]], 1),                                          # a dimension of one element
], ids=["no_zero", "zeros", "adjacent_zeros", "dim0", "length_one"])
def test_cumprod_gradients_match_torch_once_and_twice(values, dim, complex_, create_graph):
    """torch's cumprod_backward: the gradient itself where the dimension has one element, the
    conjugated inputs for complex values (the gradient of a complex cumprod used to come back
    unconjugated), the masked O(n) form without a graph to record and the O(n^2) loop writing
    each slice in place with one (the gradient's node is torch's CopySlices, not WhereBackward0)."""
    if complex_:
        values = [[v * (1 - 0.5j) for v in row] for row in values]
    ours = _cumprod_gradients(internals, values, dim, complex_, create_graph)
    theirs = _cumprod_gradients(torch, values, dim, complex_, create_graph)
    ulps = COMPLEX_ULPS if complex_ else 0
    assert_same(ours[0], theirs[0], ulps=ulps)
    assert ours[1] == theirs[1]
    if create_graph:
        for o, t in zip(ours[2], theirs[2]):
            assert (o is None) == (t is None)
            if t is not None:
                assert_same(o, t, ulps=ulps)
