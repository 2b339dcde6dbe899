"""Inverse and determinant through an LU factorization (``aten/src/ATen/native/BatchLinearAlgebra.cpp``,
``LinearAlgebra.cpp``): ``linalg_lu_factor_ex`` factors each matrix of a batch, ``linalg_inv_ex``
solves ``A X = I`` with the factors, ``_linalg_det`` multiplies U's diagonal and flips the sign
once per row swap, ``_linalg_slogdet`` adds the logarithms of its magnitudes instead. The factors
and the inverse are column-major, as LAPACK writes them (an inverse's strides are torch's: ``(1,
n)`` for one matrix). The loops are ``cpu/batch_linalg.py`` and ``cuda/batch_linalg.py``.

The other decompositions (``_linalg_svd``, ``linalg_qr``, ``linalg_cholesky_ex``,
``_linalg_solve_ex``, ``_linalg_eigh``, ``linalg_eig``) call LAPACK on the host through NumPy
(``gesdd``, ``geqrf``/``orgqr``, ``potrf``, ``gesv``, ``syevd``/``heevd``, ``geev``), as torch's
CPU kernels call it; a CUDA input is copied to the host and its results back, as MAGMA's hybrid
routines do. Their results have torch's column-major layout. ``linalg_pinv`` is composed of
them (an SVD, or ``eigh`` for a Hermitian matrix), as torch composes it. ``linalg_lstsq`` solves
through NumPy's QR (torch's driver ``gels``), a pivoted Householder QR with LAPACK's rank estimate
(``gelsy``) or an SVD (``gelsd``, ``gelss``), with the outputs each of torch's drivers gives.

Each operator torch declares structured is declared so here (``TORCH_META_FUNC`` and
``TORCH_IMPL_FUNC`` in ``BatchLinearAlgebra.cpp`` and ``LinearAlgebra.cpp``): a ``meta_`` step
checks the input (square, batched, floating) and lays the outputs out as torch's meta function
does, the factors and the inverse column-major (``batched_matrix_contiguous_strides``), the rest
contiguous; an ``impl_`` step fills them. The out= overload is the primary kernel, the functional
one derived from it. An ``out=`` tensor of other strides keeps them: the loop writes a tensor of
the meta step's layout, copied into it after (torchgen's proxy output).

Matrices of float32, float64, complex64 and complex128, as torch's LAPACK kernels take (LU
factors rectangular ones too, with pivoting, as torch's CPU kernel does). The LU loops are written once for
real and complex elements: Numba compiles one version per dtype.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.exception import warn_once
from ...c10.grad_mode import GradMode
from ...c10.tensor_impl import contiguous_strides
from ...return_types import return_type
from .. import dispatcher
from ..empty_tensor import empty_strided, is_meta_execution
from ..tensor_iterator import infer_size
from .copy import buffer
from .dispatch_stub import loops
from .resize import resize_output
from .structured import set_output, structured
from .tensor_factories import empty, from_host


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (``torch._C._LinAlgError``): a singular matrix, found by LAPACK."""


_LinAlgError.__module__ = "internals._C"


def _check_square(A, name, low_precision=True):
    """``squareCheckInputs`` and ``checkFloatingOrComplex`` (``LinearAlgebraUtils.h``)."""
    _square_check(A, name)
    _check_floating(A, name, low_precision)


def _square_check(A, name):
    """``squareCheckInputs``: a batch of square matrices."""
    _check_matrix(A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _check_matrix(A, name):
    """``checkIsMatrix``."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


def _check_floating(A, name, low_precision=True):
    """``checkFloatingOrComplex``, the 16-bit floats refused where ``low_precision`` is false."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {A.dtype.torch_name}")
    if not low_precision and A.dtype.is_reduced_float:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {A.dtype.torch_name}")


def _column_major(shape, dtype, device):
    """A batch of column-major matrices, batches contiguous (``batched_matrix_contiguous_strides``
    with ``f_contig``)."""
    strides = contiguous_strides(shape)[:-2]
    return empty_strided(shape, (*strides, 1, max(shape[-2], 1)), dtype=dtype, device=device)


def _matrices_out(out, shape, dtype, device):
    """``set_output_strided`` with ``batched_matrix_contiguous_strides(shape, f_contig=true)``: a
    fresh batch of column-major matrices, or ``out`` checked and resized to that layout."""
    return set_output(out, tuple(shape), dtype, device, _batched_matrix_strides(tuple(shape), True))


def _proxy(out, strides=None):
    """torchgen's ``maybe_create_proxy``: ``out`` itself where the loops can write it as they
    lie (the meta step's strides, from the storage's start, the storage no larger: a loop counts
    its matrices from the buffer's size), else a fresh tensor of that layout, ``_copy_back`` into
    ``out`` once written."""
    strides = tuple(strides) if strides is not None else contiguous_strides(tuple(out.shape))
    if tuple(out.stride()) == strides and out.storage_offset() == 0 and buffer(out).size == out.numel():
        return out
    return empty_strided(tuple(out.shape), strides, dtype=out.dtype, device=out.device)


def _copy_back(out, proxy):
    if proxy is not out:
        dispatcher.call("copy_", out, proxy)


def _write(out, values):
    """Values computed on the host written into an output, whatever its strides."""
    if out.numel():
        # a copy of its own: NumPy may hand back a read-only or shared array
        dispatcher.call("copy_", out, from_host(np.array(values, order="C"), out.dtype, out.device))


def _lu_kernel_dtype(A):
    """The LU kernel dispatches on float, double and the two complex types."""
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"lu_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')


def meta_linalg_lu_factor_ex(LU, pivots, info, A, *, pivot=True, check_errors=False):
    """``TORCH_META_FUNC(linalg_lu_factor_ex)``: a matrix or a batch; LU column-major of A's
    sizes, pivots (int32) one per row of the shorter side, info (int32) one per matrix."""
    if A.dim() < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
                           "instead")
    *batch, m, n = A.shape
    return (_matrices_out(LU, A.shape, A.dtype, A.device),
            set_output(pivots, (*batch, min(m, n)), st.int32, A.device),
            set_output(info, tuple(batch), st.int32, A.device))


def impl_linalg_lu_factor_ex(outs, A, *, pivot=True, check_errors=False):
    """``TORCH_IMPL_FUNC(linalg_lu_factor_ex_out)``: A copied into LU, then ``getrf`` on each
    matrix in place: L and U in one matrix, the 1-based row swaps, and 0 or the first zero
    pivot's position, per matrix."""
    result = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))(*outs)
    if is_meta_execution():
        return result
    _lu_kernel_dtype(A)
    if not pivot:
        if A.device.type == "cpu":
            raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
        raise NotImplementedError("internals: linalg.lu_factor_ex factors with pivoting only")
    LU, pivots, info = outs
    written = _proxy(LU, _batched_matrix_strides(tuple(LU.shape), True)), _proxy(pivots), _proxy(info)
    dispatcher.call("copy_", written[0], A)
    loops(A.device, "batch_linalg").lu_factor(*map(buffer, written), *A.shape[-2:])
    for out, proxy in zip(outs, written):
        _copy_back(out, proxy)
    if check_errors:
        _check_errors(info, "torch.linalg.lu_factor_ex", singular="U")
    return result


linalg_lu_factor_ex_out = structured(meta_linalg_lu_factor_ex, impl_linalg_lu_factor_ex, outputs=3)


def _lu_factor(A):
    """``linalg_lu_factor_ex`` into fresh outputs, for the kernels built on it (torch's call
    ``at::linalg_lu_factor_ex_out`` into their own outputs; ``_lu_factor_out`` here)."""
    return dispatcher.call("linalg_lu_factor_ex", A)


def _lu_factor_out(LU, pivots, A):
    """``at::linalg_lu_factor_ex_out(LU, pivots, info, A)`` with an auxiliary ``info``, as the
    determinants and the solver call it: the factors of A in the outputs given."""
    info = empty([0], dtype=st.int32, device=A.device)
    dispatcher.call("linalg_lu_factor_ex.out", A, LU=LU, pivots=pivots, info=info)
    return info


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


def meta_linalg_inv_ex(inverse, info, A, *, check_errors=False):
    """``TORCH_META_FUNC(linalg_inv_ex)``: square matrices of a floating type (no 16-bit one);
    the inverse column-major of A's sizes, info (int32) one per matrix."""
    _check_square(A, "linalg.inv", low_precision=False)
    return (_matrices_out(inverse, A.shape, A.dtype, A.device),
            set_output(info, tuple(A.shape[:-2]), st.int32, A.device))


def impl_linalg_inv_ex(outs, A, *, check_errors=False):
    """``TORCH_IMPL_FUNC(linalg_inv_ex_out)``: the solve of ``A X = I`` with A's LU factors
    (``getrs`` on the identity), each matrix's code in info."""
    result = return_type("linalg_inv_ex", ("inverse", "info"))(*outs)
    if is_meta_execution():
        return result
    inverse, info = outs
    # ``_linalg_solve_ex``: a real row-major A is factored as A^T, which is column-major as it
    # lies (no copy), and the solve runs transposed
    use_A_T = A.is_contiguous() and not A.dtype.is_complex
    LU, pivots, codes = _lu_factor(A.mT if use_A_T else A)
    written = _proxy(inverse, _batched_matrix_strides(tuple(A.shape), True))
    loops(A.device, "batch_linalg").lu_inverse(buffer(written), buffer(LU), buffer(pivots), A.shape[-1], use_A_T)
    _copy_back(inverse, written)
    dispatcher.call("copy_", info, codes)
    if check_errors:
        _check_errors(info, "linalg.inv_ex", singular="diagonal")
    return result


linalg_inv_ex_out = structured(meta_linalg_inv_ex, impl_linalg_inv_ex, outputs=2)


def perturbed_lu_inverse(LU, pivots, trans):
    """The inverse of the factored matrix (transposed with ``trans``), each zero on U's diagonal
    replaced by the dtype's epsilon first: ``linalg_det_backward``'s stand-in for a singular
    matrix when no higher derivative is wanted (torch's ``LU + diag_embed(where(diag == 0, eps,
    0))``, solved with ``lu_solve``)."""
    eps = float(np.finfo(np.float32 if st.to_real(LU.dtype) is st.float32 else np.float64).eps)
    diagonal = LU.diagonal(0, -2, -1)
    perturbed = _column_major(tuple(LU.shape), LU.dtype, LU.device)       # as the kernel reads factors
    dispatcher.call("copy_", perturbed, LU + dispatcher.call("diag_embed", dispatcher.call(
        "where.Scalar", diagonal == 0, eps, 0.0).to(LU.dtype)))
    LU = perturbed
    inverse = _column_major(tuple(LU.shape), LU.dtype, LU.device)
    loops(LU.device, "batch_linalg").lu_inverse(buffer(inverse), buffer(LU), buffer(pivots), LU.shape[-1], trans)
    return inverse


def linalg_inv(A):
    """``linalg_inv``, CompositeImplicitAutograd: ``linalg_inv_ex``, its info checked by the
    ``_linalg_check_errors`` operator, so that vmap's rule for it names a singular matrix by
    its place in the batch."""
    inverse, info = dispatcher.call("linalg_inv_ex", A)
    dispatcher.call("_linalg_check_errors", info, "linalg.inv", is_matrix=A.dim() == 2)
    return inverse


def inverse(A):
    return dispatcher.call("linalg_inv", A)


def meta__linalg_det(result, LU, pivots, A):
    """``TORCH_META_FUNC(_linalg_det)``: square floating matrices; the determinant one per matrix
    (contiguous), LU column-major of A's sizes, the pivots (int32) one per row."""
    _check_square(A, "linalg.det")
    batch = tuple(A.shape[:-2])
    return (set_output(result, batch, A.dtype, A.device), _matrices_out(LU, A.shape, A.dtype, A.device),
            set_output(pivots, tuple(A.shape[:-1]), st.int32, A.device))


def _det_input(A):
    """det(A^T) = det(A): a real row-major A is factored as A^T, column-major as it lies, so
    ``lu_factor`` copies nothing (``_linalg_det_out``; not a complex one, as torch)."""
    return A.mT if A.is_contiguous() and not A.dtype.is_complex else A


def impl__linalg_det(outs, A):
    """``TORCH_IMPL_FUNC(_linalg_det_out)``: A's LU factors into LU and pivots, then the product
    of U's diagonal, negated for an odd number of row swaps."""
    result = return_type("_linalg_det", ("result", "LU", "pivots"))(*outs)
    if is_meta_execution():
        return result
    _lu_kernel_dtype(A)
    det, LU, pivots = outs
    _lu_factor_out(LU, pivots, _det_input(A))
    dispatcher.call("copy_", det, dispatcher.call("prod.dim_int", LU.diagonal(0, -2, -1), -1)
                    * _permutation_sign(pivots).to(A.dtype))
    return result


_linalg_det_out = structured(meta__linalg_det, impl__linalg_det, outputs=3)


def _permutation_sign(pivots):
    """``lu_det_P``: the determinant of the row swaps, -1 for an odd number of them, else 1."""
    n = pivots.shape[-1]
    swaps = dispatcher.call("sum.dim_IntList", pivots != dispatcher.call("arange.start", 1, n + 1, dtype=st.int32,
                                                                           device=pivots.device), [-1])
    return 1 - 2 * (swaps % 2)


def linalg_det(A):
    return dispatcher.call("_linalg_det", A)[0]


def det(A):
    return dispatcher.call("linalg_det", A)


