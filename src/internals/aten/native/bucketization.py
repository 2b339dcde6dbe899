"""``searchsorted`` and ``bucketize`` (``aten/src/ATen/native/Bucketization.cpp``): for each
value, the position in a sorted row of boundaries where it would be inserted.

One binary search, ``search``, compiled into both the CPU loop (``cpu/bucketization.py``, values
in parallel) and the CUDA kernel (``cuda/bucketization.py``, a thread per value), as torch's
``cus_lower_bound``/``cus_upper_bound`` serve its CPU and CUDA kernels. Everything the search
reads is checked on the host first: the shapes, and a ``sorter``'s range.
"""
import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.exception import warn_once
from .. import dispatcher
from .copy import buffer, contiguous, to
from .dispatch_stub import loops, refuse_unlisted_dtypes
from .tensor_factories import empty, wrap_scalar

INT32_MAX = 2 ** 31 - 1


@register_jitable
def search(bd, start, end, val, right, sorter, use_sorter):
    """The first position in ``bd[start:end]`` (read through ``sorter`` if ``use_sorter``) whose
    value is >= ``val`` (> ``val`` if ``right``), counted from ``start``. Written as torch's, with
    negated comparisons, so a NaN value lands after every number."""
    lo, hi = start, end
    while lo < hi:
        mid = lo + ((hi - lo) >> 1)
        mid_val = bd[sorter[mid] + start] if use_sorter else bd[mid]
        if not (mid_val > val if right else mid_val >= val):
            lo = mid + 1
        else:
            hi = mid
    return lo - start


def _check(boundaries, x, out_int32, right, side, sorter):
    """``searchsorted_pre_check``, in its order."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                               f"while right was True")
    if boundaries.device != x.device:
        raise RuntimeError(f"torch.searchsorted(): boundaries and input value tensors should have same device type, "
                           f"but got boundaries tensor device type {boundaries.device.type} and input value tensor "
                           f"device type {x.device.type}")
    if sorter is not None:
        _check_sorter(boundaries, sorter)
    if not (x.dim() > 0 or (x.numel() == 1 and boundaries.dim() == 1)):
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({boundaries.dim()}) and input value's "
                           f"dim({x.dim()}) numel({x.numel()})")
    if boundaries.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.dim() != 1 and (boundaries.dim() != x.dim() or boundaries.shape[:-1] != x.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {list(boundaries.shape)} and input value tensor {list(x.shape)}")
    return side == "right" if side is not None else right


def _check_sorter(boundaries, sorter):
    if sorter.device != boundaries.device:
        raise RuntimeError(f"torch.searchsorted(): sorter and boundary tensors should have same device type, but got "
                           f"sorter tensor device type {sorter.device.type} and input value tensor device type "
                           f"{boundaries.device.type}")
    if sorter.shape != boundaries.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
    if sorter.dtype is not st.int64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{sorter.dtype.torch_name}")
    if sorter.numel():
        values = np.asarray(sorter._host_values())
        if values.min() < 0 or values.max() >= sorter.shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


def _flat(t, dtype, what):
    """``t`` as a contiguous tensor of ``dtype`` starting at element 0 of its buffer; a
    non-contiguous one is copied, with torch's warning (once)."""
    if not t.is_contiguous():
        warn_once(("searchsorted", what), f"torch.searchsorted(): {what} tensor is non-contiguous, this will lower "
                  f"the performance due to extra data copy when converting non-contiguous tensor to contiguous, "
                  f"please use contiguous {what} tensor if possible. This message will only appear once per "
                  f"program.", UserWarning, stacklevel=3)
    t = contiguous(to(t, dtype))
    return dispatcher.call("clone", t) if t.storage_offset() else t


def searchsorted(sorted_sequence, x, *, out_int32=False, right=False, side=None, sorter=None):
    """``searchsorted_cpu``: an int64 (``out_int32``: int32) tensor of ``x``'s shape, contiguous."""
    right = _check(sorted_sequence, x, out_int32, right, side, sorter)
    out = empty(tuple(x.shape), dtype=st.int32 if out_int32 else st.int64, device=x.device)
    if out_int32 and sorted_sequence.shape[-1] >= INT32_MAX:
        raise RuntimeError(f"torch.searchsorted(): the size of boundaries' last dimension should be less than "
                           f"{INT32_MAX}, but we got {sorted_sequence.shape[-1]}")
    if x.numel() == 0:
        return out
    dtype = st.result_type(x, sorted_sequence)
    refuse_unlisted_dtypes(f"searchsorted_out_{x.device.type}", dtype, complex32=False)
    if dtype is st.bool_ or dtype.is_complex:
        raise NotImplementedError(f"\"searchsorted_out_{x.device.type}\" not implemented for '{dtype.torch_name}'")
    compute = st.float32 if dtype.is_reduced_float else dtype      # the 16-bit floats compare exactly as float32
    values, bd = _flat(x, compute, "input value"), _flat(sorted_sequence, compute, "boundary")
    order = _flat(sorter, st.int64, "sorter") if sorter is not None else empty((1,), dtype=st.int64, device=x.device)
    n = sorted_sequence.shape[-1]
    per_row = x.shape[-1] if sorted_sequence.dim() > 1 else 0      # 0: one row of boundaries for all
    loops(x.device, "bucketization").search_loop(buffer(out), buffer(values), x.numel(), buffer(bd),
                                                  buffer(order), n, per_row, right, sorter is not None)
    return out


def searchsorted_scalar(sorted_sequence, x, *, out_int32=False, right=False, side=None, sorter=None):
    """A number as a wrapped 0-dim tensor (``searchsorted_scalar_tensor``), promoted as a binary op's."""
    value = dispatcher.call("_to_copy", wrap_scalar(x), device=sorted_sequence.device)
    value._impl.is_wrapped_number = True
    return searchsorted(sorted_sequence, value, out_int32=out_int32, right=right, side=side, sorter=sorter)


def bucketize(x, boundaries, *, out_int32=False, right=False):
    """``bucketize_cpu``: ``searchsorted`` over 1-d boundaries."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, x, out_int32=out_int32, right=right)


def bucketize_scalar(x, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted_scalar(boundaries, x, out_int32=out_int32, right=right)
