"""``torch.utils.swap_tensors`` and ``torch.__future__.set_swap_module_params_on_conversion``
against torch: two tensor objects exchange class, attributes, autograd state and contents while
keeping their identities; a module's conversion under the switch keeps its Parameter and gradient
objects; a weak reference forbids the swap; a graph recorded before the swap refuses its
backward."""
import weakref

import pytest
import torch
from helpers import outcome

import internals


def _dtype(t):
    return None if t is None else str(t.dtype).split(".")[-1]


def _facts(t):
    return (type(t).__name__, tuple(t.shape), _dtype(t), t.requires_grad, t.detach().tolist(),
            dict(vars(t)), t.grad_fn is None)


def test_two_tensors_exchange_everything_but_identity():
    def program(lib):
        a = lib.nn.Parameter(lib.ones(2))
        b = lib.arange(6, dtype=lib.float64).reshape(2, 3)
        b.note = "from b"
        keep_a, keep_b = a, b
        lib.utils.swap_tensors(a, b)
        return keep_a is a, keep_b is b, _facts(a), _facts(b), (a * 2).dtype == lib.float64
    assert outcome(program, internals) == outcome(program, torch)


def test_a_non_leaf_keeps_its_history_across_the_swap():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        y, z = x * 3, lib.zeros(2)
        lib.utils.swap_tensors(y, z)
        z.sum().backward()
        return _facts(y), type(z.grad_fn).__name__, x.grad.tolist()
    assert outcome(program, internals) == outcome(program, torch)


@pytest.mark.parametrize("which", [0, 1])
def test_a_weak_reference_forbids_the_swap(which):
    def program(lib):
        pair = [lib.ones(1), lib.zeros(1)]
        ref = weakref.ref(pair[which])
        lib.utils.swap_tensors(*pair)
        return ref
    assert outcome(program, internals) == outcome(program, torch)


def _converted(lib, swap, backward_after=False):
    """A linear layer with a gradient converted to float64 under the switch (or not): which objects
    it still holds, and their dtypes; optionally the backward of a graph recorded before."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(2, 2)
    weight = layer.weight
    loss = layer(lib.ones(1, 2)).sum()
    if not backward_after:
        loss.backward()
    grad = weight.grad
    lib.__future__.set_swap_module_params_on_conversion(swap)
    try:
        layer.double()
    finally:
        lib.__future__.set_swap_module_params_on_conversion(False)
    if backward_after:
        loss.backward()
    return (layer.weight is weight, _dtype(weight), type(weight).__name__, weight.requires_grad,
            weight.grad is grad, _dtype(weight.grad), _dtype(layer.bias))


@pytest.mark.parametrize("swap", [True, False])
def test_module_conversion_under_the_switch_keeps_the_objects(swap):
    assert outcome(lambda lib: _converted(lib, swap), internals) == outcome(lambda lib: _converted(lib, swap), torch)


def test_a_graph_recorded_before_the_swap_refuses_its_backward():
    ours, theirs = (outcome(lambda lib: _converted(lib, True, backward_after=True), lib) for lib in (internals, torch))
    assert ours == theirs and ours[:2] == ("error", "RuntimeError")

