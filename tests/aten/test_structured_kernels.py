"""Structured operators (``aten/native/binary_ops.py``, ``aten/native/structured.py``): one meta and
one impl step per operator, out= the primary kernel, the functional and in-place kernels derived
from it as torchgen derives them (``structured_delegate:`` in ``native_functions.yaml``). Then the
same for the BLAS products (``mm``, ``bmm``, ``addmm``, ``addmv``, ``baddbmm``), ``cat``,
``index.Tensor``, ``sort.stable`` and the vector norms (``linalg_vector_norm``, ``norm.ScalarOpt_dim``
and its overloads with a dtype): OpInfo's samples written into empty outs, out= results with their
layouts and resize warnings, the in-place and dtype refusals, and fake tensors laid out by the meta step.
"""

import importlib.util
from pathlib import Path

import pytest
import torch
from helpers import (
    MATMUL_TOL,
    Adapter,
    assert_fake_matches_real,
    assert_ops_out_resized_with_torchs_warning,
    assert_out_variant_matches_torch,
    assert_same,
    both_with_warnings,
    check_opinfo_samples,
    compare_gradients_and_nodes,
    compare_into_empty_outs,
    native_entries,
    opinfo_cases,
    same_error,
)
from torchgen.model import FunctionSchema, SchemaKind

import internals
from internals._subclasses.fake_tensor import FakeTensorMode
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


# =============================================================================================
# The products (mm, bmm, addmm, addmv, baddbmm), cat, index.Tensor, sort.stable and the vector
# norms (linalg_vector_norm, norm.ScalarOpt_dim and its overloads with a dtype) declared as torch
# declares them (aten/native/blas.py, linear_algebra.py, tensor_shape.py, indexing.py, sorting.py,
# reduce_ops_math.py): OpInfo's samples written into empty outs, out= results with their layouts
# and resize warnings, the in-place and dtype refusals, and fake tensors laid out by the meta step
# =============================================================================================
"""The BLAS products (``mm``, ``bmm``, ``addmm``, ``addmv``, ``baddbmm``), ``cat``, ``index.Tensor``,
``sort.stable`` and the vector norms (``linalg_vector_norm``, ``norm.ScalarOpt_dim`` and its
overloads with a dtype, ``norm.ScalarOpt_dim_dtype`` and ``norm.ScalarOpt_dtype``) declared as
torch declares them (``aten/native/blas.py``, ``linear_algebra.py``, ``tensor_shape.py``,
``indexing.py``, ``sorting.py``, ``reduce_ops_math.py``): an out= kernel with a meta and an impl
step, the functional and in-place kernels derived from it. Compared with torch: the derived
kernels' steps, OpInfo's samples written into empty outs, out= results with their layouts and
resize warnings, the in-place and dtype refusals, and fake tensors laid out by the meta step.
"""


DERIVED = {
    "mm": "mm.out", "bmm": "bmm.out", "addmm": "addmm.out", "addmm_": "addmm.out", "addmv": "addmv.out",
    "addmv_": "addmv.out", "baddbmm": "baddbmm.out", "baddbmm_": "baddbmm.out", "cat": "cat.out",
    "index.Tensor": "index.Tensor_out", "sort.stable": "sort.values_stable",
    "linalg_vector_norm": "linalg_vector_norm.out", "norm.ScalarOpt_dim": "norm.out",
    "norm.ScalarOpt_dim_dtype": "norm.dtype_out",
}


def _adapter(ours, kwargs=(), tol=None):
    return Adapter(ours, kwargs=kwargs, tol=tol)


ADAPTERS = {name: _adapter(getattr(internals, name), ("beta", "alpha"), MATMUL_TOL)
            for name in ("mm", "bmm", "addmm", "addmv", "baddbmm")}


ADAPTERS["cat"] = _adapter(internals.cat, ("dim",))


ADAPTERS["sort"] = _adapter(internals.sort, ("dim", "descending", "stable"))


