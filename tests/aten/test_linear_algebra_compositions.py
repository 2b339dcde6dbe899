"""torch.linalg's compositions (``LinearAlgebra.cpp``, CompositeImplicitAutograd): ``norm``,
``matrix_norm`` of a number or a string ord, ``vecdot``, ``matmul``, ``multi_dot``, ``diagonal``,
``vander``, ``tensorinv``, ``tensorsolve``, ``cond`` and ``matrix_rank``; and the deprecated
``chain_matmul`` (``multi_dot`` of matrices only).

PyTorch's OpInfo samples (as given and non-contiguous) at float32 (the norms' every other one).
Then everyday calls compared for values, layout, grad_fn names and error classes, and gradients
twice. Products and LAPACK round in another order than torch's MKL: values within a few hundred
epsilons.
"""
import warnings

import pytest
import torch
from helpers import Adapter, assert_same_error, check_opinfo_samples, compare_gradients_and_nodes, opinfo_cases

import internals

L = internals.linalg
TOL = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-11, 1e-12)}
NORM_KWARGS = ("ord", "dim", "keepdim", "dtype")
ADAPTERS = {
    "linalg.norm": Adapter(L.norm, kwargs=NORM_KWARGS, tol=TOL),
    "linalg.matrix_norm": Adapter(L.matrix_norm, kwargs=NORM_KWARGS, tol=TOL),
    "linalg.vecdot": Adapter(L.vecdot, kwargs=("dim",), tol=TOL),
    "linalg.multi_dot": Adapter(L.multi_dot, tol=TOL),
    "linalg.diagonal": Adapter(L.diagonal, kwargs=("offset", "dim1", "dim2")),
    "linalg.vander": Adapter(L.vander, kwargs=("N",), tol=TOL),
    "linalg.tensorinv": Adapter(L.tensorinv, kwargs=("ind",), tol=TOL),
    "linalg.tensorsolve": Adapter(L.tensorsolve, kwargs=("dims",), tol=TOL),
    "linalg.cond": Adapter(L.cond, kwargs=("p",), tol=TOL),
    "linalg.matrix_rank": Adapter(L.matrix_rank, kwargs=("hermitian", "atol", "rtol", "tol")),
    "linalg.matrix_rank.hermitian": Adapter(L.matrix_rank, kwargs=("hermitian", "atol", "rtol", "tol")),
}
# float32 only: float64 runs the same compositions over the same kernels, which their own tests
# sweep (the gradient tests below run in float64); the norms' many samples every other one.
CASES = opinfo_cases(ADAPTERS, (torch.float32,))
STEP = {"linalg.norm": 2, "linalg.matrix_norm": 2}


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], step=STEP.get(name, 1))


def test_matmul_is_matmul_under_the_linalg_name():
    """``matmul``'s samples (every third: the loops are matmul's own tests') through ``linalg.matmul``."""
    check_opinfo_samples("matmul", torch.float32, Adapter(L.matmul, tol=TOL), step=3)


