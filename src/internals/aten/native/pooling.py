"""2-d max pooling (``aten/src/ATen/native/DilatedMaxPool2d.cpp``, ``Pool.h``; loops in
``cpu/MaxPoolKernel.cpp`` and ``cuda/DilatedMaxPool2d.cu``).

Each output element is the maximum of its (dilated) window, and ``indices`` records where it came
from, as a position ``h·W + w`` in its input plane. The backward pass needs nothing else: it adds
each output's gradient to the input element its index names. Ties go to the first element in
the window's row-major order, and a NaN wins over any number, as in torch's loops (after ReLU
many windows tie at 0, so the rule decides which input gets the gradient).
"""
import math

import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.grad_mode import GradMode
from ...c10.memory_format import channels_last, channels_last_strides, suggest_memory_format
from ..dispatcher import call
from .binary_ops import _subclass_like
from .convolution import keep_channels_last
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .scalar_ops import c_divide, like, lowest_like
from .structured import set_output, structured
from .tensor_factories import empty
from .tensor_shape import check_dim_size


def pooling_output_shape(size, k, pad, stride, dilation, ceil_mode):
    """``pooling_output_shape`` (``Pool.h``): its checks of one dimension's arguments, then the
    size (``_pool_output_size``). The 2-d and 3-d max pools share it."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > int(((k - 1) * dilation + 1) / 2):        # C++ division truncates
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, "
                           f"kernel_size={k} and dilation={dilation}")
    return _pool_output_size(size, k, pad, stride, dilation, ceil_mode)


def _pool_output_size(size, k, pad, stride, dilation, ceil_mode):
    """``pooling_output_shape``: with ``ceil_mode`` a last, partial window counts if it starts
    inside the input or its left padding."""
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pair(values, default=None):
    values = tuple(int(v) for v in values) or default
    return values * 2 if len(values) == 1 else values


def pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode, name="max_pool2d"):
    """(kh, kw, sh, sw, ph, pw, dh, dw, OH, OW), checked as ``pool2d_shape_check`` checks them
    (``name``'s meta function first: max_pool2d's or avg_pool2d's, which has no dilation)."""
    # An ``int[2]`` argument may come as one int when the op is called as ``ops.aten...``.
    kernel_size, stride, padding, dilation = ([v] if isinstance(v, int) else list(v)
                                              for v in (kernel_size, stride, padding, dilation))
    for arg, values in (("kernel_size", kernel_size), ("padding", padding), ("dilation", dilation)):
        if len(values) not in (1, 2):
            raise RuntimeError(f"{name}: {arg} must either be a single int, or a tuple of two ints")
    if len(stride) not in (0, 1, 2):
        raise RuntimeError(f"{name}: stride must either be omitted, a single int, or a tuple of two ints")
    (kh, kw), (ph, pw), (dh, dw) = _pair(kernel_size), _pair(padding), _pair(dilation)
    sh, sw = _pair(stride, (kh, kw))
    if name == "max_pool2d" and x.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    C, H, W = x.size(-3), x.size(-2), x.size(-1)       # avg_pool2d: a 2-d input is an IndexError here
    sizes = []
    for size, k, pad, s, d in ((H, kh, ph, sh, dh), (W, kw, pw, sw, dw)):
        sizes.append(pooling_output_shape(size, k, pad, s, d, ceil_mode))
    OH, OW = sizes
    # ``pool2d_shape_check``
    if min(kh, kw) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if min(sh, sw) < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if min(dh, dw) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}")
    if x.dim() not in (3, 4) or any(n == 0 for n in x.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(x.shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    if OH < 1 or OW < 1:
        raise RuntimeError(f"Given input size: ({C}x{H}x{W}). Calculated output size: ({C}x{OH}x{OW}). "
                           "Output size is too small")
    return kh, kw, sh, sw, ph, pw, dh, dw, OH, OW


# ---- TORCH_META_FUNC(max_pool2d_with_indices) / TORCH_IMPL_FUNC(max_pool2d_with_indices_out_cpu): the
# meta step checks the geometry and lays out the maxima and their int64 indices as the input
# suggests (channels-last for a channels-last input); the impl step runs the loop into them.
def _pooled_layout(out, x, size, dtype):
    """``set_output_raw_strided(i, sizes, {}, input.options().memory_format(
    input.suggest_memory_format()))`` for a pooled output of spatial ``size``: (N, C, *size) or
    (C, *size), channels-last where the input suggests it."""
    shape = (*x.shape[:-2], *size)
    channels_last_input = x.dim() == 4 and suggest_memory_format(x.shape, x.stride()) is channels_last
    strides = channels_last_strides(shape, channels_last) if channels_last_input else None
    return set_output(out, shape, dtype, x.device, strides)


def meta_max_pool2d_with_indices(out, indices, self, kernel_size, stride=(), padding=(0,), dilation=(1,),
                                 ceil_mode=False):
    size = pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)[-2:]
    return _pooled_layout(out, self, size, self.dtype), _pooled_layout(indices, self, size, st.int64)


def impl_max_pool2d_with_indices(outs, self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """The maxima (N, C, OH, OW), or (C, OH, OW), and their int64 positions in their input planes."""
    g = pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
    if self.dtype == st.bool_:                  # torch's kernel has no loop for bool (integers it has)
        raise NotImplementedError('"max_pool2d" not implemented for \'Bool\'')
    compute = st.opmath_type(self.dtype)       # 16-bit floats compare as float32 (bit patterns don't order)
    xc = contiguous(to(self, compute))
    lead, (H, W), (OH, OW) = tuple(self.shape[:-2]), self.shape[-2:], g[-2:]
    values = empty((*lead, OH, OW), dtype=compute, device=self.device)
    positions = empty((*lead, OH, OW), dtype=st.int64, device=self.device)
    loops(self.device, "pooling").max_pool2d(buffer(values), buffer(positions), xc._flat_buffer(), H, W, *g)
    out, indices = outs
    return call("copy_", out, values), call("copy_", indices, positions)


max_pool2d_with_indices_out_cpu = structured(meta_max_pool2d_with_indices, impl_max_pool2d_with_indices, outputs=2)


# ---- TORCH_META_FUNC(max_pool2d_with_indices_backward) / TORCH_IMPL_FUNC(..._out_cpu): the
# meta step checks the geometry and the sizes of grad_output and indices, and lays the gradient
# out as the input (its sizes, dtype and suggested memory format); the impl step checks the
# indices and adds each output's gradient at the input element its index names.
def _input_layout(grad_input, x):
    """``set_output_raw_strided(0, input.sizes(), {}, input.options().memory_format(
    input.suggest_memory_format()))``: a gradient laid out as the input is."""
    channels_last_input = x.dim() == 4 and suggest_memory_format(x.shape, x.stride()) is channels_last
    strides = channels_last_strides(tuple(x.shape), channels_last) if channels_last_input else None
    return set_output(grad_input, x.shape, x.dtype, x.device, strides)


def meta_max_pool2d_with_indices_backward(grad_input, grad_output, self, kernel_size, stride, padding, dilation,
                                          ceil_mode, indices):
    g = pool_geometry(self, kernel_size, stride, padding, dilation, ceil_mode)
    expected = (*self.shape[:-2], *g[-2:])
    for name, t in (("grad_output", grad_output), ("indices", indices)):
        _check_pooled_sizes(t, self, expected)
        if tuple(t.shape) != expected:      # the batch too, which torch's check leaves to the loop
            raise RuntimeError(f"max_pool2d_with_indices_backward: expected {name} of size {list(expected)}, "
                               f"but got {list(t.shape)}")
    return _input_layout(grad_input, self)


def impl_max_pool2d_with_indices_backward(grad_input, grad_output, self, kernel_size, stride, padding, dilation,
                                          ceil_mode, indices):
    return _scatter_max_gradient("max_pool2d_with_indices_backward", grad_input, grad_output, self, indices)


def _scatter_max_gradient(name, grad_input, grad_output, x, indices, dims=2):
    """Each output's gradient added at the input position its index names (zeros elsewhere),
    into ``grad_input``; an index counts positions in the last ``dims`` dims (a plane, or a 3-d
    volume). The loop writes where the indices point: an index from outside the plane would
    write outside the gradient's buffer, so each one is checked here (the loop checks nothing),
    in a private copy that no other thread can change between the check and the loop."""
    if indices.dtype is not st.int64:
        raise RuntimeError(f"expected scalar type Long but found {indices.dtype.torch_name}")
    spatial = tuple(x.shape[-dims:])
    plane_in = math.prod(spatial)
    idx = call("clone", contiguous(indices))
    if idx.numel() and (call("min", idx).item() < 0 or call("max", idx).item() >= plane_in):
        raise RuntimeError(f"{name}: an index is outside its {'x'.join(map(str, spatial))} input "
                           f"{'plane' if dims == 2 else 'volume'}")
    compute = st.opmath_type(x.dtype)
    go = contiguous(to(grad_output, compute))
    gradient = empty(tuple(x.shape), dtype=compute, device=x.device)
    if gradient.numel():      # (an empty output zeroes the planes and adds nothing)
        loops(x.device, "pooling").max_pool2d_backward(buffer(gradient), go._flat_buffer(), idx._flat_buffer(),
                                                       plane_in, math.prod(idx.shape[-dims:]))
    return call("copy_", grad_input, gradient)


max_pool2d_with_indices_backward_out_cpu = structured(meta_max_pool2d_with_indices_backward,
                                                      impl_max_pool2d_with_indices_backward)


def max_pool2d(x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """``max_pool2d``, CompositeImplicitAutograd: the values of ``max_pool2d_with_indices``."""
    return call("max_pool2d_with_indices", x, kernel_size, stride, padding, dilation, ceil_mode)[0]


# ---------------------------------------------------------------------- average pooling
# ``AveragePool2d.cpp``, ``AdaptiveAveragePooling.cpp`` (loops in ``cpu/AvgPoolKernel.cpp``,
# ``cpu/AdaptiveAvgPoolKernel.cpp`` and their CUDA twins). Both average a window per output
# element; a window is a range of rows times a range of columns, so the host describes it by
# four vectors, each output row's [h0, h1) and each column's [w0, w1), and the divisor by two
# more. One forward loop and one backward loop per device serve both operators.
def _avg_windows(size, k, pad, stride, out_size, count_include_pad):
    """Per output index along one dim: the window [lo, hi) clipped to the input, and what it
    counts (``cpu_avg_pool2d``: the window clipped to the padded input, or only its real elements)."""
    lo, hi, count = [], [], []
    for o in range(out_size):
        start = o * stride - pad
        end = min(start + k, size + pad)
        padded = end - start
        start, end = max(start, 0), min(end, size)
        lo.append(start)
        hi.append(end)
        count.append(padded if count_include_pad else end - start)
    return lo, hi, count


def _adaptive_windows(size, out_size):
    """``start_index``/``end_index``: output i averages [floor(i·size/out), ceil((i+1)·size/out))."""
    lo = [o * size // out_size for o in range(out_size)]
    hi = [-(-(o + 1) * size // out_size) for o in range(out_size)]
    return lo, hi, [h - lo_ for lo_, h in zip(lo, hi)]


def _windows_array(rows, cols):
    """The six window vectors, as one int64 array the loops read: h0, h1, hdiv, w0, w1, wdiv."""
    return np.array([v for vectors in (rows, cols) for vector in vectors for v in vector], dtype=np.int64)


# Read by the CPU and CUDA loops.
@register_jitable
def max_pool_output(inp, p, H, W, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    """Output (oh, ow) of plane ``p``: its window's largest value and that value's index in the plane."""
    h0, w0 = oh * sh - ph, ow * sw - pw
    h1, w1 = min(h0 + (kh - 1) * dh + 1, H), min(w0 + (kw - 1) * dw + 1, W)
    while h0 < 0:                       # the first row and column of the window inside the input
        h0 += dh
    while w0 < 0:
        w0 += dw
    at = h0 * W + w0
    if h0 >= h1 or w0 >= w1:            # a dilation stepped the window wholly into the padding: torch's
        return lowest_like(inp[0]), at  # running maximum keeps its start, and the index (outside the plane)
    best = inp[p * H * W + at]
    for h in range(h0, h1, dh):
        for w in range(w0, w1, dw):
            v = inp[p * H * W + h * W + w]
            if v > best or v != v:      # a NaN wins, as in torch's loop
                best, at = v, h * W + w
    return best, at


@register_jitable
def max_pool_backward_plane(grad_input, grad_output, indices, p, plane_in, plane_out):
    """Plane ``p`` of the input's gradient: zeroed, then each output's gradient added at its index
    (two outputs can share an index: only this plane's task writes here)."""
    for i in range(plane_in):
        grad_input[p * plane_in + i] = 0
    for j in range(plane_out):
        grad_input[p * plane_in + indices[p * plane_out + j]] += grad_output[p * plane_out + j]


@register_jitable
def avg_window(windows, OH, OW, oh, ow):
    """Output (oh, ow)'s window and divisor counts: h0, h1, hdiv, w0, w1, wdiv."""
    return (windows[oh], windows[OH + oh], windows[2 * OH + oh],
            windows[3 * OH + ow], windows[3 * OH + OW + ow], windows[3 * OH + 2 * OW + ow])


@register_jitable
def divided(value, hdiv, wdiv, divisor, per_dim):
    """``sum / divide_factor`` (avg_pool2d) or ``sum / kh / kw`` (adaptive), in the sum's type."""
    if divisor != 0:                    # an override (0 is refused, so it means none)
        return c_divide(value, divisor)
    if per_dim:
        return c_divide(c_divide(value, hdiv), wdiv)
    return c_divide(value, hdiv * wdiv)


@register_jitable
def adaptive_max_output(inp, p, H, W, OH, OW, oh, ow, windows):
    """Output (oh, ow) of plane ``p`` for adaptive max pooling: the largest value of its window
    (rows [h0, h1), columns [w0, w1), never empty) and its index in the plane; ties and NaNs as
    :func:`max_pool_output`."""
    h0, h1, _, w0, w1, _ = avg_window(windows, OH, OW, oh, ow)
    at = h0 * W + w0
    best = inp[p * H * W + at]
    for h in range(h0, h1):
        for w in range(w0, w1):
            v = inp[p * H * W + h * W + w]
            if v > best or v != v:
                best, at = v, h * W + w
    return best, at


@register_jitable
def avg_pool_output(inp, p, H, W, OH, OW, oh, ow, windows, divisor, per_dim):
    """Output (oh, ow) of plane ``p``: the sum over its window, divided."""
    h0, h1, hdiv, w0, w1, wdiv = avg_window(windows, OH, OW, oh, ow)
    total = like(inp[0], 0)
    for h in range(h0, h1):
        for w in range(w0, w1):
            total += inp[p * H * W + h * W + w]
    return divided(total, hdiv, wdiv, divisor, per_dim)


@register_jitable
def avg_pool_backward_plane(grad_input, grad_output, p, H, W, OH, OW, windows, divisor, per_dim):
    """Plane ``p`` of the input's gradient: zeroed, then each output's share added over its
    window (windows overlap: only this plane's task writes here)."""
    for i in range(H * W):
        grad_input[p * H * W + i] = 0
    for oh in range(OH):
        for ow in range(OW):
            h0, h1, hdiv, w0, w1, wdiv = avg_window(windows, OH, OW, oh, ow)
            delta = divided(grad_output[(p * OH + oh) * OW + ow], hdiv, wdiv, divisor, per_dim)
            for h in range(h0, h1):
                for w in range(w0, w1):
                    grad_input[p * H * W + h * W + w] += delta


def _avg_pool(x, out_size, windows, divisor, per_dim):
    """Run the forward loop: a nonzero ``divisor`` overrides; ``per_dim`` divides by each dim's count in
    turn (``sum / kh / kw``, as the adaptive loop does), else by their product."""
    compute = st.opmath_type(x.dtype)
    xc = contiguous(to(x, compute))
    lead, (H, W) = tuple(x.shape[:-2]), x.shape[-2:]
    out = empty((*lead, *out_size), dtype=compute, device=x.device)
    loops(x.device, "pooling").avg_pool2d(buffer(out), xc._flat_buffer(), H, W, *out_size, windows, divisor, per_dim)
    return keep_channels_last(to(out, x.dtype), x)


def _avg_pool_backward(grad_output, x, out_size, windows, divisor, per_dim):
    """Each output's gradient, divided as the forward divided its sum, added to its window."""
    _check_avg_grad_output(grad_output, x, out_size)
    compute = st.opmath_type(x.dtype)
    go = contiguous(to(grad_output, compute))
    H, W = x.shape[-2:]
    grad_input = empty(tuple(x.shape), dtype=compute, device=x.device)
    loops(x.device, "pooling").avg_pool2d_backward(buffer(grad_input), go._flat_buffer(), H, W, *out_size, windows,
                                                   divisor, per_dim)
    return keep_channels_last(to(grad_input, x.dtype), x)


def _check_pooled_sizes(t, x, expected):
    """``max_pool2d_backward_shape_check`` / ``avg_pool2d_backward_shape_check``: the planes, rows
    and columns of ``t`` are the pooled output's."""
    for d in (-3, -2, -1):
        check_dim_size(t, x.dim(), x.dim() + d, expected[d])


def _check_avg_grad_output(grad_output, x, out_size):
    expected = (*x.shape[:-2], *out_size)
    if tuple(grad_output.shape) != expected:
        raise RuntimeError(f"expected grad_output of size {list(expected)}, but got {list(grad_output.shape)}")


def _avg_geometry(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    if divisor_override is not None and divisor_override == 0:     # (torch checks the arguments' lengths first)
        raise RuntimeError("divisor must be not zero")
    kh, kw, sh, sw, ph, pw, _, _, OH, OW = pool_geometry(x, kernel_size, stride, padding, (1,), ceil_mode,
                                                         name="avg_pool2d")
    H, W = x.shape[-2:]
    g = _windows_array(_avg_windows(H, kh, ph, sh, OH, count_include_pad),
                       _avg_windows(W, kw, pw, sw, OW, count_include_pad))
    return (OH, OW), g, divisor_override or 0


# ---- TORCH_META_FUNC(avg_pool2d) / TORCH_IMPL_FUNC(avg_pool2d_out_cpu): the geometry checked and
# the output laid out as the input suggests; then the loop: the mean of each window, padding
# counted in the divisor unless ``count_include_pad=False``, ``divisor_override`` replacing it.
def meta_avg_pool2d(out, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    out_size, _, _ = _avg_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override)
    return _pooled_layout(out, self, out_size, self.dtype)


def impl_avg_pool2d(out, self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    out_size, windows, divisor = _avg_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                               divisor_override)
    return call("copy_", out, _avg_pool(self, out_size, windows, divisor, False))


avg_pool2d_out_cpu = structured(meta_avg_pool2d, impl_avg_pool2d)


# ---- TORCH_META_FUNC(avg_pool2d_backward) / TORCH_IMPL_FUNC(avg_pool2d_backward_out_cpu): the
# geometry and grad_output's sizes checked, the gradient laid out as the input; then the loop.
def meta_avg_pool2d_backward(grad_input, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    out_size, _, _ = _avg_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override)
    _check_pooled_sizes(grad_output, self, (*self.shape[:-2], *out_size))
    _check_avg_grad_output(grad_output, self, out_size)
    return _input_layout(grad_input, self)


def impl_avg_pool2d_backward(grad_input, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    out_size, windows, divisor = _avg_geometry(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                               divisor_override)
    return call("copy_", grad_input, _avg_pool_backward(grad_output, self, out_size, windows, divisor, False))


avg_pool2d_backward_out_cpu = structured(meta_avg_pool2d_backward, impl_avg_pool2d_backward)


def _adaptive_geometry(x, output_size):
    """``adaptive_avg_pool2d_out_cpu_template``'s checks, then the windows."""
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if x.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(x.shape)}")
    for d in (-2, -1):
        if x.shape[d] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension {d + x.dim()} "
                               "being empty")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_avg_pool2d" not implemented for \'{x.dtype.torch_name}\'')
    (H, W), (OH, OW) = x.shape[-2:], output_size
    return (OH, OW), _windows_array(_adaptive_windows(H, OH), _adaptive_windows(W, OW))


def _adaptive_avg_pool2d(x, output_size):
    """Output (i, j) averages rows [floor(i·H/OH), ceil((i+1)·H/OH)) and the columns likewise."""
    out_size, windows = _adaptive_geometry(x, output_size)
    return _avg_pool(x, out_size, windows, 0, True)


def _adaptive_avg_pool2d_backward(grad_output, x):
    out_size, windows = _adaptive_geometry(x, tuple(grad_output.shape[-2:]))
    return _avg_pool_backward(grad_output, x, out_size, windows, 0, True)


def adaptive_avg_pool2d(x, output_size):
    """``adaptive_avg_pool2d``, CompositeImplicitAutograd: a 1 x 1 output is ``mean`` over H and W
    (kept channels-last for a channels-last input); other sizes, ``_adaptive_avg_pool2d``."""
    output_size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if output_size[0] < 0 or output_size[1] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{output_size[0]}, {output_size[1]}}}")
    if output_size == [1, 1]:
        out = call("mean.dim", x, [-1, -2], True)
        if x.dim() == 4 and suggest_memory_format(x.shape, x.stride()) is channels_last:
            n, c = x.shape[:2]
            out = call("as_strided_", out, [n, c, 1, 1], [c, 1, c, c])
        return out
    return call("_adaptive_avg_pool2d", x, output_size)


# ---------------------------------------------------------------------- adaptive max pooling
# ``AdaptiveMaxPooling2d.cpp`` (loops in ``cpu/AdaptiveMaxPoolKernel.cpp``, ``cuda/AdaptiveMaxPooling2d.cu``):
# the adaptive average's windows, each one's maximum and its index; the backward pass is max
# pooling's, which adds each output's gradient at its index.
def _adaptive_max_geometry(x, output_size):
    """``adaptive_max_pool2d``'s meta checks, then the output size and the windows."""
    if x.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(x.shape)}")
    for d in range(1, x.dim()):
        if x.shape[d] <= 0:
            raise RuntimeError("adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension {d} being empty")
    output_size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)    # an int[2] of one int
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    if min(output_size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(output_size)}: "
                           f"{[*x.shape[:-2], *output_size]}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"adaptive_max_pool2d" not implemented for \'{x.dtype.torch_name}\'')
    (H, W), (OH, OW) = x.shape[-2:], output_size
    return (OH, OW), _windows_array(_adaptive_windows(H, OH), _adaptive_windows(W, OW))


# ---- TORCH_META_FUNC(adaptive_max_pool2d) / TORCH_IMPL_FUNC(adaptive_max_pool2d_out_cpu): the
# checks above, the maxima and their indices laid out as the input suggests; then the loop.
def meta_adaptive_max_pool2d(out, indices, self, output_size):
    size, _ = _adaptive_max_geometry(self, output_size)
    return _pooled_layout(out, self, size, self.dtype), _pooled_layout(indices, self, size, st.int64)


def impl_adaptive_max_pool2d(outs, self, output_size):
    """The maximum of each adaptive window (rows [floor(i·H/OH), ceil((i+1)·H/OH)), the columns
    likewise) and its int64 position in its input plane."""
    (OH, OW), windows = _adaptive_max_geometry(self, output_size)
    compute = st.opmath_type(self.dtype)
    xc = contiguous(to(self, compute))
    lead, (H, W) = tuple(self.shape[:-2]), self.shape[-2:]
    values = empty((*lead, OH, OW), dtype=compute, device=self.device)
    positions = empty((*lead, OH, OW), dtype=st.int64, device=self.device)
    if values.numel():
        loops(self.device, "pooling").adaptive_max_pool2d(buffer(values), buffer(positions), xc._flat_buffer(), H, W,
                                                          OH, OW, windows)
    out, indices = outs
    return call("copy_", out, values), call("copy_", indices, positions)


adaptive_max_pool2d_out_cpu = structured(meta_adaptive_max_pool2d, impl_adaptive_max_pool2d, outputs=2)


# ---- TORCH_META_FUNC(adaptive_max_pool2d_backward) / TORCH_IMPL_FUNC(..._out_cpu): grad_output's
# rank, sizes and dtype checked, the gradient laid out as the input; then max pooling's scatter.
def meta_adaptive_max_pool2d_backward(grad_input, grad_output, self, indices):
    if grad_output.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but got: "
                           f"{list(grad_output.shape)}")
    for d in range(1, grad_output.dim()):
        if grad_output.shape[d] <= 0:
            raise RuntimeError("adaptive_max_pool2d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {list(grad_output.shape)} with "
                               f"dimension {d} being empty")
    expected = (*self.shape[:-2], *indices.shape[-2:])
    if tuple(grad_output.shape) != expected or tuple(indices.shape) != expected:
        raise RuntimeError(f"expected sizes of grad_output and indices to be {list(expected)}, but got "
                           f"{list(grad_output.shape)} and {list(indices.shape)}")
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {st.type_meta_name(self.dtype)} for `grad_output` but got dtype "
                           f"{st.type_meta_name(grad_output.dtype)}")
    return _input_layout(grad_input, self)


def impl_adaptive_max_pool2d_backward(grad_input, grad_output, self, indices):
    return _scatter_max_gradient("adaptive_max_pool2d_backward", grad_input, grad_output, self, indices)


adaptive_max_pool2d_backward_out_cpu = structured(meta_adaptive_max_pool2d_backward,
                                                  impl_adaptive_max_pool2d_backward)


def adaptive_max_pool1d(self, output_size):
    """CompositeImplicitAutograd (``AdaptiveMaxPooling2d``'s 1-d front, in ``Pooling.cpp``): the 2-d
    operator over a height of one, squeezed off again."""
    if self.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.dim()}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_max_pool1d)")
    output_size = [output_size] if isinstance(output_size, int) else list(output_size)
    if len(output_size) != 1:       # (torch's argument parser refuses it, before the operator)
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")
    for d in range(1, self.dim()):
        if self.shape[d] <= 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(self.shape)} with dimension {d} being empty")
    out, indices = call("adaptive_max_pool2d", call("unsqueeze", self, -2), [1, output_size[0]])
    return call("squeeze.dim", out, -2), call("squeeze.dim", indices, -2)