ADAPTERS["linalg.vector_norm"] = _adapter(internals.linalg.vector_norm, ("ord", "dim", "keepdim", "dtype"),
                                          {torch.float32: (1.3e-6, 1e-5)})


@pytest.mark.parametrize("name, dtype", opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.int64)))
def test_opinfo_samples_into_out(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], compare=compare_into_empty_outs)


PRODUCT_OUT_CASES = {
    "mm, kept column-major out": lambda L: L.mm(L.arange(4.).reshape(2, 2), L.arange(6.).reshape(2, 3),
                                                out=L.empty(3, 2).t()),
    "mm, out at an offset": lambda L: L.mm(L.arange(4.).reshape(2, 2), L.arange(6.).reshape(2, 3),
                                           out=L.empty(10)[2:8].view(2, 3)),
    "mm, resized": lambda L: L.mm(L.arange(4.).reshape(2, 2), L.arange(6.).reshape(2, 3), out=L.empty(7)),
    "mm of empty bools": lambda L: L.mm(L.ones(2, 0, dtype=L.bool), L.ones(0, 2, dtype=L.bool)),
    "bmm, kept strides": lambda L: L.bmm(L.arange(8.).reshape(2, 2, 2), L.ones(2, 2, 3),
                                         out=L.empty(3, 2, 2).transpose(0, 2)),
    "bmm of integers": lambda L: L.bmm(L.arange(8).reshape(2, 2, 2), L.ones(2, 2, 3, dtype=L.int64),
                                       out=L.empty(0, dtype=L.int64)),
    "addmm, kept strides": lambda L: L.addmm(L.arange(2.), L.arange(6.).reshape(2, 3), L.arange(6.).reshape(3, 2),
                                             beta=2, alpha=3, out=L.empty(3, 3).t()),
    "addmm, beta 0": lambda L: L.addmm(L.full((2,), float("nan")), L.arange(6.).reshape(2, 3),
                                       L.arange(6.).reshape(3, 2), beta=0, alpha=3, out=L.empty(0)),
    "addmm of float16, resized": lambda L: L.addmm(L.arange(2., dtype=L.float16),
                                                   L.arange(6., dtype=L.float16).reshape(2, 3),
                                                   L.arange(6., dtype=L.float16).reshape(3, 2), beta=2, alpha=3,
                                                   out=L.empty(5, dtype=L.float16)),
    "addmm of integers": lambda L: L.addmm(L.arange(2), L.arange(6).reshape(2, 3), L.arange(6).reshape(3, 2),
                                           beta=2, alpha=3, out=L.empty(0, dtype=L.int64)),
    "addmm_": lambda L: L.arange(4.).reshape(2, 2).addmm_(L.ones(2, 3), L.ones(3, 2), alpha=2),
    "addmv, strided out": lambda L: L.addmv(L.ones(1), L.arange(4.).reshape(2, 2), L.ones(2), beta=2,
                                            out=L.ones(4)[::2]),
    "addmv, resized": lambda L: L.addmv(L.ones(2), L.ones(2, 2), L.ones(2), out=L.ones(3)),
    "addmv of integers, float scalars": lambda L: L.addmv(L.ones(2, dtype=L.long), L.ones(2, 2, dtype=L.long),
                                                          L.ones(2, dtype=L.long), beta=0.5, alpha=1.7),
    "addmv of empty bools": lambda L: L.addmv(L.ones(0, dtype=L.bool), L.ones(0, 2, dtype=L.bool),
                                              L.ones(2, dtype=L.bool)),
    "mv into out": lambda L: L.mv(L.ones(2, 2), L.ones(2), out=L.empty(0)),
    "baddbmm, kept strides": lambda L: L.baddbmm(L.ones(2, 1, 2), L.arange(8.).reshape(2, 2, 2), L.ones(2, 2, 2),
                                                 beta=3, out=L.ones(2, 2, 2).transpose(0, 2)),
    "baddbmm, resized": lambda L: L.baddbmm(L.ones(2), L.arange(8.).reshape(2, 2, 2), L.ones(2, 2, 2),
                                            out=L.empty(1)),
    "baddbmm of integers, a float alpha": lambda L: L.baddbmm(*(L.ones(2, 2, 2, dtype=L.long),) * 3, alpha=0.5),
    "cat into a wider out": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], -1, out=L.empty(0, dtype=L.float64)),
    "cat, kept strides": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], 1, out=L.empty(4, 2).t()),
    "cat, resized": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], 1, out=L.empty(9)),
    "cat of skipped empties": lambda L: L.cat([L.empty(0), L.empty(0)], out=L.empty(3)),
    "cat channels-last into out": lambda L: L.cat([L.ones(2, 3, 4, 5).to(memory_format=L.channels_last)] * 2, 1,
                                                  out=L.empty(0)),
    "cat channels-last with an empty vector": lambda L: L.cat(
        [L.ones(2, 3, 4, 5).to(memory_format=L.channels_last), L.empty(0)], 1),
    "stack into out": lambda L: L.stack([L.ones(2), L.zeros(2)], out=L.empty(0)),
    # cat's aliases and the stacks take out= as torch's do, through cat.out's rules
    "concat into out": lambda L: L.concat([L.ones(2, 3), L.zeros(2, 1)], 1, out=L.empty(0)),
    "concatenate into a wider out": lambda L: L.concatenate([L.ones(2), L.zeros(3)], out=L.empty(0, dtype=L.float64)),
    "hstack, resized": lambda L: L.hstack([L.ones(2), L.arange(3.)], out=L.empty(9)),
    "hstack of matrices, kept strides": lambda L: L.hstack([L.ones(2, 3), L.zeros(2, 1)], out=L.empty(4, 2).t()),
    "vstack into out": lambda L: L.vstack([L.arange(3.), L.ones(2, 3)], out=L.empty(0)),
    "row_stack into out": lambda L: L.row_stack([L.arange(3), L.ones(1, 3, dtype=L.long)],
                                                out=L.empty(0, dtype=L.long)),
    "dstack into out": lambda L: L.dstack([L.ones(2, 3), L.arange(6.).reshape(2, 3)], out=L.empty(0)),
    "column_stack into a wider out": lambda L: L.column_stack([L.arange(2.), L.ones(2, 2)],
                                                              out=L.empty(0, dtype=L.float64)),
    "index, kept strides": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3), [None, L.tensor([1, 0])],
                                                                 out=L.empty(2, 2).t()),
    "vector_norm into out": lambda L: L.linalg.vector_norm(L.tensor([[3., 4.], [1., 0.]]), 2, 1, True,
                                                           out=L.empty(5)),
    "vector_norm of a dtype": lambda L: L.linalg.vector_norm(L.tensor([[3., 4.], [1., 0.]]), 0.5, (0, 1),
                                                             dtype=L.float64, out=L.empty(2, 2, dtype=L.float64).t()),
    "vector_norm over an empty dim": lambda L: L.linalg.vector_norm(L.empty(0, 3), -1, 1),
    "torch.norm into out": lambda L: L.norm(L.tensor([[3., 4.], [1., 0.]]), 2, 0, out=L.empty(0)),
    # norm's overloads with a dtype: computed in it (linalg_vector_norm.out with the dtype)
    "norm.dtype_out": lambda L: L.ops.aten.norm.dtype_out(L.tensor([[3., 4.], [1., 0.]]), 1, [0], True,
                                                          dtype=L.float64, out=L.empty(0, dtype=L.float64)),
    "norm.dtype_out, kept strides": lambda L: L.ops.aten.norm.dtype_out(
        L.arange(8.).reshape(2, 2, 2), 3, [1], False, dtype=L.float64, out=L.empty(2, 2, dtype=L.float64).t()),
    "norm.ScalarOpt_dim_dtype": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.tensor([[3., 4.], [1., 0.]]), None,
                                                                              [1], False, dtype=L.float64),
    "Tensor.norm with a dim and a dtype": lambda L: L.tensor([[3., 4.], [1., 0.]]).norm(float("inf"), [0], False,
                                                                                       dtype=L.float64),
    "norm.ScalarOpt_dtype": lambda L: L.ops.aten.norm.ScalarOpt_dtype(L.tensor([[3., 4.], [1., 0.]]), 0.5,
                                                                      dtype=L.float64),
    "norm.ScalarOpt_dtype, p None": lambda L: L.ops.aten.norm.ScalarOpt_dtype(L.arange(6.).reshape(2, 3), None,
                                                                              dtype=L.float32),
}


