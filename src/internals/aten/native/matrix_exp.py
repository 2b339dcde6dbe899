"""The matrix exponential, ``linalg.matrix_exp`` (``aten/src/ATen/native/LinearAlgebra.cpp``:
``linalg_matrix_exp``, ``mexp``, ``mexp_impl``).

torch follows Bader, Blanes and Casas (2019): a polynomial of degree 1, 2, 4, 8, 12 or 18 in A,
evaluated with few matrix products (T8 and beyond are not Taylor's coefficients but ones chosen
so that 3, 4 and 5 products reach those degrees). A single matrix gets the lowest degree whose
bound on the 1-norm it meets; a larger norm, and every matrix of a batch of more than one, gets
degree 18 on A / 2^s, squared s times afterwards. Every sum and product here is the one torch
makes, in its order, so the values differ from torch's only where the matrix products' (BLAS)
bits do.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from .. import dispatcher
from .batch_linear_algebra import _check_floating, _square_check
from .copy import contiguous

__all__ = ["linalg_matrix_exp", "matrix_exp", "matrix_exp_backward", "differential_analytic_matrix_function", "THETAS"]

call = dispatcher.call

# The largest 1-norm each degree (1, 2, 4, 8, 12, 18) keeps within the dtype's rounding error.
THETAS = {
    "float": (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02, 5.800524627688768e-01,
              1.461661507209034e+00, 3.010066362817634e+00),
    "double": (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04, 4.991228871115323e-02,
               2.996158913811580e-01, 1.090863719290036e+00),
}

# compute_T12's and compute_T18's coefficients: row i makes B_i from (I, A, A^2, A^3[, A^6])
_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359))
_B18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
         -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05))


def _t8_coefficients(real):
    """compute_T8's constants, each rounded as C++ rounds it: ``sqrt_177`` and ``x3`` are
    ``scalar_t``, the expressions over them are evaluated in double and stored as ``scalar_t``."""
    r = real
    sqrt_177, x3 = float(r(0.1330413469565007072504e+2)), float(r(2. / 3.))
    return tuple(float(r(v)) for v in (
        x3 * ((1. + sqrt_177) / 88.), x3 * ((1. + sqrt_177) / 352.), x3,
        (-271. + 29. * sqrt_177) / (315. * x3), (-11. + 11. * sqrt_177) / (1260. * x3),
        (-99. + 11. * sqrt_177) / (5040. * x3), (89. - sqrt_177) / (5040. * x3),
        (857. - 58. * sqrt_177) / 630.))


def _matmul(a, b):
    return call("matmul", a, b)


def _linear_combination(mats, coefficients):
    """``_compute_linear_combination``: sum_j c_j M_j, accumulated from zero in j's order (the
    coefficients are the real dtype's values: ``c_j`` is rounded to it first)."""
    out = None
    for m, c in zip(mats, coefficients, strict=True):
        term = call("mul.Scalar", m, c)
        out = term if out is None else call("add.Tensor", out, term)
    return out


def _powers(a, count):
    """``_fill_matrix_powers``: the first ``count`` of I, A, A^2, A^3, A^6."""
    n = a.shape[-1]
    eye = call("expand", call("eye", n, dtype=a.dtype, device=a.device), list(a.shape))
    powers = [eye, a]
    if count > 2:
        powers.append(_matmul(a, a))
    if count > 3:
        powers.append(_matmul(a, powers[2]))
    if count > 4:
        powers.append(_matmul(powers[3], powers[3]))
    return powers


def _t1(a, real):
    eye, a = _powers(a, 2)
    return call("add.Tensor", eye, a)


def _t2(a, real):
    eye, a, a2 = _powers(a, 3)
    return call("add.Tensor", call("add.Tensor", eye, a), call("div.Scalar", a2, 2.0))


def _t4(a, real):
    """I + A + A^2 (I/2 + A/6 + A^2/24)."""
    As = _powers(a, 3)
    c = [float(real(v)) for v in (1 / 2.0, 1 / 6.0, 1 / 24.0)]
    As.append(_matmul(As[2], _linear_combination(As, c)))
    return _linear_combination(As, (1.0, 1.0, 0.0, 1.0))


def _t8(a, real):
    """I + A + y2 A^2 + A8, with A4 = A^2 (x1 A + x2 A^2) and
    A8 = (x3 A^2 + A4)(x4 I + x5 A + x6 A^2 + x7 A4)."""
    x1, x2, x3, x4, x5, x6, x7, y2 = _t8_coefficients(real)
    As = _powers(a, 3)
    As.append(_matmul(As[2], _linear_combination(As[1:3], (x1, x2))))
    As.append(_matmul(_linear_combination(As[2:4], (x3, 1.0)), _linear_combination(As[:4], (x4, x5, x6, x7))))
    return _linear_combination(As, (1.0, 1.0, y2, 0.0, 1.0))


def _rows(b, real):
    return [[float(real(v)) for v in row] for row in b]


