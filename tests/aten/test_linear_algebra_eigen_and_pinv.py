"""The eigendecompositions -- ``linalg.eigh``/``eigvalsh`` (``_linalg_eigh``), ``linalg.eig``/
``eigvals`` (``_linalg_eigvals``) -- and the pseudo-inverse ``linalg.pinv``/``pinverse``,
against torch: PyTorch's OpInfo samples (real and complex, as given and non-contiguous),
torch's errors, return types, grad_fn names and gradients.

LAPACK's last bits differ between torch's MKL and NumPy's OpenBLAS, so values are compared
within ``LAPACK_TOL`` (as in ``test_linear_algebra_decompositions.py``). An eigenvector is unique
only up to its sign (a complex one up to its phase): each of our columns is turned to torch's
before comparing. ``geev``'s order of a general matrix's eigenvalues is the library's (MKL and
OpenBLAS deflate differently): ours are put in torch's order, each to its nearest, first.
``linalg_eig_backward``'s complex branches are compared with torch's through autograd (eig's
results are complex for a real A) and by calling the formula directly on torch's forward results.
"""
import functools

import pytest
import torch
from helpers import (
    Adapter,
    assert_same,
    assert_same_result,
    assert_same_result_or_error,
    check_opinfo_samples,
    compare_call,
    to_ours_with_complex,
)
from torch.testing._internal.common_methods_invocations import op_db

import internals
from internals.autograd import functions_manual as fm

LAPACK_TOL = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-12, 1e-12), torch.complex64: (2e-5, 2e-5),
              torch.complex128: (1e-12, 1e-12)}
# a general matrix's eigenvalues are as well conditioned as its eigenvectors are apart: looser
EIG_TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10), torch.complex64: (1e-4, 1e-4),
           torch.complex128: (1e-10, 1e-10)}
L = internals.linalg
ADAPTERS = {
    "linalg.eigh": Adapter(L.eigh, kwargs=("UPLO",), tol=LAPACK_TOL),
    "linalg.eigvalsh": Adapter(L.eigvalsh, kwargs=("UPLO",), tol=LAPACK_TOL),
    "linalg.eig": Adapter(L.eig, tol=EIG_TOL),
    "linalg.eigvals": Adapter(L.eigvals, tol=EIG_TOL),
    "linalg.pinv": Adapter(L.pinv, kwargs=("hermitian", "atol", "rtol", "rcond"), tol=EIG_TOL),
    "pinverse": Adapter(internals.pinverse, "pinverse", kwargs=("rcond",), tol=EIG_TOL),
}
# the "singular" samples are factors a, b of a low-rank a @ b^T
SINGULAR = Adapter(lambda a, b: L.pinv(a @ b.mT), tol=EIG_TOL)
OPINFOS = [op for op in op_db if op.name in ADAPTERS]
CASES = [pytest.param(op, dtype, id=f"{op.name}-{op.variant_test_name or 'default'}-{str(dtype)[6:]}")
         for op in OPINFOS for dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128)
         if dtype in op.supported_dtypes("cpu")]


def _phased(ours, theirs):
    """Our eigenvectors, each column turned by the sign or phase that makes it torch's."""
    overlap = (ours.conj() * theirs).sum(-2)
    phase = torch.where(overlap.abs() == 0, 1.0, overlap / overlap.abs()).to(ours.dtype)
    return ours * phase.unsqueeze(-2)


