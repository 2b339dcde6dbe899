"""``tril`` and ``triu`` (``aten/native/triangular_ops.py``), declared structured as torch 2.13
declares them: ``tril.out``/``triu.out`` primary (a meta step that checks the rank and lays the
output out, an impl step that writes every element), ``tril``/``tril_`` derived. Values, layouts
of fresh, kept and resized outputs, warnings, errors, fake tensors and nodes against torch's.
(OpInfo samples and gradients: ``test_shape_and_indexing_ops.py``.)
"""
import pytest
import torch
from helpers import (
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    assert_same,
    native_entries,
    same_error,
)

import internals
from internals.aten.native import triangular_ops


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_declared_structured_as_torch_declares_them(name):
    assert_derived_from_structured_out(name, "out", triangular_ops)
    assert native_entries()[name + "_"]["structured_delegate"] == name + ".out"


def _batch(L):
    """Two 3x4 matrices, each transposed in memory."""
    return L.arange(24.).reshape(2, 4, 3).transpose(1, 2)


OUT_CASES = {
    "fresh, contiguous from a transposed input": lambda L: L.triu(_batch(L), 1),
    "into an empty out": lambda L: L.tril(_batch(L), -1, out=L.empty(0)),
    "kept strides": lambda L: L.tril(L.arange(12.).reshape(3, 4), 0, out=L.empty(4, 3).t()),
    "resized, warns": lambda L: L.triu(L.arange(12).reshape(4, 3), 2, out=L.empty(5, dtype=L.int64)),
    "out at an offset": lambda L: L.tril(L.ones(3, 3), out=L.zeros(12)[3:].view(3, 3)),
    "in place on a transposed view": lambda L: L.arange(12.).reshape(4, 3).t().tril_(1),
    "in place, integers": lambda L: L.arange(12).reshape(4, 3).triu_(-1),
    "bool": lambda L: L.triu(L.tensor([[True, False], [True, True]])),
    "no elements": lambda L: L.tril(L.ones(0, 3), out=L.empty(0)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_and_in_place_match_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


ERRORS = {
    "a vector": lambda L: L.tril(L.ones(3)),
    "in place on a scalar": lambda L: L.tensor(1.).triu_(),
    "out of another dtype": lambda L: L.tril(L.ones(3, 3), out=L.empty(3, 3, dtype=L.float64)),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_match_torch(case):
    same_error(ERRORS[case])


FAKE_PROGRAMS = {
    "tril": lambda L, x: L.tril(x.t(), 1),
    "triu out resized": lambda L, x: L.triu(x, out=L.empty(0)),
    "tril_": lambda L, x: x.tril_(-1),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_run_the_meta_step(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_in_place_node_and_gradient_match_torch(name):
    def run(L):
        x = L.arange(1., 10.).reshape(3, 3).requires_grad_()
        y = getattr(x * 2, name + "_")(1)
        y.backward(L.ones(3, 3))
        return y.grad_fn.name(), y.detach(), x.grad
    (our_node, *ours), (their_node, *theirs) = run(internals), run(torch)
    assert our_node == their_node
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
