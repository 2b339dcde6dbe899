"""Wrapping a negative dim index (``c10/core/WrapDimMinimal.h``)."""

__all__ = ["wrap_dim"]


def wrap_dim(dim, ndim):
    """``dim`` in [-ndim, ndim) as an index in [0, ndim); a 0-dim tensor takes -1 and 0."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
