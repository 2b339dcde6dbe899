"""3-d average pooling (``aten/src/ATen/native/AveragePool3d.cpp``; ``cuda/AveragePool3d.cu``), plain and
adaptive (``AdaptiveAveragePooling3d.cpp``).

The 2-d operator's idea one dimension up: each output element is the mean of a window of
frames × rows × columns. torch's CPU kernel here is older than the 2-d one: it runs
``avg_pool3d_out_frame`` over a contiguous copy of the input, for float, double and int64 only,
sums in the element type itself (no wider accumulator: a float32 sum stays float32, an int64
mean is a truncating integer division), and writes a contiguous output whatever the input's
layout. The loops below follow that order (frames, then rows, then columns), so the values are
torch's bit for bit. The adaptive operator's frame loop sums the same way over windows that tile
the input, and divides by each dimension's count in turn (``sum / kT / kH / kW``).
"""
import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.memory_format import channels_last_3d, suggest_memory_format
from ..dispatcher import call
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .pooling import _adaptive_windows, _avg_windows, _pool_output_size
from .scalar_ops import c_divide, like
from .structured import set_output, structured
from .tensor_factories import empty
from .tensor_shape import check_dim_size


def _three(name, argument, values, allow_empty=False):
    """An ``int[3]`` argument: one int for all three dims, or three; ``stride`` may be empty."""
    values = [values] if isinstance(values, int) else [int(v) for v in values]
    if len(values) not in ((0, 1, 3) if allow_empty else (1, 3)):
        if allow_empty:
            raise RuntimeError(f"{name}: {argument} must be omitted, a single int, or a tuple of three ints")
        raise RuntimeError(f"{name}: {argument} must be a single int, or a tuple of three ints")
    return values * 3 if len(values) == 1 else values


def pool3d_shape_check(x, k, d, pad, dilation, in_size, out_size, fn_name, check_input_size=False):
    """``pool3d_shape_check`` (``Pool.h``), in its order."""
    (kT, kH, kW), (dT, dH, dW), (pT, pH, pW) = k, d, pad
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kT} kH: {kH} kW: {kW}")
    if min(d) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {dT} dH: {dH} dW: {dW}")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilationT: {} dilationH: {} "
                           "dilationW: {}".format(*dilation))
    if x.dim() not in (4, 5):
        raise RuntimeError(f"{fn_name}: Expected 4D or 5D tensor for input, but got: {list(x.shape)}")
    for i in range(x.dim()):
        if x.dim() == 5 and i == 0:       # the batch may be empty
            continue
        if x.shape[i] <= 0:
            raise RuntimeError(f"{fn_name}: Expected input's non-batch dimensions to have positive length, but "
                               f"input has a shape of {list(x.shape)} and non-batch dimension {x.shape[i]} has "
                               "length zero!")
    (T, H, W), (OT, OH, OW) = in_size, out_size
    if check_input_size and (T < kT or H < kH or W < kW):
        raise RuntimeError(f"input image (T: {T} H: {H} W: {W}) smaller than kernel size (kT: {kT} kH: {kH} "
                           f"kW: {kW})")
    if kT / 2 < pT or kW / 2 < pW or kH / 2 < pH:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kT} kW: {kW} "
                           f"kH: {kH} padT: {pT} padW: {pW} padH: {pH}")
    if OT < 1 or OW < 1 or OH < 1:
        C = x.shape[-4]
        raise RuntimeError(f"Given input size: ({C}x{T}x{H}x{W}). Calculated output size: ({C}x{OT}x{OH}x{OW}). "
                           "Output size is too small")


