"""clamp, clamp_min and clamp_max (``aten/native/binary_ops.py``), declared structured as torch
2.13's ``TensorCompare.cpp`` declares them: per overload a meta step (number bounds promote an
integer input only; tensor bounds join the iterator) and an impl step (``maximum`` then
``minimum``), out= the primary kernel, the functional and in-place kernels derived from it.
"""

import pytest
import torch
from helpers import (
    TORCH_NATIVE_FUNCTIONS,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    native_entries,
    same_error,
)

import internals
from internals.aten import dispatcher
from internals.aten.native import binary_ops
from internals.c10.dispatch_key import DispatchKey


def test_structured_marks_are_torchs():
    ours, theirs = native_entries(), native_entries(TORCH_NATIVE_FUNCTIONS)
    family = [name for name in theirs if name.split(".")[0].rstrip("_") in ("clamp", "clamp_min", "clamp_max")]
    assert len(family) == 18
    for name in family:
        assert (ours[name].get("structured", False), ours[name].get("structured_delegate")) == (
            theirs[name].get("structured", False), theirs[name].get("structured_delegate")), name


@pytest.mark.parametrize("name", ["clamp", "clamp_.Tensor", "clamp_min", "clamp_min_.Tensor", "clamp_max_",
                                  "clamp_max.Tensor"])
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    entry = native_entries()[name]
    out_kernel = dispatcher.find(entry["structured_delegate"]).table[DispatchKey.CPU][0].fn
    derived = dispatcher.find(name).table[DispatchKey.CPU][0].fn
    assert derived.__wrapped__ is out_kernel.meta
    assert derived.__module__ == binary_ops.__name__



def _x(L):
    return L.tensor([[-2., 0.5, float("nan")], [3., -0.25, 1.]]).t()


OUT_CASES = {
    "number bounds, resized": lambda L: L.clamp(_x(L), -1, 1, out=L.empty(0)),
    "resized, warns": lambda L: L.clamp(_x(L), min=0, out=L.empty(2)),
    "out's strides kept": lambda L: L.clamp(_x(L), max=0.3, out=L.empty(2, 3).t()),
    "integers by a float bound": lambda L: L.clamp(L.tensor([-3, 1, 9]), 0.5, 6.5, out=L.empty(0)),
    "tensor bounds broadcast": lambda L: L.clamp(_x(L), L.tensor([0., -1.]), L.tensor(0.75), out=L.empty(0)),
    "tensor bound into a wider out": lambda L: L.clamp(_x(L), min=L.zeros(2), out=L.empty(0, dtype=L.float64)),
    "clamp_min by a number": lambda L: L.clamp_min(L.tensor([-3, 1, 9]), 2, out=L.empty(0, dtype=L.int64)),
    "clamp_min by a tensor": lambda L: L.clamp_min(_x(L), L.tensor([0., 2.]), out=L.empty(0)),
    "clamp_max by a number": lambda L: L.clamp_max(_x(L), 0., out=L.empty(0)),
    "clamp_max of integers by a tensor of floats": lambda L: L.clamp_max(L.tensor([-3, 1, 9]), L.tensor([0.5]),
                                                                       out=L.empty(0)),
    "bools by one tensor bound": lambda L: L.clamp(L.tensor([True, False]), min=L.tensor(True),
                                                   out=L.empty(0, dtype=L.bool)),
    "out is self": lambda L: (lambda x: L.clamp(x, 0, 1, out=x))(_x(L)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


ERROR_CASES = {
    "no bounds": lambda L: L.clamp(L.ones(2), out=L.empty(2)),
    "complex input": lambda L: L.clamp(L.tensor([1j]), 0, 1),
    "complex bound of clamp_min": lambda L: L.clamp_min(L.ones(2), 1j),
    "complex tensor bound of clamp_min": lambda L: L.clamp_min(L.ones(2), L.tensor([1j])),
    "complex input of clamp_max by a tensor": lambda L: L.tensor([1j]).clamp_max(L.ones(1)),
    "number bounds keep the dtype": lambda L: L.clamp(L.ones(2), 0, 1, out=L.empty(2, dtype=L.float64)),
    "float bound in place on integers": lambda L: L.tensor([1, 2]).clamp_(0.5, 1.5),
    "float bound of clamp_min_ in place": lambda L: L.tensor([1]).clamp_min_(0.5),
    "tensor bounds cannot cast down": lambda L: L.clamp(L.ones(2), L.zeros(2), out=L.empty(2, dtype=L.int64)),
    "bools by number bounds": lambda L: L.tensor([True]).clamp_min(True),
    "bools by two tensor bounds": lambda L: L.tensor([True]).clamp(L.tensor(False), L.tensor(True)),
    "bound out of the dtype's range": lambda L: L.tensor([1], dtype=L.uint8).clamp(0, 300),
    "partial overlap": lambda L: (lambda x: L.clamp(x[:4], 0, 1, out=x[1:5]))(L.arange(6.)),
    "in place on a broadcast shape": lambda L: L.ones(1, 3).expand(2, 3).clamp_(0, 1),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


def test_functional_and_in_place_forms_match_torch():
    def forms(L):
        x = _x(L)
        return [x.clamp(-1, 1), x.clamp(min=0.), x.clone().clamp_(max=0.), x.clamp(L.zeros(2), L.ones(3, 1, 1)),
                x.clone().clamp_(min=L.zeros(2)), x.clamp_min(0.), x.clone().clamp_min_(L.zeros(1)), x.clamp_max(0.),
                x.clone().clamp_max_(0.), x.clamp_max(L.ones(2, dtype=L.float64)), L.tensor([-3, 7]).clamp(0.5, 6.5),
                L.tensor([-3, 7], dtype=L.int8).clamp_(-2, 2), x.clip(0., 1.), L.nn.functional.hardtanh(x),
                L.nn.functional.relu6(x)]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)


def test_gradients_match_torch():
    def grads(L):
        x = L.tensor([-2., 0.5, 3.], requires_grad=True)
        lo = L.tensor([0., 1., 0.], requires_grad=True)
        y = x.clamp(-1, 1) + x.clamp_min(0.2) + x.clamp_max(lo) + x.clamp(min=lo)
        y.backward(L.arange(1., 4.))
        return x.grad, lo.grad, type(y.grad_fn.next_functions[0][0].next_functions[0][0]).__name__
    (ours_x, ours_lo, our_node), (theirs_x, theirs_lo, their_node) = grads(internals), grads(torch)
    assert_same(ours_x, theirs_x)
    assert_same(ours_lo, theirs_lo)
    assert our_node == their_node


@pytest.mark.parametrize("program", [lambda L, x: x.t().clamp(0, 1), lambda L, x: x.clamp_(max=2.),
                                     lambda L, x: L.clamp(x, L.zeros(3), out=L.empty(0, dtype=L.float64))])
def test_fake_tensors_get_the_real_kernels_metadata(program):
    assert_fake_matches_real(program)
