"""``check``: the course's one comparison between an internals tensor and a torch tensor.

It compares values, shape, strides, storage offset and dtype, raises ``AssertionError`` on
the first mismatch, and returns a one-line confirmation for the notebooks to print. ``check_all``
checks a group of pairs and returns one line for the whole group; ``check_views`` checks a named
group and returns a table of their layouts with one line for the whole group.
"""
from ._tensor import Tensor
from .display import table

__all__ = ["check", "check_all", "check_views"]


def check(ours, theirs, *, rtol=None, atol=None, exact_layout=True):
    """Compare ``ours`` (internals) with ``theirs`` (torch); return a short confirmation."""
    import torch  # torch is heavy: only a check needs it
    if not isinstance(ours, Tensor):
        raise AssertionError(f"expected an internals.Tensor, got {type(ours).__name__}")
    problems = []
    if str(ours.dtype).split(".")[-1] != str(theirs.dtype).split(".")[-1]:
        problems.append(f"dtype {ours.dtype} != {theirs.dtype}")
    if tuple(ours.shape) != tuple(theirs.shape):
        problems.append(f"shape {tuple(ours.shape)} != {tuple(theirs.shape)}")
    if exact_layout and tuple(ours.stride()) != tuple(theirs.stride()):
        problems.append(f"stride {ours.stride()} != {theirs.stride()}")
    if exact_layout and ours.storage_offset() != theirs.storage_offset():
        problems.append(f"storage_offset {ours.storage_offset()} != {theirs.storage_offset()}")
    if problems:
        raise AssertionError("internals and torch differ: " + "; ".join(problems))
    torch.testing.assert_close(ours.to_torch(), theirs.detach().cpu(), rtol=rtol, atol=atol, equal_nan=True)
    return (f"ok: shape {list(ours.shape)}, stride {list(ours.stride())}, offset {ours.storage_offset()}, "
            f"{ours.dtype.name}, values match")


def check_all(pairs, what="results", **kwargs):
    """``check`` every (ours, theirs) pair; return one confirmation line for the group."""
    pairs = list(pairs)
    for ours, theirs in pairs:
        check(ours, theirs, **kwargs)
    return f"ok: all {len(pairs)} {what} match torch (shape, stride, offset, dtype, values)"


def check_views(named, **kwargs):
    """``check`` every ``name: (ours, theirs)`` of ``named``; return a table of their sizes,
    strides, offsets and dtypes, and one confirmation line for the group."""
    rows = []
    for name, (ours, theirs) in named.items():
        check(ours, theirs, **kwargs)
        rows.append((name, list(ours.shape), list(ours.stride()), ours.storage_offset(), ours.dtype.name))
    return (table(rows, ("", "sizes", "strides", "offset", "dtype"))
            + "\nok: torch agrees on every row (shape, stride, offset, dtype, values)")