def _geometry(x, kernel_size, stride, padding, ceil_mode, divisor_override):
    """``TORCH_META_FUNC(avg_pool3d)``'s argument checks and output size: (k, d, pad, out_size)."""
    name = "avg_pool3d"
    k = _three(name, "kernel_size", kernel_size)
    stride = [stride] if isinstance(stride, int) else list(stride)
    d = k if not stride else _three(name, "stride", stride, allow_empty=True)
    pad = _three(name, "padding", padding)
    if x.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    in_size = tuple(x.shape[-3:])
    out_size = []
    for size, k_, p, s in zip(in_size, k, pad, d):       # ``pooling_output_shape``'s own checks first
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > int(k_ / 2):        # ((k − 1)·1 + 1) / 2, truncated
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k_} and dilation=1")
        out_size.append(_pool_output_size(size, k_, p, s, 1, ceil_mode))
    return k, d, pad, in_size, tuple(out_size)


def _check_dtype(x, what="avg_pool3d_out_frame"):
    if x.dtype not in (st.float32, st.float64, st.int64):     # AT_DISPATCH_FLOATING_TYPES_AND(Long)
        raise NotImplementedError(f'"{what}" not implemented for \'{x.dtype.torch_name}\'')


def _windows(in_size, k, d, pad, out_size, count_include_pad):
    """Nine int64 vectors the loops read: each output frame's [t0, t1) and count, then each row's,
    then each column's (``_avg_windows``: clipped to the input; the count with or without padding)."""
    vectors = [v for n, k_, p, s, o in zip(in_size, k, pad, d, out_size)
               for v in _avg_windows(n, k_, p, s, o, count_include_pad)]
    return np.array([v for vector in vectors for v in vector], dtype=np.int64)


# Read by the CPU and CUDA loops.
@register_jitable
def avg3d_window(windows, OT, OH, OW, ot, oh, ow):
    """Output (ot, oh, ow)'s window and divisor counts: t0, t1, tdiv, h0, h1, hdiv, w0, w1, wdiv."""
    h, w = 3 * OT, 3 * OT + 3 * OH
    return (windows[ot], windows[OT + ot], windows[2 * OT + ot],
            windows[h + oh], windows[h + OH + oh], windows[h + 2 * OH + oh],
            windows[w + ow], windows[w + OW + ow], windows[w + 2 * OW + ow])


@register_jitable
def divided3d(value, tdiv, hdiv, wdiv, divisor, adaptive):
    """The adaptive ``value / tdiv / hdiv / wdiv``; else ``value / divisor_override`` (a nonzero
    ``divisor``: 0 is refused, so it means none) or ``value / (tdiv·hdiv·wdiv)``; in the value's type."""
    if adaptive:
        return c_divide(c_divide(c_divide(value, tdiv), hdiv), wdiv)
    if divisor != 0:
        return c_divide(value, divisor)
    return c_divide(value, tdiv * hdiv * wdiv)


@register_jitable
def avg_pool3d_output(inp, p, T, H, W, OT, OH, OW, ot, oh, ow, windows, divisor, adaptive):
    """Output (ot, oh, ow) of plane ``p``: avg_pool3d's ``0 + sum / divide_factor`` as torch's frame
    loop writes it into its zeroed output (so a −0.0 mean is +0.0), or 0 for a window wholly in the
    padding; the adaptive loop's ``sum / kT / kH / kW``, written as it is."""
    t0, t1, tdiv, h0, h1, hdiv, w0, w1, wdiv = avg3d_window(windows, OT, OH, OW, ot, oh, ow)
    zero = like(inp[0], 0)
    if t0 >= t1 or h0 >= h1 or w0 >= w1:
        return zero
    total = zero
    for t in range(t0, t1):
        for h in range(h0, h1):
            for w in range(w0, w1):
                total += inp[((p * T + t) * H + h) * W + w]
    if adaptive:
        return divided3d(total, tdiv, hdiv, wdiv, divisor, adaptive)
    return zero + divided3d(total, tdiv, hdiv, wdiv, divisor, adaptive)