# ---------------------------------------------------------------------- 1-d pooling
# ``Pooling.cpp`` and ``MaxPooling.cpp``: every 1-d pooling is its 2-d operator over a height of
# one (``unsqueeze(-2)``), squeezed off again, so its gradient is the 2-d operator's behind a
# ``SqueezeBackward1``.


def _check_1d_dims(name, self):
    if self.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")


def _one_int(name, argument, values):
    values = [values] if isinstance(values, int) else list(values)
    if len(values) != 1:
        raise RuntimeError(f"{name}() argument '{argument}' should contain one int (got {len(values)})")
    return values


def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """CompositeImplicitAutograd (``Pooling.cpp``): ``max_pool2d_with_indices`` over a height of one;
    the indices count positions along the length."""
    kernel_size = _one_int("max_pool1d", "kernel_size", kernel_size)
    stride = kernel_size if (not isinstance(stride, int) and len(stride) == 0) else stride
    _check_1d_dims("max_pool1d", self)
    stride = _one_int("max_pool1d", "stride", stride)
    padding = _one_int("max_pool1d", "padding", padding)
    dilation = _one_int("max_pool1d", "dilation", dilation)
    out, indices = call("max_pool2d_with_indices", call("unsqueeze", self, -2), [1, kernel_size[0]],
                        [1, stride[0]], [0, padding[0]], [1, dilation[0]], ceil_mode)
    return call("squeeze.dim", out, -2), call("squeeze.dim", indices, -2)


