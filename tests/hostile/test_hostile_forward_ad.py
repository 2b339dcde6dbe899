"""Hostile input to forward-mode AD: tangents of odd layouts (expanded, strided, offset), empty
and 0-dim duals, mixed dtypes, inf and nan values, ties, in-place writes on expanded views and
integer tensors. Each gives torch's tangent (layout included) or raises torch's class."""
import pytest
import torch

import internals
from tests.helpers import PRODUCT_ULPS, assert_same, assert_same_error

CASES = {
    "expanded_tangent": lambda L, fw: fw.make_dual(L.ones(2, 3), L.tensor([1., 2., 3.]).expand(2, 3)),
    "transposed_primal": lambda L, fw: fw.make_dual(L.arange(6.).reshape(2, 3).t(), L.ones(3, 2)),
    "offset_primal": lambda L, fw: fw.make_dual(L.arange(6.)[2:4], L.ones(2)),
    "offset_primal_op": lambda L, fw: fw.make_dual(L.arange(6.)[2:4], L.ones(2)) * 3,
    "expanded_primal": lambda L, fw: fw.make_dual(L.ones(3).expand(2, 3), L.arange(6.).reshape(2, 3)),
    "zero_size": lambda L, fw: fw.make_dual(L.ones(0, 3), L.ones(0, 3)).sum(0),
    "zero_dim": lambda L, fw: fw.make_dual(L.tensor(2.), L.tensor(3.)) ** 2,
    "float64_tangent": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2, dtype=L.float64)) * 2,
    "float16": lambda L, fw: fw.make_dual(L.ones(2, dtype=L.float16), L.ones(2, dtype=L.float16)) * 3,
    "integer_operand": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2)) + L.tensor([1, 2]),
    "bool_mask": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2))[L.tensor([True, False])],
    "empty_sum": lambda L, fw: fw.make_dual(L.ones(0), L.ones(0)).sum(),
    "empty_amax": lambda L, fw: fw.make_dual(L.ones(2, 0), L.ones(2, 0)).amax(0),
    "nan_max": lambda L, fw: fw.make_dual(L.tensor([1., float("nan")]), L.ones(2)).max(),
    "max_ties": lambda L, fw: fw.make_dual(L.tensor([2., 2., 1.]), L.tensor([1., 3., 5.])).max(),
    "amax_ties": lambda L, fw: fw.make_dual(L.tensor([[2., 2., 1.]]), L.tensor([[1., 3., 5.]])).amax(1),
    # an input without a tangent is a zero that no inf or nan turns into nan (torch's ZeroTensor)
    "divide_by_zero": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2)) / L.tensor([0., 1.]),
    "inf_times_constant": lambda L, fw: fw.make_dual(L.tensor([float("inf"), 1.]), L.ones(2)) * 2,
    "constant_with_inf": lambda L, fw: L.tensor([float("inf"), 1.]) * fw.make_dual(L.ones(2), L.ones(2)),
    "mm_with_inf": lambda L, fw: fw.make_dual(L.ones(2, 2), L.ones(2, 2)).mm(L.tensor([[float("inf"), 1.], [1., 1.]])),
    "add_nan_constant": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2)) + L.tensor([float("nan"), 1.]),
    "sqrt_at_zero": lambda L, fw: fw.make_dual(L.zeros(2), L.ones(2)).sqrt(),
    "norm_at_zero": lambda L, fw: fw.make_dual(L.zeros(3), L.ones(3)).norm(),
    "std_of_one": lambda L, fw: fw.make_dual(L.ones(1), L.ones(1)).std(),
    "prod_with_zero": lambda L, fw: fw.make_dual(L.tensor([0., 2., 3.]), L.ones(3)).prod(),
    "prod_with_two_zeros": lambda L, fw: fw.make_dual(L.tensor([0., 0., 3.]), L.ones(3)).prod(),
    "logsumexp_all_minus_inf": lambda L, fw: fw.make_dual(L.full((2,), float("-inf")), L.ones(2)).logsumexp(0),
    "softmax_empty": lambda L, fw: L.softmax(fw.make_dual(L.ones(0, 2), L.ones(0, 2)), 0),
    "view_of_view": lambda L, fw: fw.make_dual(L.ones(2, 3), L.ones(2, 3))[:, 1:].t(),
    "write_expanded_view": lambda L, fw: L.zeros(3).expand(2, 3).add_(fw.make_dual(L.ones(2, 3), L.ones(2, 3))),
    "write_integer_tensor": lambda L, fw: L.zeros(2, dtype=L.int64).add_(fw.make_dual(L.ones(2), L.ones(2))),
    "cat_with_plain": lambda L, fw: L.cat([fw.make_dual(L.ones(2), L.ones(2)), L.zeros(1)]),
    "cat_with_integer": lambda L, fw: L.cat([fw.make_dual(L.ones(2), L.ones(2)), L.zeros(1, dtype=L.int64)]),
    "to_integer": lambda L, fw: fw.make_dual(L.tensor([1.5, 2.5]), L.ones(2)).to(L.int64),
    "round_to_integer": lambda L, fw: fw.make_dual(L.tensor([1.5, 2.5]), L.ones(2)).round().to(L.int32),
    "to_complex": lambda L, fw: fw.make_dual(L.tensor([1.5, 2.5]), L.ones(2)).to(L.complex64),
    # a zero tangent takes part in type promotion
    "float32_dual_plus_float64": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2)) + L.ones(2, dtype=L.float64),
    "float64_minus_float32_dual": lambda L, fw: L.ones(2, dtype=L.float64) - fw.make_dual(L.ones(2), L.ones(2)),
    "float32_dual_plus_float64_scalar": lambda L, fw: fw.make_dual(L.ones(2), L.ones(2)) + L.tensor(2.,
                                                                                                   dtype=L.float64),
    "addcmul_float64_constants": lambda L, fw: L.addcmul(fw.make_dual(L.ones(2), L.ones(2)), L.ones(2, dtype=L.float64),
                                                         L.ones(2, dtype=L.float64)),
    "addmm_bias_only": lambda L, fw: L.addmm(fw.make_dual(L.ones(3), L.arange(3.)), L.ones(2, 4), L.ones(4, 3)),
    "where_of_duals": lambda L, fw: L.where(L.tensor([True, False]), fw.make_dual(L.ones(2), L.ones(2)),
                                            fw.make_dual(L.zeros(2), L.full((2,), 2.))),
}


def _tangent(lib, case):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        return fw.unpack_dual(case(lib, fw)).tangent


@pytest.mark.parametrize("name", CASES)
def test_hostile_dual_input_as_torch(name):
    try:
        theirs = _tangent(torch, CASES[name])
    except Exception:       # noqa: BLE001 - then internals must raise the same class
        assert_same_error(lambda: _tangent(internals, CASES[name]), lambda: _tangent(torch, CASES[name]))
        return
    ours = _tangent(internals, CASES[name])
    assert (ours is None) == (theirs is None)
    if theirs is not None:
        assert_same(ours, theirs, ulps=PRODUCT_ULPS)
