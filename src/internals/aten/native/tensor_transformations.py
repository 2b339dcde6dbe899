"""``flip`` and ``roll`` (``aten/src/ATen/native/TensorTransformations.cpp``): copies whose
element order the host computes as offsets (see ``indexing.py``); one loop moves the elements."""
import numpy as np

from ...c10.memory_format import contiguous_format
from ...c10.wrap_dim import dim_list_to_bitset
from .. import dispatcher
from .dispatch_stub import refuse_unlisted_dtypes
from .indexing import element_offsets, move, walk
from .tensor_factories import empty_strided, like_strides
from .tensor_shape import _fresh, wrap_dim


def flip(x, dims):
    """``flip``: the order reversed along ``dims``; the result keeps ``x``'s layout (``empty_like``)."""
    wrapped = dim_list_to_bitset(dims, x.dim())
    if x.numel():
        refuse_unlisted_dtypes("flip_cpu", x)
    out = empty_strided(x.shape, like_strides(x), dtype=x.dtype, device=x.device)
    positions = [np.arange(n)[::-1] if d in wrapped else np.arange(n) for d, n in enumerate(x.shape)]
    return move(out, walk(out), x, element_offsets(positions, x.stride(), x.storage_offset()))


def fliplr(x):
    """CompositeImplicitAutograd: ``flip`` of dim 1."""
    if x.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return dispatcher.call("flip", x, [1])


def flipud(x):
    """CompositeImplicitAutograd: ``flip`` of dim 0."""
    if x.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return dispatcher.call("flip", x, [0])


def roll(x, shifts, dims=()):
    """``roll``: elements shifted along ``dims`` (the flattened tensor when none), wrapping around."""
    shifts, dims = list(shifts), list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        out, n = _fresh(x.shape, x.dtype, x.device), x.numel()
        src = walk(x).reshape(-1)[(np.arange(n) - shifts[0]) % n] if n else walk(x)
        return move(out, walk(out), x, src)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if x.dim() == 0:        # torch asks ``self.size(dim)``, which a 0-dim tensor refuses for any dim
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    if x.numel() == 0:            # nothing to move: torch returns a clone with x's layout
        return empty_strided(x.shape, like_strides(x), dtype=x.dtype, device=x.device)
    out = _fresh(x.shape, x.dtype, x.device)
    positions = [np.arange(n) for n in x.shape]
    for s, d in zip(shifts, dims):
        d = wrap_dim(d, x.dim())
        n = x.shape[d]
        if n:
            positions[d] = (positions[d] - s) % n
    return move(out, walk(out), x, element_offsets(positions, x.stride(), x.storage_offset()))


def rot90(x, k=1, dims=(0, 1)):
    """CompositeExplicitAutograd: a quarter turn from ``dims[0]`` towards ``dims[1]``, ``k`` times:
    a ``flip`` and a transpose of it (a view), or two flips, or a contiguous clone."""
    dims, n = list(dims), x.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if wrap_dim(dims[0], n) == wrap_dim(dims[1], n):
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k = (4 + k % 4) % 4
    if k == 2:
        return dispatcher.call("flip", x, dims)
    if k == 0:
        return dispatcher.call("clone", x, memory_format=contiguous_format)
    flipped = dispatcher.call("flip", x, [dims[1] if k == 1 else dims[0]])
    return dispatcher.call("transpose_", flipped, dims[0], dims[1])
