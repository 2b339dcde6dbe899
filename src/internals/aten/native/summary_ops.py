"""``bincount`` (``aten/src/ATen/native/SummaryOps.cpp``): how often each non-negative integer
occurs (or the sum of its weights), as ``scatter_add_`` into zeros of length ``max + 1`` (at
least ``minlength``). Integer weights count in float64, float32 ones in float32."""
from ...c10 import scalar_type as st
from ..dispatcher import call


def bincount(x, weights=None, minlength=0):
    if x.dtype.category > st.INTEGRAL or x.dtype is st.bool_:
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
