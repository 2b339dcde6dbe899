"""``torch.linalg``: the vector, matrix and general norms, matmul, vecdot, multi_dot, diagonal,
vander, tensorinv, tensorsolve, cond and matrix_rank (compositions of other operators, as in
torch), what an LU factorization gives (``lu_factor``, ``inv``, ``det``, ``slogdet``,
``solve``), the matrix exponential, the SVD, QR (with ``householder_product``) and Cholesky
decompositions, the eigendecompositions (``eigh``, ``eigvalsh``, ``eig``, ``eigvals``) and the
pseudo-inverse ``pinv`` (the rest of torch's namespace is not in internals)."""
from ._tensor_base import TensorBase
from .aten import dispatcher
from .aten.native.batch_linear_algebra import _LinAlgError as LinAlgError
from .return_types import as_return_type, return_type

__all__ = ["vector_norm", "matrix_norm", "norm", "cond", "matrix_rank", "matmul", "diagonal", "vecdot", "vander",
           "tensorinv", "tensorsolve", "multi_dot", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "inv", "inv_ex",
           "matrix_power", "matrix_exp", "householder_product", "det", "cross", "slogdet", "solve", "solve_ex",
           "solve_triangular", "lstsq", "svd", "svdvals", "qr", "cholesky", "cholesky_ex", "eigh", "eigvalsh", "eig",
           "eigvals", "pinv", "LinAlgError"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if out is not None:
        return dispatcher.call("linalg_vector_norm.out", x, ord, dim, keepdim, dtype=dtype, out=out)
    return dispatcher.call("linalg_vector_norm", x, ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1, out=None):
    """``linalg_cross``: the cross product of 3-vectors along ``dim``."""
    if out is None:
        return dispatcher.call("linalg_cross", input, other, dim=dim)
    return dispatcher.call("linalg_cross.out", input, other, dim=dim, out=out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """``linalg_matrix_norm``: 'fro' or 'nuc' (the ``str_ord`` overload), or a number: +-1, +-2,
    +-inf (``aten/native/LinearAlgebra.cpp``)."""
    name = "linalg_matrix_norm.str_ord" if isinstance(ord, str) else "linalg_matrix_norm"
    return _with_out(name, out, A, ord, list(dim), keepdim, dtype=dtype,
                     out_overload="str_ord_out" if isinstance(ord, str) else "out")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """``linalg_norm``: a matrix norm where ``ord`` is given with two dims (or a matrix and no dim),
    else a vector norm (the 2-norm by default); a string ``ord`` always a matrix norm."""
    dim = [dim] if isinstance(dim, int) else (None if dim is None else list(dim))
    if isinstance(ord, str):
        return _with_out("linalg_norm.ord_str", out, A, ord, dim, keepdim, dtype=dtype, out_overload="ord_str_out")
    return _with_out("linalg_norm", out, A, ord, dim, keepdim, dtype=dtype)


def cond(A, p=None, *, out=None):
    """``linalg_cond``: the condition number of each matrix in the norm ``p`` (2 by default)."""
    if isinstance(p, str):
        return _with_out("linalg_cond.p_str", out, A, p, out_overload="p_str_out")
    return _with_out("linalg_cond", out, A, p)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """``linalg_matrix_rank``, its overload chosen as torch's argument parser chooses: ``tol`` (a
    number or a tensor, absolute), or ``atol``/``rtol`` as tensors, or as numbers."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments: tol with atol or rtol")
        if isinstance(tol, TensorBase):
            return _with_out("linalg_matrix_rank.tol_tensor", out, A, tol, hermitian, out_overload="out_tol_tensor")
        return _with_out("linalg_matrix_rank", out, A, tol, hermitian)
    overload = ("atol_rtol_tensor" if all(t is None or isinstance(t, TensorBase) for t in (atol, rtol))
                else "atol_rtol_float")
    return _with_out(f"linalg_matrix_rank.{overload}", out, A, atol=atol, rtol=rtol, hermitian=hermitian,
                     out_overload=f"{overload}_out")


def matmul(input, other, *, out=None):
    """``linalg_matmul``: ``matmul`` under torch.linalg's name."""
    return _with_out("linalg_matmul", out, input, other)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``linalg_diagonal``: ``diagonal`` over the last two dims by default (a view)."""
    return dispatcher.call("linalg_diagonal", A, offset=offset, dim1=dim1, dim2=dim2)


def vecdot(x, y, *, dim=-1, out=None):
    """``linalg_vecdot``: sum(conj(x) * y) along ``dim``."""
    return _with_out("linalg_vecdot", out, x, y, dim=dim)


def vander(x, *, N=None):
    """``linalg_vander``: the powers x^0 .. x^(N-1) along a new last dim."""
    return dispatcher.call("linalg_vander", x, N=N)


def tensorinv(A, ind=2, *, out=None):
    return _with_out("linalg_tensorinv", out, A, ind)


def tensorsolve(A, B, dims=None, *, out=None):
    return _with_out("linalg_tensorsolve", out, A, B, None if dims is None else list(dims))


def multi_dot(tensors, *, out=None):
    """``linalg_multi_dot``: a chain of matrix products in the cheapest order."""
    return _with_out("linalg_multi_dot", out, list(tensors))


def _with_out(name, out, *args, out_overload="out", **kwargs):
    """The operator, or its out= overload ``out_overload`` when ``out`` is given."""
    if out is None:
        return dispatcher.call(name, *args, **kwargs)
    return dispatcher.call(f"{name.split('.')[0]}.{out_overload}", *args, **kwargs, out=out)


def lu(A, *, pivot=True, out=None):
    """``linalg_lu``: ``A = P L U``, P a permutation, L unit lower triangular, U upper."""
    return _structured_out("linalg_lu", ("P", "L", "U"), out, A, pivot=pivot)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return _structured_out("linalg_lu_factor_ex", ("LU", "pivots", "info"), out, A, pivot=pivot,
                           check_errors=check_errors)


def lu_factor(A, *, pivot=True):
    """``linalg_lu_factor``: the factors, raising where a pivot is zero (``check_errors=True``)."""
    LU, pivots, info = dispatcher.call("linalg_lu_factor_ex", A, pivot=pivot)
    dispatcher.call("_linalg_check_errors", info, "torch.linalg.lu_factor", is_matrix=A.dim() == 2)
    return return_type("linalg_lu_factor", ("LU", "pivots"))(LU, pivots)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """``linalg_lu_solve``: X with ``A X = B`` (``A^H X = B`` with ``adjoint``, ``X A = B``
    when not ``left``), A given by ``lu_factor``'s factors."""
    return _with_out("linalg_lu_solve", out, LU, pivots, B, left=left, adjoint=adjoint)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``linalg_ldl_factor_ex``: ``A = P L D L^T P^T`` (L^H for a Hermitian A) in LAPACK's
    compact form, its Bunch-Kaufman pivots, and 0 or the place of the first zero in D."""
    return _structured_out("linalg_ldl_factor_ex", ("LD", "pivots", "info"), out, A, hermitian=hermitian,
                           check_errors=check_errors)


def ldl_factor(A, *, hermitian=False, out=None):
    """``linalg_ldl_factor``: the factors, raising where D has a zero."""
    return _structured_out("linalg_ldl_factor", ("LD", "pivots"), out, A, hermitian=hermitian)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """``linalg_ldl_solve``: X with ``A X = B``, A given by ``ldl_factor``'s factors."""
    return _with_out("linalg_ldl_solve", out, LD, pivots, B, hermitian=hermitian)


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
    return _maybe_out(_named("linalg_slogdet", ("sign", "logabsdet"), A), out)


def solve(A, B, *, left=True, out=None):
    return _maybe_out(dispatcher.call("linalg_solve", A, B, left=left), out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return _maybe_out(_named("linalg_solve_ex", ("result", "info"), A, B, left=left, check_errors=check_errors), out)


_REQUIRED = object()     # a keyword-only argument without a default, refused in torch's words


def solve_triangular(A, B, *, upper=_REQUIRED, left=True, unitriangular=False, out=None):
    """``linalg_solve_triangular``: X with ``A X = B`` (``X A = B`` when not ``left``), A read
    as the triangle ``upper`` names."""
    if upper is _REQUIRED:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    return _with_out("linalg_solve_triangular", out, A, B, upper=upper, left=left, unitriangular=unitriangular)



def lstsq(A, B, rcond=None, *, driver=None, out=None):
    """``linalg_lstsq``: the least-squares solution of ``A X = B``, with the residuals, rank and
    singular values the driver gives."""
    return _structured_out("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"), out, A, B, rcond,
                           driver=driver)

def svd(A, full_matrices=True, *, driver=None, out=None):
    return _maybe_out(_named("linalg_svd", ("U", "S", "Vh"), A, full_matrices, driver=driver), out)


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
    return _maybe_out(_named("linalg_eigh", ("eigenvalues", "eigenvectors"), A, UPLO), out)


def eigvalsh(A, UPLO="L", *, out=None):
    return _maybe_out(dispatcher.call("linalg_eigvalsh", A, UPLO), out)


def eig(A, *, out=None):
    return _maybe_out(_named("linalg_eig", ("eigenvalues", "eigenvectors"), A), out)


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
        return as_return_type(name, fields, dispatcher.call(name, *args, **kwargs))
    if len(out) != len(fields):
        raise TypeError(f"{name.removeprefix('linalg_')}(): argument 'out' must be tuple of {len(fields)} Tensors, "
                        f"not {len(out)}")
    result = dispatcher.call(f"{name}.{overload}", *args, **kwargs, **dict(zip(fields, out)))
    return return_type(f"{name}_out", fields)(*result)


def _named(name, fields, *args, **kwargs):
    """The operator's results as ``torch.return_types.<name>``: the kernels' own named tuple, or a
    dispatch mode's plain one (vmap's, a tracer's) made into it, as torch's binding does."""
    return as_return_type(name, fields, dispatcher.call(name, *args, **kwargs))


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