def meta__linalg_slogdet(sign, logabsdet, LU, pivots, A):
    """``TORCH_META_FUNC(_linalg_slogdet)``: square matrices of a floating type (no 16-bit one);
    sign (A's dtype) and logabsdet (its real dtype) one per matrix, contiguous, LU column-major
    of A's sizes, the pivots (int32) one per row."""
    _check_square(A, "linalg.slogdet", low_precision=False)
    batch = tuple(A.shape[:-2])
    return (set_output(sign, batch, A.dtype, A.device), set_output(logabsdet, batch, st.to_real(A.dtype), A.device),
            _matrices_out(LU, A.shape, A.dtype, A.device), set_output(pivots, tuple(A.shape[:-1]), st.int32, A.device))


def impl__linalg_slogdet(outs, A):
    """``TORCH_IMPL_FUNC(_linalg_slogdet_out)``: the sign of the determinant and the logarithm
    of its magnitude, read off U's diagonal as ``_linalg_det`` reads the product (a singular
    matrix: sign 0, logabsdet -inf)."""
    result = return_type("_linalg_slogdet", ("sign", "logabsdet", "LU", "pivots"))(*outs)
    if is_meta_execution():
        return result
    sign, logabsdet, LU, pivots = outs
    _lu_factor_out(LU, pivots, _det_input(A))
    diagonal = LU.diagonal(0, -2, -1)
    dispatcher.call("copy_", sign, dispatcher.call("prod.dim_int", dispatcher.call("sgn", diagonal), -1)
                    * _permutation_sign(pivots))
    dispatcher.call("copy_", logabsdet, dispatcher.call("sum.dim_IntList", dispatcher.call(
        "log", dispatcher.call("abs", diagonal)), [-1]))
    return result


_linalg_slogdet_out = structured(meta__linalg_slogdet, impl__linalg_slogdet, outputs=4)


def linalg_slogdet(A):
    sign, logabsdet = dispatcher.call("_linalg_slogdet", A)[:2]
    return return_type("linalg_slogdet", ("sign", "logabsdet"))(sign, logabsdet)


def slogdet(A):
    sign, logabsdet = dispatcher.call("linalg_slogdet", A)
    return return_type("slogdet", ("sign", "logabsdet"))(sign, logabsdet)


def logdet(A):
    """The logarithm of the determinant (CompositeImplicitAutograd): a real one is NaN where the
    determinant is negative; a complex one is ``log(sign) + logabsdet``, the principal branch."""
    _check_square(A, "logdet", low_precision=False)
    sign, logabsdet = dispatcher.call("linalg_slogdet", A)
    if A.dtype.is_complex:
        return dispatcher.call("log", sign) + logabsdet
    return dispatcher.call("where.ScalarSelf", sign == -1, float("nan"), logabsdet)


# ---- the decompositions LAPACK computes on the host: SVD, QR, Cholesky, solve
def _lapack_dtype(A, kernel):
    """The LAPACK kernels dispatch on float, double and the complex types only."""
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"{kernel}_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')


def _host(A):
    """A's values as a NumPy array on the host (a CUDA tensor's copied over)."""
    return np.asarray(A._host_values())


def _batched_matrix_strides(shape, f_contig):
    """``batched_matrix_contiguous_strides``: contiguous batches of column-major (``f_contig``)
    or row-major matrices."""
    strides = list(contiguous_strides(tuple(shape)))
    if f_contig and len(shape) >= 2:
        strides[-2:] = [1, max(shape[-2], 1)]
    return tuple(strides)


def _from_host(values, dtype, device, f_contig=True):
    """A fresh tensor holding ``values``, laid out as torch lays out what LAPACK returned."""
    out = empty_strided(values.shape, _batched_matrix_strides(values.shape, f_contig), dtype=dtype, device=device)
    if out.numel():
        # a copy of its own: NumPy may hand back a read-only or shared array
        dispatcher.call("copy_", out, from_host(np.array(values, order="C"), dtype, device))
    return out


def _raise_first_failure(failed, name, batched, message):
    """``_linalg_check_errors``: a LinAlgError for the first failed matrix, named by its batch
    position when A is a batch. ``failed`` holds one code per matrix, 0 where it succeeded."""
    at = next((i for i, code in enumerate(failed) if code), None)
    if at is not None:
        where = f"(Batch element {at}): " if batched else ""
        raise _LinAlgError(f"{name}: {where}{message(failed[at])}")


def _eye_batch(batch, rows, cols):
    """Identity matrices: the factor torch fills in where an empty matrix leaves LAPACK nothing to do."""
    return np.broadcast_to(np.eye(rows, cols), (*batch, rows, cols))


def meta__linalg_svd(U, S, Vh, A, full_matrices=False, compute_uv=True, *, driver=None):
    """``TORCH_META_FUNC(_linalg_svd)``: a floating matrix or batch, m by n; U (m by m, or by
    min(m, n) when not ``full_matrices``) and Vh (n or min(m, n) by n) column-major, or empty
    without ``compute_uv``; S real, min(m, n) per matrix, contiguous."""
    _check_matrix(A, "linalg.svd")
    _check_floating(A, "linalg.svd")
    *batch, m, n = A.shape
    k = min(m, n)
    if compute_uv:
        U = _matrices_out(U, (*batch, m, m if full_matrices else k), A.dtype, A.device)
        # (cuSOLVER's Vh would be row-major; the CUDA kernels here compute on the host, as LAPACK)
        Vh = _matrices_out(Vh, (*batch, n if full_matrices else k, n), A.dtype, A.device)
    else:
        U, Vh = set_output(U, (0,), A.dtype, A.device), set_output(Vh, (0,), A.dtype, A.device)
    return U, set_output(S, (*batch, k), st.to_real(A.dtype), A.device), Vh


def impl__linalg_svd(outs, A, full_matrices=False, compute_uv=True, *, driver=None):
    """``TORCH_IMPL_FUNC(_linalg_svd_out)``: ``A = U diag(S) Vh``, the singular values
    descending (``gesdd``). ``driver`` names a cuSOLVER routine, which a CPU input refuses; on
    CUDA the host computes the one SVD whatever it names."""
    result = return_type("_linalg_svd", ("U", "S", "Vh"))(*outs)
    if is_meta_execution():
        return result
    if driver is not None and A.device.type == "cpu":
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    _lapack_dtype(A, "linalg_svd")
    *batch, m, n = A.shape
    k = min(m, n)
    a = _host(A)
    _raise_first_failure(list(~np.isfinite(a).all(axis=(-2, -1)).reshape(-1)), "linalg.svd", A.dim() > 2,
                         lambda _: "The algorithm failed to converge because the input matrix contained non-finite "
                         "values.")
    u_cols, vh_rows = (m, n) if full_matrices else (k, k)
    if a.size == 0:
        u, s, vh = _eye_batch(batch, m, u_cols), np.zeros((*batch, k)), _eye_batch(batch, vh_rows, n)
    elif compute_uv:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    else:
        s = np.linalg.svd(a, compute_uv=False)
    U, S, Vh = outs
    _write(S, s)
    if compute_uv:
        _write(U, u)
        _write(Vh, vh)
    return result


_linalg_svd_out = structured(meta__linalg_svd, impl__linalg_svd, outputs=3)


def linalg_svd(A, full_matrices=True, *, driver=None):
    U, S, Vh = dispatcher.call("_linalg_svd", A, full_matrices, True, driver=driver)
    return return_type("linalg_svd", ("U", "S", "Vh"))(U, S, Vh)


def linalg_svdvals(A, *, driver=None):
    """The singular values. Where a gradient may be asked for, U and Vh are computed too: the
    backward needs them, and so does the forward derivative of a tensor with a tangent."""
    compute_uv = _may_require_fw_or_bw_grad(A)
    return dispatcher.call("_linalg_svd", A, False, compute_uv, driver=driver)[1]


def _may_require_fw_or_bw_grad(t):
    """``_may_require_fw_or_bw_grad``: grad mode on and t requiring grad, or t (or the base it
    views, whose tangent it would share) holding a tangent. Read off the tensor's own fields:
    the autograd layer above is not imported here."""
    if GradMode.is_enabled() and t.requires_grad:
        return True
    while t is not None:
        if any(tangent is not None for tangent in (getattr(t, "_fw_grads", None) or {}).values()):
            return True
        t = t._base
    return False


def svd(A, some=True, compute_uv=True):
    """The older ``torch.svd``: V = Vh^H rather than Vh, reduced unless ``some`` is false, and without
    ``compute_uv`` zero matrices of the full sizes in place of U and V."""
    if A.dim() < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {A.dim()} dimensions "
                           "instead")
    if compute_uv:
        U, S, Vh = dispatcher.call("linalg_svd", A, not some)
    else:
        S = dispatcher.call("linalg_svdvals", A)
        *batch, m, n = A.shape
        U = dispatcher.call("zeros", [*batch, m, m], dtype=A.dtype, device=A.device)
        Vh = dispatcher.call("zeros", [*batch, n, n], dtype=A.dtype, device=A.device)
    V = dispatcher.call("transpose.int", Vh, -2, -1)
    if A.dtype.is_complex:      # V is Vh^H: a conjugate view, as torch's ``Vh.mH()``
        V = dispatcher.call("conj", V)
    return return_type("svd", ("U", "S", "V"))(U, S, V)


_QR_MODES = {"reduced": (True, True), "complete": (True, False), "r": (False, True)}


def _parse_qr_mode(mode):
    """``_parse_qr_mode``: (compute_q, reduced) for 'reduced', 'complete' or 'r'."""
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    return _QR_MODES[mode]


def meta_linalg_qr(Q, R, A, mode="reduced"):
    """``TORCH_META_FUNC(linalg_qr)``: a floating matrix or batch, m by n, and a known mode; Q
    (m by min(m, n), m by m when 'complete') column-major, or empty for 'r'; R (min(m, n) by n,
    m by n when 'complete') column-major."""
    _check_matrix(A, "linalg.qr")
    _check_floating(A, "linalg.qr")
    compute_q, reduced = _parse_qr_mode(mode)
    *batch, m, n = A.shape
    k = min(m, n)
    if compute_q:
        Q = _matrices_out(Q, (*batch, m, k if reduced else m), A.dtype, A.device)
    else:
        Q = set_output(Q, (0,), A.dtype, A.device)
    return Q, _matrices_out(R, (*batch, k if reduced or not compute_q else m, n), A.dtype, A.device)


def impl_linalg_qr(outs, A, mode="reduced"):
    """``TORCH_IMPL_FUNC(linalg_qr_out)``: ``A = Q R``, Q's columns orthonormal and R upper
    triangular (Householder reflections: ``geqrf``, then ``orgqr``)."""
    result = return_type("linalg_qr", ("Q", "R"))(*outs)
    if is_meta_execution():
        return result
    compute_q, reduced = _QR_MODES[mode]
    _lapack_dtype(A, "geqrf")
    *batch, m, n = A.shape
    q_cols = min(m, n) if reduced else m
    a = _host(A)
    if a.size == 0:
        q, r = _eye_batch(batch, m, q_cols), np.zeros((*batch, q_cols, n))
    elif compute_q:
        q, r = np.linalg.qr(a, mode="reduced" if reduced else "complete")
    else:
        q, r = None, np.linalg.qr(a, mode="r")
    Q, R = outs
    if compute_q:
        _write(Q, q)
    _write(R, r)
    return result


linalg_qr_out = structured(meta_linalg_qr, impl_linalg_qr, outputs=2)


def _warn_once(message, site=None):
    """A deprecation, once per process for each place that warns (``site``) and message."""
    warn_once(("deprecated", site, message), message, UserWarning, stacklevel=4)


def qr(A, some=True):
    _warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
               "Q, R = torch.qr(A, some)\nshould be replaced with\n"
               "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    Q, R = dispatcher.call("linalg_qr", A, "reduced" if some else "complete")
    return return_type("qr", ("Q", "R"))(Q, R)


def _potf2(a):
    """LAPACK's unblocked Cholesky of one matrix from its lower triangle, column by column, up
    to the first pivot that is not positive (or is NaN): that pivot's value stays on the
    diagonal and the rest as it was. Returns (factor, info), info the failed minor's order or 0.
    A complex diagonal's imaginary parts are not read (``zpotf2`` takes the real part)."""
    L = np.tril(a)
    for j in range(L.shape[0]):
        d = L[j, j].real - (L[j, :j] @ L[j, :j].conj()).real
        if not d > 0:
            L[j, j] = d
            return L, j + 1
        L[j, j] = np.sqrt(d)
        L[j + 1:, j] = (L[j + 1:, j] - L[j + 1:, :j] @ L[j, :j].conj()) / L[j, j]
    return L, 0


def _cholesky_host(A, upper):
    """(factor, info) of each matrix, from its lower triangle (upper with ``upper``: U is the
    lower factor of A^H, conjugate-transposed). NumPy factors the batch; where it refuses a
    matrix, ``_potf2`` finds the minor that fails and leaves LAPACK's partial factor."""
    a = _host(A)
    lower = np.swapaxes(a, -1, -2).conj() if upper else a
    info = np.zeros(a.shape[:-2], np.int32)
    factors = np.zeros_like(lower)
    if a.size:
        try:
            factors = np.linalg.cholesky(lower)
            failed = ~(np.diagonal(factors, 0, -2, -1).real > 0).all(-1)     # OpenBLAS lets NaN through
        except np.linalg.LinAlgError:
            failed = np.ones(info.shape, bool)
        if failed.any():
            factors, codes = np.array(factors), info.reshape(-1)
            flat, flat_factors = lower.reshape(-1, *lower.shape[-2:]), factors.reshape(-1, *lower.shape[-2:])
            for b in np.flatnonzero(failed.reshape(-1)):
                flat_factors[b], codes[b] = _potf2(flat[b])
    if upper:
        factors = np.swapaxes(factors, -1, -2).conj()
    return factors, info