def _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    """``max_pool1d``'s own checks (``MaxPooling.cpp`` and ``check_max_pool1d`` in
    ``MaxPooling.h``), made before either path, each naming max_pool1d()."""
    shape = self.shape
    if not ((self.dim() == 2 and shape[1] != 0) or (self.dim() == 3 and shape[1] != 0 and shape[2] != 0)):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(shape)}")
    kernel_size, stride, padding, dilation = ([v] if isinstance(v, int) else list(v)
                                              for v in (kernel_size, stride, padding, dilation))
    for name, values, sizes in (("kernel_size must be an int, list of ints or tuple of ints", kernel_size, (1,)),
                                ("stride must be None, an int, list of ints, or tuple of ints", stride, (0, 1)),
                                ("padding must be an int, list of ints, or tuple of ints", padding, (1,)),
                                ("dilation must be an int, list of ints or tuple of ints", dilation, (1,))):
        if len(values) not in sizes:
            raise RuntimeError(f"max_pool1d() {name} of size 1 but got size {len(values)}")
    (k,), (pad,), (d,) = kernel_size, padding, dilation
    s = stride[0] if stride else k
    for name, value, ok in (("kernel_size must be greater than zero", k, k > 0),
                            ("stride must be greater than zero", s, s > 0),
                            ("padding must be non-negative", pad, pad >= 0)):
        if not ok:
            raise RuntimeError(f"max_pool1d() {name}, but got {value}")
    if pad > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={pad} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    # the length read as a number (a traced length is pinned to its example's), as torch's check
    # reads ``self.size(-1)``: a symbolic trace of max_pool1d specializes it, with indices does not
    width = _pool_output_size(int(shape[-1]), k, pad, s, d, ceil_mode)
    if width <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {width}")


