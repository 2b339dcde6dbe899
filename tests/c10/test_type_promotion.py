"""Type promotion: internals' promote_types, result_type and can_cast against torch's.

The rules (``c10/core/ScalarType.cpp``, ``aten/src/ATen/native/TypeProperties.cpp``): categories
bool < integer < floating; operands fall in three priority groups, dimensioned tensors >
zero-dim tensors > Python scalars, and a lower group changes the result only when it is of a
higher category. In place, the result type must be castable to the written tensor's dtype.
"""
import itertools

import pytest
import torch
from helpers import DTYPE_PAIRS, TO_INTERNALS, assert_same
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

import internals

DTYPES = [theirs for _, theirs in DTYPE_PAIRS]          # torch dtypes; TO_INTERNALS maps them
DTYPE_PAIRS_100 = [pytest.param(a, b, id=f"{str(a)[6:]}-{str(b)[6:]}") for a, b in itertools.product(DTYPES, DTYPES)]
SCALARS = [True, 3, 2.5]                                  # one Python scalar of each kind


def short(d):
    return str(d).replace("torch.", "")


def dimensioned(dtype):
    """A dimensioned tensor (shape (2,)) in both libraries."""
    t = torch.tensor([1, 0]).to(dtype)
    return t, internals.from_torch(t)


def zero_dim(dtype):
    """A zero-dim tensor in both libraries."""
    t = torch.tensor(1).to(dtype)
    return t, internals.from_torch(t)


# ---------------------------------------------------------------------------------- promote_types

@pytest.mark.parametrize("a, b", DTYPE_PAIRS_100)
def test_promote_types(a, b):
    assert internals.promote_types(TO_INTERNALS[a], TO_INTERNALS[b]) is TO_INTERNALS[torch.promote_types(a, b)]


def test_promote_types_table_is_symmetric_and_idempotent():
    for a, b in itertools.product(DTYPES, DTYPES):
        ours_a, ours_b = TO_INTERNALS[a], TO_INTERNALS[b]
        assert internals.promote_types(ours_a, ours_b) is internals.promote_types(ours_b, ours_a)
    for d in DTYPES:
        assert internals.promote_types(TO_INTERNALS[d], TO_INTERNALS[d]) is TO_INTERNALS[d]


# ---------------------------------------------------------------------------------- can_cast

@pytest.mark.parametrize("a, b", DTYPE_PAIRS_100)
def test_can_cast(a, b):
    assert internals.can_cast(TO_INTERNALS[a], TO_INTERNALS[b]) == torch.can_cast(a, b)


# ---------------------------------------------------------------------------------- result_type

def _operands(kind, dtype_or_scalar):
    """(torch operand, internals operand) of a priority group."""
    if kind == "dim":
        return dimensioned(dtype_or_scalar)
    if kind == "zero":
        return zero_dim(dtype_or_scalar)
    return dtype_or_scalar, dtype_or_scalar


def _group_cases():
    """Every pair of operands from two different priority groups (and two of the same), both orders."""
    values = {"dim": DTYPES, "zero": DTYPES, "scalar": SCALARS}
    for k1, k2 in [("dim", "zero"), ("dim", "scalar"), ("zero", "scalar"), ("dim", "dim"), ("zero", "zero")]:
        for v1, v2 in itertools.product(values[k1], values[k2]):
            yield pytest.param(k1, v1, k2, v2, id=f"{k1}:{short(v1)}-{k2}:{short(v2)}")
            if k1 != k2:
                yield pytest.param(k2, v2, k1, v1, id=f"{k2}:{short(v2)}-{k1}:{short(v1)}")


GROUP_CASES = list(_group_cases())


@pytest.mark.parametrize("k1, v1, k2, v2", GROUP_CASES)
def test_result_type_of_two_operands(k1, v1, k2, v2):
    (t1, o1), (t2, o2) = _operands(k1, v1), _operands(k2, v2)
    assert internals.result_type(o1, o2) is TO_INTERNALS[torch.result_type(t1, t2)]