SORT_CASES = {
    "sort.stable": lambda L: tuple(L.sort(L.tensor([3., 1., 2., 1.]), stable=True,
                                          out=(L.empty(0), L.empty(0, dtype=L.long)))),
    "sort.stable, kept strides": lambda L: tuple(L.sort(L.tensor([[3., 1.], [2., 0.]]), stable=False, out=(
        L.empty(2, 2).t(), L.empty(2, 2, dtype=L.int64)))),
    "sort.stable, resized": lambda L: tuple(L.sort(L.tensor([3, 1, 2]), stable=True, descending=True,
                                                   out=(L.empty(5, dtype=L.int64), L.empty(3, dtype=L.int64)))),
    "sort.stable of a strided input": lambda L: tuple(L.sort(L.arange(12.).reshape(3, 4)[:, ::2], stable=True)),
    "sort.stable of a 0-dim": lambda L: tuple(L.sort(L.tensor(3.), stable=True)),
}


@pytest.mark.parametrize("case", SORT_CASES)
def test_sort_stable_into_out_matches_torch(case):
    """Both outputs, values and indices, with their layouts, and the same warnings."""
    (theirs, their_warnings), (ours, our_warnings) = both_with_warnings(SORT_CASES[case])
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t)
    assert our_warnings == their_warnings