def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """CompositeImplicitAutograd (``MaxPooling.cpp``). When a gradient is wanted torch takes the
    values of ``max_pool1d_with_indices``; otherwise its CPU path runs a loop of its own
    (``max_pool1d_impl``) into a fresh contiguous output, which is what the second branch
    reproduces: the same maxima, laid out contiguously whatever the input's strides."""
    _check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode)
    if (GradMode.is_enabled() and self.requires_grad) or self.device.type != "cpu" or _subclass_like(self):
        return max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]
    out = max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]
    return contiguous(out)


def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    """CompositeImplicitAutograd (``Pooling.cpp``): ``avg_pool2d`` over a height of one."""
    kernel_size = _one_int("avg_pool1d", "kernel_size", kernel_size)
    stride = kernel_size if (not isinstance(stride, int) and len(stride) == 0) else stride
    _check_1d_dims("avg_pool1d", self)
    stride = _one_int("avg_pool1d", "stride", stride)
    padding = _one_int("avg_pool1d", "padding", padding)
    out = call("avg_pool2d", call("unsqueeze", self, -2), [1, kernel_size[0]], [1, stride[0]], [0, padding[0]],
               ceil_mode, count_include_pad, None)
    return call("squeeze.dim", out, -2)


def adaptive_avg_pool1d(self, output_size):
    """CompositeImplicitAutograd (``Pooling.cpp``): ``adaptive_avg_pool2d`` over a height of one (so a
    size of one is a ``mean``, as in 2-d)."""
    _check_1d_dims("adaptive_avg_pool1d", self)
    output_size = _one_int("adaptive_avg_pool1d", "output_size", output_size)
    out = call("adaptive_avg_pool2d", call("unsqueeze", self, -2), [1, output_size[0]])
    return call("squeeze.dim", out, -2)