def _compare_eigen(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    """compare_call for eig/eigh: the eigenvalues as they are, the eigenvectors up to phase, with
    the layouts and the return type equal."""
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    theirs = theirs_fn(x, *args, **kwargs)
    ours = ours_fn(ours_x, *ours_args, **ours_kwargs)
    assert type(ours).__name__ == type(theirs).__name__ and ours._fields == type(theirs).__match_args__
    assert_same_result(ours.eigenvalues, theirs.eigenvalues, tol)
    mine = ours.eigenvectors.to_torch()
    assert (mine.shape, mine.stride(), mine.dtype) == (theirs.eigenvectors.shape, theirs.eigenvectors.stride(),
                                                      theirs.eigenvectors.dtype)
    rtol, atol = tol[theirs.eigenvectors.dtype]
    torch.testing.assert_close(_phased(mine, theirs.eigenvectors), theirs.eigenvectors, rtol=rtol, atol=atol)


def _torch_order(ours, theirs):
    """For each of torch's eigenvalues, the position of our nearest one (a permutation)."""
    if ours.numel() == 0:
        return torch.zeros(ours.shape, dtype=torch.int64)
    nearest = (ours.unsqueeze(-1) - theirs.unsqueeze(-2)).abs().argmin(-2)
    assert (nearest.sort(-1).values == torch.arange(ours.shape[-1])).all(), "no one-to-one match"
    return nearest


def _compare_general_eigen(ours_fn, theirs_fn, sample, ours_sample, tol=None):
    """eig and eigvals: layouts and dtypes as torch's; values (and vectors, up to phase) after
    putting ours in torch's order."""
    (x, args, kwargs), (ours_x, ours_args, ours_kwargs) = sample, ours_sample
    theirs = theirs_fn(x, *args, **kwargs)
    ours = ours_fn(ours_x, *ours_args, **ours_kwargs)
    pairs = [(ours, theirs)] if isinstance(theirs, torch.Tensor) else list(zip(ours, theirs, strict=True))
    mine = [o.to_torch() for o, _ in pairs]
    assert [(m.shape, m.stride(), m.dtype) for m in mine] == [(t.shape, t.stride(), t.dtype) for _, t in pairs]
    order = _torch_order(mine[0], pairs[0][1])
    rtol, atol = tol[pairs[0][1].dtype]
    torch.testing.assert_close(mine[0].gather(-1, order), pairs[0][1], rtol=rtol, atol=atol)
    if len(pairs) == 2:
        vectors = mine[1].gather(-1, order.unsqueeze(-2).expand(mine[1].shape))
        torch.testing.assert_close(_phased(vectors, pairs[1][1]), pairs[1][1], rtol=rtol, atol=atol)


COMPARE = {"linalg.eigh": _compare_eigen, "linalg.eig": _compare_general_eigen,
           "linalg.eigvals": _compare_general_eigen}


@pytest.mark.parametrize("op, dtype", CASES)
def test_opinfo_samples(op, dtype):
    compare = COMPARE.get(op.name, compare_call)
    adapter = SINGULAR if op.variant_test_name == "singular" else ADAPTERS[op.name]
    check_opinfo_samples(op.name, dtype, adapter, op=op, convert=to_ours_with_complex, compare=compare)


ERROR_CASES = {
    "eigh of integers": lambda lib: lib.linalg.eigh(lib.ones(2, 2, dtype=lib.int64)),
    "eigh of half": lambda lib: lib.linalg.eigh(lib.ones(2, 2, dtype=lib.float16)),
    "eigh rectangular": lambda lib: lib.linalg.eigh(lib.ones(2, 3)),
    "eigh of a vector": lambda lib: lib.linalg.eigh(lib.ones(3)),
    "eigh UPLO": lambda lib: lib.linalg.eigh(lib.ones(2, 2), UPLO="X"),
    "eigh UPLO of two letters": lambda lib: lib.linalg.eigh(lib.ones(2, 2), UPLO="LL"),
    "eigh reads the lower triangle": lambda lib: lib.linalg.eigh(lib.tensor([[2.0, 100.0], [1.0, 3.0]])).eigenvalues,
    "eigvalsh reads the upper with u": lambda lib: lib.linalg.eigvalsh(lib.tensor([[2.0, 1.0], [100.0, 3.0]]), "u"),
    "eigh of an empty batch": lambda lib: lib.linalg.eigh(lib.ones(0, 2, 2)),
    "eigvalsh of integers": lambda lib: lib.linalg.eigvalsh(lib.ones(2, 2, dtype=lib.int64)),
    "eigvalsh rectangular": lambda lib: lib.linalg.eigvalsh(lib.ones(2, 3)),
    "eig of integers": lambda lib: lib.linalg.eig(lib.ones(2, 2, dtype=lib.int64)),
    "eig of half": lambda lib: lib.linalg.eig(lib.ones(2, 2, dtype=lib.float16)),
    "eig rectangular": lambda lib: lib.linalg.eig(lib.ones(2, 3)),
    "eig of a vector": lambda lib: lib.linalg.eig(lib.ones(3)),
    "eig of NaN": lambda lib: lib.linalg.eig(lib.tensor([[1.0, float("nan")], [0.0, 1.0]])),
    "eig of a rotation": lambda lib: lib.linalg.eig(lib.tensor([[0.0, -1.0], [1.0, 0.0]])).eigenvalues,
    "eigvals of integers": lambda lib: lib.linalg.eigvals(lib.ones(2, 2, dtype=lib.int64)),
    "eigvals rectangular": lambda lib: lib.linalg.eigvals(lib.ones(2, 3)),
    "eigvals of a rotation": lambda lib: lib.linalg.eigvals(lib.tensor([[0.0, -1.0], [1.0, 0.0]])),
    "eigvals of an empty matrix": lambda lib: lib.linalg.eigvals(lib.ones(0, 0)),
    "pinv of integers": lambda lib: lib.linalg.pinv(lib.ones(2, 2, dtype=lib.int64)),
    "pinv of a vector": lambda lib: lib.linalg.pinv(lib.ones(3)),
    "pinv of half": lambda lib: lib.linalg.pinv(lib.ones(2, 2, dtype=lib.float16)),
    "pinv complex atol": lambda lib: lib.linalg.pinv(lib.ones(2, 2), atol=lib.tensor(1j)),
    "pinv complex rtol": lambda lib: lib.linalg.pinv(lib.ones(2, 2), rtol=lib.tensor(1j)),
    "pinv complex rcond": lambda lib: lib.linalg.pinv(lib.ones(2, 2), rcond=lib.tensor(1j)),
    "pinv of an empty matrix": lambda lib: lib.linalg.pinv(lib.ones(0, 3)),
    "pinv of a rank-one matrix": lambda lib: lib.linalg.pinv(lib.ones(2, 3)),
    "pinv atol drops the small ones": lambda lib: lib.linalg.pinv(lib.diag(lib.tensor([4.0, 0.5])), atol=1.0),
    "pinv atol 0 keeps the default rtol": lambda lib: lib.linalg.pinv(lib.diag(lib.tensor([1.0, 1e-9])), atol=0.0),
    "pinv rtol as tensor": lambda lib: lib.linalg.pinv(lib.diag(lib.tensor([4.0, 0.5])), rtol=lib.tensor(0.2)),
    "pinv hermitian of an indefinite matrix": lambda lib: lib.linalg.pinv(lib.tensor([[1.0, 2.0], [2.0, -3.0]]),
                                                                          hermitian=True),
    "pinv rcond": lambda lib: lib.linalg.pinv(lib.diag(lib.tensor([4.0, 0.5])), 0.2),
    "pinverse method": lambda lib: lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]]).pinverse(),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_and_corner_cases(case):
    """torch's exception class and message, or its result (values within LAPACK's differences)."""
    assert_same_result_or_error(ERROR_CASES[case], {torch.float32: (1e-6, 1e-6), torch.complex64: (1e-6, 1e-6)})


