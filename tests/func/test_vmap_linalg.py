"""Linear algebra under ``torch.func`` against torch's: the solvers and factorizations whose
composites check LAPACK's info codes (``_linalg_check_errors``, with vmap's rule naming a failed
matrix by its place in the batch), gradients through them inside vmap, matrix_exp's gradient
over a batch, ``argwhere``, and forward mode through the losses torch gives no forward formula."""
import pytest
import torch
from helpers import assert_same, assert_same_tree, assert_within_ulps_of_largest, outcome, torch_on_one_thread

import internals


def _inputs(lib):
    """A batch of 3 symmetric positive-definite 4 x 4 matrices, right-hand sides, and a batch
    whose second matrix is singular (and not positive-definite)."""
    g = lib.Generator().manual_seed(0)
    m = lib.randn(3, 4, 4, generator=g, dtype=lib.float64)
    spd = m @ m.mT + 4 * lib.eye(4, dtype=lib.float64)
    singular = spd.clone()
    singular[1] = 0
    return {"A": spd, "b": lib.randn(3, 4, generator=g, dtype=lib.float64), "S": singular,
            "x": lib.randn(3, 5, generator=g, dtype=lib.float64)}


def _check(program, ulps=8):
    """``program(lib, inputs)`` in both libraries: same structure, shapes, dtypes, and values
    within ``ulps`` of the largest (LAPACK's rounding follows the CPU)."""
    def compare(o, t):
        if t.dtype.is_floating_point:
            assert_within_ulps_of_largest(o, t, ulps, exact_layout=False)
        else:
            assert_same(o, t, exact_layout=False)
    with torch_on_one_thread():
        theirs = program(torch, _inputs(torch))
    assert_same_tree(program(internals, _inputs(internals)), theirs, compare)


VALUES = {
    "solve": lambda lib, d: lib.func.vmap(lib.linalg.solve)(d["A"], d["b"]),
    "solve_unbatched_A": lambda lib, d: lib.func.vmap(lib.linalg.solve, in_dims=(None, 0))(d["A"][0], d["b"]),
    "cholesky": lambda lib, d: lib.func.vmap(lib.linalg.cholesky)(d["A"]),
    "cholesky_upper": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.cholesky(a, upper=True))(d["A"]),
    "lu_factor": lambda lib, d: tuple(lib.func.vmap(lib.linalg.lu_factor)(d["A"])),
    "cholesky_solve": lambda lib, d: lib.func.vmap(lib.cholesky_solve)(
        d["b"].unsqueeze(-1), lib.linalg.cholesky(d["A"])),
    "grad_det": lambda lib, d: lib.func.grad(lib.linalg.det)(d["A"][0]),
    "grad_inv_ex": lambda lib, d: lib.func.grad(lambda a: lib.linalg.inv_ex(a)[0].sum())(d["A"][0]),
    "vmap_grad_det": lambda lib, d: lib.func.vmap(lib.func.grad(lib.linalg.det))(d["A"]),
    "vmap_grad_solve": lambda lib, d: lib.func.vmap(lib.func.grad(lambda a, b: lib.linalg.solve(a, b).sum()))(
        d["A"], d["b"]),
    "vmap_grad_matrix_exp": lambda lib, d: lib.func.vmap(lib.func.grad(lambda a: lib.linalg.matrix_exp(a).sum()))(
        d["A"] / 8),
    # torch's batched key meets argwhere whole (a composite without a batching rule or a
    # decomposition): its fallback runs each example, and equal counts stack
    "argwhere": lambda lib, d: lib.func.vmap(lib.argwhere)(d["b"]),
    "argwhere_method_out_dim_1": lambda lib, d: lib.func.vmap(lambda a: (a > 0).argwhere(), out_dims=1)(
        d["b"].abs()),
    "argwhere_in_dim_1_nested": lambda lib, d: lib.func.vmap(lib.func.vmap(lib.argwhere), in_dims=1)(d["A"] + 1),
    "inv_ex_unchecked_info": lambda lib, d: lib.func.vmap(lib.linalg.inv_ex)(d["S"]).info,
    "cholesky_inverse": lambda lib, d: lib.func.vmap(lib.cholesky_inverse)(lib.linalg.cholesky(d["A"])),
    "argwhere_of_scalars": lambda lib, d: lib.func.vmap(lib.argwhere)(d["b"][:, 0]),
    "index_by_argwhere": lambda lib, d: lib.func.vmap(lambda a: a[lib.argwhere(a > -9)[:, 0]].sum())(d["b"]),
}


@pytest.mark.parametrize("name", VALUES)
def test_values_match_torch(name):
    _check(VALUES[name])


