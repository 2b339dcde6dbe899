"""``linalg.householder_product`` / ``torch.orgqr`` and ``torch.geqrf`` (whose output
householder_product reads) against torch: PyTorch's OpInfo samples (as given and non-contiguous),
Q rebuilt from torch's reflectors, torch's errors, grad_fn names, first and second gradients,
finite differences, fake tensors and out= dtypes.

Tolerances. householder_product applies the reflectors one at a time as LAPACK's unblocked
``org2r`` does, torch's MKL may block them: ``LAPACK_TOL``, a few hundred epsilons for values of
order one.

Tests ``internals.aten.native.batch_linear_algebra`` (aten/src/ATen/native/BatchLinearAlgebra.cpp).
"""
import numpy as np
import pytest
import torch
from helpers import (
    Adapter,
    assert_fake_matches_real,
    assert_same,
    check_gradients_twice,
    check_opinfo_samples,
    fn,
    opinfo_cases,
    same_error,
    same_outcome,
    to_ours_with_complex,
)

import internals

L = internals.linalg
LAPACK_TOL = {torch.float32: (2e-5, 2e-5), torch.float64: (1e-12, 1e-12), torch.complex64: (2e-5, 2e-5),
              torch.complex128: (1e-12, 1e-12)}
ADAPTERS = {
    "linalg.householder_product": Adapter(L.householder_product, tol=LAPACK_TOL),
    "geqrf": Adapter(fn("geqrf"), "geqrf", tol=LAPACK_TOL),
}
CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.complex64, torch.complex128))


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], convert=to_ours_with_complex)



