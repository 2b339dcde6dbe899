"""The decompositions and what they solve -- ``linalg.svd``/``svdvals``/``torch.svd``,
``linalg.qr``/``torch.qr``, ``linalg.cholesky``/``cholesky_ex``/``torch.cholesky``,
``linalg.solve``/``solve_ex``, ``linalg.slogdet``/``slogdet``/``logdet`` -- and ``vdot``, against
torch: PyTorch's OpInfo samples (as given and non-contiguous), torch's errors and LinAlgErrors,
grad_fn names and gradients, and the CUDA path.

torch's CPU wheel calls MKL's LAPACK, internals NumPy's (OpenBLAS): the same algorithms
(``gesdd``, ``geqrf``, ``potrf``, ``getrf``), blocked differently, so the last bits differ by
about the condition number times the dtype's epsilon, and the values are compared within
``LAPACK_TOL``. A singular vector is unique only up to its sign (a complex one up to its
phase): U and V are compared after turning each of our columns to torch's, and the columns of
a full U or V beyond the singular values (any orthonormal basis of the rest) through the
projection they span.

The backward formulas' complex branches are compared with torch's by calling them directly on
torch's forward results, and through autograd (``test_complex_gradients_through_autograd``).
"""
import functools
import warnings

import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    assert_same_result,
    assert_same_result_or_error,
    check_opinfo_samples,
    compare_call,
    fn,
    opinfo_cases,
    to_ours_with_complex,
)

import internals

# (rtol, atol): a few hundred epsilons of the dtype, for values of order one
LAPACK_TOL = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-12, 1e-12), torch.complex64: (2e-5, 2e-5),
              torch.complex128: (1e-12, 1e-12)}
L = internals.linalg
ADAPTERS = {
    "linalg.svd": Adapter(L.svd, kwargs=("full_matrices",), tol=LAPACK_TOL),
    "svd": Adapter(fn("svd"), "svd", kwargs=("some", "compute_uv"), tol=LAPACK_TOL),
    "linalg.svdvals": Adapter(L.svdvals, tol=LAPACK_TOL),
    "linalg.qr": Adapter(L.qr, kwargs=("mode",), tol=LAPACK_TOL),
    "qr": Adapter(fn("qr"), "qr", kwargs=("some",), tol=LAPACK_TOL),
    "linalg.cholesky": Adapter(L.cholesky, kwargs=("upper",), tol=LAPACK_TOL),
    "linalg.cholesky_ex": Adapter(L.cholesky_ex, kwargs=("upper",), tol=LAPACK_TOL),
    "cholesky": Adapter(fn("cholesky"), "cholesky", kwargs=("upper",), tol=LAPACK_TOL),
    "linalg.solve": Adapter(L.solve, kwargs=("left",), tol=LAPACK_TOL),
    "linalg.solve_ex": Adapter(L.solve_ex, kwargs=("left",), tol=LAPACK_TOL),
    "linalg.slogdet": Adapter(L.slogdet, tol=LAPACK_TOL),
    "logdet": Adapter(fn("logdet"), "logdet", tol=LAPACK_TOL),
    "vdot": Adapter(fn("vdot"), "vdot", tol={torch.float32: (1e-6, 1e-6)}),
}
CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64))


def _phases(ours, theirs, k):
    """A sign (a unit complex number) per column: what turns each of our first k singular
    vectors into torch's."""
    overlap = (ours[..., :k].conj() * theirs[..., :k]).sum(-2)
    return torch.where(overlap.abs() == 0, 1.0, overlap / overlap.abs()).to(ours.dtype)


def _compare_singular_vectors(ours, theirs, k, tol):
    """Columns of U (or V) of two SVDs: the first k after matching signs, the others (a full
    matrix's) through the projection onto the space they span. The layouts must be equal."""
    mine = ours.to_torch()         # sizes, strides and storage offset kept
    assert (mine.shape, mine.stride(), mine.dtype) == (theirs.shape, theirs.stride(), theirs.dtype)
    rtol, atol = tol[theirs.dtype]
    torch.testing.assert_close(mine[..., :k] * _phases(mine, theirs, k).unsqueeze(-2), theirs[..., :k],
                               rtol=rtol, atol=atol)
    rest_o, rest_t = mine[..., k:], theirs[..., k:]
    torch.testing.assert_close(rest_o @ rest_o.mH, rest_t @ rest_t.mH, rtol=rtol, atol=atol)