def _check_positive_definite(info, name, batched):
    _raise_first_failure(info.reshape(-1).tolist(), name, batched, lambda k: (
        "The factorization could not be completed because the input is not positive-definite (the leading minor "
        f"of order {k} is not positive-definite)."))


def meta_linalg_cholesky_ex(L, info, A, *, upper=False, check_errors=False):
    """``TORCH_META_FUNC(linalg_cholesky_ex)``: square floating matrices; L column-major of A's
    sizes, info (int32) one per matrix."""
    _check_square(A, "linalg.cholesky")
    return (_matrices_out(L, A.shape, A.dtype, A.device),
            set_output(info, tuple(A.shape[:-2]), st.int32, A.device))


def impl_linalg_cholesky_ex(outs, A, *, upper=False, check_errors=False):
    """``TORCH_IMPL_FUNC(linalg_cholesky_ex_out)``: ``A = L L^H`` (``U^H U`` with ``upper``),
    read from one triangle of A only, as ``potrf`` reads it; info is 0, or the order of the
    first leading minor that is not positive-definite."""
    result = return_type("linalg_cholesky_ex", ("L", "info"))(*outs)
    if is_meta_execution():
        return result
    _lapack_dtype(A, "cholesky")
    factors, codes = _cholesky_host(A, upper)
    L, info = outs
    _write(L, factors)
    _write(info, codes)
    if check_errors:
        _check_positive_definite(info, "linalg.cholesky_ex", A.dim() > 2)
    return result


linalg_cholesky_ex_out = structured(meta_linalg_cholesky_ex, impl_linalg_cholesky_ex, outputs=2)


def linalg_cholesky(A, *, upper=False):
    L, info = dispatcher.call("linalg_cholesky_ex", A, upper=upper)
    dispatcher.call("_linalg_check_errors", info, "linalg.cholesky", is_matrix=A.dim() == 2)
    return L


def cholesky(A, upper=False):
    """The older ``torch.cholesky``: an operator of its own, an empty input returned as an empty
    contiguous tensor before any check."""
    _warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
               "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n"
               "and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
               "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
    if A.numel() == 0:
        return empty(tuple(A.shape), dtype=A.dtype, device=A.device)
    _square_check(A, "cholesky")
    _lapack_dtype(A, "cholesky")
    factors, info = _cholesky_host(A, upper)
    _check_positive_definite(info, "cholesky", A.dim() > 2)
    return _from_host(factors, A.dtype, A.device)


# ---- solving and inverting with a Cholesky factor (``cholesky_solve``: ``potrs``;
# ``cholesky_inverse``: ``potri``, in ``BatchLinearAlgebra.cpp``)
def _lower_factor(a, upper):
    """The lower factor L of ``A = L L^H`` on the host: an upper factor U (``A = U^H U``) is L^H."""
    return np.swapaxes(a, -1, -2).conj() if upper else a


def _cholesky_solve_host(a, x, upper):
    """``potrs``: x (holding b) overwritten with the solution of ``L L^H x = b``, two triangular
    solves, each reading only its factor's triangle."""
    lower = _lower_factor(a, upper)
    x = _trsm_host(lower, x, False, False)
    return _trsm_host(np.swapaxes(lower, -1, -2).conj(), x, True, False)


def _check_cholesky_solve_inputs(b, A):
    """``cholesky_solve``'s checks: two matrices, then ``linearSolveCheckInputs``."""
    for what, T in (("b", b), ("u", A)):
        if T.dim() < 2:
            raise RuntimeError(f"{what} should have at least 2 dimensions, but has {T.dim()} dimensions instead")
    _linear_solve_check_inputs(b, A, "cholesky_solve")


def cholesky_solve(b, A, upper=False):
    """``cholesky_solve``: X with ``A A^H X = b`` (``A^H A X = b`` with ``upper``), A a Cholesky
    factor, batches broadcast; the result column-major, as ``_cholesky_solve_helper`` returns
    the broadcast b's column-major copy solved in place."""
    _check_cholesky_solve_inputs(b, A)
    batch = infer_size(tuple(b.shape[:-2]), tuple(A.shape[:-2]))
    X = _column_major((*batch, *b.shape[-2:]), b.dtype, b.device)
    _lapack_dtype(b, "cholesky_solve")
    dispatcher.call("copy_", X, dispatcher.call("expand", b, list(X.shape)))
    if X.numel() and not is_meta_execution():
        a = np.broadcast_to(_host(A), (*batch, *A.shape[-2:]))
        _write(X, _cholesky_solve_host(a, np.array(_host(X)), upper))
    return X


def cholesky_solve_out(b, A, upper=False, *, out):
    """``cholesky_solve_out``: the functional result resized into ``out`` (which keeps its
    strides when its size is right) and cast to its dtype, a lower precision of the same kind
    included (``checkLinalgCompatibleDtype``)."""
    result = dispatcher.call("cholesky_solve", b, A, upper)
    _check_linalg_out_dtype(result, out, "cholesky_solve")
    resize_output(out, tuple(result.shape))
    return dispatcher.call("copy_", out, result)


def _check_linalg_out_dtype(result, out, name):
    """``checkLinalgCompatibleDtype``, named as the kernel names itself."""
    if not st.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"{name}: Expected result to be safely castable from {result.dtype.torch_name} dtype, "
                           f"but got result with dtype {out.dtype.torch_name}")


def _cholesky_inverse_host(a, upper):
    """``potri``: ``(L L^H)^-1 = L^-H L^-1`` of each matrix, L^-1 by substitution against the
    identity (``trtri``), then the product (``lauum``); computed for one triangle and mirrored
    into the other, so the result is exactly Hermitian (with a real diagonal), as torch mirrors
    what LAPACK leaves. Returns (inverse, info), info the first zero pivot's order or 0. A
    complex factor's diagonal is real, as a Cholesky factor's is: for one that is not, MKL's
    ``lauum`` reads parts of it only, and its answer is not this one's."""
    lower = _lower_factor(a, upper)
    n = a.shape[-1]
    diagonal = np.diagonal(lower, 0, -2, -1)
    info = np.where((diagonal == 0).any(-1), (diagonal == 0).argmax(-1) + 1, 0).astype(np.int32)
    inverse_factor = _trsm_host(lower, np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape).copy(), False, False)
    with np.errstate(all="ignore"):         # a NaN in the factor spreads, as in LAPACK
        product = np.swapaxes(inverse_factor, -1, -2).conj() @ inverse_factor
    below = np.tril(product, -1)
    inverse = below + np.swapaxes(below, -1, -2).conj()
    rows = np.arange(n)
    inverse[..., rows, rows] = np.diagonal(product, 0, -2, -1).real
    return inverse, info


def cholesky_inverse(A, upper=False):
    """``cholesky_inverse``: ``(A A^H)^-1`` (``(A^H A)^-1`` with ``upper``) of a Cholesky factor
    A, read from its triangle only; column-major, as ``potri`` leaves it; a zero on A's diagonal
    is a LinAlgError."""
    out = empty([0], dtype=A.dtype, device=A.device)
    return dispatcher.call("cholesky_inverse.out", A, upper, out=out)


def cholesky_inverse_out(A, upper=False, *, out):
    """``cholesky_inverse_out``: an empty ``out`` becomes the column-major result itself; any
    other is resized (with resize_output's warning) and the result copied in, keeping its
    strides where its size was right."""
    _square_check(A, "cholesky_inverse")
    _check_linalg_out_dtype(A, out, "cholesky_inverse")
    result = _column_major(tuple(A.shape), A.dtype, A.device) if out.numel() else out
    if result is out:
        resize_output(out, tuple(A.shape))
        out._impl.strides = _batched_matrix_strides(tuple(A.shape), True)
    _lapack_dtype(A, "cholesky_inverse_out")
    if A.numel() and not is_meta_execution():
        inverse, info = _cholesky_inverse_host(_host(A), upper)
        _raise_first_failure(info.reshape(-1).tolist(), "cholesky_inverse", A.dim() > 2, lambda k: (
            f"The diagonal element {k} is zero, the inversion could not be completed because the input matrix is "
            "singular."))
        _write(result, inverse)
    if result is not out:
        resize_output(out, tuple(A.shape))
        dispatcher.call("copy_", out, result)
    return out


def _is_vector_rhs(A, B):
    """``linalg_solve_is_vector_rhs``: B is one vector, or a batch of vectors shaped as A less its last dim."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _check_inputs_solver(A, B, left, name):
    """``checkInputsSolver``: square A, matrix B, and sizes that fit ``A X = B`` (``X A = B``)."""
    _square_check(A, name)
    if B.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if (A.shape[-1] != B.shape[-2]) if left else (A.shape[-2] != B.shape[-1]):
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'}"
                           f" ({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")


def _check_singular(info, name, batched):
    _raise_first_failure(info.reshape(-1).tolist(), name, batched,
                         lambda _: "The solver failed because the input matrix is singular.")


# what a positive code means, by a word in the operator's name, in the order torch asks
_FAILURES = (
    ("inv", lambda k: f"The diagonal element {k} is zero, the inversion could not be completed because the input "
                      "matrix is singular."),
    ("solve", lambda _: "The solver failed because the input matrix is singular."),
    ("cholesky", lambda k: "The factorization could not be completed because the input is not positive-definite "
                           f"(the leading minor of order {k} is not positive-definite)."),
)


def _linalg_check_errors(info, api_name, *, is_matrix):
    """``_linalg_check_errors`` (``BatchLinearAlgebra.cpp``): an operator of its own, so that
    vmap's rule can check a batch's codes on its physical tensor (its matrices named by their
    position in the batch); the composites that raise (``linalg.solve``, ``linalg.cholesky``,
    ``linalg.lu_factor``) call it on their ``_ex`` form's info."""
    if is_meta_execution() or info.device.type == "meta":
        return
    codes = info.reshape(-1).tolist()
    _raise_illegal_argument([-c if c < 0 else 0 for c in codes], api_name, not is_matrix)
    if "lu_factor" in api_name and "inv" not in api_name:
        _check_errors(info.reshape([]) if is_matrix else info.reshape(-1), api_name, singular="U")
        return
    for word, message in _FAILURES:
        if word in api_name:
            _raise_first_failure(codes, api_name, not is_matrix, message)
            return
    _raise_unknown_error(codes, api_name)


def meta__linalg_solve_ex(result, LU, pivots, info, A, B, *, left=True, check_errors=False):
    """``TORCH_META_FUNC(_linalg_solve_ex)``: A and B of one floating dtype, square A, sizes that
    fit ``A X = B`` (``X A = B`` when not ``left``), batches that broadcast, B a vector (or a
    batch of them) only on the left; the result of the broadcast batch, column-major when
    ``left`` (row-major otherwise), LU column-major of A's sizes, pivots (int32) one per row of
    A, info (int32) one per matrix of A."""
    _check_floating(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype.torch_name} and B of type {B.dtype.torch_name} instead")
    vector_case = _is_vector_rhs(A, B)
    B_ = dispatcher.call("unsqueeze", B, -1) if vector_case else B
    _check_inputs_solver(A, B_, left, "linalg.solve")
    batch = infer_size(tuple(B_.shape[:-2]), tuple(A.shape[:-2]))
    if not left and vector_case:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    shape = (*batch, *B_.shape[-2:])[:-1] if vector_case else (*batch, *B_.shape[-2:])
    return (set_output(result, shape, B.dtype, B.device, _batched_matrix_strides(shape, left)),
            _matrices_out(LU, A.shape, A.dtype, A.device),
            set_output(pivots, tuple(A.shape[:-1]), st.int32, A.device),
            set_output(info, tuple(A.shape[:-2]), st.int32, A.device))


def impl__linalg_solve_ex(outs, A, B, *, left=True, check_errors=False):
    """``TORCH_IMPL_FUNC(_linalg_solve_ex_out)``: A factored into LU and pivots, then X solved
    by LAPACK's ``gesv`` on the host; a singular matrix's X is left NaN (torch's holds whatever
    dividing by the zero pivot gave)."""
    names = ("result", "LU", "pivots", "info")
    if is_meta_execution():
        return return_type("_linalg_solve_ex", names)(*outs)
    result, LU, pivots, info = outs
    # A itself: torch 2.13 no longer factors a row-major A as A^T here (its LU output shows which)
    dispatcher.call("linalg_lu_factor_ex.out", A, LU=LU, pivots=pivots, info=info)
    if check_errors:
        _check_singular(info, "torch.linalg.solve_ex", A.dim() > 2)
    vector_case = _is_vector_rhs(A, B)
    B_ = dispatcher.call("unsqueeze", B, -1) if vector_case else B
    batch = infer_size(tuple(B_.shape[:-2]), tuple(A.shape[:-2]))
    a = np.broadcast_to(_host(A), (*batch, *A.shape[-2:]))
    b = np.broadcast_to(_host(B_), (*batch, *B_.shape[-2:]))
    if not left:        # X A = B is A^T X^T = B^T
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    x = _solve_host(a, b, np.broadcast_to(_host(info) != 0, batch))
    if not left:
        x = np.swapaxes(x, -1, -2)
    _write(result, x[..., 0] if vector_case else x)
    return return_type("_linalg_solve_ex", names)(*outs)


_linalg_solve_ex_out = structured(meta__linalg_solve_ex, impl__linalg_solve_ex, outputs=4)