ERRORS = {
    "solve_singular": lambda lib, d: lib.func.vmap(lib.linalg.solve)(d["S"], d["b"]),
    "cholesky_not_positive_definite": lambda lib, d: lib.func.vmap(lib.linalg.cholesky)(d["S"] - 1),
    "lu_factor_zero_pivot": lambda lib, d: lib.func.vmap(lib.linalg.lu_factor)(d["S"]),
    "solve_one_singular_matrix": lambda lib, d: lib.linalg.solve(d["S"][1], d["b"][1]),
    "cholesky_one_matrix": lambda lib, d: lib.linalg.cholesky(d["S"][1] - 1),
    "lu_factor_one_matrix": lambda lib, d: lib.linalg.lu_factor(d["S"][1]),
    "solve_batch_not_vmapped": lambda lib, d: lib.linalg.solve(d["S"], d["b"]),
    "cholesky_vector": lambda lib, d: lib.func.vmap(lib.linalg.cholesky)(d["b"]),
    "jvp_multi_margin_loss": lambda lib, d: lib.func.jvp(
        lambda a: lib.nn.functional.multi_margin_loss(a, lib.tensor([0, 1, 2])), (d["x"],), (d["x"],)),
    "jvp_multilabel_margin_loss": lambda lib, d: lib.func.jvp(
        lambda a: lib.nn.functional.multilabel_margin_loss(a, lib.tensor([[0, 1, -1, 0, 0]] * 3)),
        (d["x"],), (d["x"],)),
    "jvp_ctc_loss": lambda lib, d: lib.func.jvp(
        lambda a: lib.nn.functional.ctc_loss(a, lib.tensor([[1, 2], [1, 3], [2, 2]]), lib.tensor([4, 4, 4]),
                                             lib.tensor([2, 2, 2])),
        (d["A"].transpose(0, 1).log_softmax(2),), (d["A"].transpose(0, 1),)),
    # linalg.inv is inv_ex and a check of its info (an operator vmap's rule sees); the _ex kernels
    # asked to check run on the whole batch, then check it: a failed matrix named by its place
    "inv_singular": lambda lib, d: lib.func.vmap(lib.linalg.inv)(d["S"]),
    "inverse_singular": lambda lib, d: lib.func.vmap(lib.inverse)(d["S"]),
    "inv_batch_not_vmapped": lambda lib, d: lib.linalg.inv(d["S"]),
    "inv_one_matrix": lambda lib, d: lib.linalg.inv(d["S"][1]),
    "matrix_power_negative": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.matrix_power(a, -1))(d["S"]),
    "tensorinv": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.tensorinv(a, 1))(d["S"]),
    "grad_of_inv": lambda lib, d: lib.func.vmap(lib.func.grad(lambda a: lib.linalg.inv(a).sum()))(d["S"]),
    "inv_ex_checked": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.inv_ex(a, check_errors=True))(d["S"]),
    "inv_ex_checked_not_vmapped": lambda lib, d: lib.linalg.inv_ex(d["S"], check_errors=True),
    "inv_ex_checked_one_matrix": lambda lib, d: lib.linalg.inv_ex(d["S"][1], check_errors=True),
    "cholesky_ex_checked": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.cholesky_ex(a, check_errors=True))(
        d["S"] - 1),
    "lu_factor_ex_checked": lambda lib, d: lib.func.vmap(lambda a: lib.linalg.lu_factor_ex(a, check_errors=True))(
        d["S"]),
    "solve_ex_checked": lambda lib, d: lib.func.vmap(lambda a, b: lib.linalg.solve_ex(a, b, check_errors=True))(
        d["S"], d["b"]),
    "cholesky_inverse_singular": lambda lib, d: lib.func.vmap(lib.cholesky_inverse)(d["S"]),
    "argwhere_unequal_counts": lambda lib, d: lib.func.vmap(lib.argwhere)(lib.tensor([[1., 0, 2], [0, 3, 0]])),
    "argwhere_empty_batch": lambda lib, d: lib.func.vmap(lib.argwhere)(d["b"][:0]),
    "nonzero": lambda lib, d: lib.func.vmap(lib.nonzero)(d["b"]),
    "nonzero_as_tuple": lambda lib, d: lib.func.vmap(lambda a: lib.nonzero(a, as_tuple=True))(d["b"]),
    "nonzero_method_as_tuple": lambda lib, d: lib.func.vmap(lambda a: a.nonzero(as_tuple=True))(d["b"]),
    "where_condition_only": lambda lib, d: lib.func.vmap(lib.where)(d["b"]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    """torch's exception class and message, a failed matrix named by its place in vmap's batch."""
    ours = outcome(lambda lib: ERRORS[name](lib, _inputs(lib)), internals)
    theirs = outcome(lambda lib: ERRORS[name](lib, _inputs(lib)), torch)
    assert theirs[0] == "error" and ours == theirs
