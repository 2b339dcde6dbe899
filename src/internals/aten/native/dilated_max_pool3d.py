"""3-d max pooling (``aten/src/ATen/native/DilatedMaxPool3d.cpp``; loops in ``cpu/MaxPoolKernel.cpp`` and
``cuda/DilatedMaxPool3d.cu``).

The 2-d operator one dimension up: each output element is the largest value of a dilated
window of frames × rows × columns, and ``indices`` records where it came from, as a position
``(t·H + h)·W + w`` in its (T, H, W) input volume. The backward pass adds each output's gradient
at the input element its index names. Ties go to the first element in the window's order
(frames, then rows, then columns) and a NaN wins over any number, the last NaN over an earlier
one, as in torch's loop.

torch does not declare this operator structured: its out= kernel and its functional kernel are
written apart, and the out= kernel resizes ``out`` itself (``resize_``, no warning), restrided
to the input's suggested memory format for a 5-d input (so channels-last-3d stays so) and left
as it is for a fitting 4-d one. Here the checks and the output's layout are one function (the
meta step, which fake tensors run) and the loop another (the impl step); both kernels use them.
Every integer type and the floating types pool; bool does not, and the backward pass is for
floating types only.
"""
import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.memory_format import channels_last_3d, contiguous_format, suggest_memory_format
from ..dispatcher import call
from .average_pool3d import pool3d_shape_check
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .pooling import _scatter_max_gradient, pooling_output_shape
from .scalar_ops import lowest_like
from .tensor_factories import empty
from .tensor_shape import check_dim_size


def _three(argument, values, allow_empty=False):
    """An ``int[3]`` argument of max_pool3d: one int for all three dims, or three (``stride`` may be
    empty: the kernel size)."""
    values = [values] if isinstance(values, int) else [int(v) for v in values]
    if len(values) not in ((0, 1, 3) if allow_empty else (1, 3)):
        how = {"kernel_size": "must either be a single int", "stride": "must either be omitted, a single int",
               "padding": "must either be a single int", "dilation": "must be either a single int"}[argument]
        raise RuntimeError(f"max_pool3d: {argument} {how}, or a tuple of three ints")
    return values * 3 if len(values) == 1 else values


def _arguments(self, kernel_size, stride, padding, dilation):
    """The argument checks both kernels open with: (k, d, pad, dilation), each three ints."""
    k = _three("kernel_size", kernel_size)
    stride = _three("stride", stride, allow_empty=True)
    d = stride or k
    pad, dil = _three("padding", padding), _three("dilation", dilation)
    if self.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    return k, d, pad, dil


def _geometry(self, kernel_size, stride, padding, dilation, ceil_mode, fn_name):
    """``max_pool3d_with_indices_out_cpu_template``'s checks in its order: the arguments, each
    dim's ``pooling_output_shape`` (with its own checks), then ``pool3d_shape_check``.
    Returns (k, d, pad, dilation, in_size, out_size)."""
    k, d, pad, dil = _arguments(self, kernel_size, stride, padding, dilation)
    in_size = tuple(self.shape[-3:])
    out_size = tuple(pooling_output_shape(n, k_, p, s, dl, ceil_mode)
                     for n, k_, p, s, dl in zip(in_size, k, pad, d, dil))
    pool3d_shape_check(self, k, d, pad, dil, in_size, out_size, fn_name)
    return k, d, pad, dil, in_size, out_size


def _memory_format(x):
    """The layout torch's kernels give a 5-d input's outputs: its suggested one."""
    return channels_last_3d if suggest_memory_format(x.shape, x.stride()) is channels_last_3d else contiguous_format


def _resize_like_torch(t, shape, x):
    """``t.resize_(shape, memory_format)`` for a 5-d input (always restrided), ``t.resize_(shape)``
    for a 4-d one (kept as it is when it fits)."""
    if x.dim() == 5:
        return call("resize_", t, list(shape), memory_format=_memory_format(x))
    return call("resize_", t, list(shape))


def _check_element_type(t, dtype):
    """``t.data_ptr<scalar_t>()``'s check, where a kernel writes ``t`` as ``dtype``."""
    if t.dtype is not dtype:
        raise RuntimeError(f"expected scalar type {dtype.torch_name} but found {t.dtype.torch_name}")


# ---- meta step: the checks, the outputs' sizes and layout
def meta_max_pool3d_with_indices(out, indices, self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                                 ceil_mode=False):
    geometry = _geometry(self, kernel_size, stride, padding, dilation, ceil_mode,
                         "max_pool3d_with_indices_out_cpu_template()")
    if self.dtype == st.bool_:
        raise NotImplementedError('"max_pool3d" not implemented for \'Bool\'')
    shape = (*self.shape[:-3], *geometry[-1])
    out = empty([0], dtype=self.dtype, device=self.device) if out is None else out
    indices = empty([0], dtype=st.int64, device=self.device) if indices is None else indices
    _check_element_type(out, self.dtype)
    _check_element_type(indices, st.int64)
    return _resize_like_torch(out, shape, self), _resize_like_torch(indices, shape, self), geometry


# ---- impl step: the loop over a contiguous copy, then the values written into the outputs
def impl_max_pool3d_with_indices(outs, self):
    out, indices, (k, d, pad, dil, in_size, out_size) = outs
    if out.numel():
        compute = st.opmath_type(self.dtype)        # 16-bit floats compare as float32
        xc = contiguous(to(self, compute))
        values = empty(tuple(out.shape), dtype=compute, device=self.device)
        positions = empty(tuple(out.shape), dtype=st.int64, device=self.device)
        geometry = np.array([*k, *d, *pad, *dil], dtype=np.int64)
        loops(self.device, "pooling").max_pool3d(buffer(values), buffer(positions), xc._flat_buffer(), *in_size,
                                                 *out_size, geometry)
        call("copy_", out, values)
        call("copy_", indices, positions)
    return out, indices


