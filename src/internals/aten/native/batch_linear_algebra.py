"""Inverse and determinant through an LU factorization (``aten/src/ATen/native/BatchLinearAlgebra.cpp``,
``LinearAlgebra.cpp``): ``linalg_lu_factor_ex`` factors each matrix of a batch, ``linalg_inv_ex``
solves ``A X = I`` with the factors, ``_linalg_det`` multiplies U's diagonal and flips the sign
once per row swap. The factors and the inverse are column-major, as LAPACK writes them (an
inverse's strides are torch's: ``(1, n)`` for one matrix). The loops are ``cpu/batch_linalg.py``
and ``cuda/batch_linalg.py``.

Square matrices of float32 and float64 only (torch also factors rectangular and complex ones).
"""
import numpy as np

from ...c10 import scalar_type as st
from ...c10.tensor_impl import contiguous_strides
from ...return_types import return_type
from .. import dispatcher
from ..empty_tensor import empty_strided
from .copy import buffer
from .dispatch_stub import loops
from .tensor_factories import empty


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``): a singular matrix, found by LAPACK."""


_LinAlgError.__module__ = "internals._C"


def _check_square(A, name):
    """``squareCheckInputs`` and ``checkFloatingOrComplex`` (``LinearAlgebraUtils.h``)."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {A.dtype.torch_name}")
    if A.dtype.is_complex:
        raise NotImplementedError(f"internals: {name} supports float32 and float64 matrices only")


def _column_major(shape, dtype, device):
    """A batch of column-major matrices, batches contiguous (``batched_matrix_contiguous_strides``
    with ``f_contig``)."""
    strides = contiguous_strides(shape)[:-2]
    return empty_strided(shape, (*strides, 1, max(shape[-2], 1)), dtype=dtype, device=device)


def _lu_kernel_dtype(A):
    """The LU kernel dispatches on float, double and the complex types (internals: the first two)."""
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"lu_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): L and U in one column-major matrix, the 1-based row swaps (int32),
    and 0 or the first zero pivot's position, per matrix."""
    if A.dim() < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
                           "instead")
    _lu_kernel_dtype(A)
    if A.shape[-1] != A.shape[-2] or A.dtype.is_complex or not pivot:
        raise NotImplementedError("internals: linalg.lu_factor_ex factors square real matrices, with pivoting")
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    LU = _column_major(tuple(A.shape), A.dtype, A.device)
    dispatcher.call("copy_", LU, A)
    pivots = empty((*batch, n), dtype=st.int32, device=A.device)
    info = empty(batch, dtype=st.int32, device=A.device)
    loops(A.device, "batch_linalg").lu_factor(buffer(LU), buffer(pivots), buffer(info), n)
    if check_errors:
        _check_errors(info, "torch.linalg.lu_factor_ex", singular="U")
    return return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))(LU, pivots, info)


def _check_errors(info, name, singular):
    """``_linalg_check_errors``: the first failed matrix, named with its batch position. A zero
    pivot of ``lu_factor`` is a RuntimeError; a singular matrix to invert, a LinAlgError."""
    codes = info.reshape(-1).tolist()
    at = next((i for i, code in enumerate(codes) if code), None)
    if at is None:
        return
    k = codes[at]
    where = f"(Batch element {at}): " if info.dim() else ""
    if singular == "U":
        raise RuntimeError(f"{name}: {where}U[{k},{k}] is zero and using it on lu_solve would result in a division "
                           "by zero. If you still want to perform the factorization, consider calling "
                           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    raise _LinAlgError(f"{name}: {where}The diagonal element {k} is zero, the inversion could not be completed "
                       "because the input matrix is singular.")


def linalg_inv_ex(A, *, check_errors=False):
    """(inverse, info): each matrix's inverse from its LU factors (``getrs`` on the identity)."""
    _check_square(A, "linalg.inv")
    if A.dtype.is_reduced_float:
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got {A.dtype.torch_name}")
    # ``_linalg_solve_ex``: a row-major A is factored as A^T, which is column-major as it lies
    # (no copy), and the solve runs transposed
    use_A_T = A.is_contiguous()
    LU, pivots, info = linalg_lu_factor_ex(A.mT if use_A_T else A)
    inverse = _column_major(tuple(A.shape), A.dtype, A.device)
    loops(A.device, "batch_linalg").lu_inverse(buffer(inverse), buffer(LU), buffer(pivots), A.shape[-1], use_A_T)
    if check_errors:
        _check_errors(info, "linalg.inv", singular="diagonal")
    return return_type("linalg_inv_ex", ("inverse", "info"))(inverse, info)


def perturbed_lu_inverse(LU, pivots, trans):
    """The inverse of the factored matrix (transposed with ``trans``), each zero on U's diagonal
    replaced by the dtype's epsilon first: ``linalg_det_backward``'s stand-in for a singular
    matrix when no higher derivative is wanted (torch's ``LU + diag_embed(where(diag == 0, eps,
    0))``, solved with ``lu_solve``)."""
    eps = float(np.finfo(np.float32 if LU.dtype is st.float32 else np.float64).eps)
    diagonal = LU.diagonal(0, -2, -1)
    perturbed = _column_major(tuple(LU.shape), LU.dtype, LU.device)       # as the kernel reads factors
    dispatcher.call("copy_", perturbed, LU + dispatcher.call("diag_embed", dispatcher.call(
        "where.Scalar", diagonal == 0, eps, 0.0).to(LU.dtype)))
    LU = perturbed
    inverse = _column_major(tuple(LU.shape), LU.dtype, LU.device)
    loops(LU.device, "batch_linalg").lu_inverse(buffer(inverse), buffer(LU), buffer(pivots), LU.shape[-1], trans)
    return inverse


def linalg_inv(A):
    """``linalg_inv``, CompositeImplicitAutograd: ``linalg_inv_ex`` that raises for a singular matrix."""
    return dispatcher.call("linalg_inv_ex", A, check_errors=True)[0]


def inverse(A):
    return dispatcher.call("linalg_inv", A)


def _linalg_det(A):
    """(det, LU, pivots): the product of U's diagonal, negated for an odd number of row swaps."""
    _check_square(A, "linalg.det")
    _lu_kernel_dtype(A)
    # det(A^T) = det(A): a row-major A is factored as A^T, column-major as it lies (``_linalg_det_out``)
    LU, pivots, _ = dispatcher.call("linalg_lu_factor_ex", A.mT if A.is_contiguous() else A)
    n = A.shape[-1]
    swaps = dispatcher.call("sum.dim_IntList", pivots != dispatcher.call("arange.start", 1, n + 1, dtype=st.int32,
                                                                           device=A.device), [-1])
    sign = 1 - 2 * (swaps % 2)
    det = dispatcher.call("prod.dim_int", LU.diagonal(0, -2, -1), -1) * sign.to(A.dtype)
    return return_type("_linalg_det", ("result", "LU", "pivots"))(det, LU, pivots)


def linalg_det(A):
    return dispatcher.call("_linalg_det", A)[0]


def det(A):
    return dispatcher.call("linalg_det", A)