OPS_OUT_CASES = {
    "index, resized": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3), [None, L.tensor([1, 0])],
                                                            out=L.empty(3, 2).t()),
    "index with a mask, resized": lambda L: L.ops.aten.index.Tensor_out(
        L.arange(6.).reshape(2, 3), [L.tensor([True, False])], out=L.empty(2)),
    "norm.out, resized": lambda L: L.ops.aten.norm.out(L.tensor([[3., 4.], [1., 0.]]), None, [0], True,
                                                       out=L.empty(3)),
}


@pytest.mark.parametrize("case", OPS_OUT_CASES)
def test_ops_out_variant_matches_torch(case, capfd):
    assert_ops_out_resized_with_torchs_warning(OPS_OUT_CASES[case], capfd)


PRODUCT_ERROR_CASES = {
    "mm out of another dtype": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2), out=L.ones(2, 2, dtype=L.double)),
    "bmm of two dtypes": lambda L: L.bmm(L.ones(2, 2, 2), L.ones(2, 2, 2, dtype=L.double)),
    "addmm: self's dtype before mat1's dims": lambda L: L.addmm(L.ones(2, 2, dtype=L.double), L.ones(2),
                                                                L.ones(2, 2)),
    "addmm of mat1's dtype": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 2, dtype=L.double), L.ones(2, 2)),
    "addmm_ into a smaller self": lambda L: L.ones(2, 1).addmm_(L.ones(2, 2), L.ones(2, 2)),
    "addmm_ of another dtype": lambda L: L.ones(2, 2, dtype=L.long).addmm_(L.ones(2, 3), L.ones(3, 2)),
    "addmm out of another dtype": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 2), L.ones(2, 2),
                                                    out=L.ones(2, 2, dtype=L.double)),
    "addmv of two dtypes": lambda L: L.addmv(L.ones(2, dtype=L.double), L.ones(2, 2), L.ones(2)),
    "addmv_ into a one-element self": lambda L: L.ones(1).addmv_(L.ones(2, 2), L.ones(2)),
    "addmv of bools": lambda L: L.addmv(L.ones(2, dtype=L.bool), L.ones(2, 2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "mv of two dtypes": lambda L: L.mv(L.ones(2, 2), L.ones(2, dtype=L.double)),
    "baddbmm of self's dtype": lambda L: L.baddbmm(L.ones(2, 2, 2, dtype=L.double), L.ones(2, 2, 2), L.ones(2, 2, 2)),
    "baddbmm of a self that cannot broadcast": lambda L: L.baddbmm(L.ones(3, 2, 2), L.ones(2, 2, 2), L.ones(2, 2, 2)),
    "baddbmm_ into a smaller self": lambda L: L.ones(2, 1, 2).baddbmm_(L.ones(2, 2, 2), L.ones(2, 2, 2)),
    "baddbmm out of another dtype": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 2), L.ones(2, 2, 2),
                                                        out=L.ones(2, 2, 2, dtype=L.double)),
    "cat into a narrower out": lambda L: L.cat([L.ones(2, 3), L.zeros(2, 1)], -1, out=L.empty(0, dtype=L.int64)),
    "cat into an input": lambda L: (lambda x: L.cat([x, x], out=x))(L.ones(2)),
    "cat into an out that overlaps itself": lambda L: L.cat([L.ones(2)], out=L.ones(1).expand(2)),
    "hstack into a narrower out": lambda L: L.hstack([L.ones(2), L.zeros(1)], out=L.empty(0, dtype=L.int64)),
    "vstack into its inputs' base": lambda L: (lambda x: L.vstack([x[:1], x[1:]], out=x))(L.ones(2, 2)),
    "concat into an out that overlaps itself": lambda L: L.concat([L.ones(2)], out=L.ones(1).expand(2)),
    "dstack of no tensors into out": lambda L: L.dstack([], out=L.empty(0)),
    "index out of another dtype": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3), [L.tensor([1, 0])],
                                                                        out=L.empty(0, dtype=L.double)),
    "index into an out that overlaps itself": lambda L: L.ops.aten.index.Tensor_out(
        L.arange(6.).reshape(2, 3), [L.tensor([1, 0])], out=L.empty(1).expand(2, 3)),
    "index into its index": lambda L: (lambda i: L.ops.aten.index.Tensor_out(L.arange(6.), [i], out=i))(
        L.tensor([1, 0])),
    "index with too many indices": lambda L: L.ops.aten.index.Tensor_out(L.arange(6.).reshape(2, 3),
                                                                         [L.tensor([1, 0])] * 3, out=L.empty(0)),
    "sort.stable out of another dtype": lambda L: L.sort(L.tensor([3, 1, 2]), stable=True, out=(
        L.empty(3), L.empty(3, dtype=L.int64))),
    "sort.stable indices of another dtype": lambda L: L.sort(L.tensor([3, 1, 2]), stable=True, out=(
        L.empty(3, dtype=L.int64), L.empty(3, dtype=L.int32))),
    "sort.stable into its input, transposed": lambda L: (lambda x: L.sort(x, stable=True, dim=0, out=(
        x.t(), L.empty(0, dtype=L.int64))))(L.tensor([[3., 1.], [2., 0.]])),
    "vector_norm out of another dtype": lambda L: L.linalg.vector_norm(L.ones(2), out=L.empty(0, dtype=L.double)),
    "vector_norm narrowing dtype": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.half),
    "vector_norm integral dtype": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.int64),
    "vector_norm complex dtype of a real input": lambda L: L.linalg.vector_norm(L.ones(2), dtype=L.complex64),
    "vector_norm inf of an empty tensor": lambda L: L.linalg.vector_norm(L.empty(0, 3), float("inf")),
    "vector_norm -1 over an empty dim": lambda L: L.linalg.vector_norm(L.empty(0, 3), -1, 0),
    "vector_norm -1.5 over an empty dim": lambda L: L.linalg.vector_norm(L.empty(0, 3), -1.5, [1, 0]),
    "norm of integers": lambda L: L.ops.aten.norm.ScalarOpt_dim(L.ones(2, dtype=L.long), 2, [0]),
    "norm.out of complex into complex": lambda L: L.ops.aten.norm.out(L.ones(2, dtype=L.complex64), 2, [0],
                                                                      out=L.empty(0, dtype=L.complex64)),
    "norm of an integral dtype": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.ones(2), 2, [0], False,
                                                                               dtype=L.int64),
    "norm of a complex dtype (its output made in it)": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(
        L.tensor([[3 + 4j, 1j], [1, 0]]), 2, [0, 1], True, dtype=L.complex128),
    "norm.dtype_out of a complex dtype": lambda L: L.ops.aten.norm.dtype_out(
        L.tensor([3 + 4j, 1j]), 2, [0], False, dtype=L.complex128, out=L.empty(0, dtype=L.complex128)),
    "norm of a real dtype for a complex input": lambda L: L.ops.aten.norm.ScalarOpt_dtype(
        L.tensor([3 + 4j, 1j]), 2, dtype=L.float64),
    "norm of a narrowing dtype": lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.ones(2), 2, [0], False,
                                                                               dtype=L.half),
    "norm of integers, a float dtype": lambda L: L.ops.aten.norm.ScalarOpt_dtype(L.ones(2, dtype=L.long), 2,
                                                                                dtype=L.float32),
    "norm.dtype_out of another dtype": lambda L: L.ops.aten.norm.dtype_out(L.ones(2), 2, [0], False, dtype=L.double,
                                                                           out=L.empty(0)),
}


