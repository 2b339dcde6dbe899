"""``torch.linalg``: the vector norm (the rest of torch's namespace is not in internals)."""
from .aten import dispatcher

__all__ = ["vector_norm"]


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return dispatcher.call("linalg_vector_norm", x, ord, dim, keepdim, dtype=dtype)
