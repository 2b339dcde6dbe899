"""max.dim and min.dim (``aten/native/reduce_ops.py``), declared structured with two outputs as
torch 2.13's ``TensorCompare.cpp`` declares them: one meta step (the checks, then the values
and the indices allocated, or checked and resized, as ``resize_reduction_with_indices`` does)
and one impl step; ``max(x, dim, out=(values, indices))`` is the primary kernel, ``max(x, dim)``
derived from it.
"""

import pytest
import torch
from helpers import assert_fake_matches_real, assert_same, both_with_warnings, native_entries, same_error

import internals
from internals.aten import dispatcher
from internals.aten.native import reduce_ops
from internals.c10.dispatch_key import DispatchKey


@pytest.mark.parametrize("name, out_name, outputs", [("max.dim", "max.dim_max", ("max", "max_values")),
                                                     ("min.dim", "min.dim_min", ("min", "min_indices"))])
def test_the_functional_form_is_derived_from_the_two_output_kernel(name, out_name, outputs):
    entries = native_entries()
    assert entries[name]["structured_delegate"] == out_name and entries[out_name]["structured"]
    out_kernel = dispatcher.find(out_name).table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta and derived.__module__ == reduce_ops.__name__
    assert out_kernel.outputs == 2
    assert tuple(out_kernel.__signature__.parameters)[-2:] == outputs



def _x(L):
    return L.tensor([[3., -1., 3., float("nan")], [0., 5., -2., 1.], [2., 2., 7., -7.]]).t()


def _long(L, n=0):
    return L.empty(n, dtype=L.int64)