def _compare_svd(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    """compare_call for an SVD: S as it is, U and V up to each column's sign."""
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    theirs = theirs_fn(x, *args, **kwargs)
    ours = ours_fn(ours_x, *ours_args, **ours_kwargs)
    assert type(ours).__name__ == type(theirs).__name__ and ours._fields == type(theirs).__match_args__
    U, S, V = ours
    assert_same_result(S, theirs.S, tol)
    if not kwargs.get("compute_uv", True):      # torch.svd's zero matrices
        assert_same_result((U, V), (theirs.U, theirs.V))
        return
    k = S.shape[-1]
    _compare_singular_vectors(U, theirs.U, k, tol)
    if "Vh" in ours._fields:        # rows of Vh are the columns of V
        _compare_singular_vectors(V.mT, theirs.Vh.mT, k, tol)
    else:
        _compare_singular_vectors(V, theirs.V, k, tol)


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    compare = _compare_svd if name in ("linalg.svd", "svd") else compare_call
    check_opinfo_samples(name, dtype, ADAPTERS[name], convert=to_ours_with_complex, compare=compare)


NOT_PD = [[1.0, 2.0], [2.0, 1.0]]
ERROR_CASES = {
    "svd of integers": lambda lib: lib.linalg.svd(lib.ones(2, 2, dtype=lib.int64)),
    "svd of a vector": lambda lib: lib.linalg.svd(lib.ones(2)),
    "svd of half": lambda lib: lib.linalg.svd(lib.ones(2, 2, dtype=lib.float16)),
    "svd with a driver on the CPU": lambda lib: lib.linalg.svd(lib.ones(2, 2), driver="gesvd"),
    "svd of NaN": lambda lib: lib.linalg.svd(lib.tensor([[1.0, float("nan")], [0.0, 1.0]])),
    # (Not a batch with a non-finite matrix: whether torch raises LinAlgError there or returns NaN
    # depends on which LAPACK routine and path runs, so the case has no one answer to compare.)
    "svdvals of a vector": lambda lib: lib.linalg.svdvals(lib.ones(2)),
    "torch.svd of a vector": lambda lib: lib.svd(lib.ones(2)),
    "svd of an empty matrix": lambda lib: lib.linalg.svd(lib.ones(3, 0)),
    "svd of an empty batch": lambda lib: lib.linalg.svd(lib.ones(0, 2, 3), full_matrices=False),
    "torch.svd without U and V": lambda lib: lib.svd(lib.ones(2, 4, 3), compute_uv=False),
    "qr mode": lambda lib: lib.linalg.qr(lib.ones(2, 2), mode="x"),
    "qr of a vector": lambda lib: lib.linalg.qr(lib.ones(2)),
    "qr of integers": lambda lib: lib.linalg.qr(lib.ones(2, 2, dtype=lib.int64)),
    "qr of half": lambda lib: lib.linalg.qr(lib.ones(2, 2, dtype=lib.float16)),
    "qr of an empty matrix": lambda lib: lib.linalg.qr(lib.ones(3, 0), mode="complete"),
    "qr r": lambda lib: lib.linalg.qr(lib.tensor([[3.0, 1.0], [4.0, 2.0], [0.0, 1.0]]), mode="r"),
    "cholesky not positive-definite": lambda lib: lib.linalg.cholesky(lib.tensor(NOT_PD)),
    "cholesky of a batch": lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), lib.tensor(NOT_PD)])),
    "cholesky_ex's info": lambda lib: lib.linalg.cholesky_ex(lib.stack([lib.eye(2), lib.tensor(NOT_PD)])).info,
    "cholesky_ex checking errors": lambda lib: lib.linalg.cholesky_ex(lib.tensor(NOT_PD), check_errors=True),
    "torch.cholesky not positive-definite": lambda lib: lib.cholesky(lib.tensor(NOT_PD)),
    "cholesky of NaN": lambda lib: lib.linalg.cholesky(lib.tensor([[float("nan"), 0.0], [0.0, 1.0]])),
    "cholesky rectangular": lambda lib: lib.linalg.cholesky(lib.ones(2, 3)),
    "cholesky of integers": lambda lib: lib.linalg.cholesky(lib.ones(2, 2, dtype=lib.int64)),
    "cholesky of half": lambda lib: lib.linalg.cholesky(lib.ones(2, 2, dtype=lib.float16)),
    "torch.cholesky rectangular": lambda lib: lib.cholesky(lib.ones(2, 3)),
    "torch.cholesky of a vector": lambda lib: lib.cholesky(lib.ones(3)),
    "torch.cholesky of integers": lambda lib: lib.cholesky(lib.ones(2, 2, dtype=lib.int64)),
    "torch.cholesky of an empty batch": lambda lib: lib.cholesky(lib.ones(0, 2, 2)),
    "cholesky reads one triangle": lambda lib: lib.linalg.cholesky(lib.tensor([[4.0, 100.0], [2.0, 5.0]])),
    "cholesky upper reads the other": lambda lib: lib.linalg.cholesky(lib.tensor([[4.0, 2.0], [100.0, 5.0]]),
                                                                      upper=True),
    "solve singular": lambda lib: lib.linalg.solve(lib.zeros(2, 2), lib.ones(2)),
    "solve singular in a batch": lambda lib: lib.linalg.solve(lib.stack([lib.eye(2), lib.zeros(2, 2)]), lib.ones(2)),
    "solve_ex singular": lambda lib: lib.linalg.solve_ex(lib.zeros(2, 2), lib.ones(2)).info,
    "solve_ex checking errors": lambda lib: lib.linalg.solve_ex(lib.zeros(2, 2), lib.ones(2), check_errors=True),
    "solve dtypes": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64)),
    "solve vector size": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3)),
    "solve matrix size": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3, 2)),
    "solve on the right, size": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, 3), left=False),
    "solve on the right, vector": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2), left=False),
    "solve rectangular": lambda lib: lib.linalg.solve(lib.ones(2, 3), lib.ones(2)),
    "solve batches": lambda lib: lib.linalg.solve(lib.ones(2, 2, 2), lib.ones(3, 2, 1)),
    "solve integers": lambda lib: lib.linalg.solve(lib.ones(2, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    "solve half": lambda lib: lib.linalg.solve(lib.ones(2, 2, dtype=lib.float16), lib.ones(2, dtype=lib.float16)),
    "solve broadcasts A": lambda lib: lib.linalg.solve(lib.tensor([[2.0, 1.0], [1.0, 3.0]]),
                                                       lib.arange(12.0).reshape(3, 2, 2)),
    "solve a batch of vectors": lambda lib: lib.linalg.solve(lib.tensor([[2.0, 1.0], [1.0, 3.0]]).expand(3, 2, 2),
                                                             lib.arange(6.0).reshape(3, 2)),
    "solve on the right of a batch": lambda lib: lib.linalg.solve(
        lib.tensor([[2.0, 1.0], [1.0, 3.0]]).expand(3, 2, 2), lib.arange(12.0).reshape(3, 2, 2), left=False),
    "slogdet singular": lambda lib: lib.linalg.slogdet(lib.zeros(2, 2)),
    "slogdet negative": lambda lib: lib.slogdet(lib.tensor([[0.0, 1.0], [1.0, 0.0]])),
    "slogdet rectangular": lambda lib: lib.linalg.slogdet(lib.ones(2, 3)),
    "slogdet of integers": lambda lib: lib.linalg.slogdet(lib.ones(2, 2, dtype=lib.int64)),
    "slogdet of half": lambda lib: lib.linalg.slogdet(lib.ones(2, 2, dtype=lib.float16)),
    "logdet negative": lambda lib: lib.logdet(lib.tensor([[0.0, 1.0], [1.0, 0.0]])),
    "logdet singular": lambda lib: lib.logdet(lib.zeros(2, 2)),
    "logdet of integers": lambda lib: lib.logdet(lib.ones(2, 2, dtype=lib.int64)),
    "logdet of half": lambda lib: lib.logdet(lib.ones(2, 2, dtype=lib.float16)),
    "vdot of matrices": lambda lib: lib.vdot(lib.ones(2, 2), lib.ones(2, 2)),
    "vdot sizes": lambda lib: lib.vdot(lib.ones(2), lib.ones(3)),
    "vdot dtypes": lambda lib: lib.vdot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "vdot of integers": lambda lib: lib.vdot(lib.arange(3), lib.arange(3)),
    "vdot of bools": lambda lib: lib.vdot(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
    "vdot of empty vectors": lambda lib: lib.vdot(lib.ones(0), lib.ones(0)),
    "vdot conjugates the first": lambda lib: lib.vdot(lib.tensor([1 + 2j, 3j]), lib.tensor([2 - 1j, 1 + 1j])),
    "vdot method": lambda lib: lib.arange(3.0).vdot(lib.arange(3.0) - 1),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_and_corner_cases(case):
    """torch's exception class and message, or its result (values within LAPACK's differences)."""
    assert_same_result_or_error(ERROR_CASES[case], {torch.float32: (1e-6, 1e-6), torch.complex64: (1e-6, 1e-6)})


def test_linalg_errors_are_linalg_errors():
    for lib in (torch, internals):
        with pytest.raises(lib.linalg.LinAlgError, match="leading minor of order 2 is not positive-definite"):
            lib.linalg.cholesky(lib.tensor(NOT_PD))
        with pytest.raises(lib.linalg.LinAlgError, match="input matrix is singular"):
            lib.linalg.solve(lib.zeros(2, 2), lib.ones(2))


def test_deprecated_forms_warn_once_each():
    """torch.qr and torch.cholesky warn (once per process) what replaces them; torch.svd does not."""
    for lib in (torch, internals):
        lib.qr(lib.eye(2))      # the first call's warning may have gone to another test
        lib.cholesky(lib.eye(2))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.qr(lib.eye(2))
            lib.cholesky(lib.eye(2))
            lib.svd(lib.eye(2))
        assert not caught, [str(w.message) for w in caught]


def _matrix(lib, *shape, spd=False, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    if spd:
        t = t @ t.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)
    return lib.tensor(t.tolist(), dtype=lib.float64, requires_grad=True)


def _recorded_matrix(made, lib, *shape, spd=False, seed=0):
    """``_matrix``, kept in ``made`` so that the test can ask for its gradient."""
    made.append(_matrix(lib, *shape, spd=spd, seed=seed))
    return made[-1]


def _wave(t):
    """A function of a result that weighs each element differently."""
    return (t * (1 + t.sin())).sum()


GRAD_CASES = {
    "svdvals": lambda lib, a: lib.linalg.svdvals(a(lib, 2, 4, 3)),
    "svd, U Vh": lambda lib, a: (lambda r: _wave(r.U @ r.Vh))(lib.linalg.svd(a(lib, 4, 3), full_matrices=False)),
    "svd of a wide batch, sign-free parts": lambda lib, a: (lambda r: _wave(r.U[..., :1] * r.Vh[..., :1, :])
                                                           + _wave(r.S))(lib.linalg.svd(a(lib, 2, 3, 5))),
    "svd of a tall matrix, full": lambda lib, a: (lambda r: _wave(r.U[..., :2] @ r.Vh[..., :2, :]))(
        lib.linalg.svd(a(lib, 5, 3))),
    "torch.svd": lambda lib, a: (lambda r: _wave(r.U @ r.V.mT) + r.S.sum())(lib.svd(a(lib, 3, 3))),
    "torch.svd without U and V": lambda lib, a: lib.svd(a(lib, 3, 4), compute_uv=False).S,
    "qr": lambda lib, a: (lambda r: _wave(r.Q) + _wave(r.R))(lib.linalg.qr(a(lib, 2, 4, 3))),
    "qr, R only used": lambda lib, a: lib.linalg.qr(a(lib, 4, 4)).R,
    "qr of a wide matrix": lambda lib, a: (lambda r: _wave(r.Q) + _wave(r.R))(lib.linalg.qr(a(lib, 3, 5))),
    "qr complete, square": lambda lib, a: (lambda r: _wave(r.Q))(lib.linalg.qr(a(lib, 3, 3), mode="complete")),
    "cholesky": lambda lib, a: lib.linalg.cholesky(a(lib, 3, 3, spd=True)),
    "cholesky upper of a batch": lambda lib, a: lib.linalg.cholesky(a(lib, 2, 3, 3, spd=True), upper=True),
    "cholesky_ex": lambda lib, a: lib.linalg.cholesky_ex(a(lib, 3, 3, spd=True)).L,
    "torch.cholesky": lambda lib, a: lib.cholesky(a(lib, 3, 3, spd=True), upper=True),
    "solve": lambda lib, a: lib.linalg.solve(a(lib, 3, 3), a(lib, 3, 2, seed=1)),
    "solve a vector": lambda lib, a: lib.linalg.solve(a(lib, 2, 3, 3), a(lib, 3, seed=1)),
    "solve on the right": lambda lib, a: lib.linalg.solve(a(lib, 3, 3), a(lib, 2, 3, seed=1), left=False),
    "solve, A broadcast": lambda lib, a: lib.linalg.solve(a(lib, 3, 3), a(lib, 2, 3, 2, seed=1)),
    "solve_ex": lambda lib, a: lib.linalg.solve_ex(a(lib, 3, 3), a(lib, 3, 2, seed=1)).result,
    "slogdet": lambda lib, a: lib.linalg.slogdet(a(lib, 2, 3, 3)).logabsdet,
    "slogdet's sign": lambda lib, a: (lambda r: r.sign * r.logabsdet)(lib.slogdet(a(lib, 3, 3))),
    "logdet": lambda lib, a: lib.logdet(a(lib, 3, 3, spd=True)),
    "vdot": lambda lib, a: lib.vdot(a(lib, 4), a(lib, 4, seed=1)),
}


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradients_and_nodes(case):
    """The result's grad_fn name and value, and the gradient of every input, as torch's."""
    results = []
    for lib in (torch, internals):
        made = []
        y = GRAD_CASES[case](lib, functools.partial(_recorded_matrix, made))
        grads = lib.autograd.grad(_wave(y), made)
        results.append((type(y.grad_fn).__name__, y, grads))
    (node_t, y_t, grads_t), (node_i, y_i, grads_i) = results
    assert node_i == node_t
    assert_same(y_i, y_t, rtol=1e-12, atol=1e-12, exact_layout=False)
    for ours, theirs in zip(grads_i, grads_t, strict=True):
        assert_same(ours, theirs, rtol=1e-10, atol=1e-10)


GRADCHECKS = {
    "svdvals": lambda x: L.svdvals(x),
    "svd": lambda x: (lambda r: r.U @ r.Vh)(L.svd(x, full_matrices=False)),
    "qr": lambda x: L.qr(x.mT),
    "qr of a wide matrix": lambda x: L.qr(x),
    "cholesky": lambda x: L.cholesky(x @ x.mT + internals.eye(2, dtype=internals.float64)),
    "solve": lambda x: L.solve(x[:, :2] + 3 * internals.eye(2, dtype=internals.float64), x[:, 2]),
    "slogdet": lambda x: L.slogdet(x[:, :2] + 3 * internals.eye(2, dtype=internals.float64)).logabsdet,
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    """Each backward formula against finite differences."""
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


def test_qr_refuses_the_gradients_torch_refuses():
    for lib in (torch, internals):
        x = lib.ones(3, 2, dtype=lib.float64).cumsum(0).requires_grad_()
        with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
            lib.linalg.qr(x, mode="r").R.sum().backward()
        with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
            lib.linalg.qr(x, mode="complete").R.sum().backward()


CUDA_PROGRAMS = {
    "svd": lambda lib, d: lib.linalg.svdvals(lib.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], device=d)),
    "qr": lambda lib, d: lib.linalg.qr(lib.tensor([[3.0, 1.0], [4.0, 2.0]], device=d)).R,
    "cholesky": lambda lib, d: lib.linalg.cholesky(lib.tensor([[4.0, 2.0], [2.0, 5.0]], device=d)),
    "solve": lambda lib, d: lib.linalg.solve(lib.tensor([[2.0, 1.0], [1.0, 3.0]], device=d),
                                             lib.tensor([1.0, 2.0], device=d)),
    "vdot": lambda lib, d: lib.vdot(lib.arange(4.0, device=d), lib.arange(4.0, device=d) + 1),
    # the LU kernels compiled for complex elements (one thread per matrix)
    "complex inverse": lambda lib, d: lib.linalg.inv(lib.tensor([[1 + 2j, 3j], [2 - 1j, 4 + 0j]], device=d)),
    "complex slogdet": lambda lib, d: lib.linalg.slogdet(lib.tensor([[1 + 2j, 3j], [2 - 1j, 4 + 0j]], device=d)).sign,
    "complex svdvals": lambda lib, d: lib.linalg.svdvals(lib.tensor([[1 + 2j, 3j], [2 - 1j, 4 + 0j]], device=d)),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_inputs(name):
    """A CUDA input (simulated here) is factored on the host and its results come back to it."""
    ours = CUDA_PROGRAMS[name](internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), CUDA_PROGRAMS[name](torch, "cpu"), rtol=1e-6, atol=1e-6)


def _complex_matrix(*shape, spd=False, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    t = torch.randn(*shape, generator=g, dtype=torch.complex128)
    return t @ t.mH + shape[-1] * torch.eye(shape[-1], dtype=torch.complex128) if spd else t


def _torch_backward(outputs, A, grads):
    """torch's gradient of A for the given output gradients (None where an output has none)."""
    pairs = [(o, g) for o, g in zip(outputs, grads, strict=True) if g is not None]
    return torch.autograd.grad([o for o, _ in pairs], A, [g for _, g in pairs])[0]


def _ours(*tensors):
    return [None if t is None else internals.from_torch(t.detach()) for t in tensors]


def _phase_free_svd_grads(U, S, Vh):
    """Output gradients of a loss that does not change with the phase of a singular pair (of U Vh)."""
    loss = ((U @ Vh).real.sin().sum() + (U @ Vh).imag.sum() + S.sum())
    return torch.autograd.grad(loss, (U, S, Vh), retain_graph=True)


def _complex_case(name):
    """(ours, torch's) gradient of a complex A through one backward formula, torch's forward
    results fed to both."""
    from internals.aten import dispatcher
    from internals.autograd import functions_manual as fm
    g = torch.Generator().manual_seed(7)
    rand = lambda *s: torch.randn(*s, generator=g, dtype=torch.complex128)  # noqa: E731
    if name.startswith("svd"):
        A = _complex_matrix(*((4, 3) if name == "svd tall" else (3, 5))).requires_grad_()
        U, S, Vh = torch.linalg.svd(A, full_matrices=False)
        grads = _phase_free_svd_grads(U, S, Vh)
        return fm.svd_backward(*_ours(*grads, U, S, Vh), False), _torch_backward((U, S, Vh), A, grads)
    if name.startswith("qr"):
        A = _complex_matrix(*((4, 3) if name == "qr tall" else (3, 5))).requires_grad_()
        Q, R = torch.linalg.qr(A)
        grads = (rand(*Q.shape), rand(*R.shape))
        return fm.linalg_qr_backward(*_ours(*grads, Q, R), "reduced"), _torch_backward((Q, R), A, grads)
    if name.startswith("cholesky"):
        upper = name == "cholesky upper"
        A = _complex_matrix(3, 3, spd=True).requires_grad_()
        L = torch.linalg.cholesky(A, upper=upper)
        gL = rand(3, 3)
        return fm.cholesky_backward(*_ours(gL), upper, *_ours(L)), _torch_backward((L,), A, (gL,))
    A = _complex_matrix(2, 3, 3).requires_grad_()
    a, = _ours(A)
    if name == "solve":
        B, gX = _complex_matrix(2, 3, 2, seed=1), rand(2, 3, 2)
        X = torch.linalg.solve(A, B)
        _, LU, pivots, _ = dispatcher.call("_linalg_solve_ex", a, *_ours(B))
        gA, _ = fm.linalg_solve_backward(*_ours(gX, X), a, LU, pivots, True, (True, True))
        return gA, _torch_backward((X,), A, (gX,))
    if name == "det":
        det, gd = torch.linalg.det(A), rand(2)
        _, LU, pivots = dispatcher.call("_linalg_det", a)
        with internals.no_grad():
            return fm.linalg_det_backward(*_ours(gd, det), a, LU, pivots), _torch_backward((det,), A, (gd,))
    sign, logabsdet = torch.linalg.slogdet(A)
    grads = {"slogdet": (rand(2), torch.randn(2, generator=g, dtype=torch.float64)),
             "slogdet sign": (rand(2), None)}[name]
    _, _, LU, pivots = dispatcher.call("_linalg_slogdet", a)
    ours = fm.slogdet_backward(*_ours(*grads), a, *_ours(sign), LU, pivots)
    return ours, _torch_backward((sign, logabsdet), A, grads)


@pytest.mark.parametrize("name", ["svd tall", "svd wide", "qr tall", "qr wide", "cholesky", "cholesky upper",
                                  "solve", "det", "slogdet", "slogdet sign"])
def test_complex_backward_formulas(name):
    """Each formula's complex branch gives torch's gradient from the same forward results."""
    ours, theirs = _complex_case(name)
    torch.testing.assert_close(ours.to_torch(), theirs, rtol=1e-10, atol=1e-10)


def test_complex_svd_refuses_a_phase_dependent_loss():
    from internals.autograd import functions_manual as fm
    A = _complex_matrix(3, 3).requires_grad_()
    U, S, Vh = torch.linalg.svd(A)
    with pytest.raises(RuntimeError, match="depends on this phase term") as theirs:
        U[..., 0, 0].real.backward()
    gU = torch.zeros_like(U)
    gU[0, 0] = 1
    with pytest.raises(RuntimeError) as ours:
        fm.svd_backward(*_ours(gU, None, None, U, S, Vh), False)
    assert str(ours.value) == str(theirs.value)


COMPLEX_GRAD_CASES = {
    "inv": lambda L, A: L.linalg.inv(A),
    "det": lambda L, A: L.linalg.det(A),
    "slogdet": lambda L, A: L.linalg.slogdet(A).logabsdet,
    "solve": lambda L, A: L.linalg.solve(A, A.mH.sum(-1)),
    "cholesky": lambda L, A: L.linalg.cholesky(A @ A.mH + L.eye(3, dtype=A.dtype)),
    "svdvals": lambda L, A: L.linalg.svdvals(A),
    "qr's R, |.|": lambda L, A: L.linalg.qr(A).R.abs(),
}


@pytest.mark.parametrize("case", COMPLEX_GRAD_CASES)
def test_complex_gradients_through_autograd(case):
    """A complex matrix's gradient through the whole graph, node name and value, as torch's."""
    g = torch.Generator().manual_seed(11)
    data = torch.randn(3, 3, generator=g, dtype=torch.complex128)
    results = []
    for lib in (torch, internals):
        A = lib.tensor(data.tolist(), dtype=lib.complex128, requires_grad=True)
        out = COMPLEX_GRAD_CASES[case](lib, A)
        loss = (out.abs() ** 2).sum() + (out.real * out.imag).sum() if out.is_complex() else (out * out).sum()
        results.append((type(out.grad_fn).__name__, lib.autograd.grad(loss, A)[0]))
    (node_t, g_t), (node_i, g_i) = results
    assert node_i == node_t
    assert_same(g_i, g_t, rtol=1e-10, atol=1e-10, exact_layout=False)


def _node_names(t):
    """The type names of every node in ``t``'s graph, depth first from its grad_fn."""
    seen, names, stack = set(), [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        stack.extend(f for f, _ in node.next_functions)
    return names


DOUBLE_BACKWARD_CASES = {
    "cholesky": lambda lib, A: lib.cholesky(A),
    "cholesky upper": lambda lib, A: lib.cholesky(A, upper=True),
    "linalg.cholesky": lambda lib, A: lib.linalg.cholesky(A),
    "linalg.qr": lambda lib, A: (lambda r: r.Q.sum() + r.R)(lib.linalg.qr(A)),
    "torch.qr's R": lambda lib, A: lib.qr(A).R,
    "linalg.qr of a wide matrix": lambda lib, A: (lambda r: r.Q.sum() + r.R)(lib.linalg.qr(A[..., :3, :])),
    "linalg.qr, complex and wide": lambda lib, A: (lambda r: r.Q.sum() + r.R)(
        lib.linalg.qr(A[..., :3, :] * (1 + 1j))),
}


@pytest.mark.parametrize("case", DOUBLE_BACKWARD_CASES)
def test_first_gradient_graph_is_torchs(case):
    """The graph of the first gradient (taken with create_graph=True) holds torch's nodes --
    triangular solves, the in-place halving of a diagonal -- and its second gradient torch's value."""
    spd = torch.tensor([[5.0, 1.0, 0.5, 0.0], [1.0, 4.0, 0.25, 1.0], [0.5, 0.25, 3.0, 0.5], [0.0, 1.0, 0.5, 6.0]],
                       dtype=torch.float64)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)       # torch.cholesky and torch.qr are deprecated
        for lib in (torch, internals):
            A = lib.tensor(spd.tolist(), dtype=lib.float64, requires_grad=True)
            y = DOUBLE_BACKWARD_CASES[case](lib, A)
            g, = lib.autograd.grad((y.abs() ** 2).sum(), A, create_graph=True)
            gg, = lib.autograd.grad((g * g).sum(), A)
            results.append((_node_names(g), g, gg))
    (names_t, g_t, gg_t), (names_i, g_i, gg_i) = results
    assert names_i == names_t
    assert_same(g_i, g_t, rtol=1e-10, atol=1e-10, exact_layout=False)
    assert_same(gg_i, gg_t, rtol=1e-9, atol=1e-9, exact_layout=False)
