"""Structured operators (``aten/native/binary_ops.py``, ``aten/native/structured.py``): one meta and
one impl step per operator, out= the primary kernel, the functional and in-place kernels derived
from it as torchgen derives them (``structured_delegate:`` in ``native_functions.yaml``).
"""
import warnings

import pytest
import torch
import yaml
from helpers import assert_same
from torchgen.model import FunctionSchema, SchemaKind

import internals
from internals._subclasses.fake_tensor import FakeTensorMode
from internals.aten import dispatcher
from internals.aten.native import binary_ops
from internals.aten.register_native_functions import NATIVE_FUNCTIONS
from internals.c10.dispatch_key import DispatchKey

ENTRIES = yaml.safe_load(NATIVE_FUNCTIONS.read_text())
STRUCTURED = {str(FunctionSchema.parse(e["func"]).name): e for e in ENTRIES if e.get("structured")}
DELEGATES = [e for e in ENTRIES if "structured_delegate" in e]
FAMILY = ("add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge")


def test_every_delegate_names_a_structured_out_entry_of_its_own_signature():
    assert len(DELEGATES) >= 2 * len(FAMILY)
    for entry in DELEGATES:
        out = STRUCTURED[entry["structured_delegate"]]
        schema, out_schema = FunctionSchema.parse(entry["func"]), FunctionSchema.parse(out["func"])
        assert out_schema.kind() == SchemaKind.out
        assert schema.signature() == out_schema.signature(), entry["func"]


def test_out_rules_are_only_on_out_entries():
    ruled = [e for e in ENTRIES if "out_rules" in e]
    assert ruled
    for entry in ruled:
        assert FunctionSchema.parse(entry["func"]).kind() == SchemaKind.out, entry["func"]


def _cpu_kernel(name):
    return dispatcher.find(name).table[DispatchKey.CPU][0].fn


@pytest.mark.parametrize("name", ["add.Tensor", "add_.Tensor", "eq.Scalar", "div.Tensor"])
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    delegate = next(e["structured_delegate"] for e in DELEGATES if e["func"].startswith(name + "("))
    out_kernel = _cpu_kernel(delegate)
    derived = _cpu_kernel(name)
    assert derived.__wrapped__ is out_kernel.meta
    assert derived.__module__ == binary_ops.__name__
    assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl is not None


def _both(fn):
    """fn(lib) for torch and internals, with the warnings each raised."""
    results = []
    for lib in (torch, internals):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append((fn(lib), [w.category for w in caught]))
    return results


OUT_CASES = {
    "resized, warns": lambda L: L.add(L.tensor([1., 2.]), L.tensor([3., 4.]), alpha=2, out=L.empty(3)),
    "resized from empty": lambda L: L.sub(L.ones(2, 3).t(), L.arange(2.), out=L.empty(0)),
    "cast to a wider out": lambda L: L.mul(L.tensor([1, 2]), L.tensor([3, 4]), out=L.empty(2)),
    "kept strides": lambda L: L.add(L.ones(2, 3), L.ones(2, 3), out=L.empty(3, 2).t()),
    "integers divide as floats": lambda L: L.div(L.tensor([1, 2]), L.tensor([3, 4]), out=L.empty(0)),
    "comparison into float": lambda L: L.lt(L.tensor([1, 5]), L.tensor([[2], [3]]), out=L.empty(0)),
    "comparison with a number": lambda L: L.ge(L.tensor([1, 5]), 3, out=L.empty(0, dtype=L.bool)),
    "float16 alpha": lambda L: L.add(L.tensor([1., 2.], dtype=L.float16), L.ones(2, dtype=L.float16),
                                     alpha=1.1, out=L.empty(0, dtype=L.float16)),
    "out is self": lambda L: (lambda x: L.add(x, 1, out=x))(L.arange(4.)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    (theirs, their_warnings), (ours, our_warnings) = _both(OUT_CASES[case])
    assert_same(ours, theirs)
    assert our_warnings == their_warnings


ERROR_CASES = {
    "unsafe cast": lambda L: L.add(L.tensor([1.]), L.tensor([2.]), out=L.empty(1, dtype=L.int64)),
    "partial overlap": lambda L: (lambda x: L.add(x[:4], x[2:], out=x[1:5]))(L.arange(6.)),
    "in place cannot broadcast": lambda L: L.tensor([1., 2.]).add_(L.ones(2, 1)),
    "in place cannot cast": lambda L: L.tensor([1, 2]).div_(L.tensor([2, 2])),
    "bool subtraction": lambda L: L.sub(L.tensor([True]), L.tensor([False]), out=L.empty(0, dtype=L.bool)),
    "float alpha on integers": lambda L: L.add(L.tensor([1]), L.tensor([1]), alpha=0.5, out=L.empty(0)),
    "complex order": lambda L: L.le(L.tensor([1j]), L.tensor([2j]), out=L.empty(0, dtype=L.bool)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    fn = ERROR_CASES[case]
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(internals)
    assert str(ours.value) == str(theirs.value)


def test_functional_and_in_place_forms_match_torch():
    def forms(L):
        x, y = L.arange(6.).reshape(2, 3), L.tensor([1., -2., 3.])
        return [x.sub(y, alpha=3), x.clone().mul_(y), x == y, x.div(2), x.clone().add_(y, alpha=0.5)]
    for ours, theirs in zip(forms(internals), forms(torch)):
        assert_same(ours, theirs)


FAKE_PROGRAMS = {
    "functional": lambda L, x, y: L.add(x, y, alpha=2),
    "in place": lambda L, x, y: x.mul_(y),
    "out resized": lambda L, x, y: L.sub(x, y, out=L.empty(0)),
    "out kept": lambda L, x, y: L.div(x, y, out=L.empty(3, 4).t()),
    "comparison out": lambda L, x, y: L.gt(x, y, out=L.empty(0, dtype=L.bool)),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    """The meta step alone runs on fake tensors (no loop), and lays the output out as the real one."""
    def operands():
        return internals.arange(12.).reshape(4, 3), internals.ones(3)
    real = FAKE_PROGRAMS[program](internals, *operands())
    with FakeTensorMode() as mode:
        fake = FAKE_PROGRAMS[program](internals, *(mode.from_tensor(t) for t in operands()))
    assert (fake.shape, fake.stride(), fake.dtype) == (real.shape, real.stride(), real.dtype)
