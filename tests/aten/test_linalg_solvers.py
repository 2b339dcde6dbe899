"""The solvers and the LU factorization torch's linalg has beside ``solve``
(``linalg.solve_triangular`` and the older ``triangular_solve``, ``linalg.lu`` and
``lu_unpack``, ``linalg.lu_solve`` and the older ``lu_solve``, the least squares of ``linalg.lstsq``,
``cholesky_solve`` and ``cholesky_inverse`` with a Cholesky factor; at the end ``linalg.inv``/
``inverse``, ``linalg.det``/``det`` and ``linalg.lu_factor``) against torch's: values, dtypes,
output strides (LAPACK's column-major results, an ``out=`` of the right size kept as it lies),
broadcasting of the batches, both sides and both triangles, torch's errors, and gradients
(first and second) through torch's formulas.

torch calls LAPACK (MKL in its wheel), internals substitutes row by row on the host: the sums
round differently, so values are compared within a few units in the last place of the largest
entry; layouts, dtypes and errors exactly.
"""
import functools
import warnings

import pytest
import torch
from helpers import (
    COMPLEX_ULPS,
    OPINFO_BY_NAME,
    PRODUCT_ULPS,
    Adapter,
    assert_fake_matches_real,
    assert_same,
    assert_within_ulps_of_largest,
    check_opinfo_samples,
    compare_call,
    compare_gradients_and_nodes,
    fn,
    opinfo_cases,
    same_outcome,
    to_ours_with_complex,
)
from helpers import run_everyday_call as _run

import internals

DTYPES = [torch.float32, torch.float64, torch.complex128]


def _triangular(*batch, n=3, upper=True, dtype=torch.float64):
    """Well-conditioned triangular matrices (a diagonal of 4 over entries of at most 1), the
    other triangle filled too: the solver must not read it."""
    count = n * n
    for b in batch:
        count *= b
    A = torch.arange(count, dtype=torch.float64).sin().reshape(*batch, n, n) + 4 * torch.eye(n, dtype=torch.float64)
    if dtype.is_complex:
        A = A + 1j * A.cos()
    return A.to(dtype)


def _rhs(*shape, dtype=torch.float64):
    count = 1
    for s in shape:
        count *= s
    B = torch.arange(count, dtype=torch.float64).cos().reshape(shape)
    return (B + 1j * B.sin() if dtype.is_complex else B).to(dtype)


def _ours(value):
    return internals.from_torch(value) if isinstance(value, torch.Tensor) else value


def _both(program):
    """``program(lib, convert)``'s result for internals and for torch."""
    return program(internals, _ours), program(torch, lambda t: t)


def _close(ours, theirs, scale=PRODUCT_ULPS):
    assert_within_ulps_of_largest(ours, theirs, 4 * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper, left, unitriangular", [(True, True, False), (False, True, True),
                                                        (True, False, True), (False, False, False)])
def test_solve_triangular_matches_torch(dtype, upper, left, unitriangular):
    A = _triangular(2, dtype=dtype)
    B = _rhs(2, 3, 4, dtype=dtype) if left else _rhs(2, 4, 3, dtype=dtype)
    ours, theirs = _both(lambda lib, c: lib.linalg.solve_triangular(c(A), c(B), upper=upper, left=left,
                                                                    unitriangular=unitriangular))
    _close(ours, theirs)


@pytest.mark.parametrize("A_shape, B_shape", [((3, 3), (2, 3, 2)), ((2, 1, 3, 3), (4, 3, 1)), ((0, 3, 3), (3, 0)),
                                              ((0, 0), (0, 2))])
def test_solve_triangular_broadcasts_batches(A_shape, B_shape):
    A = _triangular(n=A_shape[-1]).expand(A_shape) if A_shape[-1] else torch.zeros(A_shape, dtype=torch.float64)
    B = _rhs(*B_shape)
    ours, theirs = _both(lambda lib, c: lib.linalg.solve_triangular(c(A), c(B), upper=False))
    _close(ours, theirs)


def test_solve_triangular_result_has_As_dtype():
    """torch's functional form allocates its output with A's dtype and casts B into it."""
    for a_dtype, b_dtype in ((torch.float32, torch.float64), (torch.float64, torch.float32),
                             (torch.complex128, torch.float64)):
        A, B = _triangular().to(a_dtype), _rhs(3, 2).to(b_dtype)
        _close(*_both(lambda lib, c, A=A, B=B: lib.linalg.solve_triangular(c(A), c(B), upper=True)))


@pytest.mark.parametrize("out_shape, out_t", [((0,), False), ((2, 3, 4), False), ((2, 4, 3), True)])
def test_solve_triangular_out(out_shape, out_t):
    """An empty out= is resized column-major; one of the right size keeps its strides."""
    A, B = _triangular(2), _rhs(2, 3, 4)

    def program(lib, c):
        out = lib.zeros(out_shape, dtype=lib.float64)
        out = out.mT if out_t else out
        result = lib.linalg.solve_triangular(c(A), c(B), upper=True, out=out)
        assert result is out
        return out
    ours, theirs = _both(program)
    _close(ours, theirs)


@pytest.mark.parametrize("program", [
    "lib.linalg.solve_triangular(A, B.double(), upper=True, out=lib.empty(0, dtype=lib.float64))",
    "lib.linalg.solve_triangular(A.int(), B, upper=True)",
    "lib.linalg.solve_triangular(A.half(), B.half(), upper=True)",
    "lib.linalg.solve_triangular(A, B[0, :, 0], upper=True)",
    "lib.linalg.solve_triangular(A[..., :2], B, upper=True)",
    "lib.linalg.solve_triangular(A, B[:, :2], upper=True)",
    "lib.linalg.solve_triangular(A, B.mT, upper=True, left=False)",
    "lib.linalg.solve_triangular(A, lib.zeros(3, 3, 4), upper=True)",
    "lib.linalg.solve_triangular(A, B)",
    "lib.triangular_solve(B, A.double())",
    "lib.triangular_solve(B.int(), A.int())",
    "lib.triangular_solve(B[0, 0], A)",
    "lib.triangular_solve(B, A[..., :2])",
    "lib.triangular_solve(B[:, :2], A)",
])
def test_solvers_refuse_what_torch_refuses(program):
    A, B = _triangular(2, dtype=torch.float32), _rhs(2, 3, 4, dtype=torch.float32)
    same_outcome(lambda lib: eval(program, {"lib": lib, "A": _ours(A) if lib is internals else A,
                                            "B": _ours(B) if lib is internals else B}))


