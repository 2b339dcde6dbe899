"""Structured operators (``aten/native/binary_ops.py``, ``aten/native/structured.py``): one meta and
one impl step per operator, out= the primary kernel, the functional and in-place kernels derived
from it as torchgen derives them (``structured_delegate:`` in ``native_functions.yaml``).
"""

import importlib.util
from pathlib import Path

import pytest
import torch
from helpers import assert_fake_matches_real, assert_out_variant_matches_torch, assert_same, native_entries, same_error
from torchgen.model import FunctionSchema, SchemaKind

import internals
from internals.aten import dispatcher
from internals.aten.native import binary_ops
from internals.c10.dispatch_key import DispatchKey

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
ENTRIES = list(native_entries().values())
STRUCTURED = {name: e for name, e in native_entries().items() if e.get("structured")}
DELEGATES = [e for e in ENTRIES if "structured_delegate" in e]
FAMILY = ("add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge", "pow", "remainder", "fmod", "atan2",
          "copysign", "xlogy", "hypot", "logaddexp", "maximum", "fmax", "heaviside", "bitwise_and",
          "bitwise_left_shift")


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


def test_each_family_is_declared_structured():
    declared = {str(FunctionSchema.parse(e["func"]).name.name.base) for e in STRUCTURED.values()}
    assert set(FAMILY) <= declared


@pytest.mark.parametrize("name", ["add.Tensor", "add_.Tensor", "eq.Scalar", "div.Tensor", "pow.Tensor_Scalar",
                                  "pow_.Tensor", "div_.Tensor_mode", "remainder.Tensor", "atan2_", "maximum",
                                  "bitwise_xor_.Tensor", "eq_.Scalar", "lt_.Tensor", "ge_.Scalar"])
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    delegate = next(e["structured_delegate"] for e in DELEGATES if e["func"].startswith(name + "("))
    out_kernel = _cpu_kernel(delegate)
    derived = _cpu_kernel(name)
    assert derived.__wrapped__ is out_kernel.meta
    assert derived.__module__ == binary_ops.__name__
    assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl is not None



OUT_CASES = {
    "resized, warns": lambda L: L.add(L.tensor([1., 2.]), L.tensor([3., 4.]), alpha=2, out=L.empty(3)),
    "resized from empty": lambda L: L.sub(L.ones(2, 3).t(), L.arange(2.), out=L.empty(0)),
    "cast to a wider out": lambda L: L.mul(L.tensor([1, 2]), L.tensor([3, 4]), out=L.empty(2)),
    "kept strides": lambda L: L.add(L.ones(2, 3), L.ones(2, 3), out=L.empty(3, 2).t()),
    "integers divide as floats": lambda L: L.div(L.tensor([1, 2]), L.tensor([3, 4]), out=L.empty(0)),
    "comparison into float": lambda L: L.lt(L.tensor([1, 5]), L.tensor([[2], [3]]), out=L.empty(0)),
    "comparison with a number": lambda L: L.ge(L.tensor([1, 5]), 3, out=L.empty(0, dtype=L.bool)),
    "comparison of an input that requires grad": lambda L: L.le(L.ones(2, requires_grad=True), 1, out=L.empty(2)),
    "comparison into a wrong-sized out": lambda L: L.eq(L.tensor([1, 5]), L.tensor([1, 2]),
                                                        out=L.empty(3, dtype=L.bool)),
    "float16 alpha": lambda L: L.add(L.tensor([1., 2.], dtype=L.float16), L.ones(2, dtype=L.float16),
                                     alpha=1.1, out=L.empty(0, dtype=L.float16)),
    "out is self": lambda L: (lambda x: L.add(x, 1, out=x))(L.arange(4.)),
    "x ** 0 fills a wider out": lambda L: L.pow(L.tensor([2, 3]), 0, out=L.empty(0, dtype=L.float64)),
    "x ** 1 copies": lambda L: L.pow(L.tensor([[2., 3.]]), 1, out=L.empty(2, 1).t()),
    "number ** tensor": lambda L: L.pow(2, L.tensor([1, 2, 3]), out=L.empty(0)),
    "integer powers": lambda L: L.pow(L.tensor([2, -3]), L.tensor([3, 2]), out=L.empty(2, dtype=L.int32)[:0]),
    "float32 ** a double": lambda L: L.pow(L.linspace(0.5, 3., 70).reshape(7, 10), 0.1, out=L.empty(10, 7).t()),
    "rounded division": lambda L: L.div(L.tensor([-7, 7]), L.tensor([2, -2]), rounding_mode="floor", out=L.empty(0)),
    "remainder of floats": lambda L: L.remainder(L.tensor([-7.5, 7.]), L.tensor([2., -2.]), out=L.empty(0)),
    "fmod of integers": lambda L: L.fmod(L.tensor([-7, 7]), L.tensor([2, -3]), out=L.empty(0, dtype=L.int64)),
    "atan2 of integers": lambda L: L.atan2(L.tensor([1, -1]), L.tensor([[2], [0]]), out=L.empty(0)),
    "maximum broadcast": lambda L: L.maximum(L.tensor([1., float("nan")]), L.tensor([[0.], [2.]]), out=L.empty(0)),
    "fmax of integers": lambda L: L.fmax(L.tensor([1, 5]), L.tensor([3, 2]), out=L.empty(0, dtype=L.int64)),
    "bitwise into wider": lambda L: L.bitwise_xor(L.tensor([5, 3], dtype=L.int8), L.tensor([1, 1], dtype=L.int8),
                                                  out=L.empty(0, dtype=L.int64)),
    "shift": lambda L: L.bitwise_left_shift(L.tensor([1, 2]), L.tensor([3, 4]), out=L.empty(0, dtype=L.int64)),
}


