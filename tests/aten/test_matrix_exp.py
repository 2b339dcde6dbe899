"""``linalg.matrix_exp`` / ``torch.matrix_exp`` against torch: PyTorch's OpInfo samples (as given
and non-contiguous), every degree of torch's matrix-exponential polynomial and its scaling and
squaring, torch's errors, grad_fn names, first and second gradients, finite differences, and fake
tensors.

Tolerances. matrix_exp follows torch's algorithm step for step (``mexp_impl``: the same
polynomial for the same norm, the same sums in the same order), so the values differ only where
the matrix products' bits do: BLAS groups its sums by instruction set, a few ulps per product,
which the polynomial's few products and the squarings carry into the result
(``MEXP_TOL``, relative to the result's size).

Tests ``internals.aten.native.matrix_exp`` (aten/src/ATen/native/LinearAlgebra.cpp).
"""
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
    to_ours_with_complex,
)

import internals
from internals.aten.native.matrix_exp import THETAS

L = internals.linalg
MEXP_TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12), torch.complex64: (1e-5, 1e-5),
            torch.complex128: (1e-12, 1e-12)}
ADAPTERS = {
    "matrix_exp": Adapter(fn("matrix_exp"), "matrix_exp", tol=MEXP_TOL),
}
CASES = opinfo_cases(ADAPTERS, (torch.float32, torch.float64, torch.complex64, torch.complex128))


@pytest.mark.parametrize("name, dtype", CASES)
def test_opinfo_samples(name, dtype):
    check_opinfo_samples(name, dtype, ADAPTERS[name], convert=to_ours_with_complex)


def _scaled(shape, norm, dtype, seed=0):
    """A random matrix (or batch) whose 1-norm, per matrix, is ``norm``."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*shape, generator=g, dtype=torch.float64)
    a = a / a.abs().sum(-2).amax(-1)[..., None, None] * norm
    return a.to(dtype) if not dtype.is_complex else torch.complex(a, a.flip(-1)).to(dtype) / 2


def _degree_cases():
    """One matrix inside each degree's band of norms (and at its edges), per dtype, and batches."""
    cases = []
    for dtype, key in ((torch.float32, "float"), (torch.float64, "double"), (torch.complex64, "float"),
                       (torch.complex128, "double")):
        thetas = THETAS[key]
        norms = [thetas[0] / 2, *[(lo + hi) / 2 for lo, hi in zip(thetas, thetas[1:])], thetas[4], thetas[5] * 3,
                 40.0]
        cases += [pytest.param((4, 4), norm, dtype, id=f"{str(dtype)[6:]}-{norm:.3g}") for norm in norms]
        cases.append(pytest.param((3, 5, 5), 0.2, dtype, id=f"{str(dtype)[6:]}-batch-small"))
        cases.append(pytest.param((2, 2, 3, 3), 7.0, dtype, id=f"{str(dtype)[6:]}-batch-squared"))
    return cases


@pytest.mark.parametrize("shape, norm, dtype", _degree_cases())
def test_matrix_exp_follows_torchs_degrees(shape, norm, dtype):
    """Each degree (1, 2, 4, 8, 12, 18, and 18 with squarings) as torch picks it by the 1-norm;
    a batch of several matrices always at degree 18, scaled and squared per matrix."""
    a = _scaled(shape, norm, dtype)
    rtol, atol = MEXP_TOL[dtype]
    expected = torch.linalg.matrix_exp(a)
    ours = L.matrix_exp(internals.from_torch(a))
    assert_same(ours, expected, rtol=rtol, atol=atol * float(expected.abs().max()))


LAYOUTS = {
    "transposed": lambda lib: lib.arange(9.0).reshape(3, 3).mT / 10,
    "one by one, strided": lambda lib: lib.arange(6.0).reshape(3, 2)[:, :1].unsqueeze(-1),
    "empty matrices": lambda lib: lib.ones(3, 0, 0),
    "empty batch": lambda lib: lib.ones(0, 2, 2).mT,
    "a NaN": lambda lib: lib.tensor([[float("nan"), 0.0], [0.0, 1.0]]),
    "a NaN in a batch": lambda lib: lib.tensor([[[float("nan"), 0.0], [0.0, 1.0]], [[0.5, 0.25], [0.0, 1.0]]]),
    "zeros": lambda lib: lib.zeros(3, 3, dtype=lib.float64),
    "method": lambda lib: lib.eye(2).matrix_exp(),
    "torch.matrix_exp": lambda lib: lib.matrix_exp(lib.eye(2, dtype=lib.float64) * 2),
}