A = "lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5], [0.5, -1.0, 2.0]], requires_grad=True)"
PROGRAMS = [
    f"lib.linalg.norm({A})", f"lib.linalg.norm({A}, 1)", f"lib.linalg.norm({A}, -1)", f"lib.linalg.norm({A}, 2)",
    f"lib.linalg.norm({A}, float('inf'), keepdim=True)", f"lib.linalg.norm({A}, 'nuc')",
    f"lib.linalg.norm({A}, 'fro', (1, 0))", f"lib.linalg.norm({A}, 3, 1)", f"lib.linalg.norm({A}, dim=(0, 1))",
    f"lib.linalg.norm({A}.reshape(1, 3, 3), -2, (1, 2), True)", f"lib.linalg.norm({A}[0].detach(), out=lib.empty(0))",
    f"lib.linalg.matrix_norm({A}, -float('inf'))", f"lib.linalg.matrix_norm({A}.expand(2, 3, 3), 1, (0, 2))",
    f"lib.linalg.matrix_norm({A}, 'nuc', keepdim=True)", f"lib.linalg.matrix_norm({A}, 2, dtype=lib.float64)",
    f"lib.linalg.vecdot({A}, {A}.t())", f"lib.linalg.vecdot({A}, {A}, dim=0)",
    "lib.linalg.vecdot(lib.tensor([1j, 2.0]), lib.tensor([1.0, 1j]))",
    f"lib.linalg.vander({A}[0])", "lib.linalg.vander(lib.tensor([2, 3]), N=4)",
    "lib.linalg.vander(lib.tensor(2.0), N=3)",
    f"lib.linalg.diagonal({A}, offset=1)", f"lib.linalg.diagonal({A}.expand(2, 3, 3), dim1=0, dim2=2)",
    f"lib.linalg.multi_dot([{A}, {A}])", f"lib.linalg.multi_dot([{A}[0], {A}, {A}[1]])",
    f"lib.linalg.multi_dot([{A}[:, :2], {A}[:2], {A}, {A}[:, :1]])", f"lib.linalg.multi_dot([{A}[0], {A}[1]])",
    f"lib.linalg.tensorinv({A}.reshape(3, 3), 1)", "lib.linalg.tensorinv(lib.eye(6).reshape(6, 2, 3), 1)",
    f"lib.linalg.tensorsolve({A}, {A}[0])", "lib.linalg.tensorsolve(lib.eye(6).reshape(2, 3, 6), lib.ones(2, 3))",
    "lib.linalg.tensorsolve(lib.eye(6).reshape(2, 3, 6), lib.ones(6), dims=(0, 1))",
    f"lib.linalg.cond({A})", f"lib.linalg.cond({A}, -2)", f"lib.linalg.cond({A}, 1)", f"lib.linalg.cond({A}, 'fro')",
    f"lib.linalg.cond({A}, -float('inf'))", f"lib.linalg.cond({A}, 'nuc')", f"lib.linalg.cond({A}[:2])",
    "lib.linalg.cond(lib.ones(2, 2), 1)", "lib.linalg.cond(lib.empty(2, 0, 0))",
    "lib.linalg.cond(lib.empty(0, 0), 'fro')",
    f"lib.linalg.matrix_rank({A})", f"lib.linalg.matrix_rank({A}, 0.5)",
    f"lib.linalg.matrix_rank({A}, lib.tensor(9.0))",
    f"lib.linalg.matrix_rank({A}, atol=1.0)", f"lib.linalg.matrix_rank({A}, rtol=0.5)",
    f"lib.linalg.matrix_rank({A}, atol=lib.tensor(0.1), rtol=lib.tensor(0.0))",
    f"lib.linalg.matrix_rank({A} @ {A}.mT, hermitian=True)", "lib.linalg.matrix_rank(lib.empty(2, 0, 3))",
    f"lib.linalg.matrix_rank({A}.detach().expand(2, 3, 3), out=lib.empty(0, dtype=lib.long))",
    f"lib.linalg.matmul({A}, {A}[0])", f"lib.linalg.matmul({A}.detach(), {A}.detach(), out=lib.empty(3, 3))",
    f"lib.chain_matmul({A})", f"lib.chain_matmul({A}.mT)", f"lib.chain_matmul({A}, {A}.mT)",
    f"lib.chain_matmul({A}[:, :2], {A}[:2], {A}, {A}[:, :1])", "lib.chain_matmul(lib.ones(2, 3, dtype=lib.long))",
    f"lib.chain_matmul({A}.detach(), {A}.detach(), out=lib.empty(0))",
    f"lib.chain_matmul({A}.detach()[:2], out=lib.empty(0, dtype=lib.float64))",
    f"lib.linalg.multi_dot([{A}[0].detach(), {A}.detach(), {A}[1].detach()], out=lib.empty(4))",
    f"lib.linalg.multi_dot([{A}.detach(), {A}.detach(), {A}.detach(), {A}[0].detach()], out=lib.empty(2, 3).t())",
]


def _describe(lib, program):
    result = eval(program, {"lib": lib})
    return result, type(result.grad_fn).__name__ if result.grad_fn else None


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls_match_torch(program):
    (ours, node_i), (theirs, node_t) = _describe(internals, program), _describe(torch, program)
    internals.testing.check(ours, theirs, rtol=1e-5, atol=1e-5)
    assert node_i == node_t     # tensorinv: the column-major inverse reshaped by _reshape_alias


