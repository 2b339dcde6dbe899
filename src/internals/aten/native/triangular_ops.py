"""``tril`` and ``triu`` (``aten/src/ATen/native/TriangularOps.cpp``): a copy with the other
triangle of each matrix (the last two dims) set to zero.

Declared structured, as torch declares them: the meta step checks the rank and lays the output
out (``set_output_raw_strided`` with no strides: a fresh result is contiguous, an ``out=`` is
checked for dtype and device and resized); the impl step (``compute_triu_tril``) writes every
element of it, the input's or a zero. ``tril.out`` is the primary kernel, ``tril`` and ``tril_``
are derived from it."""
import numpy as np

from .copy import fill_, same_device_copy
from .dispatch_stub import refuse_unlisted_dtypes
from .indexing import element_offsets, move
from .structured import set_output, structured
from .tensor_factories import empty_strided

__all__ = ["tril_out", "triu_out"]


def _meta_triangle(out, x, name):
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return set_output(out, x.shape, x.dtype, x.device)


def _impl_triangle(out, x, diagonal, keep_lower):
    """``out`` holds ``x`` (in place it already does), then the other triangle is zeroed, at
    ``out``'s own strides."""
    if x.numel() == 0:
        return out
    refuse_unlisted_dtypes("tril" if keep_lower else "triu", x, complex32=False)
    if out is not x:
        same_device_copy(out, x)
    rows, cols = x.shape[-2], x.shape[-1]
    above = np.arange(cols)[None, :] - np.arange(rows)[:, None]       # column - row, per element
    zeroed = above > diagonal if keep_lower else above < diagonal
    at = element_offsets([np.arange(n) for n in out.shape], out.stride(), out.storage_offset())[..., zeroed]
    if at.size:
        zero = fill_(empty_strided((1,), (1,), dtype=x.dtype, device=x.device), 0)
        move(out, at, zero, np.zeros(at.size, np.int64))
    return out


def meta_tril(out, self, diagonal=0):
    return _meta_triangle(out, self, "tril")


def impl_tril(out, self, diagonal=0):
    return _impl_triangle(out, self, diagonal, keep_lower=True)


tril_out = structured(meta_tril, impl_tril)


def meta_triu(out, self, diagonal=0):
    return _meta_triangle(out, self, "triu")


def impl_triu(out, self, diagonal=0):
    return _impl_triangle(out, self, diagonal, keep_lower=False)


triu_out = structured(meta_triu, impl_triu)
