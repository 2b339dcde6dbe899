"""``torch.linalg``: the vector norm, and the Frobenius matrix norm (the rest of torch's
namespace is not in internals)."""
from .aten import dispatcher
from .aten.native.tensor_shape import wrap_dim

__all__ = ["vector_norm", "matrix_norm"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return dispatcher.call("linalg_vector_norm", x, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """``linalg_matrix_norm`` with a string ``ord`` (``aten/native/LinearAlgebra.cpp``), checked as
    torch checks it. 'fro' is the vector 2-norm over the two dims; 'nuc' sums singular values,
    which internals does not compute, nor the norms of a number ``ord``."""
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
        raise NotImplementedError("internals: linalg.matrix_norm(ord='nuc') needs singular values, which "
                                  "internals does not compute")
    return vector_norm(A, 2, list(dim), keepdim, dtype=dtype)
