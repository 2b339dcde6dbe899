"""``torch.linalg``: the vector norm, the Frobenius matrix norm, what an LU factorization gives
(``lu_factor``, ``inv``, ``det``, ``slogdet``, ``solve``), the matrix exponential, the SVD, QR
(with ``householder_product``) and Cholesky decompositions, the eigendecompositions (``eigh``,
``eigvalsh``, ``eig``, ``eigvals``) and the pseudo-inverse ``pinv`` (the rest of torch's
namespace is not in internals)."""
from ._tensor_base import TensorBase
from .aten import dispatcher
from .aten.native.batch_linear_algebra import _check_errors
from .aten.native.batch_linear_algebra import _LinAlgError as LinAlgError
from .aten.native.tensor_shape import wrap_dim
from .return_types import return_type

__all__ = ["vector_norm", "matrix_norm", "lu_factor", "lu_factor_ex", "inv", "inv_ex", "matrix_power", "matrix_exp",
           "householder_product", "det", "cross", "slogdet", "solve", "solve_ex", "svd", "svdvals", "qr", "cholesky",
           "cholesky_ex", "eigh", "eigvalsh", "eig", "eigvals", "pinv", "LinAlgError"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if out is not None:
        return dispatcher.call("linalg_vector_norm.out", x, ord, dim, keepdim, dtype=dtype, out=out)
    return dispatcher.call("linalg_vector_norm", x, ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1, out=None):
    """``linalg_cross``: the cross product of 3-vectors along ``dim``."""
    if out is None:
        return dispatcher.call("linalg_cross", input, other, dim=dim)
    return dispatcher.call("linalg_cross.out", input, other, dim=dim, out=out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """``linalg_matrix_norm`` with a string ``ord`` (``aten/native/LinearAlgebra.cpp``), checked as
    torch checks it. 'fro' is the vector 2-norm over the two dims; 'nuc' sums singular values.
    The norms of a number ``ord`` are not in internals."""
    if not isinstance(ord, str):
        raise NotImplementedError("internals: linalg.matrix_norm supports ord='fro' only")
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if wrap_dim(dim[0], A.dim()) == wrap_dim(dim[1], A.dim()):
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({wrap_dim(dim[0], A.dim())}, "
                           f"{wrap_dim(dim[1], A.dim())})")
    if ord == "nuc":
        return _nuclear_norm(A, dim, keepdim, dtype)
    return vector_norm(A, 2, list(dim), keepdim, dtype=dtype)


def _nuclear_norm(A, dim, keepdim, dtype):
    """The sum of the singular values of the matrices over ``dim``, those two dims moved last
    first (``create_dim_backshift_permutation``) and put back with ``keepdim``."""
    d0, d1 = wrap_dim(dim[0], A.dim()), wrap_dim(dim[1], A.dim())
    order = [d for d in range(A.dim()) if d not in (d0, d1)] + [d0, d1]
    A = A if dtype is None else A.to(dtype)
    result = svdvals(A.permute(order)).sum(-1)
    if keepdim:
        result = result.unsqueeze(-1).unsqueeze(-1).permute([order.index(d) for d in range(A.dim())])
    return result


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return _structured_out("linalg_lu_factor_ex", ("LU", "pivots", "info"), out, A, pivot=pivot,
                           check_errors=check_errors)


def lu_factor(A, *, pivot=True):
    """``linalg_lu_factor``: the factors, raising where a pivot is zero (``check_errors=True``)."""
    LU, pivots, info = dispatcher.call("linalg_lu_factor_ex", A, pivot=pivot)
    _check_errors(info, "torch.linalg.lu_factor", singular="U")
    return return_type("linalg_lu_factor", ("LU", "pivots"))(LU, pivots)


def inv_ex(A, *, check_errors=False, out=None):
    return _structured_out("linalg_inv_ex", ("inverse", "info"), out, A, check_errors=check_errors, overload="inverse")


def inv(A):
    return dispatcher.call("linalg_inv", A)


def matrix_power(A, n, *, out=None):
    if out is not None:
        return dispatcher.call("linalg_matrix_power.out", A, n, out=out)
    return dispatcher.call("linalg_matrix_power", A, n)


def matrix_exp(A):
    """``linalg_matrix_exp``: exp(A), the power series of a square matrix (or a batch of them)."""
    return dispatcher.call("linalg_matrix_exp", A)


def householder_product(A, tau, *, out=None):
    """``linalg_householder_product``: the first n columns of the product of the Householder
    reflectors that A's columns below the diagonal and ``tau`` encode (geqrf's output)."""
    if out is not None:
        return dispatcher.call("linalg_householder_product.out", A, tau, out=out)
    return dispatcher.call("linalg_householder_product", A, tau)


def det(A):
    return dispatcher.call("linalg_det", A)


def slogdet(A, *, out=None):
    return _maybe_out(dispatcher.call("linalg_slogdet", A), out)


def solve(A, B, *, left=True, out=None):
    return _maybe_out(dispatcher.call("linalg_solve", A, B, left=left), out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return _maybe_out(dispatcher.call("linalg_solve_ex", A, B, left=left, check_errors=check_errors), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    return _maybe_out(dispatcher.call("linalg_svd", A, full_matrices, driver=driver), out)


def svdvals(A, *, driver=None, out=None):
    return _maybe_out(dispatcher.call("linalg_svdvals", A, driver=driver), out)


def qr(A, mode="reduced", *, out=None):
    return _structured_out("linalg_qr", ("Q", "R"), out, A, mode)


def cholesky(A, *, upper=False, out=None):
    return _maybe_out(dispatcher.call("linalg_cholesky", A, upper=upper), out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    return _structured_out("linalg_cholesky_ex", ("L", "info"), out, A, upper=upper, check_errors=check_errors,
                           overload="L")


def eigh(A, UPLO="L", *, out=None):
    return _maybe_out(dispatcher.call("linalg_eigh", A, UPLO), out)


def eigvalsh(A, UPLO="L", *, out=None):
    return _maybe_out(dispatcher.call("linalg_eigvalsh", A, UPLO), out)


def eig(A, *, out=None):
    return _maybe_out(dispatcher.call("linalg_eig", A), out)


def eigvals(A, *, out=None):
    return _maybe_out(dispatcher.call("linalg_eigvals", A), out)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """torch's overloads of ``linalg_pinv``, chosen as its argument parser chooses: ``rcond``
    (a number or a tensor, relative), or the tolerances ``atol``/``rtol`` as tensors, or as
    numbers."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments: rcond with atol or rtol")
        name = "linalg_pinv.rcond_tensor" if isinstance(rcond, TensorBase) else "linalg_pinv"
        return _maybe_out(dispatcher.call(name, A, rcond, hermitian), out)
    if all(t is None or isinstance(t, TensorBase) for t in (atol, rtol)):
        name = "linalg_pinv.atol_rtol_tensor"
    else:
        name = "linalg_pinv.atol_rtol_float"
    return _maybe_out(dispatcher.call(name, A, atol=atol, rtol=rtol, hermitian=hermitian), out)


def _structured_out(name, fields, out, *args, overload="out", **kwargs):
    """The functional operator, or with ``out=`` (one tensor per output) its structured out=
    overload, which checks and resizes the outputs itself; the result a ``torch.return_types``
    tuple either way."""
    if out is None:
        return dispatcher.call(name, *args, **kwargs)
    if len(out) != len(fields):
        raise TypeError(f"{name.removeprefix('linalg_')}(): argument 'out' must be tuple of {len(fields)} Tensors, "
                        f"not {len(out)}")
    result = dispatcher.call(f"{name}.{overload}", *args, **kwargs, **dict(zip(fields, out)))
    return return_type(f"{name}_out", fields)(*result)


def _maybe_out(result, out):
    """The result, or written into ``out`` (a tensor, or one per output) as torch's ``out=``
    overloads write it: resized to the result's shape, then copied."""
    if out is None:
        return result
    outs = (out,) if isinstance(result, TensorBase) else tuple(out)
    results = (result,) if isinstance(result, TensorBase) else tuple(result)
    if len(outs) != len(results):
        raise TypeError(f"expected {len(results)} tensors for out=, got {len(outs)}")
    for o, r in zip(outs, results, strict=True):
        dispatcher.call("resize_", o, list(r.shape))
        dispatcher.call("copy_", o, r)
    return out if isinstance(result, TensorBase) else type(result)(*outs)