@pytest.mark.parametrize("upper, transpose, unitriangular", [(True, False, False), (False, True, True)])
def test_triangular_solve_returns_the_solution_and_As_copy(upper, transpose, unitriangular):
    A, B = _triangular(2, 1), _rhs(3, 2)
    warnings.simplefilter("ignore")     # torch's deprecation, once a process (whichever test runs first)

    (x, M), (X, M_) = _both(lambda lib, c: lib.triangular_solve(c(B), c(A), upper, transpose, unitriangular))
    assert type(_both(lambda lib, c: lib.triangular_solve(c(B), c(A)))[0]).__name__ == "triangular_solve"
    _close(x, X)
    _close(M, M_, 0)


@pytest.mark.parametrize("left, upper, unitriangular", [(True, True, False), (False, False, True)])
def test_solve_triangular_gradients_match_torch(left, upper, unitriangular):
    """Gradients of A (kept to the triangle read) and of B, broadcast batches summed back."""
    A0, B0 = _triangular(2, 1), _rhs(3, 3) if left else _rhs(3, 3).mT.contiguous()
    results = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        A, B = c(A0).requires_grad_(), c(B0).requires_grad_()
        X = lib.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
        gA, gB = lib.autograd.grad((X * X).sum(), (A, B), create_graph=True)
        ggA, = lib.autograd.grad((gB * gB).sum() + gA.sum(), A)
        results.append((X.grad_fn.name(), gA, gB, ggA))
    (name, *ours), (their_name, *theirs) = results
    assert name == their_name
    for o, t in zip(ours, theirs):
        _close(o.detach(), t.detach(), 4 * PRODUCT_ULPS)


def test_triangular_solve_gradients_match_torch():
    A0, B0 = _triangular(2), _rhs(2, 3, 2)
    results = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        A, B = c(A0).requires_grad_(), c(B0).requires_grad_()
        X, M = lib.triangular_solve(B, A, upper=False, transpose=True)
        assert X.grad_fn is M.grad_fn
        results.append((X.grad_fn.name(), *lib.autograd.grad((X * X).sum() + (M * M).sum(), (B, A))))
    (name, *ours), (their_name, *theirs) = results
    assert name == their_name
    for o, t in zip(ours, theirs):
        _close(o, t)


def test_solvers_run_on_fake_tensors():
    assert_fake_matches_real(lambda lib, A, B: lib.linalg.solve_triangular(A, B, upper=True, left=False),
                             lambda: (internals.eye(3) + internals.ones(3, 3).triu(), internals.ones(2, 4, 3)))
    assert_fake_matches_real(lambda lib, B, A: lib.triangular_solve(B, A)[1],
                             lambda: (internals.ones(2, 3, 1), internals.eye(3) + internals.ones(3, 3).triu()))


def _matrix(*shape, dtype=torch.float64):
    """A matrix (or batch) of full rank whose LU pivots in several rows: sines of squares (the
    sines of an arithmetic sequence would make a matrix of rank 2)."""
    count = 1
    for s in shape:
        count *= s
    A = (torch.arange(1, count + 1, dtype=torch.float64) ** 2).sin().reshape(shape)
    return (A + 1j * A.cos() if dtype.is_complex else A).to(dtype)


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5), (3, 3), (0, 3), (2, 0, 0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_lu_and_lu_unpack_match_torch(shape, dtype):
    """P, L and U contiguous, L m by min(m, n), U min(m, n) by n; rectangular matrices too."""
    A = _matrix(*shape, dtype=dtype)
    ours, theirs = _both(lambda lib, c: lib.linalg.lu(c(A)))
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_lu"
    for o, t in zip(ours, theirs):
        _close(o, t)
    LU, pivots = torch.linalg.lu_factor(A)
    ours, theirs = _both(lambda lib, c: lib.lu_unpack(c(LU), c(pivots)))
    assert type(ours).__name__ == type(theirs).__name__ == "lu_unpack"
    for o, t in zip(ours, theirs):
        _close(o, t, 0)


@pytest.mark.parametrize("unpack_data, unpack_pivots", [(False, False), (True, False), (False, True)])
def test_lu_unpack_leaves_empty_what_it_does_not_unpack(unpack_data, unpack_pivots):
    LU, pivots = torch.linalg.lu_factor(_matrix(2, 4, 3))
    for o, t in zip(*_both(lambda lib, c: lib.lu_unpack(c(LU), c(pivots), unpack_data, unpack_pivots))):
        _close(o, t, 0)


def test_lu_and_lu_unpack_out():
    """Empty out= tensors are resized contiguous; the result is the out= named tuple."""
    A = _matrix(2, 3, 4)
    LU, pivots = torch.linalg.lu_factor(A)
    for program in (lambda lib, c: lib.linalg.lu(c(A), out=tuple(lib.empty(0, dtype=lib.float64) for _ in range(3))),
                    lambda lib, c: lib.lu_unpack(c(LU), c(pivots),
                                                 out=tuple(lib.empty(0, dtype=lib.float64) for _ in range(3)))):
        ours, theirs = _both(program)
        assert type(ours).__name__ == type(theirs).__name__
        for o, t in zip(ours, theirs):
            _close(o, t)


@pytest.mark.parametrize("program", [
    "lib.linalg.lu(A[0, 0])",
    "lib.linalg.lu(A.int())",
    "lib.linalg.lu(A.half())",
    "lib.linalg.lu(A, pivot=False)",
    "lib.linalg.lu_factor(A, pivot=False)",
    "lib.lu_unpack(LU[0, 0], pivots)",
    "lib.lu_unpack(LU, pivots.long())",
    "lib.lu_unpack(LU, pivots + 5)",
    "lib.lu_unpack(LU.int(), pivots)",
])
def test_lu_refuses_what_torch_refuses(program):
    A = _matrix(2, 4, 3, dtype=torch.float32)
    LU, pivots = torch.linalg.lu_factor(A)
    env = {"A": A, "LU": LU, "pivots": pivots}
    same_outcome(lambda lib: eval(program, {"lib": lib, **({k: _ours(v) for k, v in env.items()}
                                                         if lib is internals else env)}))


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5), (3, 3)])
def test_lu_gradients_match_torch(shape):
    """linalg.lu's, lu_factor's (the packed factors) and lu_unpack's gradients, through torch's
    formulas (``linalg_lu_backward``, ``lu_factor_ex_backward``, ``lu_unpack_backward``), and a
    second derivative of lu's."""
    A0 = _matrix(*shape)
    LU0, pivots0 = torch.linalg.lu_factor(A0)
    results = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        A = c(A0).requires_grad_()
        P, L, U = lib.linalg.lu(A)
        names = [L.grad_fn.name()]
        gA, = lib.autograd.grad((L * L).sum() + (U * U * U).sum(), A, create_graph=True)
        ggA, = lib.autograd.grad((gA * gA).sum(), A)
        LU, _ = lib.linalg.lu_factor(A)
        names.append(LU.grad_fn.name())
        gLU, = lib.autograd.grad((LU * LU).sum(), A)
        packed = c(LU0).requires_grad_()
        _, L, U = lib.lu_unpack(packed, c(pivots0))
        names.append(L.grad_fn.name())
        gU, = lib.autograd.grad((U * U).sum(), packed)
        results.append((names, gA.detach(), ggA, gLU, gU))
    (names, *ours), (their_names, *theirs) = results
    assert names == their_names
    for o, t in zip(ours, theirs):
        _close(o, t, 4 * PRODUCT_ULPS)