def _t12(a, real):
    """B0 + (B1 + B2 + B3^2) (B2 + B3^2), the B_i combinations of I, A, A^2, A^3."""
    As = _powers(a, 4)
    B = [_linear_combination(As, row) for row in _rows(_B12, real)]
    B[2] = call("add.Tensor", B[2], _matmul(B[3], B[3]))
    return call("add.Tensor", B[0], _matmul(call("add.Tensor", B[1], B[2]), B[2]))


def _t18(a, real):
    """B1 + (B2 + B3 + B0 B4) (B3 + B0 B4), the B_i combinations of I, A, A^2, A^3, A^6."""
    As = _powers(a, 5)
    B = [_linear_combination(As, row) for row in _rows(_B18, real)]
    B[3] = call("add.Tensor", B[3], _matmul(B[0], B[4]))
    return call("add.Tensor", B[1], _matmul(call("add.Tensor", B[2], B[3]), B[3]))


_BY_DEGREE = (_t1, _t2, _t4, _t8, _t12)


def _t18_scale_square(a, norm, theta, real):
    """``compute_T18_scale_square``: T18 of A 2^-s, s = max(0, ceil(log2(|A|_1 / theta))) per
    matrix, then squared s times. A NaN or infinite norm squares nothing here (its result is NaN
    already); torch casts that s to an integer, which C leaves undefined."""
    s = call("clamp_min", call("ceil", call("log2", call("div.Scalar", norm, theta))), 0)
    scaled = call("mul.Tensor", a, call("view", call("pow.Scalar", 2, call("neg", s)), [-1, 1, 1]))
    result = _t18(scaled, real)
    squarings = [int(v) if math.isfinite(v) else 0 for v in s.tolist()]
    pieces = []
    for i, times in enumerate(squarings):
        m = call("select.int", result, 0, i)
        for _ in range(times):
            m = _matmul(m, m)
        pieces.append(m)
    return call("stack", pieces, 0) if pieces else result


def _mexp(a3, thetas, real):
    """``mexp_impl`` over a batch (B, n, n): one matrix by its norm's degree, a batch at degree 18."""
    norm = call("amax", call("sum.dim_IntList", call("abs", a3), [-2], False), [-1], False)
    if a3.shape[0] > 1:
        return _t18_scale_square(a3, norm, thetas[-1], real)
    # torch's result starts as NaN, so a matrix whose norm is NaN (it holds a NaN) stays NaN
    result = call("full", list(a3.shape), float("nan"), dtype=a3.dtype, device=a3.device)
    if a3.shape[0] == 0:
        return result
    value = norm.tolist()[0]
    for degree, compute in enumerate(_BY_DEGREE):
        low = -1.0 if degree == 0 else thetas[degree - 1]
        if low < value <= thetas[degree]:
            result = compute(a3, real)
    if value >= thetas[-2]:
        result = _t18_scale_square(a3, norm, thetas[-1], real)
    return contiguous(result)


def linalg_matrix_exp(A):
    """exp(A) of a square matrix or a batch of them: a 0 x 0 matrix cloned, a 1 x 1 one through
    ``exp``, larger ones through ``mexp``. The batch dimensions are flattened with ``view`` as
    torch flattens them, so a batch that cannot be viewed so raises torch's error."""
    _square_check(A, "linalg.matrix_exp")
    _check_floating(A, "linalg.matrix_exp")
    n = A.shape[-1]
    if n == 0:
        return call("clone", A)
    if n == 1:
        return call("exp", A)
    single = A.dtype in (st.float32, st.complex64)
    thetas = THETAS["float" if single else "double"]
    real = np.float32 if single else np.float64
    result = _mexp(call("view", A, [-1, n, n]), thetas, real)
    return call("view", result, list(A.shape))


def matrix_exp(A):
    """``torch.matrix_exp``: the alias of ``linalg.matrix_exp``."""
    return call("linalg_matrix_exp", A)


def differential_analytic_matrix_function(A, grad, function, adjoint):
    """``differential_analytic_matrix_function`` (``FunctionsManual.cpp``): for an analytic f,
    f([[X, G], [0, X]]) = [[f(X), Df(X)[G]], [0, f(X)]], so the top-right block of f of that
    2n x 2n matrix is the differential at X = A applied to G (the adjoint with X = A^H). The
    blocks are copied into zeros, as torch copies them, so a second differentiation records
    the copies (CopySlices) and f again. The zeros are ``grad``'s new tensor, as torch makes
    them for a tensor subclass: under vmap a batch of cotangents gets a batch of blocks."""
    if adjoint:
        A = call("transpose.int", A, -2, -1)
        X = call("conj", A) if A.dtype.is_complex else A
    else:
        X = A
    n = X.shape[-1]
    meta = call("new_zeros", grad, [*X.shape[:-2], 2 * n, 2 * n])

    def block(rows, cols):
        return call("narrow", call("narrow", meta, -2, rows, n), -1, cols, n)

    call("copy_", block(0, 0), X)
    call("copy_", block(n, n), X)
    call("copy_", block(0, n), grad)
    return call("narrow", call("narrow", function(meta), -2, 0, n), -1, n, n)


def matrix_exp_backward(self, grad):
    """``matrix_exp_backward``, torch's older name for the adjoint differential of matrix_exp."""
    return differential_analytic_matrix_function(self, grad, lambda m: call("linalg_matrix_exp", m), True)