@pytest.mark.parametrize("case", OUT_CASES)
def test_out_variant_matches_torch(case):
    assert_out_variant_matches_torch(OUT_CASES[case])


ERROR_CASES = {
    "unsafe cast": lambda L: L.add(L.tensor([1.]), L.tensor([2.]), out=L.empty(1, dtype=L.int64)),
    "partial overlap": lambda L: (lambda x: L.add(x[:4], x[2:], out=x[1:5]))(L.arange(6.)),
    "in place cannot broadcast": lambda L: L.tensor([1., 2.]).add_(L.ones(2, 1)),
    "in place cannot cast": lambda L: L.tensor([1, 2]).div_(L.tensor([2, 2])),
    "bool subtraction": lambda L: L.sub(L.tensor([True]), L.tensor([False]), out=L.empty(0, dtype=L.bool)),
    "float alpha on integers": lambda L: L.add(L.tensor([1]), L.tensor([1]), alpha=0.5, out=L.empty(0)),
    "complex order": lambda L: L.le(L.tensor([1j]), L.tensor([2j]), out=L.empty(0, dtype=L.bool)),
    "bool pow": lambda L: L.pow(L.tensor([True]), L.tensor([True]), out=L.empty(0, dtype=L.bool)),
    "negative integer power": lambda L: L.pow(L.tensor([2]), -1, out=L.empty(0, dtype=L.int64)),
    "integer division by zero": lambda L: L.remainder(L.tensor([1]), L.tensor([0]), out=L.empty(0, dtype=L.int64)),
    "unknown rounding mode": lambda L: L.div(L.tensor([1.]), L.tensor([2.]), rounding_mode="up", out=L.empty(0)),
    "in place atan2 cannot cast": lambda L: L.tensor([1.]).atan2_(L.tensor([1j])),
    "hypot of integers": lambda L: L.hypot(L.tensor([3]), L.tensor([4]), out=L.empty(0)),
    "maximum of complex": lambda L: L.maximum(L.tensor([1j]), L.tensor([2j]), out=L.empty(0, dtype=L.complex64)),
    "fmax of complex": lambda L: L.fmax(L.tensor([1j]), L.tensor([2j]), out=L.empty(0, dtype=L.complex64)),
    "bitwise of floats": lambda L: L.bitwise_and(L.tensor([1.]), L.tensor([2.]), out=L.empty(0)),
    "shift of bools": lambda L: L.tensor([True]).bitwise_left_shift_(L.tensor([True])),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case):
    same_error(ERROR_CASES[case])


COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def test_in_place_comparisons_delegate_as_torchs_do():
    """``eq_.Scalar`` and the rest run their out= kernel with ``self`` as ``out`` (torch's
    ``structured_delegate: eq.Scalar_out``): the comparison's result cast into self's dtype."""
    entries = native_entries()
    for name in COMPARISONS:
        for overload in ("Scalar", "Tensor"):
            assert entries[f"{name}_.{overload}"]["structured_delegate"] == f"{name}.{overload}_out"