def test_lu_runs_on_fake_tensors():
    assert_fake_matches_real(lambda lib, A: lib.linalg.lu(A), lambda: (_ours(_matrix(4, 3)),))
    assert_fake_matches_real(lambda lib, A: lib.lu_unpack(*lib.linalg.lu_factor_ex(A)[:2]),
                             lambda: (_ours(_matrix(3, 4)),))


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_lu_solve_matches_torch(left, adjoint, dtype):
    """Column-major results on the left, row-major on the right; B's batch broadcast."""
    LU, pivots = torch.linalg.lu_factor(_matrix(2, 3, 3, dtype=dtype))
    B = _rhs(3, 4, dtype=dtype) if left else _rhs(1, 4, 3, dtype=dtype)
    _close(*_both(lambda lib, c: lib.linalg.lu_solve(c(LU), c(pivots), c(B), left=left, adjoint=adjoint)))


def test_lu_solve_out_and_the_older_lu_solve():
    LU, pivots = torch.linalg.lu_factor(_matrix(2, 3, 3))
    B = _rhs(2, 3, 2)
    _close(*_both(lambda lib, c: lib.linalg.lu_solve(c(LU), c(pivots), c(B), out=lib.empty(0, dtype=lib.float64))))
    warnings.simplefilter("ignore")     # torch.lu_solve's deprecation, once a process
    _close(*_both(lambda lib, c: lib.lu_solve(c(B), c(LU), c(pivots))))


@pytest.mark.parametrize("program", [
    "lib.linalg.lu_solve(LU, pivots, B.double())",
    "lib.linalg.lu_solve(LU.int(), pivots, B.int())",
    "lib.linalg.lu_solve(LU.half(), pivots, B.half())",
    "lib.linalg.lu_solve(LU, pivots.long(), B)",
    "lib.linalg.lu_solve(LU[..., :2], pivots, B)",
    "lib.linalg.lu_solve(LU, pivots, B[:, :2])",
    "lib.linalg.lu_solve(LU, pivots[..., :2], B)",
    "lib.linalg.lu_solve(LU, pivots[:1], B)",
    "lib.linalg.lu_solve(LU, pivots, B[0, :, 0])",
    "lib.linalg.lu_solve(LU, pivots, lib.zeros(3, 3, 4))",
    "lib.linalg.lu_solve(LU, pivots, B, out=lib.empty(0, dtype=lib.float64))",
])
def test_lu_solve_refuses_what_torch_refuses(program):
    LU, pivots = torch.linalg.lu_factor(_matrix(2, 3, 3, dtype=torch.float32))
    env = {"LU": LU, "pivots": pivots, "B": _rhs(2, 3, 4, dtype=torch.float32)}
    same_outcome(lambda lib: eval(program, {"lib": lib, **({k: _ours(v) for k, v in env.items()}
                                                         if lib is internals else env)}))


@pytest.mark.parametrize("left, adjoint", [(True, False), (False, True)])
def test_lu_solve_gradients_match_torch(left, adjoint):
    """The gradients of the factors (``linalg_lu_solve_LU``) and of B (a solve with the
    adjoint), first and second order."""
    LU0, pivots = torch.linalg.lu_factor(_matrix(3, 3, dtype=torch.complex128))
    B0 = _rhs(2, 3, 2, dtype=torch.complex128) if left else _rhs(2, 2, 3, dtype=torch.complex128)
    results = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        LU, B = c(LU0).requires_grad_(), c(B0).requires_grad_()
        X = lib.linalg.lu_solve(LU, c(pivots), B, left=left, adjoint=adjoint)
        gLU, gB = lib.autograd.grad((X.abs() ** 2).sum(), (LU, B), create_graph=True)
        ggLU, = lib.autograd.grad((gB.abs() ** 2).sum(), LU)
        results.append((X.grad_fn.name(), gLU.detach(), gB.detach(), ggLU))
    (name, *ours), (their_name, *theirs) = results
    assert name == their_name
    for o, t in zip(ours, theirs):
        _close(o, t, 4 * PRODUCT_ULPS)


def test_lu_solve_runs_on_fake_tensors():
    assert_fake_matches_real(lambda lib, LU, pivots, B: lib.linalg.lu_solve(LU, pivots, B, left=False),
                             lambda: (_ours(_matrix(3, 3)), internals.tensor([2, 2, 3], dtype=internals.int32),
                                      _ours(_rhs(2, 4, 3))))


@pytest.mark.parametrize("program", ["lib.triangular_solve(B, A)[0]", "lib.lu_solve(B, LU, pivots)",
                                     "lib.linalg.solve_triangular(A, B, upper=True)", "lib.lu_unpack(LU, pivots)[1]",
                                     "lib.linalg.lstsq(A, B).solution", "lib.cholesky_solve(B, A)",
                                     "lib.cholesky_inverse(A, upper=True)"])