ERROR_CASES = {
    "householder_product of a vector": lambda lib: lib.linalg.householder_product(lib.ones(3), lib.ones(1)),
    "householder_product wide": lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2)),
    "householder_product, tau too long": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3)),
    "householder_product, tau's dims": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(1, 2)),
    "householder_product, tau's batch": lambda lib: lib.linalg.householder_product(lib.ones(2, 3, 2),
                                                                                   lib.ones(3, 2)),
    "householder_product dtypes": lambda lib: lib.linalg.householder_product(lib.ones(3, 2),
                                                                             lib.ones(2, dtype=lib.float64)),
    "householder_product of integers": lambda lib: lib.linalg.householder_product(
        lib.ones(3, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    "householder_product of half": lambda lib: lib.linalg.householder_product(
        lib.ones(3, 2, dtype=lib.float16), lib.ones(2, dtype=lib.float16)),
    "orgqr of a vector": lambda lib: lib.orgqr(lib.ones(3), lib.ones(1)),
    "geqrf of a vector": lambda lib: lib.geqrf(lib.ones(3)),
    "geqrf of integers": lambda lib: lib.geqrf(lib.ones(2, 2, dtype=lib.int64)),
    "geqrf of half": lambda lib: lib.geqrf(lib.ones(2, 2, dtype=lib.float16)),
    "geqrf's derivative": lambda lib: lib.geqrf(lib.ones(3, 2, requires_grad=True) * 2).a.sum().backward(),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    same_error(ERROR_CASES[case])


def _geqrf(shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
    return torch.geqrf(a)


HOUSEHOLDER_CASES = {
    "square": ((3, 3), None),
    "tall": ((5, 3), None),
    "fewer reflectors": ((5, 3), 2),
    "no reflector": ((4, 2), 0),
    "batch": ((2, 4, 3), None),
    "empty batch": ((0, 3, 2), None),
    "no columns": ((3, 0), None),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
@pytest.mark.parametrize("case", HOUSEHOLDER_CASES)
def test_householder_product_rebuilds_q(case, dtype):
    """geqrf's packed reflectors back into Q (torch's column-major layout), also through orgqr
    and with out=."""
    shape, k = HOUSEHOLDER_CASES[case]
    a, tau = _geqrf(shape, dtype=dtype)
    tau = tau if k is None else tau[..., :k]
    rtol, atol = LAPACK_TOL[dtype]
    expected = torch.linalg.householder_product(a, tau)
    ours_a, ours_tau = internals.from_torch(a), internals.from_torch(tau)
    assert_same(L.householder_product(ours_a, ours_tau), expected, rtol=rtol, atol=atol)
    assert_same(internals.orgqr(ours_a, ours_tau), torch.orgqr(a, tau), rtol=rtol, atol=atol)
    assert_same(ours_a.orgqr(ours_tau), a.orgqr(tau), rtol=rtol, atol=atol)
    out_t, out_i = torch.empty(0, dtype=dtype), internals.empty(0, dtype=internals.from_torch(a).dtype)
    torch.linalg.householder_product(a, tau, out=out_t)
    L.householder_product(ours_a, ours_tau, out=out_i)
    assert_same(out_i, out_t, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 3, 2), (3, 0)])
def test_geqrf(shape, dtype):
    """geqrf's packed R and reflectors (column-major) and tau, as torch's (LAPACK's sign
    convention: R's diagonal entries are -sign(a_jj) times a norm), as function and method."""
    g = torch.Generator().manual_seed(2)
    a = torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
    rtol, atol = LAPACK_TOL[dtype]
    ours, theirs = internals.geqrf(internals.from_torch(a)), torch.geqrf(a)
    assert type(ours).__name__ == type(theirs).__name__ == "geqrf"
    for o, t in zip(ours, theirs, strict=True):
        assert_same(o, t, rtol=rtol, atol=atol)
    assert_same(internals.from_torch(a).geqrf().tau, a.geqrf().tau, rtol=rtol, atol=atol)


# Each case: the tensors to differentiate (float64, torch's) and a program over them.
GRAD_CASES = {
    "householder_product": (list(_geqrf((4, 3))), lambda lib, a, t: lib.linalg.householder_product(a, t)),
    "householder_product, fewer reflectors": ([_geqrf((5, 3))[0], _geqrf((5, 3))[1][:2]],
                                              lambda lib, a, t: lib.linalg.householder_product(a, t)),
    "householder_product of a batch": (list(_geqrf((2, 3, 3), seed=1)),
                                       lambda lib, a, t: lib.orgqr(a, t)),
}


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradients_twice(case):
    """grad_fn name, first gradients of every input, and the gradients of those gradients (with
    create_graph), as torch's (float64; ``helpers.check_gradients_twice``)."""
    # the first gradients' nodes too: householder_product's are written column by column
    # into zeros (CopySlices), as torch's backward writes them
    check_gradients_twice(*GRAD_CASES[case])


GRADCHECKS = {
    "householder_product": lambda x: L.householder_product(x.mT, x[0, :2] / 4),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck(name):
    """Each backward formula against finite differences."""
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))


def test_householder_product_backward_of_complex_values_matches_torch():
    """internals has no complex autograd: the backward formula's complex branch is checked by
    calling it on torch's forward result."""
    from internals.autograd import functions_manual as fm
    a, tau = _geqrf((4, 3), dtype=torch.complex128)
    grad = torch.complex(*torch.randn(2, 4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3)))
    a_t, tau_t = a.clone().requires_grad_(), tau.clone().requires_grad_()
    q = torch.linalg.householder_product(a_t, tau_t)
    expected = torch.autograd.grad(q, (a_t, tau_t), grad)
    ours = fm.householder_product_backward(*(internals.from_torch(t) for t in (grad, q.detach(), a, tau)))
    for o, t in zip(ours, expected, strict=True):
        np.testing.assert_allclose(o.to_torch().numpy(), t.numpy(), rtol=1e-10, atol=1e-10)


FAKE_CASES = {
    "householder_product": (lambda lib, a: lib.linalg.householder_product(a, a[0, :2]), (4, 3)),
    "geqrf": (lambda lib, a: tuple(lib.geqrf(a)), (4, 3)),
}


@pytest.mark.parametrize("case", FAKE_CASES)
def test_fake_tensors(case):
    """Under FakeTensorMode the outputs have the real run's shapes, strides and dtypes."""
    program, shape = FAKE_CASES[case]
    assert_fake_matches_real(program, lambda: (internals.arange(12.0).reshape(shape) / 20,))


@pytest.mark.parametrize("fn", ["linalg.householder_product", "orgqr"])
@pytest.mark.parametrize("out_dtype", ["float32", "complex128", "float16", "int64", "bool"])
def test_out_takes_any_dtype_the_result_casts_to_safely(fn, out_dtype):
    """torch's checkLinalgCompatibleDtype: a float64 result goes into a float32 or complex ``out``
    (a lower precision of the same kind); an integer ``out`` is refused in torch's words."""
    a, tau = _geqrf((4, 3))

    def run(lib):
        f = lib.linalg.householder_product if fn.startswith("linalg") else lib.orgqr
        operands = (a, tau) if lib is torch else (internals.from_torch(a), internals.from_torch(tau))
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        return f(*operands, out=out)
    same_outcome(run, rtol=1e-6, atol=1e-6)
