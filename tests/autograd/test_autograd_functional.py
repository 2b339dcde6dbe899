"""``internals.autograd.functional`` (vjp, jvp, jacobian, hessian, vhp, hvp) against torch's."""
import pytest
import torch

import internals
from tests.helpers import PRODUCT_ULPS, assert_same

X = [[0.1, -0.7, 0.3], [0.4, 0.5, -1.6]]
Y = [1.0, -2.0, 3.0]


def scalar_of_two(lib):
    return lambda x, y: (x.sin() * y).sum() + (x * x * y.exp()).sum()


def scalar_of_one(lib):
    return lambda x: (x.exp() * x.cos()).sum()


def pair_of_one(lib):
    return lambda x: (x.exp() * 2, x.sin().sum(0))


def args(lib, requires_grad=False):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=requires_grad)
    y = lib.tensor(Y, dtype=lib.float64, requires_grad=requires_grad)
    return x, y


CALLS = {
    "vjp_tuple_in": lambda lib, F, x, y: F.vjp(scalar_of_two(lib), (x, y)),
    "vjp_tuple_out": lambda lib, F, x, y: F.vjp(pair_of_one(lib), x, (lib.ones_like(x), lib.ones_like(y))),
    "jvp_tuple_out": lambda lib, F, x, y: F.jvp(pair_of_one(lib), x, x * 3),
    "jvp_tuple_in": lambda lib, F, x, y: F.jvp(scalar_of_two(lib), (x, y), (x, y)),
    "jacobian_single": lambda lib, F, x, y: F.jacobian(lambda a: a.exp() * a, y),
    "jacobian_nested": lambda lib, F, x, y: F.jacobian(lambda a, b: (a * b, b.sin()), (x, y)),
    "jacobian_tuple_out": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x),
    "hessian_single": lambda lib, F, x, y: F.hessian(scalar_of_one(lib), x),
    "hessian_tuple": lambda lib, F, x, y: F.hessian(scalar_of_two(lib), (x, y)),
    "vhp_tuple": lambda lib, F, x, y: F.vhp(scalar_of_two(lib), (x, y), (x, y)),
    "hvp_tuple": lambda lib, F, x, y: F.hvp(scalar_of_two(lib), (x, y), (y.expand(2, 3), x[0])),
    "hvp_single": lambda lib, F, x, y: F.hvp(scalar_of_one(lib), x, x),
    # vectorize=True: one backward pass batched over the output elements (is_grads_batched, under vmap)
    "jacobian_vectorized_single": lambda lib, F, x, y: F.jacobian(lambda a: a.exp() * a, y, vectorize=True),
    "jacobian_vectorized_nested": lambda lib, F, x, y: F.jacobian(lambda a, b: (a * b, b.sin()), (x, y),
                                                                  vectorize=True),
    "jacobian_vectorized_unused": lambda lib, F, x, y: F.jacobian(lambda a, b: a.cumsum(1), (x, y), vectorize=True),
    "jacobian_vectorized_create_graph": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, vectorize=True,
                                                                        create_graph=True),
    "hessian_vectorized": lambda lib, F, x, y: F.hessian(scalar_of_two(lib), (x, y), vectorize=True),
    # strategy="forward-mode": one forward-AD pass batched over the input elements
    "jacobian_forward_single": lambda lib, F, x, y: F.jacobian(lambda a: a.exp() * a, y, vectorize=True,
                                                               strategy="forward-mode"),
    "jacobian_forward_nested": lambda lib, F, x, y: F.jacobian(lambda a, b: (a * b, b.sin()), (x, y),
                                                               vectorize=True, strategy="forward-mode"),
    "jacobian_forward_unused": lambda lib, F, x, y: F.jacobian(lambda a, b: a.cumsum(1), (x, y), vectorize=True,
                                                               strategy="forward-mode"),
    "jacobian_forward_tuple_out": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, vectorize=True,
                                                                  strategy="forward-mode"),
}


def assert_nested_same(ours, theirs):
    """Same nesting of tuples (not lists), same tensors within a few ulps."""
    if isinstance(theirs, torch.Tensor):
        assert_same(ours, theirs, ulps=PRODUCT_ULPS)
        assert ours.requires_grad == theirs.requires_grad
        return
    assert type(ours) is type(theirs) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_nested_same(a, b)


@pytest.mark.parametrize("name", CALLS)
def test_results_and_nesting_match_torch(name):
    call = CALLS[name]
    ours = call(internals, internals.autograd.functional, *args(internals))
    theirs = call(torch, torch.autograd.functional, *args(torch))
    assert_nested_same(ours, theirs)