@register_jitable
def avg_pool3d_backward_plane(grad_input, grad_output, p, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    """Plane ``p`` of the input's gradient: zeroed, then each output's ``gradient / divide_factor``
    added over its window, outputs in order (windows overlap: only this plane's task writes here)."""
    plane = T * H * W
    for i in range(plane):
        grad_input[p * plane + i] = 0
    for ot in range(OT):
        for oh in range(OH):
            for ow in range(OW):
                t0, t1, tdiv, h0, h1, hdiv, w0, w1, wdiv = avg3d_window(windows, OT, OH, OW, ot, oh, ow)
                delta = divided3d(grad_output[((p * OT + ot) * OH + oh) * OW + ow], tdiv, hdiv, wdiv, divisor,
                                  adaptive)
                for t in range(t0, t1):
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            grad_input[p * plane + (t * H + h) * W + w] += delta


# ---- TORCH_META_FUNC(avg_pool3d) / TORCH_IMPL_FUNC(avg_pool3d_out_cpu): the arguments and the
# geometry checked, a contiguous (N, C, OT, OH, OW) or (C, OT, OH, OW) output; then the loop over
# a contiguous copy of the input.
def meta_avg_pool3d(out, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    k, d, pad, in_size, out_size = _geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    pool3d_shape_check(self, k, d, pad, (1, 1, 1), in_size, out_size, "avg_pool3d()", check_input_size=True)
    return set_output(out, (*self.shape[:-3], *out_size), self.dtype, self.device)


def impl_avg_pool3d(out, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    k, d, pad, in_size, out_size = _geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    _check_dtype(self)
    x = contiguous(self)
    values = empty((*self.shape[:-3], *out_size), dtype=self.dtype, device=self.device)
    if values.numel():
        loops(self.device, "pooling").avg_pool3d(buffer(values), x._flat_buffer(), *in_size, *out_size,
                                                 _windows(in_size, k, d, pad, out_size, count_include_pad),
                                                 divisor_override or 0, False)
    return call("copy_", out, values)


avg_pool3d_out_cpu = structured(meta_avg_pool3d, impl_avg_pool3d)


# ---- TORCH_META_FUNC(avg_pool3d_backward) / TORCH_IMPL_FUNC(avg_pool3d_backward_out_cpu): the
# geometry and grad_output's sizes checked, a contiguous gradient of the input's sizes; then the
# scatter of each output's share over its window.
def meta_avg_pool3d_backward(grad_input, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    k, d, pad, in_size, out_size = _geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    pool3d_shape_check(self, k, d, pad, (1, 1, 1), in_size, out_size, "avg_pool3d_backward()")
    n = self.dim()
    for dim, size in zip(range(n - 4, n), (self.shape[-4], *out_size)):     # ``avg_pool3d_backward_shape_check``
        check_dim_size(grad_output, n, dim, size)
    return set_output(grad_input, tuple(self.shape), self.dtype, self.device)


def impl_avg_pool3d_backward(grad_input, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    k, d, pad, in_size, _ = _geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override)
    _check_dtype(self, "avg_pool3d_backward_out_frame")
    out_size = tuple(grad_output.shape[-3:])        # torch's loop reads the sizes of grad_output
    go = contiguous(grad_output)
    gradient = empty(tuple(self.shape), dtype=self.dtype, device=self.device)
    if gradient.numel():
        loops(self.device, "pooling").avg_pool3d_backward(buffer(gradient), go._flat_buffer(), *in_size, *out_size,
                                                          _windows(in_size, k, d, pad, out_size, count_include_pad),
                                                          divisor_override or 0, False)
    return call("copy_", grad_input, gradient)


avg_pool3d_backward_out_cpu = structured(meta_avg_pool3d_backward, impl_avg_pool3d_backward)


# ---- adaptive average pooling (``AdaptiveAveragePooling3d.cpp``): not structured in torch. Output
# (i, j, k) averages frames [floor(i·T/OT), ceil((i+1)·T/OT)) and the rows and columns likewise;
# the frame loops above run it with the adaptive division. torch's loop sums 16-bit floats in
# their own type, rounding at each step; the package's in float32 (within a few of their ulps).
def _adaptive_geometry(x, output_size, name="adaptive_avg_pool3d"):
    """``adaptive_avg_pool3d_out_cpu_template``'s checks, then the output size and the windows."""
    output_size = [output_size] * 3 if isinstance(output_size, int) else list(output_size)
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    for i in range(1, x.dim()):
        if x.shape[i] <= 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(x.shape)} with dimension {i} being empty")
    if x.dim() not in (4, 5):
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but got {list(x.shape)}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_avg_pool3d_cpu" not implemented for \'{x.dtype.torch_name}\'')
    in_size = tuple(x.shape[-3:])
    vectors = [v for n, o in zip(in_size, output_size) for v in _adaptive_windows(n, o)]
    return in_size, tuple(output_size), np.array([v for vector in vectors for v in vector], dtype=np.int64)


def _adaptive_avg_pool3d(self, output_size):
    """``_adaptive_avg_pool3d``: the mean of each adaptive window, into a contiguous output."""
    in_size, out_size, windows = _adaptive_geometry(self, output_size)
    compute = st.opmath_type(self.dtype)
    x = contiguous(to(self, compute))
    values = empty((*self.shape[:-3], *out_size), dtype=compute, device=self.device)
    if values.numel():
        loops(self.device, "pooling").avg_pool3d(buffer(values), x._flat_buffer(), *in_size, *out_size, windows,
                                                 0, True)
    return to(values, self.dtype)


def _adaptive_avg_pool3d_backward(grad_output, self):
    """Each output's gradient, divided by its window's counts one at a time, added over the window."""
    if grad_output.dim() not in (4, 5) or any(n == 0 for n in grad_output.shape[1:]):
        raise RuntimeError(f"adaptive_avg_pool3d_backward(): Expected grad_output to have non-zero size for "
                           f"non-batch dimensions, but grad_output has sizes {list(grad_output.shape)} with "
                           f"dimension {next((i for i, n in enumerate(grad_output.shape) if i and not n), 0)} "
                           "being empty")
    in_size, out_size, windows = _adaptive_geometry(self, tuple(grad_output.shape[-3:]))
    if tuple(grad_output.shape[:-3]) != tuple(self.shape[:-3]):
        raise RuntimeError(f"expected grad_output of size {[*self.shape[:-3], *out_size]}, but got "
                           f"{list(grad_output.shape)}")
    compute = st.opmath_type(self.dtype)
    go = contiguous(to(grad_output, compute))
    gradient = empty(tuple(self.shape), dtype=compute, device=self.device)
    if gradient.numel():
        loops(self.device, "pooling").avg_pool3d_backward(buffer(gradient), go._flat_buffer(), *in_size, *out_size,
                                                          windows, 0, True)
    return to(gradient, self.dtype)


def adaptive_avg_pool3d(self, output_size):
    """``adaptive_avg_pool3d``, CompositeImplicitAutograd: a 1 x 1 x 1 output is ``mean`` over the
    last three dims (kept channels-last-3d for such an input, as torch restrides it in place);
    other sizes, ``_adaptive_avg_pool3d``."""
    output_size = [output_size] * 3 if isinstance(output_size, int) else list(output_size)
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if min(output_size) < 0:
        raise RuntimeError("adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{output_size[0]}, {output_size[1]},{output_size[2]}}}")
    if output_size == [1, 1, 1]:
        out = call("mean.dim", self, [-1, -2, -3], True)
        if self.dim() == 5 and suggest_memory_format(self.shape, self.stride()) is channels_last_3d:
            n, c = self.shape[:2]
            out = call("as_strided_", out, [n, c, 1, 1, 1], [c, 1, c, c, c])
        return out
    return call("_adaptive_avg_pool3d", self, output_size)