def _solve_host(a, b, singular):
    """X with ``a X = b`` for each matrix ``linalg_lu_factor_ex`` found invertible, NaN for the others."""
    x = np.full(b.shape, np.nan, dtype=b.dtype)
    solvable = ~singular
    if b.size and solvable.any():
        x[solvable] = np.linalg.solve(a[solvable], b[solvable])
    return x


def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    result, _, _, info = dispatcher.call("_linalg_solve_ex", A, B, left=left, check_errors=check_errors)
    return return_type("linalg_solve_ex", ("result", "info"))(result, info)


def linalg_solve(A, B, *, left=True):
    """``linalg_solve``: ``_linalg_solve_ex``, raising LinAlgError for a singular matrix."""
    result, _, _, info = dispatcher.call("_linalg_solve_ex", A, B, left=left)
    dispatcher.call("_linalg_check_errors", info, "torch.linalg.solve", is_matrix=A.dim() == 2)
    return result


# ---- eigendecompositions on the host: Hermitian (``syevd``/``heevd``) and general (``geev``)
def _check_uplo(UPLO):
    """``checkUplo``: one letter, L or U, in either case."""
    if len(UPLO) != 1 or UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def meta__linalg_eigh(eigenvalues, eigenvectors, A, UPLO="L", compute_v=True):
    """``TORCH_META_FUNC(_linalg_eigh)``: square matrices and a known ``UPLO`` (the dtype is
    the kernel's check); the eigenvalues real, one row per matrix, contiguous, the eigenvectors
    column-major of A's sizes, or empty without ``compute_v``."""
    _square_check(A, "linalg.eigh")
    _check_uplo(UPLO)
    if compute_v:
        eigenvectors = _matrices_out(eigenvectors, A.shape, A.dtype, A.device)
    else:
        eigenvectors = set_output(eigenvectors, (0,), A.dtype, A.device)
    return set_output(eigenvalues, tuple(A.shape[:-1]), st.to_real(A.dtype), A.device), eigenvectors


def impl__linalg_eigh(outs, A, UPLO="L", compute_v=True):
    """``TORCH_IMPL_FUNC(_linalg_eigh_out)``: the eigenvalues of each Hermitian matrix, read
    from the triangle ``UPLO`` names, in ascending order, and orthonormal eigenvectors
    (``syevd``/``heevd``)."""
    result = return_type("_linalg_eigh", ("eigenvalues", "eigenvectors"))(*outs)
    if is_meta_execution():
        return result
    _lapack_dtype(A, "linalg_eigh")
    a = _host(A)
    if a.size == 0:
        w, v = np.zeros(a.shape[:-1]), a
    elif compute_v:
        w, v = np.linalg.eigh(a, UPLO=UPLO.upper())
    else:
        w, v = np.linalg.eigvalsh(a, UPLO=UPLO.upper()), None
    values, vectors = outs
    _write(values, w)
    if compute_v:
        _write(vectors, v)
    return result


_linalg_eigh_out = structured(meta__linalg_eigh, impl__linalg_eigh, outputs=2)


def linalg_eigh(A, UPLO="L"):
    values, vectors = dispatcher.call("_linalg_eigh", A, UPLO, True)
    return return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))(values, vectors)


def linalg_eigvalsh(A, UPLO="L"):
    """The eigenvalues; the eigenvectors too where a gradient may be asked for (the backward
    needs them), as ``linalg_svdvals`` computes U and Vh."""
    compute_v = GradMode.is_enabled() and A.requires_grad
    return dispatcher.call("_linalg_eigh", A, UPLO, compute_v)[0]


def _eig_inputs(A, name):
    """``linalg_eig``'s checks: square matrices of a type with a complex counterpart, finite."""
    _check_matrix(A, name)
    _square_check(A, name)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype.torch_name}")
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"linalg_eig_out_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')
    a = _host(A)
    if not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    return a


def linalg_eig(A):
    """(eigenvalues, eigenvectors) of each square matrix, complex whatever A's type (a real
    matrix's come in conjugate pairs): LAPACK's ``geev`` order, each eigenvector of unit norm
    with its largest component real. Eigenvectors are column-major."""
    a = _eig_inputs(A, "linalg.eig")
    dtype = st.to_complex(A.dtype)
    if a.size == 0:
        w, v = np.zeros(a.shape[:-1]), a
    else:
        w, v = np.linalg.eig(a)
    values = _from_host(w.astype(dtype.numpy_type), dtype, A.device, f_contig=False)
    vectors = _from_host(v.astype(dtype.numpy_type), dtype, A.device)
    return return_type("linalg_eig", ("eigenvalues", "eigenvectors"))(values, vectors)


def _linalg_eigvals(A):
    """The eigenvalues alone (``geev`` without vectors)."""
    a = _eig_inputs(A, "linalg.eigvals")
    dtype = st.to_complex(A.dtype)
    w = np.zeros(a.shape[:-1]) if a.size == 0 else np.linalg.eigvals(a)
    return _from_host(w.astype(dtype.numpy_type), dtype, A.device, f_contig=False)


def linalg_eigvals(A):
    """``linalg_eig``'s eigenvalues where a gradient may be asked for (its backward needs the
    eigenvectors), else ``_linalg_eigvals``."""
    if GradMode.is_enabled() and A.requires_grad:
        return dispatcher.call("linalg_eig", A)[0]
    return dispatcher.call("_linalg_eigvals", A)


# ---- the pseudo-inverse (``LinearAlgebra.cpp``): through svd, or eigh for a Hermitian matrix
def _check_real_tolerance(tol, name, function="torch.linalg.pinv"):
    if tol is not None and tol.dtype.is_complex:
        raise RuntimeError(f"{function}: {name} tensor of complex type is not supported. Got "
                           f"{tol.dtype.torch_name}")


def _default_rtol(A):
    """eps of A's real type times its larger matrix dimension: LAPACK's rounding relative to
    the largest singular value."""
    eps = float(np.finfo(np.float32 if st.to_real(A.dtype) is st.float32 else np.float64).eps)
    return eps * max(A.shape[-1], A.shape[-2])


def _atol_rtol(A, atol, rtol, function="torch.linalg.pinv"):
    """``get_atol_rtol``: 0-dim float64 tolerances; without rtol, the default one unless a
    positive atol was given."""
    _check_real_tolerance(atol, "atol", function)
    _check_real_tolerance(rtol, "rtol", function)
    double = {"dtype": st.float64, "device": A.device}
    atol_ = dispatcher.call("zeros", [], **double) if atol is None else atol
    if rtol is not None:
        return atol_, rtol
    default = dispatcher.call("full", [], _default_rtol(A), **double)
    if atol is None:
        return atol_, default
    return atol_, dispatcher.call("where.self", atol > 0, dispatcher.call("zeros", [], **double), default)


def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse: ``V diag(1/S) U^H`` over the singular values above
    ``max(atol, rtol * S_max)`` (zero for the others); a Hermitian matrix's from its eigenvalues'
    moduli and eigenvectors instead."""
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128) or A.dim() < 2:
        raise RuntimeError(f"linalg.pinv({A.dtype.torch_name}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    atol, rtol = _atol_rtol(A, atol, rtol)
    if A.numel() == 0 or not hermitian:
        U, S, V = dispatcher.call("svd", A)
        if A.numel() == 0:
            return dispatcher.call("matmul", V * dispatcher.call("reciprocal", S).unsqueeze(-2), _adjoint(U))
        largest = S.narrow(-1, 0, 1)        # descending
        return _pinv_from(S, S, U, V, atol, rtol, largest, A.dtype)
    S, U = dispatcher.call("linalg_eigh", A)
    moduli = dispatcher.call("abs", S)
    largest = dispatcher.call("amax", moduli, [-1], True)
    return _pinv_from(moduli, S, U, U, atol, rtol, largest, A.dtype)


def _pinv_from(moduli, S, U, V, atol, rtol, largest, dtype):
    """``V diag(1/S) U^H`` with 1/S zeroed where the modulus is at most the tolerance."""
    tol = dispatcher.call("maximum", atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest)
    inverted = dispatcher.call("where.self", moduli > tol, dispatcher.call("reciprocal", S),
                               dispatcher.call("zeros", [], dtype=S.dtype, device=S.device)).to(dtype)
    return dispatcher.call("matmul", V * inverted.unsqueeze(-2), _adjoint(U))


def _adjoint(X):
    """X^H: a transposed view, conjugated where complex (``mH``)."""
    X = dispatcher.call("transpose.int", X, -2, -1)
    return dispatcher.call("conj", X) if X.dtype.is_complex else X


def _tolerance_tensors(A, atol, rtol):
    """The float overload's ``get_atol_rtol``: the numbers as 0-dim float64 tensors."""
    double = {"dtype": st.float64, "device": A.device}
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else _default_rtol(A)
    return dispatcher.call("full", [], 0.0 if atol is None else atol, **double), dispatcher.call("full", [], rtol,
                                                                                                  **double)


def linalg_pinv_atol_rtol_float(A, *, atol=None, rtol=None, hermitian=False):
    atol, rtol = _tolerance_tensors(A, atol, rtol)
    return dispatcher.call("linalg_pinv.atol_rtol_tensor", A, atol=atol, rtol=rtol, hermitian=hermitian)


def linalg_pinv_rcond(A, rcond, hermitian=False):
    """``rcond`` is a relative tolerance, as NumPy's ``pinv`` reads it; no absolute one."""
    atol, rtol = _tolerance_tensors(A, 0.0, rcond)
    return dispatcher.call("linalg_pinv.atol_rtol_tensor", A, atol=atol, rtol=rtol, hermitian=hermitian)


def linalg_pinv_rcond_tensor(A, rcond, hermitian=False):
    _check_real_tolerance(rcond, "rcond")
    atol = dispatcher.call("zeros", [], dtype=st.float64, device=A.device)
    return dispatcher.call("linalg_pinv.atol_rtol_tensor", A, atol=atol, rtol=rcond, hermitian=hermitian)


def pinverse(A, rcond=1e-15):
    return dispatcher.call("linalg_pinv", A, rcond, False)


# ---- the rank (``LinearAlgebra.cpp``'s ``matrix_rank_impl``): how many singular values (or
# eigenvalue moduli, for a Hermitian matrix) exceed max(atol, rtol * the largest)
def _check_rank_input(A):
    """``checkIsMatrix(input, "torch.linalg.matrix_rank", "input")``."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")


def linalg_matrix_rank_atol_rtol_tensor(A, *, atol=None, rtol=None, hermitian=False):
    _check_rank_input(A)
    atol, rtol = _atol_rtol(A, atol, rtol, "torch.linalg.matrix_rank")
    if A.numel() == 0:      # no nonzero rows: rank 0 (NumPy would fail on the max of nothing)
        return dispatcher.call("zeros", list(A.shape[:-2]), dtype=st.int64, device=A.device)
    if hermitian:
        S = dispatcher.call("abs", dispatcher.call("linalg_eigvalsh", A))
        largest = dispatcher.call("amax", S, [-1], True)
    else:
        S = dispatcher.call("linalg_svdvals", A)
        largest = dispatcher.call("narrow", S, -1, 0, 1)      # descending
    tol = dispatcher.call("maximum", dispatcher.call("unsqueeze", atol, -1),
                          dispatcher.call("mul.Tensor", dispatcher.call("unsqueeze", rtol, -1), largest))
    return dispatcher.call("sum.dim_IntList", dispatcher.call("gt.Tensor", S, tol), [-1])


def linalg_matrix_rank_atol_rtol_float(A, *, atol=None, rtol=None, hermitian=False):
    _check_rank_input(A)
    atol, rtol = _tolerance_tensors(A, atol, rtol)
    return dispatcher.call("linalg_matrix_rank.atol_rtol_tensor", A, atol=atol, rtol=rtol, hermitian=hermitian)


def linalg_matrix_rank(A, tol, hermitian=False):
    """A given ``tol`` is absolute, not scaled by the largest singular value (NumPy's reading)."""
    _check_rank_input(A)
    atol, rtol = _tolerance_tensors(A, tol, 0.0)
    return dispatcher.call("linalg_matrix_rank.atol_rtol_tensor", A, atol=atol, rtol=rtol, hermitian=hermitian)


def linalg_matrix_rank_tol_tensor(A, tol, hermitian=False):
    _check_rank_input(A)
    rtol = dispatcher.call("zeros", [], dtype=st.float64, device=A.device)
    return dispatcher.call("linalg_matrix_rank.atol_rtol_tensor", A, atol=tol, rtol=rtol, hermitian=hermitian)


# ---- the product of Householder reflectors: what geqrf's packed output and tau stand for
def _check_householder_inputs(input, tau):
    """``householder_product_out_helper``'s checks, in torch's order."""
    name = "torch.linalg.householder_product"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if input.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {input.dim()}")
    if input.dim() > 2 and list(tau.shape[:-1]) != list(input.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.torch_name} does not match input dtype "
                           f"{input.dtype.torch_name}")
    if tau.device != input.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{input.device} and {tau.device}!")
    _lapack_dtype(input, "orgqr")


def _org2r(a, tau):
    """LAPACK's unblocked ``org2r`` on one matrix: the first n columns of H_1 H_2 ... H_k, with
    H_i = I - tau_i v_i v_i^H and v_i column i of ``a`` below the diagonal, 1 on it. The
    reflectors are applied last first, each to the rows it touches."""
    m, n = a.shape
    q = np.eye(m, n, dtype=a.dtype)
    for i in reversed(range(tau.shape[0])):
        v = np.concatenate(([1], a[i + 1:, i])).astype(a.dtype)
        rows = q[i:, i:]
        rows -= tau[i] * np.outer(v, v.conj() @ rows)
    return q


