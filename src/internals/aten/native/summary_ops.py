"""``bincount`` (``aten/src/ATen/native/SummaryOps.cpp``): how often each non-negative integer
occurs (or the sum of its weights), as ``scatter_add_`` into zeros of length ``max + 1`` (at
least ``minlength``). Integer weights count in float64, float32 ones in float32. And ``histc``
(``Histogram.cpp``)."""
import math

import numpy as np

from ...c10 import scalar_type as st
from ..dispatcher import call
from .dispatch_stub import refuse_unlisted_dtypes
from .tensor_factories import from_host


def bincount(x, weights=None, minlength=0):
    if x.dtype.category > st.INTEGRAL or x.dtype in (st.bool_, *st.LIMITED_UNSIGNED):
        raise NotImplementedError(f'"bincount_{x.device.type}" not implemented for \'{x.dtype.torch_name}\'')
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.dim() == 1 and x.numel() == 0:
        return call("zeros", [minlength], dtype=st.int64, device=x.device)
    if x.dim() != 1 or call("min", x).item() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = max(call("max", x).item() + 1, minlength)
    if weights is None:
        dtype, src = st.int64, call("ones_like", x, dtype=st.int64)
    else:
        dtype = st.float32 if weights.dtype is st.float32 else st.float64
        src = call("_to_copy", weights, dtype=dtype) if weights.dtype is not dtype else weights
    counts = call("zeros", [size], dtype=dtype, device=x.device)
    index = x if x.dtype is st.int64 else call("_to_copy", x, dtype=st.int64)
    return call("scatter_add_", counts, 0, index, src)


def histc(x, bins=100, min=0, max=0):
    """``histogram_histc`` (``Histogram.cpp``): counts over ``bins`` equal bins between ``min`` and
    ``max`` (the input's extremes when they are equal), in the input's dtype. Each element's bin is
    ``(x - lo) * bins / (hi - lo)`` in the input's precision (the linear-interpolation kernel),
    the top edge counted in the last bin, anything outside or NaN skipped. The bins are found on
    the host, as the counts decide nothing of the result's size."""
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if not x.dtype.is_floating_point:
        _refuse_histc(x, bins, min, max)
    lo, hi = _outer_edges(x, float(min), float(max))
    kind = x.dtype.numpy_type.type if x.dtype is not st.bfloat16 else np.float32
    values = np.asarray(x._host_values(), dtype=kind).reshape(-1)
    left, right = kind(lo), call("linspace", lo, hi, bins + 1, dtype=x.dtype)[-1].item()
    right = kind(right)
    inside = values[(values >= left) & (values <= right)]
    pos = ((inside - left) * kind(bins) / (right - left)).astype(np.int64)
    counts = np.bincount(np.minimum(pos, bins - 1), minlength=bins)
    return call("_to_copy", from_host(counts.astype(np.int64), st.int64, x.device), dtype=x.dtype)


def _refuse_histc(x, bins, min, max):
    """An integer or bool input gets as far as torch's steps before the counting kernel, which
    refuses it: the input's extremes (``aminmax``) and the bin edges (``linspace`` in the input's
    dtype), whose kernels refuse some dtypes of their own (or an edge the dtype cannot hold)."""
    if min == max and x.numel() > 0:
        refuse_unlisted_dtypes("aminmax_cpu", x)
    lo, hi = _outer_edges(x, float(min), float(max))
    call("linspace", lo, hi, bins + 1, dtype=x.dtype, device=x.device)
    raise NotImplementedError(f"\"histogram_{x.device.type}\" not implemented for '{x.dtype.torch_name}'")


def _outer_edges(x, lo, hi):
    """``histc_select_outer_bin_edges``: the range, checked finite and increasing."""
    if lo == hi and x.numel() > 0:
        lo, hi = call("min", x).item(), call("max", x).item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


def _fmt(v):
    """A double as C++'s ``operator<<`` prints it (6 significant digits; ``inf``, ``-nan``)."""
    return "-nan" if math.isnan(v) else f"{v:g}"