def max_pool3d_with_indices_out_cpu(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False,
                                    *, out, indices):
    """The out= kernel: ``out`` and ``indices`` resized as torch's template resizes them, then filled."""
    return impl_max_pool3d_with_indices(
        meta_max_pool3d_with_indices(out, indices, self, kernel_size, stride, padding, dilation, ceil_mode), self)


def max_pool3d_with_indices_cpu(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """The functional kernel: the out= kernel's steps into fresh outputs."""
    return impl_max_pool3d_with_indices(
        meta_max_pool3d_with_indices(None, None, self, kernel_size, stride, padding, dilation, ceil_mode), self)


def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """``max_pool3d``, CompositeImplicitAutograd (``Pooling.cpp``): the values of
    ``max_pool3d_with_indices``."""
    return call("max_pool3d_with_indices", self, kernel_size, stride, padding, dilation, ceil_mode)[0]


# ---- the backward pass: checks as ``max_pool3d_with_indices_backward_out_cpu_template``'s, the
# gradient laid out as the input (restrided to its suggested format), then the scatter.
def meta_max_pool3d_with_indices_backward(grad_input, grad_output, self, kernel_size, stride, padding, dilation,
                                          ceil_mode, indices):
    k, d, pad, dil = _arguments(self, kernel_size, stride, padding, dilation)
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {st.type_meta_name(self.dtype)} for `gradOutput` but got dtype "
                           f"{st.type_meta_name(grad_output.dtype)}")
    in_size = tuple(self.shape[-3:])
    out_size = tuple(grad_output.shape[-3:])      # torch reads the output's sizes off grad_output
    for n, k_, p, s, dl in zip(in_size, k, pad, d, dil):
        pooling_output_shape(n, k_, p, s, dl, ceil_mode)
    pool3d_shape_check(self, k, d, pad, dil, in_size, out_size, "max_pool3d_with_indices_backward_out_cpu_template()")
    n = self.dim()
    expected = (*self.shape[:-3], *out_size)
    for t in (grad_output, indices):                # ``max_pool3d_backward_shape_check``
        for dim, size in zip(range(n - 4, n), expected[-4:]):
            check_dim_size(t, n, dim, size)
        if tuple(t.shape) != expected:      # the batch too, which torch's check leaves to the loop
            raise RuntimeError(f"max_pool3d_with_indices_backward: expected a tensor of size {list(expected)}, "
                               f"but got {list(t.shape)}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"max_pool3d_backward" not implemented for \'{self.dtype.torch_name}\'')
    grad_input = empty([0], dtype=self.dtype, device=self.device) if grad_input is None else grad_input
    _check_element_type(grad_input, self.dtype)
    return _resize_like_torch(grad_input, tuple(self.shape), self)


def impl_max_pool3d_with_indices_backward(grad_input, grad_output, self, indices):
    return _scatter_max_gradient("max_pool3d_with_indices_backward", grad_input, grad_output, self, indices, dims=3)


def max_pool3d_with_indices_backward_out_cpu(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                             indices, *, grad_input):
    grad_input = meta_max_pool3d_with_indices_backward(grad_input, grad_output, self, kernel_size, stride, padding,
                                                       dilation, ceil_mode, indices)
    return impl_max_pool3d_with_indices_backward(grad_input, grad_output, self, indices)


def max_pool3d_with_indices_backward_cpu(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                         indices):
    grad_input = meta_max_pool3d_with_indices_backward(None, grad_output, self, kernel_size, stride, padding,
                                                       dilation, ceil_mode, indices)
    return impl_max_pool3d_with_indices_backward(grad_input, grad_output, self, indices)


# Read by the CPU and CUDA loops. ``g`` holds kT, kH, kW, dT, dH, dW, pT, pH, pW and the three dilations.
@register_jitable
def max_pool3d_output(inp, p, T, H, W, g, ot, oh, ow):
    """Output (ot, oh, ow) of volume ``p``: its window's largest value and that value's index in the
    volume. As torch's loop: the index starts at the window's first element inside the input and
    the maximum at the type's lowest value (which a window a dilation stepped wholly into the
    padding keeps, with an index outside the volume); a larger value or a NaN takes over."""
    t0, h0, w0 = ot * g[3] - g[6], oh * g[4] - g[7], ow * g[5] - g[8]
    t1 = min(t0 + (g[0] - 1) * g[9] + 1, T)
    h1 = min(h0 + (g[1] - 1) * g[10] + 1, H)
    w1 = min(w0 + (g[2] - 1) * g[11] + 1, W)
    while t0 < 0:                       # the first frame, row and column of the window inside the input
        t0 += g[9]
    while h0 < 0:
        h0 += g[10]
    while w0 < 0:
        w0 += g[11]
    base = p * T * H * W
    best, at = lowest_like(inp[0]), (t0 * H + h0) * W + w0
    for t in range(t0, t1, g[9]):
        for h in range(h0, h1, g[10]):
            for w in range(w0, w1, g[11]):
                i = (t * H + h) * W + w
                v = inp[base + i]
                if v > best or v != v:  # a NaN wins, as in torch's loop
                    best, at = v, i
    return best, at