def linalg_householder_product(input, tau):
    """``linalg_householder_product`` (``orgqr``): the m x n matrix with orthonormal columns that
    ``input``'s columns below the diagonal and ``tau`` encode as a product of reflectors, as
    geqrf leaves them. Computed on the host, column-major as LAPACK writes it."""
    _check_householder_inputs(input, tau)
    *batch, m, n = input.shape
    a, t = _host(input), _host(tau)
    q = np.empty((*batch, m, n), dtype=a.dtype)
    for index in np.ndindex(*batch):
        q[index] = _org2r(a[index], t[index])
    return _from_host(q, input.dtype, input.device)


def orgqr(self, input2):
    """``torch.orgqr``: LAPACK's name for ``linalg.householder_product``."""
    return dispatcher.call("linalg_householder_product", self, input2)


def geqrf(A):
    """``geqrf``: the QR factorization as LAPACK stores it, R on and above the diagonal of ``a``
    and the Householder vectors of Q below it, with their scales ``tau`` (NumPy's ``qr`` in mode
    'raw' returns exactly that, transposed). ``a`` column-major, as LAPACK writes it."""
    if A.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _lapack_dtype(A, "geqrf")
    *batch, m, n = A.shape
    a = _host(A)
    packed = np.empty((*batch, m, n), dtype=a.dtype)
    tau = np.empty((*batch, min(m, n)), dtype=a.dtype)
    if a.size:
        for index in np.ndindex(*batch):
            h, t = np.linalg.qr(a[index], mode="raw")
            packed[index], tau[index] = h.T, t
    return return_type("geqrf", ("a", "tau"))(_from_host(packed, A.dtype, A.device),
                                              _from_host(tau, A.dtype, A.device, f_contig=False))


# ---- triangular solves (``BatchLinearAlgebra.cpp``'s ``linalg_solve_triangular_out`` and
# ``triangular_solve``): LAPACK's ``trsm``, by substitution on the host
def _trsm_host(a, x, upper, unitriangular):
    """``trsm`` with side 'L' and no transpose: x overwritten by A^-1 x, for each matrix of a
    broadcast batch, reading only A's triangle (and not its diagonal when ``unitriangular``).
    Column-oriented as the reference ``trsm`` runs: each solved row is divided by its pivot,
    then scaled into the rows still to solve."""
    n = a.shape[-1]
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):         # a zero pivot gives inf or NaN, as LAPACK's
        for k in order:
            if not unitriangular:
                x[..., k, :] /= a[..., k, k, None]
            rest = slice(0, k) if upper else slice(k + 1, n)
            x[..., rest, :] -= a[..., rest, k, None] * x[..., k, None, :]
    return x


def _solve_triangular_host(A, X, upper, left, unitriangular, transpose=False):
    """X (holding B, broadcast, of A's dtype) overwritten with the solution of ``op(A) X = B``
    (``X op(A) = B`` when not ``left``), op(A) A^T with ``transpose``: a right-hand solve is the
    left-hand one of the transposes, a transposed triangle the other triangle."""
    a = np.broadcast_to(_host(A), (*X.shape[:-2], *A.shape[-2:]))
    x = np.array(_host(X))
    if transpose != (not left):
        a, upper = np.swapaxes(a, -1, -2), not upper
    if not left:
        x = np.swapaxes(x, -1, -2)
    x = _trsm_host(a, x, upper, unitriangular)
    _write(X, x if left else np.swapaxes(x, -1, -2))


def _check_trsm_dtype(A):
    """``triangular_solve_stub`` dispatches on float, double and the complex types."""
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"triangular_solve_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')


def linalg_solve_triangular_out(A, B, *, upper, left=True, unitriangular=False, out):
    """``linalg_solve_triangular_out``: A square and triangular, batches broadcast; ``out`` of
    A's dtype, B cast into it, resized column-major where its size is wrong (torch hands LAPACK
    a column-major matrix; row-major when A is a transposed conjugate view it solves with in
    place); an ``out`` of the right size keeps its strides."""
    name = "linalg.solve_triangular"
    _check_inputs_solver(A, B, left, name)
    batch = infer_size(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    shape = (*batch, *B.shape[-2:])
    _check_trsm_dtype(A)
    if out.dtype is not A.dtype:
        raise RuntimeError(f"expected scalar type {A.dtype.torch_name} but found {out.dtype.torch_name}")
    conj_transposed = A.is_conj() and A.mT.is_contiguous()
    if resize_output(out, shape) and not conj_transposed:
        out._impl.strides = _batched_matrix_strides(shape, True)
    dispatcher.call("copy_", out, dispatcher.call("expand", B, list(shape)))
    if out.numel():
        _solve_triangular_host(A, out, upper, left, unitriangular)
    return out


def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The out= kernel into an empty tensor of A's dtype (torch's functional form)."""
    out = empty([0], dtype=A.dtype, device=A.device)
    return dispatcher.call("linalg_solve_triangular.out", A, B, upper=upper, left=left, unitriangular=unitriangular,
                           out=out)


def _linear_solve_check_inputs(b, A, name):
    """``linearSolveCheckInputs``: b and A of one dtype, A square with as many columns as b has rows."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {b.dtype.torch_name} and A "
                           f"of type {A.dtype.torch_name} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           "matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


def meta_triangular_solve(X, M, b, A, upper=True, transpose=False, unitriangular=False):
    """``TORCH_META_FUNC(triangular_solve)``: b and A matrices of one dtype, A square with as
    many columns as b has rows (``linearSolveCheckInputs``); the solution and the copy of A
    column-major over the broadcast batch."""
    for what, T in (("b", b), ("A", A)):
        if T.dim() < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {what} to have at least 2 dimensions, but it has "
                               f"{T.dim()} dimensions instead")
    _linear_solve_check_inputs(b, A, "triangular_solve")
    batch = infer_size(tuple(b.shape[:-2]), tuple(A.shape[:-2]))
    return (_matrices_out(X, (*batch, *b.shape[-2:]), b.dtype, b.device),
            _matrices_out(M, (*batch, *A.shape[-2:]), A.dtype, A.device))


def impl_triangular_solve(outs, b, A, upper=True, transpose=False, unitriangular=False):
    """``TORCH_IMPL_FUNC(triangular_solve_out)``: b and A copied into the outputs (A whole, both
    triangles), then ``op(A) X = b`` solved in place, op(A) A^T with ``transpose``."""
    result = return_type("triangular_solve", ("solution", "cloned_coefficient"))(*outs)
    if is_meta_execution():
        return result
    _warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in "
               "a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not "
               "return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced "
               "with\nX = torch.linalg.solve_triangular(A, B).")
    X, M = outs
    _check_trsm_dtype(A)
    dispatcher.call("copy_", X, dispatcher.call("expand", b, list(X.shape)))
    dispatcher.call("copy_", M, dispatcher.call("expand", A, list(M.shape)))
    if X.numel():
        _solve_triangular_host(M, X, upper, True, unitriangular, transpose)
    return result


triangular_solve_out = structured(meta_triangular_solve, impl_triangular_solve, outputs=2)


# ---- the factors of an LU factorization unpacked (``lu_unpack``, ``linalg_lu``)
def _lu_sizes(LU):
    m, n = LU.shape[-2:]
    return m, n, min(m, n)


def meta_lu_unpack(P, L, U, LU, pivots, unpack_data=True, unpack_pivots=True):
    """``TORCH_META_FUNC(lu_unpack)``: LU a matrix or a batch, m by n, and int32 pivots; P m by
    m, L m by min(m, n), U min(m, n) by n, all contiguous of LU's dtype, or empty where not
    unpacked."""
    if LU.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {list(LU.shape)} "
                           "instead")
    if unpack_pivots and pivots.dtype is not st.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    return _unpacked_outputs(P, L, U, LU, unpack_data, unpack_pivots)


def _unpacked_outputs(P, L, U, A, with_factors, with_permutation):
    *batch, m, n = A.shape
    k = min(m, n)
    empty_ = (0,)
    return (set_output(P, (*batch, m, m) if with_permutation else empty_, A.dtype, A.device),
            set_output(L, (*batch, m, k) if with_factors else empty_, A.dtype, A.device),
            set_output(U, (*batch, k, n) if with_factors else empty_, A.dtype, A.device))


def _permutation_host(pivots, batch, m, k):
    """``unpack_pivots``: the row swaps applied in order to the identity permutation, then P
    with ``P[perm[i], i] = 1`` (so that ``A = P L U``)."""
    piv = _host(pivots).astype(np.int64)
    try:
        piv = np.broadcast_to(piv, (*batch, piv.shape[-1]))
    except ValueError:
        raise RuntimeError("lu_unpack: the pivots' batch does not match LU's") from None
    if piv.shape[-1] < k or ((piv[..., :k] < 1) | (piv[..., :k] > m)).any():
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly "
                           "pass the result of lu_factor?")
    perm = np.broadcast_to(np.arange(m), (*batch, m)).copy()
    rows = perm.reshape(-1, m)
    for b, swaps in enumerate(piv.reshape(-1, piv.shape[-1])):
        for i in range(k):
            j = swaps[i] - 1
            rows[b, i], rows[b, j] = rows[b, j], rows[b, i]
    P = np.zeros((*batch, m, m))
    np.put_along_axis(P, perm[..., None, :], 1.0, axis=-2)
    return P


def impl_lu_unpack(outs, LU, pivots, unpack_data=True, unpack_pivots=True):
    """``TORCH_IMPL_FUNC(lu_unpack_out)``: L the strict lower part of LU with ones on its
    diagonal, U the upper part, and P the permutation the 1-based row swaps make. The output
    that may be LU itself (``linalg_lu`` factors into it) is filled last."""
    result = return_type("lu_unpack", ("P", "L", "U"))(*outs)
    if is_meta_execution():
        return result
    P, L, U = outs
    m, n, k = _lu_sizes(LU)
    if unpack_data:
        lower, upper = LU if m > n else LU.narrow(-1, 0, m), LU if m <= n else LU.narrow(-2, 0, n)
        if L.numel() and L.data_ptr() == LU.data_ptr():     # U read before L overwrites LU
            dispatcher.call("triu.out", upper, 0, out=U)
            _unit_lower(L, lower)
        else:
            _unit_lower(L, lower)
            dispatcher.call("triu.out", upper, 0, out=U)
    if unpack_pivots and P.numel():
        _write(P, _permutation_host(pivots, tuple(LU.shape[:-2]), m, k))
    return result


def _unit_lower(L, LU):
    dispatcher.call("tril.out", LU, -1, out=L)
    dispatcher.call("fill_.Scalar", L.diagonal(0, -2, -1), 1)


lu_unpack_out = structured(meta_lu_unpack, impl_lu_unpack, outputs=3)


def meta_linalg_lu(P, L, U, A, *, pivot=True):
    """``TORCH_META_FUNC(linalg_lu)``: A a matrix or a batch, m by n; P m by m (empty without
    ``pivot``), L m by min(m, n), U min(m, n) by n, all contiguous of A's dtype."""
    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    return _unpacked_outputs(P, L, U, A, True, pivot)


def impl_linalg_lu(outs, A, *, pivot=True):
    """``TORCH_IMPL_FUNC(linalg_lu_out)``: A factored into whichever of L and U has A's size
    (L for a tall A, else U), then unpacked from there."""
    result = return_type("linalg_lu", ("P", "L", "U"))(*outs)
    if is_meta_execution():
        return result
    P, L, U = outs
    m, n = A.shape[-2:]
    packed = L if m > n else U
    pivots = empty([0], dtype=st.int32, device=A.device)
    info = empty([0], dtype=st.int32, device=A.device)
    dispatcher.call("linalg_lu_factor_ex.out", A, pivot=pivot, LU=packed, pivots=pivots, info=info)
    dispatcher.call("lu_unpack.out", packed, pivots, True, pivot, P=P, L=L, U=U)
    return result


linalg_lu_out = structured(meta_linalg_lu, impl_linalg_lu, outputs=3)