@pytest.mark.parametrize("name", COMPARISONS)
def test_in_place_comparisons_match_torch(name):
    def forms(L):
        x, y = L.tensor([[1., 2., 3.], [3., 2., 1.]]).t(), L.tensor([2., 1.])
        compare = getattr(x.clone(), name + "_")
        return [compare(2), getattr(x.clone(), name + "_")(y), getattr(L.tensor([1, 2, 3]), name + "_")(2.5),
                getattr(L.tensor([True, False]), name + "_")(L.tensor([1, 0])),
                getattr(L.tensor([1., 2.], dtype=L.float16), name + "_")(L.tensor(2, dtype=L.int64))]
    for ours, theirs in zip(forms(internals), forms(torch), strict=True):
        assert_same(ours, theirs)


IN_PLACE_COMPARISON_ERRORS = {
    "cannot broadcast self": lambda L: L.tensor([1., 2.]).lt_(L.ones(2, 2)),
    "complex order": lambda L: L.tensor([1j]).ge_(1),
    "leaf that requires grad": lambda L: L.ones(2, requires_grad=True).eq_(1),
    "partial overlap": lambda L: (lambda x: x[1:3].ne_(x[:2]))(L.arange(4.)),
}


@pytest.mark.parametrize("case", IN_PLACE_COMPARISON_ERRORS)
def test_in_place_comparison_errors_match_torch(case):
    same_error(IN_PLACE_COMPARISON_ERRORS[case])


@pytest.mark.parametrize("name", COMPARISONS)
def test_in_place_comparison_nodes_and_zero_gradients_match_torch(name):
    def run(L):
        x, y = L.tensor([1., 2., 3.], requires_grad=True), L.tensor([2.], requires_grad=True)
        by_number, by_tensor = getattr(x * 1, name + "_")(1.5), getattr(x * 1, name + "_")(y)
        (by_number.sum() + by_tensor.sum()).backward()
        return [by_number.grad_fn.name(), by_tensor.grad_fn.name()], [by_number, by_tensor, x.grad, y.grad]
    (our_nodes, ours), (their_nodes, theirs) = run(internals), run(torch)
    node = name.title() + "Backward"
    assert our_nodes == their_nodes == [node + "0", node + "1"]
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o.detach(), t.detach())


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
    "pow by a number": lambda L, x, y: L.pow(x, 3),
    "pow by zero": lambda L, x, y: x.pow_(0),
    "rounded division out": lambda L, x, y: L.div(x, y, rounding_mode="trunc", out=L.empty(0)),
    "maximum": lambda L, x, y: L.maximum(x.t(), y[:, None]),
}


@pytest.mark.parametrize("program", FAKE_PROGRAMS)
def test_fake_tensors_get_the_real_kernels_metadata(program):
    """The meta step alone runs on fake tensors (no loop), and lays the output out as the real one."""
    assert_fake_matches_real(FAKE_PROGRAMS[program],
                             lambda: (internals.arange(12.).reshape(4, 3), internals.ones(3)))


def _parity_script():
    spec = importlib.util.spec_from_file_location("structured_parity", SCRIPTS / "structured_parity.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_operator_torch_structures_is_structured_here_or_says_why():
    """Each operator declared both here and in torch's YAML is declared the same way
    (``structured: True``, ``structured_delegate:`` or neither), or the YAML says why not, in a
    ``# not structured here:`` line above its entry; and no such line outlives its mismatch."""
    parity = _parity_script()
    mismatches, explained = parity.mismatches(), parity.explanations()
    assert sorted(set(mismatches) - set(explained)) == [], "structured in torch, not here, and no reason given"
    assert sorted(set(explained) - set(mismatches)) == [], "a reason given for an operator declared as torch's"


def test_the_parity_check_catches_a_new_mismatch(tmp_path):
    """An operator torch structures, declared here with a kernel of its own, is a mismatch."""
    parity = _parity_script()
    entry = "- func: upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor\n"
    ours = tmp_path / "native_functions.yaml"
    ours.write_text(entry + "  dispatch:\n    CPU: upsample_nearest1d\n")
    assert parity.mismatches(ours) == {"upsample_nearest1d": ("delegate", "-")}
    assert parity.explanations(ours) == {}
    ours.write_text("# not structured here: for the test\n" + entry + "  dispatch:\n    CPU: upsample_nearest1d\n")
    assert parity.explanations(ours) == {"upsample_nearest1d": "for the test"}
