"""``softmax`` and ``log_softmax`` along a dim (``aten/src/ATen/native/SoftMax.cpp``).

Built from the ops above in the numerically safe form torch's kernel computes: subtract the
maximum along ``dim`` first, so ``exp`` cannot overflow. The output is contiguous, as torch's is.
"""
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from .. import dispatcher
from .copy import cast_like, to
from .sorting import fresh_contiguous
from .tensor_factories import empty
from .tensor_shape import wrap_dim


def _prepare(x, dim, dtype, name):
    """The input cast and made contiguous as the kernel computes on it (``host_softmax``'s
    ``input.contiguous()``, a ``clone`` through the dispatcher when one is needed)."""
    if dtype is not None:
        x = cast_like(x, dtype)
    d = wrap_dim(dim, x.dim())
    if not x.dtype.is_floating_point and x.numel():     # an empty input never reaches a kernel
        kernel = f"{name}_lastdim" if d == max(x.dim() - 1, 0) else name
        raise NotImplementedError(f'"{kernel}_kernel_impl" not implemented for \'{x.dtype.torch_name}\'')
    compute = cast_like(x, st.opmath_type(x.dtype))
    if not compute.is_contiguous():
        compute = dispatcher.call("clone", compute, memory_format=contiguous_format)
    return compute, d, x.dtype


def softmax(x, dim, dtype=None):
    x, d, out_dtype = _prepare(x, dim, dtype, "softmax")
    if x.numel() == 0:      # nothing to normalise, and no maximum to subtract
        return empty(x.shape, dtype=out_dtype, device=x.device)
    if x.dim() == 0:
        return cast_like(dispatcher.call("div.Tensor", dispatcher.call("exp", x), dispatcher.call("exp", x)), out_dtype)
    e = dispatcher.call("exp", _shifted(x, d))
    return fresh_contiguous(cast_like(dispatcher.call("div.Tensor", e, _sum(e, d)), out_dtype))


def log_softmax(x, dim, dtype=None):
    x, d, out_dtype = _prepare(x, dim, dtype, "log_softmax")
    if x.numel() == 0:      # nothing to normalise, and no maximum to subtract
        return empty(x.shape, dtype=out_dtype, device=x.device)
    if x.dim() == 0:
        return cast_like(dispatcher.call("sub.Tensor", x, x), out_dtype)
    shifted = _shifted(x, d)
    keep = _rounder(x.dtype, out_dtype, d == x.dim() - 1)
    log_sum = keep(dispatcher.call("log", keep(_sum(dispatcher.call("exp", shifted), d))))
    return fresh_contiguous(cast_like(dispatcher.call("sub.Tensor", shifted, log_sum), out_dtype))


def _rounder(compute_dtype, out_dtype, last_dim):
    """Along the last dim, torch's log-softmax kernel (``_vec_log_softmax_lastdim``) keeps each
    row's sum of exponentials, then its log, in the input's dtype; a float16 or bfloat16 input
    rounds there twice before the float32 subtraction. Elsewhere intermediates stay float32."""
    if compute_dtype is out_dtype or not last_dim:
        return lambda t: t
    return lambda t: cast_like(cast_like(t, out_dtype), compute_dtype)


def _shifted(x, d):
    """``x`` less its maximum along ``d``: exp of it cannot overflow."""
    return dispatcher.call("sub.Tensor", x, dispatcher.call("amax", x, [d], True))


def _sum(x, d):
    return dispatcher.call("sum.dim_IntList", x, [d], True)


def _softmax(x, dim, half_to_float):
    """The kernel torch dispatches to (``_softmax``); ``half_to_float`` asks for a float32 result."""
    return softmax(x, dim, st.float32 if half_to_float else None)


def _log_softmax(x, dim, half_to_float):
    return log_softmax(x, dim, st.float32 if half_to_float else None)


def softmax_int(x, dim, dtype=None):
    """``softmax.int``, CompositeImplicitAutograd as in torch: cast if asked, then ``_softmax``."""
    return dispatcher.call("_softmax", _to(x, dtype), dim, False)


def log_softmax_int(x, dim, dtype=None):
    return dispatcher.call("_log_softmax", _to(x, dtype), dim, False)


def _to(x, dtype):
    """``input.toType(dtype)``: ``_to_copy`` through the dispatcher, when a dtype is given."""
    return x if dtype is None else to(x, dtype)


# The backward kernels (``softmax_backward_cpu``, ``log_softmax_backward_cpu``): operators of their
# own, so autograd records one node and a dispatch mode sees one call.
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """(grad − Σ_dim grad·y)·y, for the softmax output y."""
    total = dispatcher.call("sum.dim_IntList", dispatcher.call("mul.Tensor", grad_output, output), [dim], True)
    grad = dispatcher.call("mul.Tensor", dispatcher.call("sub.Tensor", grad_output, total), output)
    return to(grad, input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    """grad − exp(y)·Σ_dim grad, for the log-softmax output y."""
    total = dispatcher.call("sum.dim_IntList", grad_output, [dim], True)
    grad = dispatcher.call("sub.Tensor", grad_output,
                           dispatcher.call("mul.Tensor", dispatcher.call("exp", output), total))
    return to(grad, input_dtype)
