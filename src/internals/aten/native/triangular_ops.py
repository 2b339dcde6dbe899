"""``tril`` and ``triu`` (``aten/src/ATen/native/TriangularOps.cpp``): a contiguous copy with the
other triangle of each matrix (the last two dims) set to zero."""
import numpy as np

from .copy import fill_, same_device_copy
from .indexing import element_offsets, move
from .tensor_factories import empty_strided
from .tensor_shape import _fresh


def _triangle(x, diagonal, name, keep_lower):
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    out = _fresh(x.shape, x.dtype, x.device)
    same_device_copy(out, x)
    rows, cols = x.shape[-2], x.shape[-1]
    above = np.arange(cols)[None, :] - np.arange(rows)[:, None]       # column - row, per element
    zeroed = above > diagonal if keep_lower else above < diagonal
    at = element_offsets([np.arange(n) for n in x.shape], out.stride(), 0)[..., zeroed]
    if at.size:
        zero = fill_(empty_strided((1,), (1,), dtype=x.dtype, device=x.device), 0)
        move(out, at, zero, np.zeros(at.size, np.int64))
    return out


def tril(x, diagonal=0):
    return _triangle(x, diagonal, "tril", True)


def triu(x, diagonal=0):
    return _triangle(x, diagonal, "triu", False)