def _operands():
    return (internals.arange(12.).reshape(4, 3), internals.ones(3, 2), internals.ones(2, 4, 3))


PRODUCT_FAKE_PROGRAMS = {
    "mm": lambda L, x, y, b: L.mm(x, y),
    "mm into out": lambda L, x, y, b: L.mm(x, y, out=L.empty(2, 4).t()),
    "addmm": lambda L, x, y, b: L.addmm(y[0], x, y),
    "addmv": lambda L, x, y, b: L.addmv(x[:, 0], x, y[:, 0]),
    "bmm": lambda L, x, y, b: L.bmm(b, b.transpose(1, 2)),
    "baddbmm_": lambda L, x, y, b: L.ones(2, 4, 4).baddbmm_(b, b.transpose(1, 2)),
    "cat": lambda L, x, y, b: L.cat([x, b[0]], 1),
    "sort.stable": lambda L, x, y, b: L.sort(x.t(), stable=True, dim=0),
    "vector_norm": lambda L, x, y, b: L.linalg.vector_norm(x, 3, 0, True),
    "norm": lambda L, x, y, b: x.norm(2, 1),
    "norm with a dtype": lambda L, x, y, b: L.ops.aten.norm.ScalarOpt_dim_dtype(x.t(), 3, [1], True, dtype=L.float64),
}


