"""``softmax`` and ``log_softmax`` along a dim (``aten/src/ATen/native/SoftMax.cpp``).

``_softmax``, ``_log_softmax`` and their ``_backward_data`` operators are declared structured,
as torch declares them: a meta step (the dim checked, the output allocated contiguous in the
result's dtype, or ``out`` checked and resized) and an impl step that writes the values, with
the ``.out`` overload primary and the functional one derived from it. The values are built from
the ops above in the numerically safe form torch's kernel computes: subtract the maximum along
``dim`` first, so ``exp`` cannot overflow.
"""
from ...c10 import scalar_type as st
from ...c10.memory_format import contiguous_format
from .. import dispatcher
from .copy import cast_like, to
from .sorting import fresh_contiguous
from .structured import set_output, structured
from .tensor_factories import empty
from .tensor_shape import wrap_dim


def _prepare(x, dim, dtype, name):
    """The input cast and made contiguous as the kernel computes on it (``host_softmax``'s
    ``input.contiguous()``, a ``clone`` through the dispatcher when one is needed)."""
    if dtype is not None:
        x = cast_like(x, dtype)
    d = wrap_dim(dim, x.dim())
    if (not x.dtype.is_floating_point or x.dtype.is_float8) and x.numel():   # an empty input reaches no kernel
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


# ---- TORCH_META_FUNC(_softmax) / TORCH_IMPL_FUNC(softmax_cpu_out), and log_softmax's: the
# output has the input's sizes, contiguous, in its dtype (float32 for ``half_to_float``, which
# the CPU kernels then refuse).
def _meta_softmax(out, self, dim, half_to_float):
    wrap_dim(dim, self.dim())       # an IndexError for a dim out of range
    return set_output(out, self.shape, st.float32 if half_to_float else self.dtype, self.device)


def _impl_softmax(values, result, self, dim, half_to_float):
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    if self.numel() == 0:       # nothing to write
        return result
    return dispatcher.call("copy_", result, values(self, dim))


def meta_softmax(out, self, dim, half_to_float):
    return _meta_softmax(out, self, dim, half_to_float)


def impl_softmax(result, self, dim, half_to_float):
    return _impl_softmax(softmax, result, self, dim, half_to_float)


def meta_log_softmax(out, self, dim, half_to_float):
    return _meta_softmax(out, self, dim, half_to_float)


def impl_log_softmax(result, self, dim, half_to_float):
    return _impl_softmax(log_softmax, result, self, dim, half_to_float)


softmax_cpu_out = structured(meta_softmax, impl_softmax)            # and from them _softmax,
log_softmax_cpu_out = structured(meta_log_softmax, impl_log_softmax)    # _log_softmax


def softmax_int(x, dim, dtype=None):
    """``softmax.int``, CompositeImplicitAutograd as in torch: cast if asked, then ``_softmax``."""
    return dispatcher.call("_softmax", _to(x, dtype), dim, False)


def log_softmax_int(x, dim, dtype=None):
    return dispatcher.call("_log_softmax", _to(x, dtype), dim, False)


def special_softmax(x, dim, dtype=None):
    """torch.special's names for ``softmax.int`` and ``log_softmax.int`` (``SoftMax.cpp``)."""
    return dispatcher.call("softmax.int", x, dim, dtype)


def special_log_softmax(x, dim, *, dtype=None):
    return dispatcher.call("log_softmax.int", x, dim, dtype)


def _to(x, dtype):
    """``input.toType(dtype)``: ``_to_copy`` through the dispatcher, when a dtype is given."""
    return x if dtype is None else to(x, dtype)


# ---- TORCH_META_FUNC(_softmax_backward_data) / TORCH_IMPL_FUNC(softmax_backward_cpu_out), and
# log_softmax's: operators of their own, so autograd records one node and a dispatch mode sees
# one call. The gradient has grad_output's sizes and dtype (float16 when grad_output is float32
# and the input was float16, a case only CUDA's kernel runs), contiguous; the CPU kernel reads
# and writes every tensor in grad_output's dtype.
def _meta_softmax_backward(grad_input, grad_output, output, dim, input_dtype):
    if tuple(grad_output.shape) != tuple(output.shape):
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {list(grad_output.shape)} does not equal {list(output.shape)} (while "
                           "checking arguments for softmax_backward)")
    wrap_dim(dim, grad_output.dim())
    dtype = grad_output.dtype
    if dtype is st.float32 and input_dtype is st.float16:
        dtype = st.float16
    return set_output(grad_input, grad_output.shape, dtype, grad_output.device)


def _impl_softmax_backward(values, grad_input, grad_output, output, dim):
    if output.numel() == 0:
        return grad_input
    for t in (grad_input, output):
        if t.dtype is not grad_output.dtype:
            raise RuntimeError(f"expected scalar type {grad_output.dtype.torch_name} but found {t.dtype.torch_name}")
    return dispatcher.call("copy_", grad_input, values(grad_output, output, wrap_dim(dim, grad_output.dim())))


def _softmax_gradient(grad_output, output, dim):
    """(grad − Σ_dim grad·y)·y, for the softmax output y."""
    total = dispatcher.call("sum.dim_IntList", dispatcher.call("mul.Tensor", grad_output, output), [dim], True)
    return dispatcher.call("mul.Tensor", dispatcher.call("sub.Tensor", grad_output, total), output)


def _log_softmax_gradient(grad_output, output, dim):
    """grad − exp(y)·Σ_dim grad, for the log-softmax output y."""
    total = dispatcher.call("sum.dim_IntList", grad_output, [dim], True)
    scaled = dispatcher.call("mul.Tensor", dispatcher.call("exp", output), total)
    return dispatcher.call("sub.Tensor", grad_output, scaled)


def meta_softmax_backward(grad_input, grad_output, output, dim, input_dtype):
    return _meta_softmax_backward(grad_input, grad_output, output, dim, input_dtype)


def impl_softmax_backward(grad_input, grad_output, output, dim, input_dtype):
    return _impl_softmax_backward(_softmax_gradient, grad_input, grad_output, output, dim)


def meta_log_softmax_backward(out, grad_output, output, dim, input_dtype):
    return _meta_softmax_backward(out, grad_output, output, dim, input_dtype)


def impl_log_softmax_backward(grad_input, grad_output, output, dim, input_dtype):
    return _impl_softmax_backward(_log_softmax_gradient, grad_input, grad_output, output, dim)


softmax_backward_cpu_out = structured(meta_softmax_backward, impl_softmax_backward)
log_softmax_backward_cpu_out = structured(meta_log_softmax_backward, impl_log_softmax_backward)
