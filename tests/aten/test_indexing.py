"""Operators of ``aten/native/indexing.py`` that torch 2.13 declares structured, declared so here:
``gather`` and ``scatter_add`` (``TensorAdvancedIndexing.cpp``). ``gather.out`` is primary (a
meta step that lays out the output of index's shape, refuses overlaps and checks the index; an
impl step that writes each element at the output's own strides), ``gather`` derived;
``scatter_add.out`` likewise (self copied into the output, then src added), ``scatter_add`` and
``scatter_add_`` derived. Values, layouts of fresh, kept and resized outputs, warnings, errors and
fake tensors against torch's. (OpInfo samples and gradients: ``test_shape_and_indexing_ops.py``.)
"""
import pytest
from helpers import (
    assert_derived_from_structured_out,
    assert_fake_matches_real,
    assert_out_variant_matches_torch,
    native_entries,
    same_error,
)

from internals.aten.native import indexing


def test_gather_is_declared_structured_as_torch_declares_it():
    assert_derived_from_structured_out("gather", "out", indexing)


def _x(L):
    return L.arange(12.).reshape(3, 4)


def _index(L):
    return L.tensor([[2, 0], [1, 1]])


GATHER_CASES = {
    "a transposed input": lambda L: L.gather(_x(L).t(), 1, _index(L)),
    "a transposed index: a contiguous result": lambda L: L.gather(_x(L), 1, _index(L).t()),
    "into an empty out": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(0)),
    "resized, warns": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(5)),
    "kept strides": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(2, 2).t()),
    "an int32 index along dim 0": lambda L: L.gather(_x(L), 0, L.tensor([[0, 2, 1, 0]], dtype=L.int32)),
    "an empty index of any dtype": lambda L: L.gather(_x(L), 1, L.empty(0, 2)),
    "out beside the index in one storage": lambda L: (lambda i: L.gather(
        L.arange(12).reshape(3, 4), 1, i[:, :1], out=i[:, 1:]))(L.tensor([[0, 1], [1, 2]])),
}


@pytest.mark.parametrize("case", GATHER_CASES)
def test_gather_matches_torch(case):
    assert_out_variant_matches_torch(GATHER_CASES[case])


GATHER_ERRORS = {
    "an out of another dtype": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(0, dtype=L.int64)),
    "an int16 index": lambda L: L.gather(_x(L), 1, _index(L).short()),
    "an index out of bounds": lambda L: L.gather(_x(L), 1, L.tensor([[5, 0]])),
    "a dim out of range": lambda L: L.gather(_x(L), 3, _index(L)),
    "an index larger than self": lambda L: L.gather(_x(L), 0, L.tensor([[0, 1, 2, 3, 0]])),
    "out over the input": lambda L: (lambda x: L.gather(x, 1, L.tensor([[0, 1]]), out=x[0, :2].view(1, 2)))(_x(L)),
    "out with a stride of 0": lambda L: L.gather(_x(L), 1, _index(L), out=L.empty(2, 1).expand(2, 2)),
}


@pytest.mark.parametrize("case", GATHER_ERRORS)
def test_gather_errors_match_torch(case):
    same_error(GATHER_ERRORS[case])


FAKE_PROGRAMS = {
    "gather": lambda L, x: L.gather(x.t(), 1, L.tensor([[2, 0], [1, 1]]).t()),
    "gather out resized": lambda L, x: L.gather(x, 0, L.tensor([[0, 1, 2]]), out=L.empty(5)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_run_the_meta_step(program):
    assert_fake_matches_real(FAKE_PROGRAMS[program])


# ---- scatter_add: scatter_add.out primary; scatter_add and scatter_add_ derived
def test_scatter_add_is_declared_structured_as_torch_declares_it():
    assert_derived_from_structured_out("scatter_add", "out", indexing)
    assert native_entries()["scatter_add_"]["structured_delegate"] == "scatter_add.out"


def _self(L):
    return L.arange(15.).reshape(5, 3).t()


def _scatter_index(L):
    return L.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])


SCATTER_ADD_CASES = {
    "a transposed self: a contiguous result": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5)),
    "in place on a transposed self": lambda L: _self(L).scatter_add_(1, _scatter_index(L), L.ones(2, 5)),
    "into an empty out": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5), out=L.empty(0)),
    "kept strides": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5), out=L.empty(5, 3).t()),
    "resized, warns": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5), out=L.empty(4)),
    "repeated indices, integers": lambda L: L.scatter_add(L.arange(4), 0, L.tensor([0, 0, 3]), L.tensor([1, 2, 3])),
    "an empty index": lambda L: L.scatter_add(_self(L), 0, L.empty(0, dtype=L.int64), L.ones(2, 5)),
}


@pytest.mark.parametrize("case", SCATTER_ADD_CASES)
def test_scatter_add_matches_torch(case):
    assert_out_variant_matches_torch(SCATTER_ADD_CASES[case])


SCATTER_ADD_ERRORS = {
    "src of another dtype": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5, dtype=L.float64)),
    "an out of another dtype": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L), L.ones(2, 5),
                                                       out=L.empty(0, dtype=L.float64)),
    "in place from a part of self": lambda L: (lambda x: x.scatter_add_(0, L.tensor([0, 1]), x[2:]))(L.arange(4.)),
    "in place from an overlapping part": lambda L: (lambda x: x[:2].scatter_add_(0, L.tensor([0, 1]), x[1:3]))(
        L.arange(4.)),
    "a float index": lambda L: L.scatter_add(_self(L), 0, _scatter_index(L).float(), L.ones(2, 5)),
    "an index out of bounds": lambda L: L.scatter_add(_self(L), 0, L.tensor([[5]]), L.ones(2, 5)),
    "in place on a broadcast self": lambda L: L.ones(2, 1).expand(2, 3).scatter_add_(0, L.tensor([[0]]),
                                                                                     L.ones(1, 1)),
}


@pytest.mark.parametrize("case", SCATTER_ADD_ERRORS)
def test_scatter_add_errors_match_torch(case):
    same_error(SCATTER_ADD_ERRORS[case])


def test_scatter_add_fake_tensors_run_the_meta_step():
    index = [[0, 1, 2], [2, 0, 0]]
    assert_fake_matches_real(lambda L, x: L.scatter_add(x.t(), 1, L.tensor(index), x.t()))
    assert_fake_matches_real(lambda L, x: x.scatter_add_(0, L.tensor(index), x * 2))
    assert_fake_matches_real(lambda L, x: L.scatter_add(x, 0, L.tensor(index), x, out=L.empty(5)))