@pytest.mark.parametrize("k1, v1, k2, v2", [c for c in GROUP_CASES if c.values[0] != "scalar"])
def test_add_result_dtype_follows_result_type(k1, v1, k2, v2):
    """``x + y`` has the dtype result_type gives, and the same values (first operand a tensor)."""
    (t1, o1), (t2, o2) = _operands(k1, v1), _operands(k2, v2)
    assert_same(o1 + o2, t1 + t2)


@pytest.mark.parametrize("scalar", SCALARS, ids=short)
@pytest.mark.parametrize("dtype", DTYPES, ids=short)
def test_scalar_on_the_left(scalar, dtype):
    """``scalar + x`` and ``scalar * x`` (the reflected operators) promote as ``x + scalar``."""
    for make in (dimensioned, zero_dim):
        t, o = make(dtype)
        assert_same(scalar + o, scalar + t)
        assert_same(scalar * o, scalar * t)


@pytest.mark.parametrize("dim_dtype, zero_dtype", DTYPE_PAIRS_100)
def test_result_type_of_three_priority_groups(dim_dtype, zero_dtype):
    """A dimensioned tensor, a zero-dim tensor and a Python scalar of each kind, at once.

    torch.result_type takes two operands; torch's Python reference for n operands
    (``torch._prims_common.elementwise_dtypes``) applies the same rules to all three.
    """
    (t1, o1), (t2, o2) = dimensioned(dim_dtype), zero_dim(zero_dtype)
    for scalar in SCALARS:
        _, expected = elementwise_dtypes(t1, t2, scalar, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
        assert internals.result_type(o1, o2, scalar) is TO_INTERNALS[expected], (dim_dtype, zero_dtype, scalar)
        # and the same through two ops: (x + zero) + scalar follows pairwise promotion
        assert_same((o1 + o2) + scalar, (t1 + t2) + scalar)


def test_result_type_of_two_python_scalars():
    for a, b in itertools.product(SCALARS, SCALARS):
        assert internals.result_type(a, b) is TO_INTERNALS[torch.result_type(a, b)], (a, b)


def test_python_float_follows_the_default_dtype():
    """A Python float counts as the default dtype: float64 after set_default_dtype(float64)."""
    t, o = dimensioned(torch.int32)
    before = torch.get_default_dtype()
    assert internals.get_default_dtype() is TO_INTERNALS[before]
    try:
        torch.set_default_dtype(torch.float64)
        internals.set_default_dtype(internals.float64)
        assert internals.result_type(o, 2.5) is internals.float64 is TO_INTERNALS[torch.result_type(t, 2.5)]
        assert_same(o + 2.5, t + 2.5)
        assert_same(o / 2, t / 2)                 # true division of integers: the default dtype
    finally:
        torch.set_default_dtype(before)
        internals.set_default_dtype(TO_INTERNALS[before])
    assert internals.result_type(o, 2.5) is internals.float32


# ---------------------------------------------------------------------------------- REFERENCE.md

def vec(lib, name):
    """A dimensioned tensor [1, 2] of dtype ``name`` in ``lib`` (torch or internals)."""
    return lib.tensor([1, 2], dtype=getattr(lib, name))


# (expression, the same with lib = torch or internals, dtype REFERENCE.md gives): its examples.
REFERENCE_EXAMPLES = [
    ("int32 + 5", lambda lib: vec(lib, "int32") + 5, torch.int32),
    ("int32 + 5.5", lambda lib: vec(lib, "int32") + 5.5, torch.float32),
    ("int32 / 5", lambda lib: vec(lib, "int32") / 5, torch.float32),
    ("int32 + tensor(1)", lambda lib: vec(lib, "int32") + lib.tensor(1), torch.int32),
    ("int32 + tensor(1., dtype=float64)", lambda lib: vec(lib, "int32") + lib.tensor(1., dtype=lib.float64),
     torch.float64),
    ("float32 + zero-dim float64", lambda lib: vec(lib, "float32") + lib.tensor(1., dtype=lib.float64), torch.float32),
    ("uint8 + int8", lambda lib: vec(lib, "uint8") + vec(lib, "int8"), torch.int16),
    ("float16 + bfloat16", lambda lib: vec(lib, "float16") + vec(lib, "bfloat16"), torch.float32),
    ("int64 + float32", lambda lib: vec(lib, "int64") + vec(lib, "float32"), torch.float32),
    ("float16 + 2.0", lambda lib: vec(lib, "float16") + 2.0, torch.float16),
]


@pytest.mark.parametrize("expr, build, expected", REFERENCE_EXAMPLES, ids=[e[0] for e in REFERENCE_EXAMPLES])
def test_reference_examples(expr, build, expected):
    theirs = build(torch)
    assert theirs.dtype == expected, f"torch: {expr} -> {theirs.dtype}, REFERENCE.md says {expected}"
    assert_same(build(internals), theirs)


# ---------------------------------------------------------------------------------- in place

def test_inplace_does_not_widen():
    """REFERENCE.md: ``int32.add_(1.5)`` is refused: the float result cannot go back into int32."""
    message = "result type Float can't be cast to the desired output type Int"
    t, o = dimensioned(torch.int32)
    with pytest.raises(RuntimeError, match=message):
        t.add_(1.5)
    with pytest.raises(RuntimeError, match=message):
        o.add_(1.5)
    assert o._version == t._version == 0         # refused before writing: nothing changed
    assert_same(o, t)


def _inplace_others():
    for d in DTYPES:
        yield "dim", d
        yield "zero", d
    for s in SCALARS:
        yield "scalar", s


@pytest.mark.parametrize("op", ["add_", "mul_", "div_"])
@pytest.mark.parametrize("self_dtype", DTYPES, ids=short)
def test_inplace_castability_grid(op, self_dtype):
    """For every other operand: both write the same values, or both refuse with the same message."""
    for kind, value in _inplace_others():
        t_other, o_other = _operands(kind, value)
        t, o = dimensioned(self_dtype)
        try:
            expected = getattr(t, op)(t_other)
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as ours:
                getattr(o, op)(o_other)
            assert str(ours.value) == str(e), (op, self_dtype, kind, value)
            assert o._version == 0
            continue
        result = getattr(o, op)(o_other)
        assert result is o, "an in-place op returns self"
        assert_same(o, expected)
        assert o._version == t._version == 1, (op, self_dtype, kind, value)


def test_bool_inplace_rules():
    """bool self: a bool result is fine (add_ is a logical or), an integer or float one is not."""
    t = torch.tensor([True, False, False])
    o = internals.from_torch(t)
    assert_same(o.add_(internals.tensor([False, True, False])), t.add_(torch.tensor([False, True, False])))
    assert_same(o.mul_(True), t.mul_(True))
    assert_same(o.add_(True), t.add_(True))
    for other, name in [(1, "Long"), (1.5, "Float")]:
        with pytest.raises(RuntimeError, match=f"result type {name} can't be cast to the desired output type Bool"):
            o.add_(other)
        with pytest.raises(RuntimeError, match=f"result type {name} can't be cast to the desired output type Bool"):
            t.add_(other)
    for lib, x in ((torch, t), (internals, o)):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Bool"):
            x.div_(lib.tensor([True, True, True]))   # true division: float even for bools
        with pytest.raises(RuntimeError, match="result type Byte can't be cast to the desired output type Bool"):
            x.mul_(lib.tensor([1, 1, 1], dtype=lib.uint8))
    # Into an integer tensor, a bool operand is fine: it promotes to the integer type.
    ti = torch.tensor([1, 2, 3], dtype=torch.int8)
    oi = internals.from_torch(ti)
    assert_same(oi.add_(internals.tensor([True, False, True])), ti.add_(torch.tensor([True, False, True])))
    assert_same(oi.mul_(False), ti.mul_(False))