def test_autocast_runs_the_older_solvers_in_float32(program):
    """torch's CPU autocast lists ``triangular_solve``, ``lu_solve``, ``linalg_lstsq``,
    ``cholesky_solve`` and ``cholesky_inverse`` as float32 operators; the others are not cast
    (and LAPACK refuses bfloat16)."""
    warnings.simplefilter("ignore")
    LU, pivots = torch.linalg.lu_factor(_triangular(dtype=torch.float32))
    env = {"A": _triangular(dtype=torch.bfloat16), "B": _rhs(3, 2, dtype=torch.bfloat16), "LU": LU.bfloat16(),
           "pivots": pivots}

    def run(lib):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            return eval(program, {"lib": lib, **({k: _ours(v) for k, v in env.items()} if lib is internals else env)})
    same_outcome(run, rtol=1e-6, atol=1e-6)


# ---- least squares. torch calls MKL's gels, gelsy, gelsd or gelss; internals solves through
# NumPy's QR or SVD: a different algorithm, so values are compared within 64 ulps of the largest
# entry (up to 8 are seen), ranks, layouts, dtypes and errors exactly.
LSTSQ_DRIVERS = [None, "gels", "gelsy", "gelsd", "gelss"]
LSTSQ_FIELDS = ("solution", "residuals", "rank", "singular_values")


def _lstsq_close(ours, theirs):
    assert type(ours).__name__ == type(theirs).__name__
    for field in LSTSQ_FIELDS:
        o, t = getattr(ours, field), getattr(theirs, field)
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            assert_same(o, t)
        else:
            _close(o, t, 4 * PRODUCT_ULPS)


