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



def _view_of_a_plain_tensor(lib):
    a, b = lib.zeros(2), lib.ones(2)
    view = a[0]
    lib.utils.swap_tensors(a, b)
    return view


def _view_of_a_leaf(lib):
    a, b = lib.zeros(2, requires_grad=True), lib.ones(2)
    view = a[0]
    lib.utils.swap_tensors(a, b)
    return view


def _two_views(lib):
    a = lib.zeros(2, requires_grad=True)
    first, second = a.unbind(0)
    lib.utils.swap_tensors(a, lib.ones(2))
    return first, second


def _saved_leaf(lib):
    a, b = lib.zeros(2, requires_grad=True), lib.ones(2)
    y = (a * a).sum()
    lib.utils.swap_tensors(b, a)
    return y


def _saved_non_leaf(lib):
    c = lib.zeros(2, requires_grad=True) * 2
    y = (c * c).sum()
    lib.utils.swap_tensors(c, lib.ones(2))
    return y


def _view_of_a_non_leaf(lib):
    c = lib.zeros(2, requires_grad=True) * 2
    view = c[0]
    lib.utils.swap_tensors(c, lib.ones(2))
    return view


def _a_gradient(lib):
    a = lib.zeros(2, requires_grad=True)
    a.grad = lib.ones(2)
    lib.utils.swap_tensors(a.grad, lib.ones(2))
    return a


def _held_in_python_only(lib):
    a, b = lib.zeros(2), lib.ones(2)
    held = [a, {"a": a}]
    detached = a.detach()
    lib.utils.swap_tensors(a, b)
    return held[0].tolist(), detached.tolist()


def _not_a_tensor(lib):
    lib.utils.swap_tensors(lib.ones(2), [1.0])


@pytest.mark.parametrize("program", [_view_of_a_plain_tensor, _view_of_a_leaf, _two_views, _saved_leaf,
                                     _saved_non_leaf, _view_of_a_non_leaf, _a_gradient, _held_in_python_only,
                                     _not_a_tensor])
def test_other_owners_of_the_tensor_forbid_the_swap(program):
    """torch refuses a tensor whose TensorImpl has owners beyond its Python object and its
    AccumulateGrad (a view's base, a saved input, a ``.grad``), with its class and message;
    references from Python containers and a ``detach`` are no owners."""
    ours, theirs = outcome(program, internals), outcome(program, torch)
    assert ours == theirs
