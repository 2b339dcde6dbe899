"""``softmax`` and ``log_softmax`` along a dim (``aten/src/ATen/native/SoftMax.cpp``).

Built from the ops above in the numerically safe form torch's kernel computes: subtract the
maximum along ``dim`` first, so ``exp`` cannot overflow. The output is contiguous, as torch's is.
"""
from ...c10 import scalar_type as st
from .reduce_ops import normalize_dims
from .tensor_factories import empty


def _prepare(x, dim, dtype, name):
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}_lastdim_kernel_impl" not implemented for \'{x.dtype.torch_name}\'')
    (d,) = normalize_dims(dim, x.dim()) if x.dim() else (0,)
    compute = x.to(st.opmath_type(x.dtype)).contiguous()
    return compute, d, x.dtype


def softmax(x, dim, dtype=None):
    x, d, out_dtype = _prepare(x, dim, dtype, "softmax")
    if x.numel() == 0:      # nothing to normalise, and no maximum to subtract
        return empty(x.shape, dtype=out_dtype, device=x.device)
    if x.dim() == 0:
        return x.exp().div(x.exp()).to(out_dtype)
    shifted = x - x.amax(d, keepdim=True)
    e = shifted.exp()
    return (e / e.sum(d, keepdim=True)).to(out_dtype)


def log_softmax(x, dim, dtype=None):
    x, d, out_dtype = _prepare(x, dim, dtype, "log_softmax")
    if x.numel() == 0:      # nothing to normalise, and no maximum to subtract
        return empty(x.shape, dtype=out_dtype, device=x.device)
    if x.dim() == 0:
        return (x - x).to(out_dtype)
    shifted = x - x.amax(d, keepdim=True)
    return (shifted - shifted.exp().sum(d, keepdim=True).log()).to(out_dtype)


def _softmax(x, dim, half_to_float):
    """The kernel torch dispatches to (``_softmax``); ``half_to_float`` asks for a float32 result."""
    return softmax(x, dim, st.float32 if half_to_float else None)


def _log_softmax(x, dim, half_to_float):
    return log_softmax(x, dim, st.float32 if half_to_float else None)


def softmax_int(x, dim, dtype=None):
    """``softmax.int``, CompositeImplicitAutograd as in torch: cast if asked, then ``_softmax``."""
    return _dispatch("_softmax", x if dtype is None else x.to(dtype), dim, False)


def log_softmax_int(x, dim, dtype=None):
    return _dispatch("_log_softmax", x if dtype is None else x.to(dtype), dim, False)


def _dispatch(name, *args):
    from ..dispatcher import call
    return call(name, *args)