# ---- solving with LU factors (``linalg_lu_solve``): LAPACK's ``getrs``, by substitution on the host
def meta_linalg_lu_solve(out, LU, pivots, B, *, left=True, adjoint=False):
    """``TORCH_META_FUNC(linalg_lu_solve)``: LU square and floating, B of its dtype, int32
    pivots one per row of LU, B's sizes fitting ``A X = B`` (``X A = B``), batches that
    broadcast; the result of B's sizes over the broadcast batch, column-major when ``left``,
    row-major otherwise."""
    _check_floating(LU, "torch.linalg.lu_solve")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{LU.dtype.torch_name} and B of type {B.dtype.torch_name} instead")
    if pivots.dtype is not st.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    _square_check(LU, "torch.linalg.lu_solve")
    _check_inputs_solver(LU, B, left, "linalg.lu_solve")
    if LU.shape[-1] != pivots.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if tuple(LU.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {list(pivots.shape)} instead")
    shape = (*infer_size(tuple(B.shape[:-2]), tuple(LU.shape[:-2])), *B.shape[-2:])
    return set_output(out, shape, B.dtype, B.device, _batched_matrix_strides(shape, left))


def _laswp_host(x, piv, reverse):
    """LAPACK's ``laswp`` on a batch: row i swapped with row ``piv[i] - 1``, in order (last
    first with ``reverse``, which undoes them)."""
    rows = x.reshape(-1, *x.shape[-2:])
    piv = piv.reshape(-1, piv.shape[-1])
    for b in range(rows.shape[0]):
        order = range(piv.shape[-1] - 1, -1, -1) if reverse else range(piv.shape[-1])
        for i in order:
            j = piv[b, i] - 1
            if j != i:
                rows[b, [i, j]] = rows[b, [j, i]]
    return x


def _getrs_host(lu, piv, x, adjoint):
    """``getrs`` on a broadcast batch. The factors say ``S A = L U``, S the row swaps: ``A X =
    B`` is ``L U X = S B``, the swaps then the two triangles; ``A^H X = B`` is ``U^H L^H S X =
    B``, the two adjoint triangles then the swaps undone."""
    if not adjoint:
        x = _laswp_host(x, piv, reverse=False)
        x = _trsm_host(lu, x, upper=False, unitriangular=True)
        return _trsm_host(lu, x, upper=True, unitriangular=False)
    lu_h = np.swapaxes(lu, -1, -2).conj()
    x = _trsm_host(lu_h, x, upper=False, unitriangular=False)
    x = _trsm_host(lu_h, x, upper=True, unitriangular=True)
    return _laswp_host(x, piv, reverse=True)


def impl_linalg_lu_solve(outs, LU, pivots, B, *, left=True, adjoint=False):
    """``TORCH_IMPL_FUNC(linalg_lu_solve_out)``: ``op(A) X = B`` with op(A) = A or A^H, A given
    by its factors; ``X op(A) = B`` is solved as ``op(A)^H X^H = B^H``."""
    if is_meta_execution():
        return outs
    if LU.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"linalg.lu_solve_{LU.device.type}" not implemented for \'{LU.dtype.torch_name}\'')
    result = outs
    if result.numel() == 0:
        return result
    batch = tuple(result.shape[:-2])
    lu = np.broadcast_to(_host(LU), (*batch, *LU.shape[-2:]))
    piv = np.broadcast_to(_host(pivots), (*batch, pivots.shape[-1]))
    x = np.array(np.broadcast_to(_host(B), result.shape))
    if not left:
        x = np.swapaxes(x, -1, -2).conj()
    with np.errstate(all="ignore"):
        x = _getrs_host(lu, piv, x, adjoint if left else not adjoint)
    _write(result, x if left else np.swapaxes(x, -1, -2).conj())
    return result


linalg_lu_solve_out = structured(meta_linalg_lu_solve, impl_linalg_lu_solve)


def lu_solve(b, LU_data, LU_pivots):
    """The older ``torch.lu_solve``: ``linalg_lu_solve`` with its arguments the other way round."""
    _warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
               "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, "
               "pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return dispatcher.call("linalg_lu_solve", LU_data, LU_pivots, b)


# ---- least squares (``linalg_lstsq`` in ``BatchLinearAlgebra.cpp``): X minimising |A X - B|, on the host
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
_LSTSQ_SVD_DRIVERS = ("gelsd", "gelss")     # the two that return the singular values


def _lstsq_driver(driver, A):
    """``get_default_lstsq_driver``: the name, lower-cased and checked; 'gelsy' on the CPU when none
    is named, 'gels' (the only one there) on CUDA."""
    if driver is None:
        return "gels" if A.device.type == "cuda" else "gelsy"
    name = driver.lower()
    if A.device.type == "cpu" and name not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.device.type != "cpu" and name != "gels":
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
    return name


def _check_lstsq_inputs(A, B):
    """``linalg_lstsq_out``'s checks, in its order: A a matrix, B at least a vector, one dtype, B
    with as many dims as A or one fewer, and as many rows as A. Returns whether B is a vector
    (or a batch of them) and B as a matrix."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {A.dtype.torch_name} and other's dtype {B.dtype.torch_name}")
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector_case = _is_vector_rhs(A, B)
    B2 = dispatcher.call("unsqueeze", B, -1) if vector_case else B
    if A.shape[-2] != B2.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector_case else -2})")
    if B.device != A.device:
        raise RuntimeError(f"torch.linalg.lstsq: Expected other and input to be on the same device, but found other on "
                           f"{B.device} and input on {A.device} instead.")
    return vector_case, B2


def _lstsq_dtype(A):
    """The kernel takes float, double and the two complex types; without ``rcond`` the default one
    is computed first, and its epsilon is known for the floating types only (``_get_epsilon``)."""
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"linalg_lstsq_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')


def _lstsq_default_rcond(A):
    """``_get_epsilon`` of A's real type times its larger dimension."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype.is_reduced_float:
        raise RuntimeError("This function doesn't handle types other than float and double")
    return float(np.finfo(np.dtype(st.to_real(A.dtype).numpy_type)).eps) * max(A.shape[-2], A.shape[-1])


def _lstsq_refuse_nan(a, b, driver):
    """MKL, torch's LAPACK, reports a NaN in A or B as an illegal argument (an infinity in A too,
    for the drivers that take an SVD); torch raises that as an internal error, for the first matrix
    of a batch that has one. The argument's number is its place in the LAPACK routine's signature
    (gels has TRANS before M)."""
    first = 5 if driver == "gels" else 4
    bad_a = np.isnan(a) if driver == "gels" or driver == "gelsy" else ~np.isfinite(a)
    bad_a = np.broadcast_to(bad_a.any(axis=(-2, -1)), b.shape[:-2]).reshape(-1)
    bad_b = np.isnan(b).any(axis=(-2, -1)).reshape(-1)
    codes = np.where(bad_a, first, np.where(bad_b, first + 2, 0)).tolist()
    _raise_illegal_argument(codes, "torch.linalg.lstsq", len(codes) > 1)


# torch checks LAPACK's negative info with TORCH_INTERNAL_ASSERT, whose message names its own line
_LAPACK_ASSERT = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                  'BatchLinearAlgebra.cpp":1613, please report a bug to PyTorch. ')


def _raise_illegal_argument(positions, name, batched):
    """``_linalg_check_errors`` for a negative info: the first matrix whose LAPACK call refused
    an argument (``positions`` holds that argument's number per matrix, 0 where none was refused)."""
    at = next((i for i, position in enumerate(positions) if position), None)
    if at is not None:
        where = f"(Batch element {at}): " if batched else ""
        raise RuntimeError(f"{_LAPACK_ASSERT}{name}: {where}Argument {positions[at]} has illegal value. Most "
                           "certainly there is a bug in the implementation calling the backend library.")


def _lstsq_gels(a, b):
    """``gels``: A of full rank, through its QR factorization (A^H's when A is wide, for the
    solution of least norm). Returns X padded to max(m, n) rows, the last m - n holding Q^H B's
    rows past n (whose squares sum to the residuals), and the 1-based place of the first zero on
    R's diagonal for each matrix (0 where there is none), LAPACK's ``info``."""
    m, n = a.shape[-2:]
    k = b.shape[-1]
    x = np.zeros((*b.shape[:-2], max(m, n), k), dtype=b.dtype)
    info = np.zeros(b.shape[:-2], dtype=np.int64)
    if min(m, n, k) == 0:           # LAPACK zeroes B and returns
        return x, info
    if m >= n:
        q, r = np.linalg.qr(a, mode="complete")
        c = np.conj(np.swapaxes(q, -1, -2)) @ b
        r = r[..., :n, :]
    else:
        q, r = np.linalg.qr(np.conj(np.swapaxes(a, -1, -2)), mode="reduced")
    diagonal = np.diagonal(r, axis1=-2, axis2=-1)
    zero = diagonal == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0)
    safe = np.where(zero[..., None, :], np.ones_like(r), r)     # the failed matrices raise afterwards
    if m >= n:
        x[..., :n, :] = np.linalg.solve(safe, c[..., :n, :])
        x[..., n:, :] = c[..., n:, :]
    else:
        x[..., :n, :] = q @ np.linalg.solve(np.conj(np.swapaxes(safe, -1, -2)), b)
    for index in np.ndindex(*b.shape[:-2]):
        if np.isinf(a[index]).any() or np.isinf(b[index]).any():
            info[index] = _gels_infinite(a[index])
            x[index] = np.nan
            if m > n and not np.isinf(a[index]).any():      # the rows past n are left unscaled
                x[index][n:] = _lstsq_residual_rows(a[index], _scale_infinite(b[index]))
    return x, info


def _gels_infinite(a):
    """``xGELS`` on a matrix with an infinity: scaling by the infinite norm leaves only NaNs
    where the infinities were, and the factorization (of A^H where A is wide) then reports the
    first exact zero on R's diagonal, or none (0) where a NaN spread. An infinity in B alone
    makes the whole solution NaN, and leaves Q^H B's rows past n as they were, where only
    the columns that held one are NaN."""
    if not np.isinf(a).any():
        return 0
    r = _scale_infinite(a if a.shape[-2] >= a.shape[-1] else np.conj(a.T))
    _householder_qr(r, np.zeros((r.shape[0], 0), dtype=r.dtype))
    zero = np.diagonal(r) == 0
    return int(zero.argmax()) + 1 if zero.any() else 0


def _householder(x):
    """LAPACK's ``xLARFG``: the reflector H = I - tau v v^H (v[0] = 1) taking x to (beta, 0, ...).
    No reflection (tau = 0) where x's tail is zero, so a NaN alone on the diagonal stays there."""
    alpha = x[0]
    tail = np.linalg.norm(x[1:])
    if tail == 0 and alpha.imag == 0:
        return 0.0, np.zeros_like(x), alpha
    beta = -np.copysign(np.hypot(abs(alpha), tail), alpha.real)
    v = np.empty_like(x)
    v[0] = 1
    v[1:] = x[1:] / (alpha - beta)
    return (beta - alpha) / beta, v, beta


def _reflect(tau, v, block):
    """Applies H^H = I - conj(tau) v v^H to a block's rows in place."""
    if tau != 0:
        block -= np.conj(tau) * np.outer(v, np.conj(v) @ block)


def _householder_qr(a, b):
    """``xGEQRF`` with the reflections also applied to b (``xORMQR``): R in a's place, b becomes
    Q^H b; returns the reflections (tau, v, the row they start at)."""
    m, n = a.shape
    reflections = []
    for j in range(min(m, n)):
        tau, v, beta = _householder(a[j:, j].copy())
        _reflect(tau, v, a[j:, j + 1:])
        _reflect(tau, v, b[j:])
        a[j, j] = beta
        a[j + 1:, j] = 0
        reflections.append((tau, v, j))
    return reflections


def _incremental_estimate(largest, x, sest, w, gamma):
    """LAPACK's ``xLAIC1``: given x with |R x| = sest for the leading triangle R, the estimate of
    R's largest (or smallest) singular value once column (w, gamma) is appended, and the sine and
    cosine that extend x. Real arithmetic on the moduli (the complex routine's branches agree)."""
    eps = np.finfo(np.float64).eps if x.dtype.itemsize >= 8 and x.dtype != np.complex64 else np.finfo(np.float32).eps
    alpha = np.vdot(x, w)
    absalp, absgam, absest = abs(alpha), abs(gamma), abs(sest)
    sign = lambda z: 1.0 if np.real(z) >= 0 else -1.0  # noqa: E731
    if largest:
        if sest == 0:
            s1 = max(absgam, absalp)
            if s1 == 0:
                return 0.0, 0.0, 1.0
            s, c = alpha / s1, gamma / s1
            tmp = np.sqrt(abs(s) ** 2 + abs(c) ** 2)
            return s1 * tmp, s / tmp, c / tmp
        if absgam <= eps * absest:
            tmp = max(absest, absalp)
            return tmp * np.sqrt((absest / tmp) ** 2 + (absalp / tmp) ** 2), 1.0, 0.0
        if absalp <= eps * absest:
            return (absest, 1.0, 0.0) if absgam <= absest else (absgam, 0.0, 1.0)
        if absest <= eps * absalp or absest <= eps * absgam:
            if absgam <= absalp:
                tmp = absgam / absalp
                s = np.sqrt(1 + tmp * tmp)
                return absalp * s, sign(alpha) / s, (gamma / absalp) / s
            tmp = absalp / absgam
            c = np.sqrt(1 + tmp * tmp)
            return absgam * c, (alpha / absgam) / c, sign(gamma) / c
        zeta1, zeta2 = absalp / absest, absgam / absest
        b = (1 - zeta1 * zeta1 - zeta2 * zeta2) * 0.5
        c = zeta1 * zeta1
        t = c / (b + np.sqrt(b * b + c)) if b > 0 else np.sqrt(b * b + c) - b
        sine, cosine = -(alpha / absest) / t, -(gamma / absest) / (1 + t)
        tmp = np.sqrt(abs(sine) ** 2 + abs(cosine) ** 2)
        return np.sqrt(t + 1) * absest, sine / tmp, cosine / tmp
    if sest == 0:
        sine, cosine = (1.0, 0.0) if max(absgam, absalp) == 0 else (-np.conj(gamma), np.conj(alpha))
        s1 = max(abs(sine), abs(cosine))
        s, c = sine / s1, cosine / s1
        tmp = np.sqrt(abs(s) ** 2 + abs(c) ** 2)
        return 0.0, s / tmp, c / tmp
    if absgam <= eps * absest:
        return absgam, 0.0, 1.0
    if absalp <= eps * absest:
        return (absgam, 0.0, 1.0) if absgam <= absest else (absest, 1.0, 0.0)
    if absest <= eps * absalp or absest <= eps * absgam:
        if absgam <= absalp:
            tmp = absgam / absalp
            c = np.sqrt(1 + tmp * tmp)
            return absest * (tmp / c), -(np.conj(gamma) / absalp) / c, sign(alpha) / c
        tmp = absalp / absgam
        s = np.sqrt(1 + tmp * tmp)
        return absest / s, -sign(gamma) / s, (np.conj(alpha) / absgam) / s
    zeta1, zeta2 = absalp / absest, absgam / absest
    norma = max(1 + zeta1 * zeta1 + zeta1 * zeta2, zeta1 * zeta2 + zeta2 * zeta2)
    if 1 + 2 * (zeta1 - zeta2) * (zeta1 + zeta2) >= 0:
        b = (zeta1 * zeta1 + zeta2 * zeta2 + 1) * 0.5
        c = zeta2 * zeta2
        t = c / (b + np.sqrt(abs(b * b - c)))
        sine, cosine = (alpha / absest) / (1 - t), -(gamma / absest) / t
        estimate = np.sqrt(t + 4 * eps * eps * norma) * absest
    else:
        b = (zeta2 * zeta2 + zeta1 * zeta1 - 1) * 0.5
        c = zeta1 * zeta1
        t = -c / (b + np.sqrt(b * b + c)) if b >= 0 else b - np.sqrt(b * b + c)
        sine, cosine = -(alpha / absest) / t, -(gamma / absest) / (1 + t)
        estimate = np.sqrt(1 + t + 4 * eps * eps * norma) * absest
    tmp = np.sqrt(abs(sine) ** 2 + abs(cosine) ** 2)
    return estimate, sine / tmp, cosine / tmp