def _matrix(lib, *shape, symmetric=False, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    if symmetric:
        t = t + t.mT
    return lib.tensor(t.tolist(), dtype=lib.float64, requires_grad=True)


def _recorded_matrix(made, lib, *shape, **kwargs):
    made.append(_matrix(lib, *shape, **kwargs))
    return made[-1]


def _wave(t):
    return (t * (1 + t.sin())).sum()


def _sign_free(V):
    """A function of eigenvectors that does not change with their signs."""
    return V * V[..., :1, :]


GRAD_CASES = {
    "eigvalsh": lambda lib, a: lib.linalg.eigvalsh(a(lib, 2, 3, 3, symmetric=True)),
    "eigvalsh upper": lambda lib, a: lib.linalg.eigvalsh(a(lib, 3, 3), UPLO="U"),
    "eigh": lambda lib, a: (lambda r: r.eigenvalues.sum() + _wave(_sign_free(r.eigenvectors)))(
        lib.linalg.eigh(a(lib, 3, 3, symmetric=True))),
    "eigh's vectors only": lambda lib, a: _sign_free(lib.linalg.eigh(a(lib, 2, 4, 4, symmetric=True)).eigenvectors),
    "eigh reads one triangle": lambda lib, a: lib.linalg.eigh(a(lib, 3, 3)).eigenvalues,
    "pinv of a wide matrix": lambda lib, a: lib.linalg.pinv(a(lib, 2, 3, 4)),
    "pinv of a tall matrix": lambda lib, a: lib.linalg.pinv(a(lib, 4, 3)),
    "pinv hermitian": lambda lib, a: lib.linalg.pinv(a(lib, 3, 3, symmetric=True), hermitian=True),
    "pinv with rcond": lambda lib, a: lib.linalg.pinv(a(lib, 3, 3), 1e-3),
    "pinverse": lambda lib, a: lib.pinverse(a(lib, 3, 2)),
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
    assert_same(y_i, y_t, rtol=1e-10, atol=1e-10, exact_layout=False)
    for ours, theirs in zip(grads_i, grads_t, strict=True):
        assert_same(ours, theirs, rtol=1e-9, atol=1e-9, exact_layout=False)


def test_node_names():
    """eigh and eigvalsh record LinalgEighBackward0, pinv LinalgPinvBackward0 whichever overload."""
    for lib in (torch, internals):
        a = _matrix(lib, 3, 3, symmetric=True)
        names = [type(y.grad_fn).__name__ for y in (lib.linalg.eigh(a).eigenvectors, lib.linalg.eigvalsh(a),
                                                    lib.linalg.pinv(a), lib.linalg.pinv(a, atol=0.5),
                                                    lib.linalg.pinv(a, lib.tensor(0.1, dtype=lib.float64)))]
        assert names == ["LinalgEighBackward0"] * 2 + ["LinalgPinvBackward0"] * 3, names


EIG_GRAD_CASES = {
    "eigvals of a real matrix": (torch.float64, lambda lib, A: lib.linalg.eigvals(A)),
    "eig's values of a real matrix": (torch.float64, lambda lib, A: lib.linalg.eig(A).eigenvalues),
    "eig of a real matrix": (torch.float64, lambda lib, A: (lambda r: r.eigenvalues * 1.5 + r.eigenvectors.abs() ** 2)(
        lib.linalg.eig(A))),
    "eigvals of a complex matrix": (torch.complex128, lambda lib, A: lib.linalg.eigvals(A)),
    "eig of a complex matrix": (torch.complex128, lambda lib, A: (lambda r: r.eigenvalues.exp() + r.eigenvectors.abs())(
        lib.linalg.eig(A))),
    "eigh of a complex matrix": (torch.complex128, lambda lib, A: (lambda r: r.eigenvalues + r.eigenvectors.abs() ** 3)(
        lib.linalg.eigh(A + A.mH))),
}


@pytest.mark.parametrize("case", EIG_GRAD_CASES)
def test_eig_gradients_through_autograd(case):
    """eig's results are complex even for a real A: LinalgEigBackward0, then the real part of the
    complex gradient for a real A (``handle_r_to_c``), as torch's; the loss is a function of the
    eigenvalues and of the eigenvectors' moduli, which no phase changes."""
    dtype, build = EIG_GRAD_CASES[case]
    data = torch.randn(3, 3, generator=torch.Generator().manual_seed(4), dtype=dtype)
    results = []
    for lib in (torch, internals):
        A = lib.tensor(data.tolist(), dtype=getattr(lib, str(dtype).split(".")[-1]), requires_grad=True)
        out = build(lib, A)
        loss = (out.real * out.real.sin()).sum() + out.imag.sum() if out.is_complex() else out.sin().sum()
        results.append((type(out.grad_fn).__name__, out.dtype, lib.autograd.grad(loss, A)[0]))
    (node_t, dtype_t, g_t), (node_i, dtype_i, g_i) = results
    assert str(dtype_i).split(".")[-1] == str(dtype_t).split(".")[-1]
    assert_same(g_i, g_t, rtol=1e-9, atol=1e-9, exact_layout=False)
    if case.startswith("eigvals"):
        assert node_i == node_t == "LinalgEigBackward0"


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_a_loss_that_depends_on_the_eigenvectors_phase_is_refused(dtype):
    """Through autograd, torch's gauge check: the imaginary part of diag(V^H gV) must vanish."""
    data = torch.randn(3, 3, generator=torch.Generator().manual_seed(2), dtype=dtype)
    errors = []
    for lib in (torch, internals):
        A = lib.tensor(data.tolist(), dtype=getattr(lib, str(dtype).split(".")[-1]), requires_grad=True)
        V = lib.linalg.eig(A).eigenvectors
        with pytest.raises(RuntimeError) as caught:
            V[0].real.sum().backward()
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert "specified up to multiplication by e^{i phi}" in errors[1]


def test_gradcheck():
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(lambda x: L.pinv(x), (x,))
    assert internals.autograd.gradcheck(lambda x: L.eigvalsh(x[:, :2] @ x[:, :2].mT), (x,))


def _eig_case(name):
    """(ours, torch's) gradient of A through ``linalg_eig_backward``, torch's forward results fed
    to both (the complex branches, unreachable through internals' autograd)."""
    g = torch.Generator().manual_seed(3)
    dtype = torch.float64 if name.startswith("real") else torch.complex128
    A = torch.randn(3, 3, generator=g, dtype=dtype)
    hermitian = "eigh" in name
    A = (A + A.mH if hermitian else A).requires_grad_()
    Lam, V = torch.linalg.eigh(A) if hermitian else torch.linalg.eig(A)
    # a loss of the eigenvectors that a phase does not change: |V|^2 weighs each entry
    loss = (Lam.real.sin().sum() + Lam.imag.sum() if not hermitian else Lam.sin().sum()) + (V.abs() ** 2 * torch.arange(
        9.0, dtype=torch.float64).reshape(3, 3)).sum()
    gL, gV = torch.autograd.grad(loss, (Lam, V), retain_graph=True)
    if name.endswith("values only"):
        gV = None
    theirs = torch.autograd.grad([t for t, gt in ((Lam, gL), (V, gV)) if gt is not None], A,
                                 [gt for gt in (gL, gV) if gt is not None])[0]
    ours = fm.linalg_eig_backward(*(None if t is None else internals.from_torch(t.detach())
                                    for t in (gL, gV, Lam, V)), hermitian)
    if not hermitian:
        ours = fm.handle_r_to_c(internals.from_torch(A.detach()), ours)
    return ours, theirs


@pytest.mark.parametrize("name", ["real eig", "real eig, values only", "complex eig", "complex eig, values only",
                                  "complex eigh", "complex eigh, values only"])
def test_eig_backward_formula(name):
    ours, theirs = _eig_case(name)
    torch.testing.assert_close(ours.to_torch(), theirs, rtol=1e-9, atol=1e-9)


def test_complex_pinv_backward_formula():
    g = torch.Generator().manual_seed(5)
    A = torch.randn(3, 4, generator=g, dtype=torch.complex128, requires_grad=True)
    P = torch.linalg.pinv(A)
    grad = torch.randn(4, 3, generator=g, dtype=torch.complex128)
    theirs = torch.autograd.grad(P, A, grad)[0]
    ours = fm.pinv_backward(*(internals.from_torch(t.detach()) for t in (grad, P, A)))
    torch.testing.assert_close(ours.to_torch(), theirs, rtol=1e-10, atol=1e-10)


def test_phase_dependent_eigenvector_loss_is_refused():
    A = torch.randn(3, 3, generator=torch.Generator().manual_seed(0), dtype=torch.complex128)
    A = (A + A.mH).requires_grad_()
    Lam, V = torch.linalg.eigh(A)
    loss = V[1, 1].imag         # (heevd leaves the first row real: its phase is fixed there)
    gV, = torch.autograd.grad(loss, V, retain_graph=True)
    with pytest.raises(RuntimeError) as theirs:
        loss.backward()
    with pytest.raises(RuntimeError) as ours:
        fm.linalg_eig_backward(None, *(internals.from_torch(t.detach()) for t in (gV, Lam, V)), True)
    assert str(ours.value) == str(theirs.value)


def test_namespaces():
    """The names torch has for these: torch.linalg's functions, torch.pinverse and its method,
    torch._linalg_eigh; no eigh method."""
    for name in ("eigh", "eigvalsh", "eig", "eigvals", "pinv"):
        assert callable(getattr(L, name))
    assert callable(internals.pinverse) and callable(internals.Tensor.pinverse)
    assert callable(internals._linalg_eigh) and hasattr(torch, "_linalg_eigh")
    assert not hasattr(torch.Tensor, "eigh") and not hasattr(internals.Tensor, "eigh")


CUDA_PROGRAMS = {
    "eigvalsh": lambda lib, d: lib.linalg.eigvalsh(lib.tensor([[2.0, 1.0], [1.0, 3.0]], device=d)),
    "eigvals": lambda lib, d: lib.linalg.eigvals(lib.tensor([[0.0, -1.0], [1.0, 0.0]], device=d)),
    "pinv": lambda lib, d: lib.linalg.pinv(lib.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], device=d)),
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_cuda_inputs(name):
    """A CUDA input (simulated here) is decomposed on the host and its results come back to it."""
    ours = CUDA_PROGRAMS[name](internals, "cuda")
    assert ours.device.type == "cuda"
    assert_same(ours.cpu(), CUDA_PROGRAMS[name](torch, "cpu"), rtol=1e-6, atol=1e-6)