NORM_GRADIENTS = {
    "norm.ScalarOpt_dim_dtype": lambda L, x, t: L.ops.aten.norm.ScalarOpt_dim_dtype(x * t, 3, [1], True,
                                                                                    dtype=L.float64),
    "norm.ScalarOpt_dtype": lambda L, x, t: L.ops.aten.norm.ScalarOpt_dtype(x * t, None, dtype=L.float64),
}


@pytest.mark.parametrize("case", NORM_GRADIENTS)
def test_norm_with_a_dtype_differentiates_as_torch(case):
    """Their nodes (NormBackward3, NormBackward2) and gradients, twice, as torch's."""
    compare_gradients_and_nodes(NORM_GRADIENTS[case])


# mm, addmm and bmm have no meta function of their own: a fake runs the structured meta step. It
# refuses what the real kernel refuses, with the real kernel's error (addmm's self that cannot be
# broadcast too, which the real kernel finds in its impl step).
FAKE_REFUSALS = {
    "mm of matrices that cannot be multiplied": lambda L, x, y, b: L.mm(x, x),
    "mm of a vector": lambda L, x, y, b: L.mm(x[0], y),
    "bmm of batches that cannot be multiplied": lambda L, x, y, b: L.bmm(b, b),
    "addmm of a self that cannot be broadcast": lambda L, x, y, b: L.addmm(L.ones(4), x, y),
    "addmm_ into a self of other sizes": lambda L, x, y, b: L.ones(4, 3).addmm_(x, y),
}


