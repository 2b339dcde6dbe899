"""Wrapping a negative dim index (``c10/core/WrapDimMinimal.h``), and a list of them
(``aten/src/ATen/WrapDimUtilsMulti.h``)."""

__all__ = ["wrap_dim", "dim_list_to_bitset"]


def wrap_dim(dim, ndim):
    """``dim`` in [-ndim, ndim) as an index in [0, ndim); a 0-dim tensor takes -1 and 0."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def dim_list_to_bitset(dims, ndim):
    """``dim_list_to_bitset``: each dim wrapped, then checked against those before it; the
    wrapped dims in the order given."""
    wrapped = []
    for d in dims:
        d = wrap_dim(d, ndim)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return wrapped