def test_create_graph_results_differentiate_again():
    """A hessian entry built with create_graph=True has torch's gradient with respect to the inputs."""
    grads = []
    for lib in (internals, torch):
        x, y = args(lib, requires_grad=True)
        h = lib.autograd.functional.hessian(scalar_of_two(lib), (x, y), create_graph=True)
        assert h[0][1].grad_fn is not None
        grads.append(lib.autograd.grad(h[0][1][1, 2, 2], (x, y)))
        _, hv = lib.autograd.functional.hvp(scalar_of_one(lib), x, x, create_graph=True)
        grads.append(lib.autograd.grad(hv.sum(), x))
    assert_nested_same(grads[0], grads[2])
    assert_nested_same(grads[1], grads[3])


def test_results_without_create_graph_are_detached():
    x, y = args(internals, requires_grad=True)
    out, g = internals.autograd.functional.vjp(scalar_of_two(internals), (x, y))
    assert out.grad_fn is None and not g[0].requires_grad


ERRORS = {
    "list_inputs": lambda lib, F, x, y: F.vjp(scalar_of_two(lib), [x, y]),
    "non_tensor_in_tuple": lambda lib, F, x, y: F.jvp(scalar_of_two(lib), (x, 3), (x, y)),
    "v_needed": lambda lib, F, x, y: F.jvp(pair_of_one(lib), x),
    "v_needed_for_vjp": lambda lib, F, x, y: F.vjp(pair_of_one(lib), x),
    "v_wrong_length": lambda lib, F, x, y: F.vhp(scalar_of_two(lib), (x, y), (x,)),
    "v_wrong_size": lambda lib, F, x, y: F.hvp(scalar_of_two(lib), (x, y), (x, x)),
    "v_wrong_size_single": lambda lib, F, x, y: F.vjp(scalar_of_one(lib), x, y),
    "tuple_output_to_hvp": lambda lib, F, x, y: F.hvp(pair_of_one(lib), x, x),
    "nonscalar_to_vhp": lambda lib, F, x, y: F.vhp(lambda a: a * 2, x, x),
    "nonscalar_to_hessian": lambda lib, F, x, y: F.hessian(lambda a: a * 2, x),
    "bad_strategy": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, strategy="sideways"),
    "forward_with_graph": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, create_graph=True,
                                                          strategy="forward-mode"),
    "forward_strict": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, strict=True, strategy="forward-mode"),
    "forward_loop": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, strategy="forward-mode"),
    "strict_vectorize": lambda lib, F, x, y: F.jacobian(pair_of_one(lib), x, strict=True, vectorize=True),
    "strict_constant_output": lambda lib, F, x, y: F.vjp(lambda a: y * 2, x, y, strict=True),
    "strict_unused_input": lambda lib, F, x, y: F.jacobian(lambda a, b: a * 2, (x, y), strict=True),
    "strict_linear_jacobian": lambda lib, F, x, y: F.jacobian(lambda a: a * 2, x, strict=True, create_graph=True),
    "strict_linear_hessian": lambda lib, F, x, y: F.hessian(lambda a: (a * 2).sum(), x, strict=True),
    "strict_jvp_unused": lambda lib, F, x, y: F.jvp(lambda a, b: a * 2, (x, y), (x, y), strict=True),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_calls_raise_like_torch(name):
    call = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        call(torch, torch.autograd.functional, *args(torch))
    with pytest.raises(Exception) as ours:
        call(internals, internals.autograd.functional, *args(internals))
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "internals.Size")


BATCHED = {
    "one_output": lambda lib, x, y: lib.autograd.grad((x.sin() * x).cumsum(1), x,
                                                      lib.eye(6, dtype=lib.float64).reshape(6, 2, 3),
                                                      is_grads_batched=True),
    "two_outputs_unused_input": lambda lib, x, y: lib.autograd.grad(
        (x.exp(), (x * x).sum(0)), (x, y), (lib.ones(4, 2, 3, dtype=lib.float64), lib.eye(3, 4, dtype=lib.float64).t()),
        is_grads_batched=True, allow_unused=True),
    "create_graph": lambda lib, x, y: [lib.autograd.grad(g.sum(), x)[0] for g in lib.autograd.grad(
        x.pow(3), x, lib.arange(12.0, dtype=lib.float64).reshape(2, 2, 3), create_graph=True, is_grads_batched=True)],
    "shape_mismatch": lambda lib, x, y: lib.autograd.grad(x.exp(), x, lib.ones(2, 3, dtype=lib.float64),
                                                          is_grads_batched=True),
}


@pytest.mark.parametrize("name", BATCHED)
def test_grads_batched_as_torch(name):
    """``autograd.grad(is_grads_batched=True)``: the first dim of each grad is a batch, each row
    its own backward pass (run under vmap), with torch's message for a wrong shape."""
    def run(lib):
        x, y = args(lib, requires_grad=True)
        try:
            return BATCHED[name](lib, x, y)
        except RuntimeError as e:
            return str(e)
    ours, theirs = run(internals), run(torch)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if b is not None:
            assert_same(a, b, ulps=PRODUCT_ULPS)