@pytest.mark.parametrize("case", LAYOUTS)
def test_matrix_exp_layouts_and_special_values(case):
    """Layouts (a 1 x 1 matrix goes through ``exp`` and keeps its input's strides, an empty one is
    cloned, the rest are new contiguous matrices) and NaN: a matrix with a NaN is NaN throughout.
    (Not an infinite entry: torch casts the infinite number of squarings to an integer, a C cast
    with no defined result.)"""
    x = LAYOUTS[case]
    ours = L.matrix_exp(x(internals)) if case not in ("method", "torch.matrix_exp") else x(internals)
    theirs = torch.linalg.matrix_exp(x(torch)) if case not in ("method", "torch.matrix_exp") else x(torch)
    assert_same(ours, theirs, rtol=1e-6, atol=1e-6)


ERROR_CASES = {
    "matrix_exp of a vector": lambda lib: lib.linalg.matrix_exp(lib.ones(3)),
    "matrix_exp rectangular": lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3)),
    "matrix_exp of integers": lambda lib: lib.linalg.matrix_exp(lib.ones(2, 2, dtype=lib.int64)),
    "matrix_exp of bools": lambda lib: lib.matrix_exp(lib.ones(2, 2, dtype=lib.bool)),
    # torch flattens the batch with view(): a batch that no view can flatten is refused
    "matrix_exp of an unviewable batch": lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3, 2, 2).transpose(0, 1)),
}


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    same_error(ERROR_CASES[case])



def _matrix(shape, norm, seed=0):
    return _scaled(shape, norm, torch.float64, seed)


# Each case: the tensors to differentiate (float64, torch's) and a program over them.
GRAD_CASES = {
    "matrix_exp, small norm": ([_matrix((3, 3), 0.04)], lambda lib, a: lib.linalg.matrix_exp(a)),
    "matrix_exp, degree 12": ([_matrix((3, 3), 0.2)], lambda lib, a: lib.linalg.matrix_exp(a)),
    "matrix_exp, squared": ([_matrix((4, 4), 5.0)], lambda lib, a: lib.matrix_exp(a)),
    "matrix_exp of a batch": ([_matrix((2, 3, 3), 1.0)], lambda lib, a: lib.linalg.matrix_exp(a)),
    "matrix_exp 1 x 1": ([_matrix((2, 1, 1), 1.0)], lambda lib, a: lib.linalg.matrix_exp(a)),
}


@pytest.mark.parametrize("case", GRAD_CASES)
def test_gradients_twice(case):
    """grad_fn name, first gradients of every input, and the gradients of those gradients (with
    create_graph), as torch's (float64; ``helpers.check_gradients_twice``)."""
    check_gradients_twice(*GRAD_CASES[case])


GRADCHECKS = {
    "matrix_exp": lambda x: L.matrix_exp(x[:, :2] * 2),
    "matrix_exp, scaled and squared": lambda x: L.matrix_exp(x.mT @ x),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck(name):
    """Each backward formula against finite differences."""
    x = internals.tensor([[-2.0, -0.5, 0.1], [0.25, 1.5, 3.0]], dtype=internals.float64, requires_grad=True)
    assert internals.autograd.gradcheck(GRADCHECKS[name], (x,))



FAKE_CASES = {
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a[:3]), (4, 3)),
    "matrix_exp of a batch": (lambda lib, a: lib.linalg.matrix_exp(a.reshape(2, 2, 3)[:, :, :2]), (4, 3)),
    "matrix_exp, squared": (lambda lib, a: lib.matrix_exp(a[:3] * 100), (4, 3)),
}


@pytest.mark.parametrize("case", FAKE_CASES)
def test_fake_tensors(case):
    """Under FakeTensorMode the outputs have the real run's shapes, strides and dtypes."""
    program, shape = FAKE_CASES[case]
    assert_fake_matches_real(program, lambda: (internals.arange(12.0).reshape(shape) / 20,))