def _gelsy_rank(r, rcond):
    """``xGELSY``'s rank: columns of R taken while the incremental estimates of its
    largest and smallest singular values keep ``smax * rcond <= smin``."""
    if min(r.shape) == 0 or abs(r[0, 0]) == 0:
        return 0
    smax = smin = abs(r[0, 0])
    xmax = np.ones(1, dtype=r.dtype)
    xmin = np.ones(1, dtype=r.dtype)
    rank = 1
    while rank < min(r.shape):
        w, gamma = r[:rank, rank], r[rank, rank]
        sminpr, s1, c1 = _incremental_estimate(False, xmin, smin, w, gamma)
        smaxpr, s2, c2 = _incremental_estimate(True, xmax, smax, w, gamma)
        if not smaxpr * rcond <= sminpr:
            break
        xmin = np.append(s1 * xmin, c1)
        xmax = np.append(s2 * xmax, c2)
        smin, smax, rank = sminpr, smaxpr, rank + 1
    return rank


def _scale_infinite(a):
    """``xLASCL`` from an infinite norm: a multiplied by zero, so only its infinities (now NaN)
    are left."""
    return np.where(np.isinf(a), np.nan, 0).astype(a.dtype)


def _gelsy_one(a, b, rcond):
    """One matrix of ``xGELSY``: R from a QR, its rank, then the least-norm solution of R's
    leading rows (``xTZRZF``'s complete orthogonal factorization, here a QR of their conjugate
    transpose). torch hands xGELSY its pivot array uninitialised (``at::empty``) and reuses it
    through the batch; a nonzero entry fixes its column in place, so from the second matrix on
    (and, with recycled memory, usually for the first) the QR is not pivoted, and neither is
    this one. An infinity in A leaves only the NaNs it becomes, and one in B makes every entry
    NaN, as LAPACK's scaling by the norm does."""
    m, n = a.shape
    a_inf, b_inf = np.isinf(a).any(), np.isinf(b).any()
    r = _scale_infinite(a) if a_inf else a.copy()
    c = _scale_infinite(b) if b_inf else b.copy()
    _householder_qr(r, c)
    rank = _gelsy_rank(r, rcond)
    x = np.zeros((max(m, n), b.shape[-1]), dtype=b.dtype)
    if rank:
        lead = np.conj(r[:rank].T).copy()            # M^H = Q2 R2, so M's least-norm solve is Q2 R2^-H c
        y = np.zeros((n, b.shape[-1]), dtype=b.dtype)
        reflections = _householder_qr(lead, np.zeros((n, 0), dtype=b.dtype))
        y[:rank] = np.linalg.solve(np.conj(np.triu(lead[:rank])).T, c[:rank])
        for tau, v, j in reversed(reflections):      # Q2 = H1 ... Hk applied to y
            _reflect(np.conj(tau), v, y[j:])
        x[:n] = y
    if a_inf:
        x = x * 0
    if b_inf:
        with np.errstate(invalid="ignore"):
            x = x * np.inf
    return x, rank


def _lstsq_gelsy(a, b, batch, rcond):
    """``gelsy`` over the broadcast batch: the solutions padded to max(m, n) rows, and the rank of
    each of A's own matrices."""
    m, n = a.shape[-2:]
    x = np.zeros((*batch, max(m, n), b.shape[-1]), dtype=b.dtype)
    ranks = np.zeros(a.shape[:-2], dtype=np.int64)
    full_a = np.broadcast_to(a, (*batch, m, n))
    for index in np.ndindex(*batch):
        x[index], rank = _gelsy_one(full_a[index], b[index], rcond)
        own = index[len(batch) - (a.ndim - 2):]
        ranks[tuple(i if size > 1 else 0 for i, size in zip(own, a.shape[:-2], strict=True))] = rank
    return x, ranks


def _lstsq_svd(a, b, batch, rcond, driver):
    """``gelsd`` and ``gelss``: the least-norm solution over the singular values above ``rcond``
    times the largest (machine epsilon for a negative ``rcond``). Returns X padded to max(m, n)
    rows, the rank and the singular values of each of A's own matrices."""
    m, n = a.shape[-2:]
    k = b.shape[-1]
    x = np.zeros((*batch, max(m, n), k), dtype=b.dtype)
    if min(m, n) == 0:
        return x, np.zeros(a.shape[:-2], dtype=np.int64), np.zeros((*a.shape[:-2], 0), dtype=a.real.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    threshold = (rcond if rcond >= 0 else np.finfo(s.dtype).eps) * s[..., :1]
    kept = s > threshold
    rank = kept.sum(-1)
    inverse = np.where(kept, 1 / np.where(kept, s, 1), 0).astype(s.dtype)
    if k:
        uhb = np.conj(np.swapaxes(u, -1, -2)) @ b
        x[..., :n, :] = np.conj(np.swapaxes(vh, -1, -2)) @ (inverse[..., :, None] * uhb)
    return x, rank, s


def _lstsq_residual_rows(a, b):
    """Q^H B's rows past n, Q from A's complete QR factorization: their squared moduli sum to
    the residuals |A X - B|^2 of a full-rank A, without the cancellation of forming A X - B."""
    n = a.shape[-1]
    if n == 0:
        return b
    q, _ = np.linalg.qr(a, mode="complete")
    return (np.conj(np.swapaxes(q, -1, -2)) @ b)[..., n:, :]


def _lstsq_host(A, B2, batch, rcond, driver):
    """The solution (padded to max(m, n) rows), the residuals (None where not computed), the
    ranks and the singular values, as NumPy arrays."""
    m, n = A.shape[-2:]
    a_own = _host(A)
    a = np.broadcast_to(a_own, (*batch, m, n))
    b = np.broadcast_to(_host(B2), (*batch, m, B2.shape[-1]))
    _lstsq_refuse_nan(a_own, b, driver)
    rank = singular_values = None
    if driver == "gels":
        x, info = _lstsq_gels(a, b)
        _raise_first_failure(info.reshape(-1).tolist(), "torch.linalg.lstsq", info.size > 1,
                             lambda code: "The least squares solution could not be computed because the input matrix "
                             f"does not have full rank (error code: {code}).")
    else:
        if driver in _LSTSQ_SVD_DRIVERS and b.shape[-1] == 0 and min(m, n):
            # LAPACK's gelsd refuses NRHS = 0 (torch's gelss crashes on it)
            _raise_illegal_argument([4] * math.prod(batch), "torch.linalg.lstsq", math.prod(batch) > 1)
        if driver == "gelsy":
            x, rank = _lstsq_gelsy(a_own, b, batch, rcond)
        else:
            x, rank, singular_values = _lstsq_svd(a_own, b, batch, rcond, driver)
    residuals = None
    # residuals only for a tall A, and from gelsd and gelss only when every matrix has full rank
    if m > n and driver != "gelsy" and (driver == "gels" or (rank == n).all()):
        rows = x[..., n:, :] if driver == "gels" else _lstsq_residual_rows(a, b)
        x[..., n:, :] = rows
        residuals = (np.abs(rows) ** 2).sum(-2)
    return x, residuals, rank, singular_values


def _lstsq_solution(x, n, dtype, device, vector_case):
    """The solution as torch leaves it: the padded buffer, column-major (a batch of vectors
    contiguous), with its rows cut to n in place, so that the storage keeps all of them."""
    full = _from_host(x[..., 0] if vector_case else x, dtype, device, f_contig=not vector_case)
    dim = full.dim() - (1 if vector_case else 2)
    # a fresh tensor no one else holds: narrowing its sizes is torch's ``solution = narrow(...)``
    full._impl.sizes = (*full.shape[:dim], n, *full.shape[dim + 1:])
    return full


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """``linalg_lstsq``: the least-squares solution X of ``A X = B`` (the least-norm one where A is
    wide or not of full rank), with what the driver also gives. ``gelsy`` (the CPU's default)
    gives the rank; ``gelsd`` and ``gelss`` the rank and A's singular values; ``gels`` (which
    assumes a full rank) neither. The residuals |A X - B|^2 of each column come where A is tall,
    except from gelsy, and from gelsd and gelss only where every matrix has full rank; the others
    are empty. B may be a vector (or a batch of them, A's batch less its columns); the batches
    broadcast, the rank and singular values per matrix of A."""
    vector_case, B2 = _check_lstsq_inputs(A, B)
    driver = _lstsq_driver(driver, A)
    if rcond is None:
        rcond = _lstsq_default_rcond(A)
    _lstsq_dtype(A)
    m, n = A.shape[-2:]
    if A.device.type == "cuda" and m < n:
        raise RuntimeError("torch.linalg.lstsq: only overdetermined systems (input.size(-2) >= input.size(-1)) are "
                           "allowed on CUDA")
    # torch broadcasts A's batch with as many of B's leading dims (one of them B's rows, when B
    # has one dim fewer and is not a batch of vectors)
    batch = infer_size(tuple(A.shape[:-2]), tuple(B2.shape[:A.dim() - 2]))
    # then copies B into a buffer of the broadcast batch, which B must broadcast to
    infer_size((*batch, m, B2.shape[-1]), tuple(B2.shape))
    x, residuals, rank, singular_values = _lstsq_host(A, B2, batch, float(rcond), driver)
    if m == 0:
        x[...] = 0
    real = st.to_real(A.dtype)
    empty_of = lambda dtype: empty((0,), dtype=dtype, device=A.device)      # noqa: E731
    return return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))(
        _lstsq_solution(x, n, A.dtype, A.device, vector_case),
        empty_of(real) if residuals is None else _from_host(residuals, real, A.device, f_contig=False),
        empty_of(st.int64) if rank is None else _from_host(np.asarray(rank), st.int64, A.device, f_contig=False),
        empty_of(real) if driver not in _LSTSQ_SVD_DRIVERS else _from_host(singular_values, real, A.device,
                                                                          f_contig=False))


def _check_lstsq_out_dtypes(A, solution, residuals, rank, singular_values):
    """``checkLinalgCompatibleDtype`` for each output: each must take its result's dtype without
    loss of kind (torch names the residuals 'solution' in this message)."""
    real = st.to_real(A.dtype)
    for name, out, want in (("solution", solution, A.dtype), ("solution", residuals, real),
                            ("rank", rank, st.int64), ("singular_values", singular_values, real)):
        if not st.can_cast(want, out.dtype):
            raise RuntimeError(f"torch.linalg.lstsq: Expected {name} to be safely castable from {want.torch_name} "
                               f"dtype, but got {name} with dtype {out.dtype.torch_name}")


def _lstsq_out_is_usable(A, B, vector_case, batch, driver, solution, rank, singular_values):
    """torch's test of whether the kernel may write into the given tensors: the solution empty, or
    column-major of the padded shape (which for a 2-d B omits B's columns, so a 2-d B's non-empty
    solution is always written through a copy); rank and singular values of their dtype, and
    empty or contiguous of their shapes, for the drivers that give them."""
    m, n = A.shape[-2:]
    padded = (*batch, max(m, n), *(() if vector_case or B.dim() <= 2 else (B.shape[-1],)))
    if vector_case:
        column_major = solution.is_contiguous()
    else:
        column_major = solution.dim() >= 2 and dispatcher.call("transpose.int", solution, -2, -1).is_contiguous()
    if solution.dtype is not A.dtype or (solution.numel() and (not column_major or tuple(solution.shape) != padded)):
        return False
    wanted = []
    if driver != "gels":
        wanted.append((rank, st.int64, tuple(A.shape[:-2])))
    if driver in _LSTSQ_SVD_DRIVERS:
        wanted.append((singular_values, st.to_real(A.dtype), (*A.shape[:-2], min(m, n))))
    return all(out.dtype is dtype and (not out.numel() or (tuple(out.shape) == shape and out.is_contiguous()))
               for out, dtype, shape in wanted)