OUT_CASES = {
    "max into empty outs": lambda L: L.max(_x(L), 0, out=(L.empty(0), _long(L))),
    "min along the last dim, kept": lambda L: L.min(_x(L), -1, True, out=(L.empty(0), _long(L))),
    "resized, warns": lambda L: L.max(_x(L), 1, out=(L.empty(2), _long(L, 2))),
    "outs of the right shape keep their strides": lambda L: L.min(L.ones(2, 3, 4), 1, out=(
        L.empty(4, 2).t(), _long(L, 8).reshape(4, 2).t())),
    "integers": lambda L: L.max(L.tensor([[1, 9], [4, 2]]), 0, out=(_long(L), _long(L))),
    "bools": lambda L: L.min(L.tensor([[True, False], [True, True]]), 1, out=(L.empty(0, dtype=L.bool), _long(L))),
    "ties pick the first": lambda L: L.max(L.tensor([[1., 1.], [1., 0.]]), 1, out=(L.empty(0), _long(L))),
    "keyword outs": lambda L: L.ops.aten.max.dim_max(_x(L), 0, max=L.empty(0), max_values=_long(L)),
    "a zero-size dim kept": lambda L: L.max(L.ones(0, 3), 1, out=(L.empty(0), _long(L))),
    "a full overlap with the input": lambda L: (lambda x: L.max(x, 0, out=(x[0], _long(L))))(L.ones(1, 4)),
    "values over a column of the input": lambda L: (lambda x: L.max(x, 1, True, out=(x[:, 1:2], _long(L))))(
        L.ones(4, 4)),
    "values over a column, the dim dropped": lambda L: (lambda x: L.max(x, 1, out=(x[:, 1], _long(L))))(
        L.ones(4, 4)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(OUT_CASES[case])
    assert type(ours).__name__ == type(theirs).__name__
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
    assert our_warnings == their_warnings


ERROR_CASES = {
    "values of another dtype": lambda L: L.max(L.ones(2, 3), 0, out=(L.empty(0, dtype=L.float64), _long(L))),
    "indices not long": lambda L: L.min(L.ones(2, 3), 0, out=(L.empty(0), L.empty(0, dtype=L.int32))),
    "dim out of range": lambda L: L.max(L.ones(2, 3), 2),
    "a zero-size dim reduced": lambda L: L.max(L.ones(0, 3), 0),
    "complex": lambda L: L.min(L.ones(2, dtype=L.complex64), 0),
    "indices over a row of a one-row input": lambda L: (lambda x: L.min(x, 0, out=(L.empty(0), x.view(L.int64)[0])))(
        L.ones(1, 4)),
    "indices over the input": lambda L: (lambda x: L.min(x, 0, out=(L.empty(0), x.view(L.int64)[0])))(L.ones(4, 4)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def test_functional_forms_match_torch():
    def forms(L):
        x = _x(L)
        return [*x.max(0), *x.min(1, keepdim=True), *L.max(x, -1), *L.min(L.tensor([[4, 1], [1, 4]]), 0),
                *L.tensor(3.).max(0), L.max(x), L.min(L.arange(5))]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)


def test_gradients_match_torch():
    def grads(L):
        x = L.tensor([[1., 5.], [7., 2.]], requires_grad=True)
        values, _ = x.max(1)
        low, _ = x.min(0, keepdim=True)
        (values.sum() + (low * 3).sum()).backward()
        return x.grad, type(values.grad_fn).__name__
    (ours, our_node), (theirs, their_node) = grads(internals), grads(torch)
    assert_same(ours, theirs)
    assert our_node == their_node


def test_fake_tensors_get_the_real_kernels_metadata():
    def program(L, x):
        return L.max(x.t(), 1, out=(L.empty(5), L.empty(0, dtype=L.int64)))

    assert_fake_matches_real(program)


# ---- aminmax: the same kind of declaration (two outputs of the input's dtype, contiguous when fresh)
def test_aminmax_is_derived_from_its_two_output_kernel():
    entries = native_entries()
    assert entries["aminmax"]["structured_delegate"] == "aminmax.out" and entries["aminmax.out"]["structured"]
    out_kernel = dispatcher.find("aminmax.out").table[DispatchKey.CPU][0].fn
    derived = dispatcher.find("aminmax").table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta and derived.__module__ == reduce_ops.__name__
    assert out_kernel.outputs == 2 and tuple(out_kernel.__signature__.parameters)[-2:] == ("min", "max")


AMINMAX_CASES = {
    "along a dim, kept, into an empty and a resized out": lambda L: L.aminmax(
        _x(L).t(), dim=0, keepdim=True, out=(L.empty(0), L.empty(5))),
    "outs of the right shape keep their strides": lambda L: L.aminmax(
        L.arange(24.).reshape(2, 3, 4), dim=1, out=(L.empty(4, 2).t(), L.empty(4, 2).t())),
    "every element, kept": lambda L: L.aminmax(_x(L), keepdim=True, out=(L.empty(0), L.empty(0))),
    "functional, a transposed input": lambda L: L.aminmax(_x(L).t(), dim=-1),
    "integers, method": lambda L: L.tensor([[1, 5], [7, -2]]).aminmax(dim=0),
    "a NaN": lambda L: L.aminmax(L.tensor([3., float("nan"), 1.])),
    "a 0-dim input along dim 0, kept": lambda L: L.aminmax(L.tensor(3.), dim=0, keepdim=True),
}


@pytest.mark.parametrize("case", AMINMAX_CASES)
def test_aminmax_matches_torch(case):
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(AMINMAX_CASES[case])
    assert type(ours).__name__ == type(theirs).__name__
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
    assert our_warnings == their_warnings


AMINMAX_ERRORS = {
    "an out of another dtype": lambda L: L.aminmax(L.ones(2, 3), out=(L.empty(0, dtype=L.float64), L.empty(0))),
    "complex": lambda L: L.aminmax(L.tensor([1j])),
    "a zero-size dim reduced": lambda L: L.aminmax(L.ones(2, 0), dim=1),
    "no elements": lambda L: L.aminmax(L.ones(2, 0)),
}


@pytest.mark.parametrize("case", AMINMAX_ERRORS)
def test_aminmax_errors_match_torch(case):
    same_error(AMINMAX_ERRORS[case])


def test_aminmax_fake_tensors_run_the_meta_step():
    assert_fake_matches_real(lambda L, x: L.aminmax(x.t(), dim=1, out=(L.empty(5), L.empty(0))))
    assert_fake_matches_real(lambda L, x: L.aminmax(x.t(), keepdim=True))