@pytest.mark.parametrize("case", FAKE_REFUSALS)
def test_fake_products_refuse_as_the_real_kernels(case):
    program = FAKE_REFUSALS[case]
    with pytest.raises(RuntimeError) as real:
        program(internals, *_operands())
    with FakeTensorMode() as mode, pytest.raises(RuntimeError) as fake:
        program(internals, *(mode.from_tensor(t) for t in _operands()))
    assert str(fake.value) == str(real.value)


# ---------------------------------------------------------------------------------------------
# The checks both groups share: derived kernels, out= forms, errors, fake tensors
# ---------------------------------------------------------------------------------------------
BINARY_DERIVED = ["add.Tensor", "add_.Tensor", "eq.Scalar", "div.Tensor", "pow.Tensor_Scalar", "pow_.Tensor",
                  "div_.Tensor_mode", "remainder.Tensor", "atan2_", "maximum", "bitwise_xor_.Tensor", "eq_.Scalar",
                  "lt_.Tensor", "ge_.Scalar"]


@pytest.mark.parametrize("name", BINARY_DERIVED + list(DERIVED))
def test_derived_kernels_run_the_declared_meta_and_impl(name):
    if name in DERIVED:         # the products, joins, sorts and norms
        entry = next(e for e in native_entries().values() if e["func"].startswith(name + "("))
        assert entry["structured_delegate"] == DERIVED[name]
        out_kernel = _cpu_kernel(DERIVED[name])
        assert _cpu_kernel(name).__wrapped__ is out_kernel.meta
        assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl.__name__.startswith("impl_")
        return
    delegate = next(e["structured_delegate"] for e in DELEGATES if e["func"].startswith(name + "("))
    out_kernel = _cpu_kernel(delegate)
    derived = _cpu_kernel(name)
    assert derived.__wrapped__ is out_kernel.meta
    assert derived.__module__ == binary_ops.__name__
    assert out_kernel.meta.__name__.startswith("meta_") and out_kernel.impl is not None


@pytest.mark.parametrize("case", {**OUT_CASES, **PRODUCT_OUT_CASES})
def test_out_variant_matches_torch(case):
    assert_out_variant_matches_torch({**OUT_CASES, **PRODUCT_OUT_CASES}[case])


@pytest.mark.parametrize("case", {**ERROR_CASES, **PRODUCT_ERROR_CASES})
def test_errors_match_torch(case):
    same_error({**ERROR_CASES, **PRODUCT_ERROR_CASES}[case])


@pytest.mark.parametrize("program", {**FAKE_PROGRAMS, **PRODUCT_FAKE_PROGRAMS})
def test_fake_tensors_get_the_real_kernels_metadata(program):
    """The meta step alone runs on fake tensors (no loop), and lays the output out as the real one."""
    if program in PRODUCT_FAKE_PROGRAMS:
        assert_fake_matches_real(PRODUCT_FAKE_PROGRAMS[program], _operands)
        return
    assert_fake_matches_real(FAKE_PROGRAMS[program],
                             lambda: (internals.arange(12.).reshape(4, 3), internals.ones(3)))