def _write_lstsq_solution(solution, value, vector_case):
    """The kernel's own write: an empty ``solution`` takes the result's storage and layout (the
    padded buffer, cut to n rows); one of the padded shape receives the values and is cut to n
    rows in place."""
    if not solution.numel():
        dispatcher.call("set_.source_Tensor", solution, value)
        return
    dim = -1 if vector_case else -2
    dispatcher.call("copy_", dispatcher.call("narrow", solution, dim, 0, value.shape[dim]), value)
    dispatcher.call("as_strided_", solution, list(value.shape), list(solution.stride()), solution.storage_offset())


def linalg_lstsq_out(A, B, rcond=None, *, driver=None, solution, residuals, rank, singular_values):
    """``linalg_lstsq_out``: the functional result written into the given tensors: directly where
    the kernel could have written them, else through temporaries resized and copied in (each
    output then contiguous of the result's shape)."""
    vector_case, B2 = _check_lstsq_inputs(A, B)
    _check_lstsq_out_dtypes(A, solution, residuals, rank, singular_values)
    result = linalg_lstsq(A, B, rcond, driver=driver)
    name = _lstsq_driver(driver, A)
    batch = tuple(result.solution.shape[:-1 if vector_case else -2])
    outs = (solution, residuals, rank, singular_values)
    if not _lstsq_out_is_usable(A, B, vector_case, batch, name, solution, rank, singular_values):
        for out, value in zip(outs, result, strict=True):
            resize_output(out, value.shape)
            dispatcher.call("copy_", out, value)
        return outs
    _write_lstsq_solution(solution, result.solution, vector_case)
    # the others are written only where the driver computed them
    m, n = A.shape[-2:]
    full_rank = name == "gels" or bool(dispatcher.call("all", dispatcher.call("eq.Scalar", result.rank, n)))
    for out, value, written in ((residuals, result.residuals, m > n and name != "gelsy" and full_rank),
                                (rank, result.rank, name != "gels"),
                                (singular_values, result.singular_values, name in _LSTSQ_SVD_DRIVERS)):
        if written:
            resize_output(out, value.shape)
            dispatcher.call("copy_", out, value)
    return outs


# ---------------------------------------------------------------------- LDL (Bunch-Kaufman)
# torch.linalg.ldl_factor calls LAPACK's sytrf (hetrf for a Hermitian complex matrix) with the
# lower triangle: A = P L D L^T P^T, D of 1 by 1 and 2 by 2 blocks. For the sizes it blocks no
# further, sytrf is sytf2, written out here on the host, one column (or two) per step.
_BUNCH_KAUFMAN_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _cabs1_host(v):
    return abs(v.real) + abs(v.imag)


def _sytf2_lower(a, piv, hermitian):
    """``?sytf2`` (``?hetf2``) with UPLO = 'L' on one square matrix ``a``, in place: L below the
    diagonal, D on it (and on the first subdiagonal for a 2 by 2 block); ``piv`` gets LAPACK's
    1-based pivots, a 2 by 2 block's two entries both minus the row it swapped in. Returns info:
    0, or k + 1 for the first exactly zero D(k, k)."""
    n = a.shape[0]
    conj = np.conj if hermitian else (lambda v: v)
    size = (lambda v: abs(v.real)) if hermitian else _cabs1_host
    info, k = 0, 0
    while k < n:
        kstep = 1
        absakk = size(a[k, k])
        imax, colmax = k, 0.0
        if k + 1 < n:
            column = np.abs(a[k + 1:, k].real) + np.abs(a[k + 1:, k].imag)
            imax = k + 1 + int(np.argmax(column))
            colmax = float(column[imax - k - 1])
        if max(absakk, colmax) == 0 or absakk != absakk:
            info = info or k + 1
            kp = k
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            kp, kstep = _bunch_kaufman_pivot(a, k, imax, absakk, colmax, size)
            kk = k + kstep - 1
            if kp != kk:
                _ldl_swap(a, k, kk, kp, kstep, conj, hermitian)
            elif hermitian:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                _ldl_update_1(a, k, hermitian, conj)
            else:
                _ldl_update_2(a, k, hermitian, conj)
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return info


def _bunch_kaufman_pivot(a, k, imax, absakk, colmax, size):
    """Bunch and Kaufman's choice for column k: (the row to swap in, 1 or 2 columns)."""
    if absakk >= _BUNCH_KAUFMAN_ALPHA * colmax:
        return k, 1
    row = np.abs(a[imax, k:imax].real) + np.abs(a[imax, k:imax].imag)
    rowmax = float(row.max())
    if imax + 1 < a.shape[0]:
        below = np.abs(a[imax + 1:, imax].real) + np.abs(a[imax + 1:, imax].imag)
        rowmax = max(rowmax, float(below.max()))
    if absakk >= _BUNCH_KAUFMAN_ALPHA * colmax * (colmax / rowmax):
        return k, 1
    if size(a[imax, imax]) >= _BUNCH_KAUFMAN_ALPHA * rowmax:
        return imax, 1
    return imax, 2


def _ldl_swap(a, k, kk, kp, kstep, conj, hermitian):
    """Rows and columns kk and kp of the trailing lower triangle interchanged."""
    a[kp + 1:, kk], a[kp + 1:, kp] = a[kp + 1:, kp].copy(), a[kp + 1:, kk].copy()
    middle = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
    a[kp, kk + 1:kp] = conj(middle)
    if hermitian:
        a[kp, kk] = np.conj(a[kp, kk])
        a[kk, kk], a[kp, kp] = a[kp, kp].real, a[kk, kk].real
        if kstep == 2:
            a[k, k] = a[k, k].real
    else:
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if kstep == 2:
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _ldl_update_1(a, k, hermitian, conj):
    """A 1 by 1 pivot: the trailing lower triangle less x D^-1 x^T (``syr``/``her``), x scaled."""
    n = a.shape[0]
    if k + 1 >= n:
        return
    d11 = 1.0 / (a[k, k].real if hermitian else a[k, k])
    x = a[k + 1:, k].copy()
    for j in range(k + 1, n):
        temp = -d11 * conj(x[j - k - 1])
        a[j:, j] = a[j:, j] + x[j - k - 1:] * temp
        if hermitian:
            a[j, j] = a[j, j].real
    a[k + 1:, k] = x * d11


def _ldl_update_2(a, k, hermitian, conj):
    """A 2 by 2 pivot: the trailing lower triangle less the two columns times D's block inverse."""
    n = a.shape[0]
    if k + 2 >= n:
        return
    if hermitian:
        d = math.hypot(a[k + 1, k].real, a[k + 1, k].imag)
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
    for j in range(k + 2, n):
        if hermitian:
            wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
            wkp1 = d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
        else:
            wk = d21 * (d11 * a[j, k] - a[j, k + 1])
            wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
        a[j:, j] = a[j:, j] - a[j:, k] * conj(wk) - a[j:, k + 1] * conj(wkp1)
        if hermitian:
            a[j, j] = a[j, j].real
        a[j, k] = wk
        a[j, k + 1] = wkp1


def _ldl_kernel_dtype(A, kernel):
    if A.dtype not in (st.float32, st.float64, st.complex64, st.complex128):
        raise NotImplementedError(f'"{kernel}_{A.device.type}" not implemented for \'{A.dtype.torch_name}\'')


def meta_linalg_ldl_factor_ex(LD, pivots, info, self, *, hermitian=False, check_errors=False):
    """``TORCH_META_FUNC(linalg_ldl_factor_ex)``: square floating matrices; LD column-major of
    A's sizes, int32 pivots one per row, int32 info one per matrix."""
    _square_check(self, "torch.linalg.ldl_factor_ex")
    _check_floating(self, "torch.linalg.ldl_factor_ex")
    *batch, n, _ = self.shape
    return (_matrices_out(LD, self.shape, self.dtype, self.device),
            set_output(pivots, (*batch, n), st.int32, self.device),
            set_output(info, tuple(batch), st.int32, self.device))


def impl_linalg_ldl_factor_ex(outs, self, *, hermitian=False, check_errors=False):
    """``TORCH_IMPL_FUNC(linalg_ldl_factor_ex_out)``: A's lower triangle factored (the upper one
    zeroed), matrix by matrix."""
    result = return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))(*outs)
    if is_meta_execution():
        return result
    LD, pivots, info = outs
    if self.numel() == 0:
        dispatcher.call("zero_", info)
        return result
    _ldl_kernel_dtype(self, "ldl_factor_kernel")
    n = self.shape[-1]
    a = np.tril(np.array(_host(self))).reshape(-1, n, n)
    piv = np.zeros(a.shape[:-1], dtype=np.int32)
    codes = np.zeros(a.shape[0], dtype=np.int32)
    with np.errstate(all="ignore"):
        for i in range(a.shape[0]):
            codes[i] = _sytf2_lower(a[i], piv[i], hermitian and self.dtype.is_complex)
    _write(LD, a.reshape(self.shape))
    _write(pivots, piv.reshape(pivots.shape))
    _write(info, codes.reshape(info.shape))
    if check_errors:
        _raise_unknown_error(codes.tolist(), "torch.linalg.ldl_factor_ex")
    return result


linalg_ldl_factor_ex_out = structured(meta_linalg_ldl_factor_ex, impl_linalg_ldl_factor_ex, outputs=3)


def _raise_unknown_error(codes, name):
    """``_linalg_check_errors`` for an operator it has no words for: a positive info (a zero on
    D's diagonal for ldl) is an internal assertion naming the code, with no batch position."""
    code = next((c for c in codes if c), 0)
    if code > 0:
        raise RuntimeError(f'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                           f'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. {name}: Unknown error '
                           f"code: {code}.")


def linalg_ldl_factor(self, *, hermitian=False):
    """``linalg_ldl_factor``, CompositeImplicitAutograd: the _ex form, raising for a zero in D."""
    LD, pivots, _ = _ldl_factor_checked(self, hermitian)
    return return_type("linalg_ldl_factor", ("LD", "pivots"))(LD, pivots)


def linalg_ldl_factor_out(self, *, hermitian=False, LD, pivots):
    info = empty([0], dtype=st.int32, device=self.device)
    _ldl_factor_checked(self, hermitian, LD=LD, pivots=pivots, info=info)
    return return_type("linalg_ldl_factor", ("LD", "pivots"))(LD, pivots)


def _ldl_factor_checked(self, hermitian, **out):
    """The _ex operator with its check on (a fake run skips it there), the error in
    ``linalg_ldl_factor``'s name."""
    try:
        return dispatcher.call("linalg_ldl_factor_ex.out" if out else "linalg_ldl_factor_ex", self,
                               hermitian=hermitian, check_errors=True, **out)
    except RuntimeError as error:
        if "torch.linalg.ldl_factor_ex: Unknown error code" not in str(error):
            raise
        raise RuntimeError(str(error).replace("ldl_factor_ex:", "ldl_factor:")) from None


def meta_linalg_ldl_solve(out, LD, pivots, B, *, hermitian=False):
    """``TORCH_META_FUNC(linalg_ldl_solve)``: square floating LD, B of its dtype and fitting
    rows, integer pivots of LD's shape less one; the result of B's broadcast sizes, column-major."""
    name = "torch.linalg.ldl_solve"
    _square_check(LD, name)
    _check_floating(LD, name)
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {B.dtype.torch_name} and A "
                           f"of type {LD.dtype.torch_name} instead.")
    if B.dim() < 2:     # torch's check reads B.size(-2) first
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)" if B.dim() else
                         "Dimension specified as -2 but tensor has no dimensions")
    if LD.shape[-1] != B.shape[-2]:
        rows = B.shape[-2]
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {LD.shape[-1]} by {LD.shape[-1]}"
                           f" but each b matrix is {rows} by {B.shape[-1]}")
    if tuple(LD.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(pivots.shape)} instead")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype is st.bool_:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {pivots.dtype.torch_name}")
    shape = (*infer_size(tuple(B.shape[:-2]), tuple(LD.shape[:-2])), *B.shape[-2:])
    return set_output(out, shape, B.dtype, B.device, _batched_matrix_strides(shape, True))


def _sytrs_lower(a, piv, b, hermitian):
    """``?sytrs`` (``?hetrs``) with UPLO = 'L': B overwritten by A^-1 B, A given by sytf2's factors."""
    n = a.shape[0]
    conj = np.conj if hermitian else (lambda v: v)
    k = 0
    while k < n:        # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] = b[k] * (1.0 / (a[k, k].real if hermitian else a[k, k]))     # scal by the reciprocal
            k += 1
        else:
            kp = -piv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / (conj(akm1k))
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / conj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:       # L^T X = Y (L^H for a Hermitian A)
        if piv[k] > 0:
            b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def impl_linalg_ldl_solve(out, LD, pivots, B, *, hermitian=False):
    """``TORCH_IMPL_FUNC(linalg_ldl_solve_out)``: ``sytrs`` per matrix of the broadcast batch."""
    if is_meta_execution() or out.numel() == 0 or pivots.numel() == 0:
        return out
    _ldl_kernel_dtype(LD, "ldl_solve")
    batch = tuple(out.shape[:-2])
    n = LD.shape[-1]
    ld = np.broadcast_to(_host(LD), (*batch, n, n)).reshape(-1, n, n)
    piv = np.broadcast_to(_host(pivots).astype(np.int64), (*batch, n)).reshape(-1, n)
    x = np.array(np.broadcast_to(_host(B), out.shape)).reshape(-1, n, out.shape[-1])
    with np.errstate(all="ignore"):
        for i in range(x.shape[0]):
            _sytrs_lower(ld[i], piv[i], x[i], hermitian and LD.dtype.is_complex)
    _write(out, x.reshape(out.shape))
    return out


linalg_ldl_solve_out = structured(meta_linalg_ldl_solve, impl_linalg_ldl_solve)