@pytest.mark.parametrize("driver", LSTSQ_DRIVERS)
@pytest.mark.parametrize("A_shape, B_shape", [((2, 5, 3), (2, 5, 2)), ((3, 5), (3,)), ((1, 5, 3), (3, 5, 2)),
                                              ((2, 5, 3), (2, 5)), ((0, 3), (0, 2)), ((3, 0), (3, 2))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_lstsq_matches_torch(driver, A_shape, B_shape, dtype):
    """Tall and wide A, a vector and a batch of vectors for B, broadcast batches, empty matrices:
    the padded column-major solution, residuals where the driver gives them, the rank per matrix
    of A, the singular values from gelsd and gelss."""
    A, B = _matrix(*A_shape, dtype=dtype), _rhs(*B_shape, dtype=dtype)
    _lstsq_close(*_both(lambda lib, c: lib.linalg.lstsq(c(A), c(B), driver=driver)))


@pytest.mark.parametrize("driver, rcond", [("gelsy", None), ("gelsd", None), ("gelss", None), ("gelsd", 0.5),
                                           ("gelss", -1.0), ("gelsy", -1.0)])
def test_lstsq_of_a_rank_deficient_matrix(driver, rcond):
    """Two equal columns: the rank the singular values give (every column kept by gelsy for a
    negative rcond), the least-norm solution, no residuals from gelsd and gelss."""
    A = _matrix(2, 5, 3)
    A[..., 2] = A[..., 1]
    if rcond == -1.0 and driver == "gelsy":
        A = _matrix(2, 5, 3)        # gelsy would divide by a rounding error
    _lstsq_close(*_both(lambda lib, c: lib.linalg.lstsq(c(A), c(_rhs(2, 5, 2)), rcond, driver=driver)))


def test_lstsq_out():
    """Empty out= tensors of the right dtypes are written as the kernel writes its own outputs (the
    solution keeps the padded storage); others are resized contiguous and copied into, rank
    accepting any integer or floating dtype."""
    A, B = _matrix(5, 3), _rhs(5, 2)
    for dtypes in (("float64", "float64", "int64", "float64"), ("float64", "float64", "int32", "float32")):
        def program(lib, c, dtypes=dtypes):
            out = tuple(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
            result = lib.linalg.lstsq(c(A), c(B), driver="gelsd", out=out)
            assert all(r is o for r, o in zip(result, out, strict=True))
            return result
        _lstsq_close(*_both(program))
    # a solution of the padded shape, column-major, is written and cut to n rows in place; one of
    # another shape is resized (with torch's warning) and copied into
    for solution_shape in ((2, 2, 5), (2, 3, 5)):
        _lstsq_close(*_both(lambda lib, c, shape=solution_shape: lib.linalg.lstsq(
            c(_matrix(2, 5, 3)), c(_rhs(2, 5, 2)),
            out=(lib.empty(shape, dtype=lib.float64).mT, lib.empty(0, dtype=lib.float64),
                 lib.empty(0, dtype=lib.int64), lib.empty(0, dtype=lib.float64)))))


@pytest.mark.parametrize("program", [
    "lib.linalg.lstsq(A[0, 0], B)",
    "lib.linalg.lstsq(A, B[0, 0, 0])",
    "lib.linalg.lstsq(A, B.double())",
    "lib.linalg.lstsq(A[0], B)",
    "lib.linalg.lstsq(A, B[..., :3, :])",
    "lib.linalg.lstsq(A, B[0, :3, 0])",
    "lib.linalg.lstsq(A, B[0])",
    "lib.linalg.lstsq(A.int(), B.int())",
    "lib.linalg.lstsq(A.int(), B.int(), 1e-3)",
    "lib.linalg.lstsq(A.half(), B.half(), 1e-3)",
    "lib.linalg.lstsq(A, B, driver='svd')",
    "lib.linalg.lstsq(A, B, driver='GELSD').rank",
    "lib.linalg.lstsq(A, B, out=(lib.empty(0, dtype=lib.int32), lib.empty(0), lib.empty(0, dtype=lib.int64), "
    "lib.empty(0)))",
    "lib.linalg.lstsq(A, B, out=(lib.empty(0), lib.empty(0), lib.empty(0, dtype=lib.int64), lib.empty(0, "
    "dtype=lib.int32)))",
    "lib.linalg.lstsq(A.requires_grad_(), B, out=tuple(lib.empty(0) for _ in range(4)))",
])
def test_lstsq_refuses_what_torch_refuses(program):
    A, B = _matrix(2, 4, 3, dtype=torch.float32), _rhs(2, 4, 2, dtype=torch.float32)
    same_outcome(lambda lib: eval(program, {"lib": lib, "A": _ours(A) if lib is internals else A,
                                            "B": _ours(B) if lib is internals else B}))


@pytest.mark.parametrize("driver, nan_in, batch", [("gelsd", "A", ()), ("gels", "A", ()), (None, "B", ()),
                                                   ("gelsy", "B", (3,)), ("gelss", "A", (2,))])
def test_lstsq_refuses_nan_as_mkl_does(driver, nan_in, batch):
    """MKL calls a NaN an illegal argument, which torch raises as an internal error whose message
    names torch's source line; in a batch, the first matrix holding one is named."""
    A, B = _matrix(*batch, 4, 3), _rhs(*batch, 4, 2)
    (A if nan_in == "A" else B)[(-1,) * len(batch) + (0, 0)] = float("nan")
    messages = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        with pytest.raises(RuntimeError) as error:
            lib.linalg.lstsq(c(A), c(B), driver=driver)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("false INTERNAL ASSERT FAILED at")


def test_lstsq_gels_refuses_a_rank_deficient_matrix():
    """gels assumes full rank: a zero on R's diagonal is LAPACK's info, raised as LinAlgError."""
    A = _matrix(2, 4, 3) * torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        with pytest.raises(lib.linalg.LinAlgError, match=r"^torch.linalg.lstsq: \(Batch element 0\): The least squares "
                           r"solution could not be computed because the input matrix does not have full rank "
                           r"\(error code: 3\).$"):
            lib.linalg.lstsq(c(A), c(_rhs(2, 4, 2)), driver="gels")


def _graded(*batch, n=4, ratio=0.3):
    """Square matrices whose rows shrink by ``ratio`` each, so that their singular values fall
    in steps: the rank a large ``rcond`` leaves is decided by how the estimate is made."""
    return _matrix(*batch, n, n) * ratio ** torch.arange(n, dtype=torch.float64)[:, None] + torch.eye(n) * 0.1


@pytest.mark.parametrize("rcond", [0.02, 0.05, 0.2, 0.6])
def test_lstsq_gelsy_rank_is_the_qr_condition_estimate(rcond):
    """gelsy keeps R's columns while LAPACK's incremental estimate of the smallest singular value
    stays above rcond times the largest's, and solves the truncated system for its least-norm
    solution. torch hands LAPACK an uninitialised pivot array, reused through the batch, so from
    the second matrix on R comes from a QR without pivoting; the first matrix is one whose answer
    does not depend on the pivoting (well conditioned, of full rank)."""
    A = torch.cat([0.1 * _matrix(1, 4, 4) + 4 * torch.eye(4, dtype=torch.float64), _graded(3, ratio=0.3)])
    A[2] = A[2].mT.clone()
    A[3, :, 3] = A[3, :, 1] + 1e-9
    _lstsq_close(*_both(lambda lib, c: lib.linalg.lstsq(c(A), c(_rhs(4, 4, 2)), rcond, driver="gelsy")))


@pytest.mark.parametrize("driver, inf_at, code", [("gels", (0, 0), 2), ("gels", (3, 2), 1), ("gels", "wide", 2),
                                                  ("gels", "B", None), ("gelsy", (2, 1), None),
                                                  ("gelsy", "B", None)])
def test_lstsq_of_an_infinity_as_lapack_scales_it(driver, inf_at, code):
    """LAPACK scales A (or B) by its largest entry; an infinite one turns the rest to zero and
    the infinities to NaN. gels then finds the first zero on R's diagonal (torch's LinAlgError)
    or solves to NaN; gelsy keeps what it can; an infinity in B leaves every entry NaN.

    Not tested: gelsy with the infinity in A's first column. Its column norms are then
    (NaN, 0, 0, 0), and which column the QR takes first depends on what torch's uninitialised
    pivot array happens to hold (see ``_gelsy_one``) and on how the pivot search meets a NaN:
    torch 2.13 answered a NaN first row on this project's machine and zeros on the one CI ran on.
    An answer torch does not give the same everywhere is not one to compare with."""
    A, B = _matrix(6, 4), _rhs(6, 2)
    if inf_at == "wide":
        A, B = A.mT.contiguous(), B[:4]
        A[0, 0] = float("inf")
    elif inf_at == "B":
        B[1, 1] = float("-inf")
    else:
        A[inf_at] = float("inf")
    if code is not None:
        for lib, c in ((internals, _ours), (torch, lambda t: t)):
            with pytest.raises(lib.linalg.LinAlgError, match=rf"does not have full rank \(error code: {code}\)\.$"):
                lib.linalg.lstsq(c(A), c(B), driver=driver)
        return
    ours, theirs = _both(lambda lib, c: lib.linalg.lstsq(c(A), c(B), driver=driver))
    for field in LSTSQ_FIELDS:       # NaN and zeros only: exact
        assert_same(getattr(ours, field), getattr(theirs, field))


@pytest.mark.parametrize("A_shape, B_shape, driver", [((5, 3), (5, 2), "gelsd"), ((2, 5, 3), (2, 5), "gels"),
                                                      ((3, 5), (3, 2), None)])
def test_lstsq_gradients_match_torch(A_shape, B_shape, driver):
    """The solution's gradient through the pseudo-inverse, the residuals' of their own, both
    differentiated again; rank and singular values have none."""
    A0, B0 = _matrix(*A_shape), _rhs(*B_shape)
    results = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        A, B = c(A0).requires_grad_(), c(B0).requires_grad_()
        X, L, rank, S = lib.linalg.lstsq(A, B, driver=driver)
        assert not rank.requires_grad and not S.requires_grad
        gA, gB = lib.autograd.grad((X * X).sum() + L.sum(), (A, B), create_graph=True)
        ggA, ggB = lib.autograd.grad((gA * gA).sum() + (gB * gB).sum(), (A, B))
        results.append(((X.grad_fn.name(), L.grad_fn.name()), (gA, gB, ggA, ggB)))
    (names, ours), (their_names, theirs) = results
    assert names == their_names
    for o, t in zip(ours, theirs, strict=True):
        _close(o.detach(), t.detach(), 4 * PRODUCT_ULPS)


# ---------------------------------------------------------------------- ldl_factor, ldl_solve
def _symmetric(*batch, n, dtype, hermitian, zero_corner):
    """A symmetric (Hermitian) matrix from a seeded stream; a zero in the corner makes the first
    pivot a 2 by 2 block."""
    A = torch.randn(*batch, n, n, dtype=dtype, generator=torch.Generator().manual_seed(n))
    A = A + (A.mH if hermitian else A.mT)
    if zero_corner:
        A[..., 0, 0] = 0
    return A


@pytest.mark.parametrize("dtype, hermitian", [(torch.float64, False), (torch.float32, False),
                                              (torch.complex128, False), (torch.complex64, True)])
@pytest.mark.parametrize("batch, n, zero_corner", [((), 5, True), ((2,), 4, False), ((), 1, False)])
def test_ldl_factor_and_solve_match_lapacks_bunch_kaufman(dtype, hermitian, batch, n, zero_corner):
    """sytrf's (hetrf's) pivots exactly, its factors and sytrs's solution within ulps, with
    torch's column-major layouts."""
    A = _symmetric(*batch, n=n, dtype=dtype, hermitian=hermitian, zero_corner=zero_corner)
    B = _rhs(*batch, n, 2, dtype=dtype)
    ours, theirs = _both(lambda lib, c: lib.linalg.ldl_factor_ex(c(A), hermitian=hermitian))
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_ldl_factor_ex"
    assert_same(ours.pivots, theirs.pivots)
    assert_same(ours.info, theirs.info)
    ulps = COMPLEX_ULPS if dtype.is_complex else PRODUCT_ULPS     # complex products: fused multiply-adds
    _close(ours.LD, theirs.LD, ulps)
    X = internals.linalg.ldl_solve(ours.LD, ours.pivots, _ours(B), hermitian=hermitian)
    _close(X, torch.linalg.ldl_solve(theirs.LD, theirs.pivots, B, hermitian=hermitian), ulps)


@pytest.mark.parametrize("program", [
    "lib.linalg.ldl_factor(lib.randn(3, 4))", "lib.linalg.ldl_factor(lib.randn(3))",
    "lib.linalg.ldl_factor(lib.ones(3, 3, dtype=lib.int64))", "lib.linalg.ldl_factor(lib.zeros(2, 3, 3))",
    "lib.linalg.ldl_factor_ex(lib.zeros(3, 3))", "lib.linalg.ldl_factor_ex(lib.zeros(3, 3), check_errors=True)",
    "lib.linalg.ldl_factor(lib.zeros(2, 0, 0))", "lib.linalg.ldl_factor(S.half())",
    "lib.linalg.ldl_factor(S, out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64)))",
    "lib.linalg.ldl_factor(S, out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32)))",
    "lib.linalg.ldl_solve(*lib.linalg.ldl_factor(S), lib.ones(3, 2))",
    "lib.linalg.ldl_solve(*lib.linalg.ldl_factor(S), lib.ones(4, 2, dtype=lib.float64))",
    "lib.linalg.ldl_solve(*lib.linalg.ldl_factor(S), lib.ones(3, dtype=lib.float64))",
    "lib.linalg.ldl_solve(lib.linalg.ldl_factor(S)[0], lib.ones(2, dtype=lib.int32), "
    "lib.ones(3, 2, dtype=lib.float64))",
    "lib.linalg.ldl_solve(lib.linalg.ldl_factor(S)[0], lib.ones(3), lib.ones(3, 2, dtype=lib.float64))",
    "lib.linalg.ldl_solve(lib.linalg.ldl_factor(S)[0], lib.linalg.ldl_factor(S)[1].long(), "
    "lib.ones(2, 3, 2, dtype=lib.float64))",
    "lib.linalg.ldl_solve(S.int(), lib.ones(3, dtype=lib.int32), lib.ones(3, 2, dtype=lib.int32))",
])
def test_ldl_refuses_what_torch_refuses(program):
    """Shapes, dtypes and out= as torch checks them; a zero in D is torch's internal assertion."""
    def run(lib):
        S = lib.tensor([[4.0, 1, 2], [1, 5, 3], [2, 3, 6]], dtype=lib.float64)
        return eval(program, {"lib": lib, "S": S})
    same_outcome(run)


def test_ldl_has_no_derivative_as_in_torch():
    """Neither operator has a formula: the output's node refuses a backward, pivots and info do not
    require grad, and only the inputs that require grad are linked."""
    S = torch.tensor([[4.0, 1, 2], [1, 5, 3], [2, 3, 6]], dtype=torch.float64)
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        LD, pivots, info = lib.linalg.ldl_factor_ex(c(S).requires_grad_())
        assert (LD.requires_grad, pivots.requires_grad, info.requires_grad) == (True, False, False)
        assert len(LD.grad_fn.next_functions) == 1
        X = lib.linalg.ldl_solve(LD.detach(), pivots, c(S[:, :2]).requires_grad_())
        assert len(X.grad_fn.next_functions) == 1
        with pytest.raises(RuntimeError, match="^derivative for aten::linalg_ldl_solve is not implemented$"):
            X.sum().backward()


def test_ldl_on_fake_tensors_lays_out_what_the_real_run_does():
    assert_fake_matches_real(lambda L, a: L.linalg.ldl_factor(a + a.mT), lambda: (internals.randn(2, 4, 4),))
    assert_fake_matches_real(lambda L, a, b: L.linalg.ldl_solve(a, L.ones(4, dtype=L.int32), b),
                             lambda: (internals.eye(4), internals.ones(3, 4, 2)))


# ------------------------------------------------------------------ solving and inverting with a Cholesky factor
# (rtol, atol): a few hundred epsilons, for values of order one
LAPACK_TOL = {torch.float64: (1e-12, 1e-12), torch.complex64: (2e-5, 2e-5)}
CHOLESKY_ADAPTERS = {
    "cholesky_solve": Adapter(fn("cholesky_solve"), "cholesky_solve", kwargs=("upper",), tol=LAPACK_TOL),
    "cholesky_inverse": Adapter(fn("cholesky_inverse"), "cholesky_inverse", kwargs=("upper",), tol=LAPACK_TOL)}


@pytest.mark.parametrize("name, dtype", opinfo_cases(CHOLESKY_ADAPTERS, (torch.float64, torch.complex64)))
def test_cholesky_solvers_opinfo_samples(name, dtype):
    """torch's OpInfo samples: batches broadcast, both triangles, empty matrices."""
    check_opinfo_samples(name, dtype, CHOLESKY_ADAPTERS[name], convert=to_ours_with_complex)


def _factor(*batch, n=3, dtype=torch.float64):
    """A factor of a well-conditioned matrix, both triangles filled (the solvers must read one
    only), its diagonal real as a Cholesky factor's is."""
    L = _triangular(*batch, n=n, dtype=dtype)
    return L - 1j * torch.diag_embed(L.diagonal(0, -2, -1).imag) if dtype.is_complex else L


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
@pytest.mark.parametrize("b_shape, L_batch, layout", [((2, 3, 2), (), "given"), ((3, 1), (2, 1), "transposed"),
                                                     ((4, 1, 3, 2), (5,), "strided"), ((0, 3, 2), (), "given")])
def test_cholesky_solve_and_inverse_match_torch(upper, dtype, b_shape, L_batch, layout):
    """Values within ulps, the result column-major over the broadcast batch; the factor read
    from one triangle, transposed and strided views of it alike."""
    L = {"given": lambda t: t, "transposed": lambda t: t.mT.contiguous().mT,
         "strided": lambda t: t.repeat_interleave(2, -1)[..., ::2]}[layout](_factor(*L_batch, dtype=dtype))
    b = _rhs(*b_shape, dtype=dtype)
    _close(*_both(lambda lib, c: lib.cholesky_solve(c(b), c(L), upper)))
    _close(*_both(lambda lib, c: c(b).cholesky_solve(c(L), upper=upper)))
    _close(*_both(lambda lib, c: lib.cholesky_inverse(c(L), upper)))
    _close(*_both(lambda lib, c: c(L).cholesky_inverse(upper=upper)))


def test_cholesky_inverse_is_exactly_hermitian():
    """potri computes one triangle and torch mirrors it: the result equals its conjugate transpose."""
    ours = internals.cholesky_inverse(_ours(_factor(2, dtype=torch.complex128))).to_torch()
    assert torch.equal(ours, ours.mH)


@pytest.mark.parametrize("program", [
    "lib.cholesky_solve(b, L, out=lib.empty(0, dtype=lib.float64))",
    "lib.cholesky_solve(b, L, out=lib.zeros(2, 2, dtype=lib.float64))",
    "lib.cholesky_solve(b, L, out=lib.zeros(3, 2, dtype=lib.float32))",
    "lib.cholesky_solve(b, L, out=lib.zeros(2, 3, dtype=lib.float64).mT)",
    "lib.cholesky_solve(b, L, out=lib.zeros(3, 2, dtype=lib.int64))",
    "lib.cholesky_inverse(L, out=lib.empty(0, dtype=lib.float64))",
    "lib.cholesky_inverse(L, out=lib.zeros(2, 2, dtype=lib.float64))",
    "lib.cholesky_inverse(L, True, out=lib.zeros(3, 3, dtype=lib.complex64))",
    "lib.cholesky_inverse(L, out=lib.zeros(3, 3, dtype=lib.int32))",
    "lib.cholesky_inverse(L.float(), out=lib.zeros(3, 3, dtype=lib.float64))",
])
def test_cholesky_solvers_out(program):
    """An empty out= becomes the column-major result; another is resized (with torch's warning)
    and keeps its strides; a lower precision of the same kind is taken, another kind refused."""
    L, b = _factor(), _rhs(3, 2)
    run = functools.partial(eval, program)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same_outcome(lambda lib: run({"lib": lib, "L": _ours(L) if lib is internals else L,
                                      "b": _ours(b) if lib is internals else b}), rtol=1e-5, atol=1e-5)
    texts = [str(w.message).split(" (Triggered")[0] for w in caught if "resized" in str(w.message)]
    assert len(texts) in (0, 2) and len(set(texts)) <= 1


@pytest.mark.parametrize("program", [
    "lib.cholesky_solve(b[:, 0], L)", "lib.cholesky_solve(b, L[0])", "lib.cholesky_solve(b, L[:, :2])",
    "lib.cholesky_solve(b[:2], L)", "lib.cholesky_solve(b.float(), L)", "lib.cholesky_solve(b.long(), L.long())",
    "lib.cholesky_solve(b.half(), L.half())", "lib.cholesky_solve(b.expand(2, 3, 2), L.expand(3, 3, 3))",
    "lib.cholesky_inverse(L[0])", "lib.cholesky_inverse(L[:, :2])", "lib.cholesky_inverse(L.int())",
    "lib.cholesky_inverse(L.half())", "lib.cholesky_inverse(lib.ones(2, 0, 0))",
])
def test_cholesky_solvers_refuse_what_torch_refuses(program):
    """Matrices only, square factors that fit b, one dtype of LAPACK's four."""
    L, b = _factor(), _rhs(3, 2)
    same_outcome(lambda lib: eval(program, {"lib": lib, "L": _ours(L) if lib is internals else L,
                                            "b": _ours(b) if lib is internals else b}))


@pytest.mark.parametrize("program", [
    "lib.cholesky_inverse(L * lib.tensor([1.0, 1.0, 0.0]))",
    "lib.cholesky_inverse(lib.stack([L, L * lib.tensor([1.0, 0.0, 1.0])]))",
    "lib.cholesky_inverse((L * lib.tensor([1.0, 0.0, 1.0])).mT, upper=True)",
])
def test_cholesky_inverse_of_a_singular_factor(program):
    """A zero on the factor's diagonal is torch's LinAlgError, the first zero named (and its
    batch element in a batch)."""
    errors = []
    for lib in (torch, internals):
        L = _ours(_factor()) if lib is internals else _factor()
        with pytest.raises(RuntimeError) as caught:
            eval(program, {"lib": lib, "L": L})
        errors.append((type(caught.value).__name__, str(caught.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solvers_gradients_match_torch(upper):
    """CholeskySolveBackward0 and CholeskyInverseBackward0: gradients of b and of the factor
    (batches summed back), and the second gradients through torch's formulas."""
    L0, b0 = _factor(2, 1), _rhs(3, 2)
    L0 = L0.mT if upper else L0
    results = []
    for lib, c in ((internals, _ours), (torch, lambda t: t)):
        L, b = c(L0).requires_grad_(), c(b0).requires_grad_()
        X, inverse = lib.cholesky_solve(b, L, upper), lib.cholesky_inverse(L, upper)
        gb, gL = lib.autograd.grad((X * X).sum() + (inverse * inverse.sin()).sum(), (b, L), create_graph=True)
        ggb, ggL = lib.autograd.grad((gb * gb).sum() + gL.sum(), (b, L))
        results.append(([X.grad_fn.name(), inverse.grad_fn.name()], gb, gL, ggb, ggL))
    (names, *ours), (their_names, *theirs) = results
    assert names == their_names
    for o, t in zip(ours, theirs, strict=True):
        _close(o.detach(), t.detach(), 16 * PRODUCT_ULPS)


def test_cholesky_solvers_run_on_fake_tensors():
    assert_fake_matches_real(lambda lib, b, L: lib.cholesky_solve(b, L, True),
                             lambda: (internals.ones(2, 3, 1), internals.eye(3) + internals.ones(3, 3).triu()))
    assert_fake_matches_real(lambda lib, L: lib.cholesky_inverse(L),
                             lambda: (internals.eye(3).expand(2, 3, 3) + internals.ones(3, 3).tril(),))


# =============================================================================================
# linalg.inv/inverse, linalg.det/det and linalg.lu_factor:
# PyTorch's OpInfo samples (as given and non-contiguous), then everyday calls compared for values,
# strides, dtypes, grad_fn names, gradients (twice where torch differentiates twice), warnings and
# error messages
# =============================================================================================
# The LU products: MKL's blocked factorization rounds in another order.
LU_TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12)}
A = "lib.tensor([[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 2.0, 4.0]])"
ADAPTERS = {
    "linalg.inv": Adapter(internals.linalg.inv, tol=LU_TOL),
    "linalg.inv_ex": Adapter(internals.linalg.inv_ex, tol=LU_TOL),
    "linalg.det": Adapter(internals.linalg.det, tol=LU_TOL),
    "linalg.lu_factor_ex": Adapter(internals.linalg.lu_factor_ex, kwargs=("pivot",), tol=LU_TOL),
}
OPINFO_CASES = opinfo_cases(list(ADAPTERS), (torch.float32, torch.float64, torch.int64, torch.bool))


@pytest.mark.parametrize("name, dtype", OPINFO_CASES)
def test_opinfo_samples(name, dtype):
    adapter = ADAPTERS[OPINFO_BY_NAME[name].name]
    check_opinfo_samples(name, dtype, adapter, compare=compare_call)


PROGRAMS = [
    f"lib.linalg.inv({A})",
    f"lib.inverse({A}.t())",
    f"{A}.inverse()",
    f"lib.linalg.inv({A}.double())",
    f"lib.linalg.inv(lib.stack([{A}, {A} * 2]))",
    f"lib.linalg.inv_ex({A})",
    "lib.linalg.inv_ex(lib.zeros(2, 2))[1]",
    "lib.linalg.inv(lib.zeros(2, 2))",
    "lib.linalg.inv(lib.zeros(3, 2, 2))",
    "lib.linalg.inv(lib.zeros(2, 3))",
    "lib.linalg.inv(lib.zeros(3))",
    "lib.inverse(lib.ones(2, 2, dtype=lib.int64))",
    "lib.linalg.inv(lib.ones(2, 2, dtype=lib.float16))",
    "lib.linalg.inv(lib.zeros(0, 0))",
    f"lib.linalg.det({A})",
    f"lib.det({A}.t())",
    f"{A}.det()",
    "lib.det(lib.tensor([[0.0, 1.0], [1.0, 0.0]]))",
    "lib.det(lib.zeros(2, 2))",
    "lib.det(lib.zeros(0, 0))",
    "lib.det(lib.zeros(2, 3))",
    "lib.det(lib.ones(2, 2, dtype=lib.int64))",
    "lib.det(lib.ones(2, 2, dtype=lib.float16))",
    "lib.linalg.lu_factor(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))",
    "lib.linalg.lu_factor(lib.zeros(2, 2))",
    "lib.linalg.lu_factor_ex(lib.tensor([[1.0, 2.0], [3.0, 4.0]]).double())",
    "lib.unique(lib.tensor([[1, 2], [3, 4], [1, 2]]), dim=1, return_inverse=True, return_counts=True)",
]


def _values_close(ours, theirs):
    """Everything exact but the values, which must agree to float rounding (LAPACK's order)."""
    if theirs[0] == "error" or isinstance(theirs[0], str):
        assert ours == theirs
        return
    (ours, messages_i), (theirs, messages_t) = ours, theirs
    assert messages_i == messages_t
    pairs = list(zip(ours[1], theirs[1])) if isinstance(ours[1], list) else [(ours, theirs)]
    for o, t in pairs:
        assert (o[:3], o[4]) == (t[:3], t[4])
        torch.testing.assert_close([float(v) for v in o[3]], [float(v) for v in t[3]], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("program", PROGRAMS)
def test_everyday_calls(program):
    ours, theirs = _run(internals, program), _run(torch, program)
    _values_close(ours, theirs)


GRAD_CASES = {
    "linalg.inv": lambda lib, x, t: lib.linalg.inv(x[:, :2] + t[:, :2] * 0),
    "inverse of a batch": lambda lib, x, t: lib.inverse(lib.stack([x[:, :2], t[:, 1:]])),
    "det": lambda lib, x, t: lib.det(x[:, 1:]) * t,
    "linalg.det of a batch": lambda lib, x, t: lib.linalg.det(lib.stack([x[:, :2], x[:, 1:] * t[:, :2]])),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_nodes(name):
    """compare_gradients_and_nodes's comparison; t[0, 0] is 0.3 here, and a second derivative may not reach x."""
    compare_gradients_and_nodes(GRAD_CASES[name], first_target=0.3, atol=1e-13, allow_unused=True)


GRADCHECKS = {
    "inv": lambda x: internals.linalg.inv(x[:, :2] + 3 * internals.eye(
        2, dtype=internals.float64)),
    "det": lambda x: internals.det(x[:, :2]),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


CUDA_PROGRAMS = {
    "inv": lambda lib, d: lib.linalg.inv(lib.tensor([[[2.0, 1.0], [1.0, 3.0]], [[0.0, 1.0], [1.0, 0.0]]],
                                                    device=d)),
    "det": lambda lib, d: lib.det(lib.tensor([[[2.0, 1.0], [1.0, 3.0]], [[0.0, 1.0], [1.0, 0.0]]], device=d)),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_kernels_match_the_cpu_ones(name):
    """The CUDA kernels (simulated here) give the CPU kernels' values, which torch's CPU gives."""
    build = CUDA_PROGRAMS[name]
    ours = build(internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), build(torch, "cpu"), rtol=0, atol=0)


def test_linalg_errors_are_linalg_errors():
    for lib in (torch, internals):
        with pytest.raises(lib.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2 is zero"):
            lib.linalg.inv(lib.stack([lib.eye(2), lib.tensor([[1.0, 0.0], [0.0, 0.0]])]))
    assert type(internals.linalg.LinAlgError).__name__ == "type" and issubclass(internals.linalg.LinAlgError,
                                                                                  RuntimeError)
    assert internals.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__ == "_LinAlgError"