ERRORS = [
    f"lib.linalg.norm({A}.reshape(1, 3, 3), 2)", f"lib.linalg.norm({A}, 'nuc', dim=(0, 1, 1))",
    f"lib.linalg.norm({A}.reshape(9), 'fro')", f"lib.linalg.matrix_norm({A}, 3)", f"lib.linalg.matrix_norm({A}[0], 1)",
    f"lib.linalg.matrix_norm({A}, 1, (0, -2))", f"lib.linalg.matrix_norm({A}.long(), 1)",
    f"lib.linalg.matrix_norm({A}.half(), 2)", f"lib.linalg.matrix_norm({A}, 'max')",
    f"lib.linalg.vecdot({A}.long(), {A}.long())", f"lib.linalg.vecdot({A}, {A}.double())",
    f"lib.linalg.vander({A}[0], N=1)", f"lib.linalg.vander({A}[0] > 0)", f"lib.linalg.multi_dot([{A}])",
    f"lib.linalg.multi_dot([{A}, {A}.reshape(1, 3, 3)])", f"lib.linalg.multi_dot([{A}, {A}[:2]])",
    f"lib.linalg.multi_dot([{A}, {A}.double()])", f"lib.linalg.tensorinv({A}, 0)",
    f"lib.linalg.tensorinv({A}[:2], 1)", "lib.linalg.tensorinv(lib.zeros(2, 2), 1)",
    f"lib.linalg.tensorsolve({A}, {A}[0, :2])", f"lib.linalg.cond({A}[:2], 1)", f"lib.linalg.cond({A}[:2], -1.0)",
    f"lib.linalg.cond({A}[:2], float('inf'))", f"lib.linalg.cond({A}[:2], 'fro')", f"lib.linalg.cond({A}, 3)",
    f"lib.linalg.cond({A}, 'max')", f"lib.linalg.cond({A}[0])", f"lib.linalg.matrix_rank({A}[0])",
    f"lib.linalg.matrix_rank({A}, atol=lib.tensor(1j))",
    "lib.chain_matmul()", f"lib.chain_matmul({A}[0], {A})", f"lib.chain_matmul({A}, {A}.reshape(1, 3, 3))",
    f"lib.chain_matmul({A}, {A}[:2])", f"lib.chain_matmul({A}, {A}.double())", f"lib.chain_matmul([{A}, {A}])",
    f"lib.chain_matmul({A}.reshape(1, 3, 3).detach(), out=lib.empty(0))", "lib.chain_matmul(out=lib.empty(0))",
    # out= takes no input that requires grad (the last product is mm.out's), nor another dtype
    f"lib.linalg.multi_dot([{A}, {A}], out=lib.empty(0))", f"lib.chain_matmul({A}, {A}, {A}, out=lib.empty(0))",
    f"lib.linalg.multi_dot([{A}.detach(), {A}.detach()], out=lib.empty(0, requires_grad=True))",
    f"lib.linalg.multi_dot([{A}.detach(), {A}.detach()], out=lib.empty(0, dtype=lib.float64))",
    f"lib.chain_matmul({A}.detach(), {A}.detach(), out=lib.empty(0, dtype=lib.float64))",
]


@pytest.mark.parametrize("program", ERRORS)
def test_bad_input_raises_torchs_error(program):
    if "zeros" in program:      # a singular matrix: each library's own LinAlgError class
        with pytest.raises(internals.linalg.LinAlgError) as ours:
            eval(program, {"lib": internals})
        with pytest.raises(torch.linalg.LinAlgError) as theirs:
            eval(program, {"lib": torch})
        assert str(ours.value) == str(theirs.value)
        return
    ours, theirs = assert_same_error(lambda: eval(program, {"lib": internals}), lambda: eval(program, {"lib": torch}))
    assert str(ours) == str(theirs)


def test_chain_matmul_warns_as_torch_does():
    """torch.chain_matmul is deprecated: a UserWarning with torch's text, once a process for the
    functional form and once for the out= form (torch's TORCH_WARN_ONCE in each)."""
    from internals.aten.native import linear_algebra
    for site in ("chain_matmul", "chain_matmul_out"):
        internals.c10.exception.reset_warn_once(("deprecated", site, linear_algebra._CHAIN_MATMUL_DEPRECATED))
    texts = {}
    x = torch.eye(2)
    for lib, args in ((torch, (x, x)), (internals, (internals.eye(2), internals.eye(2)))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                lib.chain_matmul(*args)
                lib.chain_matmul(*args, out=lib.empty(0))
        texts[lib.__name__] = [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]
    expected = (UserWarning, "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                "parameters.")
    assert texts["internals"] == [expected, expected]
    assert set(texts["torch"]) <= {expected}      # torch's once a process: an earlier test may have had them


@pytest.mark.parametrize("build", [
    lambda lib, x, t: lib.linalg.norm(x * t, 1),
    lambda lib, x, t: lib.linalg.matrix_norm(x * t, float("inf"), keepdim=True),
    lambda lib, x, t: lib.linalg.vecdot(x, t * x),
    lambda lib, x, t: lib.linalg.multi_dot([x, t.t(), x]),
    lambda lib, x, t: lib.chain_matmul(x, t.t(), x),
    lambda lib, x, t: lib.linalg.vander(x[0] * t[1]),
    lambda lib, x, t: lib.linalg.tensorsolve(lib.mm(x, x.t()) + 3 * lib.eye(2, dtype=x.dtype), t[:, 0]),
    # (cond's +-1 and +-inf fill linalg_inv_ex's saved output in place: torch's backward refuses them)
    lambda lib, x, t: lib.linalg.cond(x * t) + lib.linalg.cond(x[:, 1:] * t[:, 1:], "nuc"),
], ids=["norm-1", "matrix_norm-inf", "vecdot", "multi_dot", "chain_matmul", "vander", "tensorsolve", "cond"])
def test_gradients_twice_match_torch(build):
    compare_gradients_and_nodes(build, atol=1e-12)
