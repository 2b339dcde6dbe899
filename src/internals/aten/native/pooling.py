"""2-d max pooling (``aten/src/ATen/native/DilatedMaxPool2d.cpp``, ``Pool.h``; loops in
``cpu/MaxPoolKernel.cpp`` and ``cuda/DilatedMaxPool2d.cu``).

Each output element is the maximum of its (dilated) window, and ``indices`` records where it came
from, as a position ``h·W + w`` in its input plane. The backward pass needs nothing else: it adds
each output's gradient to the input element its index names. Ties go to the first element in
the window's row-major order, and a NaN wins over any number, as in torch's loops (after ReLU
many windows tie at 0, so the rule decides which input gets the gradient).
"""
from ...c10 import scalar_type as st
from ..dispatcher import call
from .convolution import keep_channels_last
from .copy import buffer, contiguous, to
from .dispatch_stub import loops
from .tensor_factories import empty


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


def pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """(kh, kw, sh, sw, ph, pw, dh, dw, OH, OW), checked as ``pool2d_shape_check`` checks them."""
    # An ``int[2]`` argument may come as one int when the op is called as ``ops.aten...``.
    kernel_size, stride, padding, dilation = ([v] if isinstance(v, int) else list(v)
                                              for v in (kernel_size, stride, padding, dilation))
    for name, values in (("kernel_size", kernel_size), ("padding", padding), ("dilation", dilation)):
        if len(values) not in (1, 2):
            raise RuntimeError(f"max_pool2d: {name} must either be a single int, or a tuple of two ints")
    if len(stride) not in (0, 1, 2):
        raise RuntimeError("max_pool2d: stride must either be omitted, a single int, or a tuple of two ints")
    (kh, kw), (ph, pw), (dh, dw) = _pair(kernel_size), _pair(padding), _pair(dilation)
    sh, sw = _pair(stride, (kh, kw))
    if x.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    C, H, W = x.shape[-3:]
    sizes = []
    for size, k, pad, s, d in ((H, kh, ph, sh, dh), (W, kw, pw, sw, dw)):     # ``pooling_output_shape``
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if pad < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
        if pad > int(((k - 1) * d + 1) / 2):        # C++ division truncates
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, "
                               f"kernel_size={k} and dilation={d}")
        sizes.append(_pool_output_size(size, k, pad, s, d, ceil_mode))
    OH, OW = sizes
    # ``pool2d_shape_check``
    if min(kh, kw) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if min(sh, sw) < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if min(dh, dw) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} dilationW: {dw}")
    if any(n == 0 for n in x.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(x.shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                           f"padH = {ph}, kW = {kw}, kH = {kh}")
    if OH < 1 or OW < 1:
        raise RuntimeError(f"Given input size: ({C}x{H}x{W}). Calculated output size: ({C}x{OH}x{OW}). "
                           "Output size is too small")
    return kh, kw, sh, sw, ph, pw, dh, dw, OH, OW


def max_pool2d_with_indices(x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """The maxima (N, C, OH, OW), or (C, OH, OW), and their int64 positions in their input planes."""
    g = pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)
    compute = st.opmath_type(x.dtype)          # 16-bit floats compare as float32 (bit patterns don't order)
    xc = contiguous(to(x, compute))
    lead, (H, W), (OH, OW) = tuple(x.shape[:-2]), x.shape[-2:], g[-2:]
    out = empty((*lead, OH, OW), dtype=compute, device=x.device)
    indices = empty((*lead, OH, OW), dtype=st.int64, device=x.device)
    loops(x.device, "pooling").max_pool2d(buffer(out), buffer(indices), xc._flat_buffer(), H, W, *g)
    return keep_channels_last(to(out, x.dtype), x), keep_channels_last(indices, x)


def max_pool2d_with_indices_backward(grad_output, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """Each output's gradient, added to the input element ``indices`` names (zeros elsewhere)."""
    g = pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)
    H, W = x.shape[-2:]
    expected = (*x.shape[:-2], *g[-2:])
    for name, t in (("grad_output", grad_output), ("indices", indices)):
        if tuple(t.shape) != expected:
            raise RuntimeError(f"max_pool2d_with_indices_backward: expected {name} of size {list(expected)}, "
                               f"but got {list(t.shape)}")
    # The loop writes where the indices point: an index from outside the plane would write
    # outside the gradient's buffer, so each one is checked here (the loop checks nothing), in a
    # private copy that no other thread can change between the check and the loop.
    if indices.dtype is not st.int64:
        raise RuntimeError(f"expected indices of scalar type Long but found {indices.dtype.torch_name}")
    idx = call("clone", contiguous(indices))
    if idx.numel() and (call("min", idx).item() < 0 or call("max", idx).item() >= H * W):
        raise RuntimeError(f"max_pool2d_with_indices_backward: an index is outside its {H}x{W} input plane")
    compute = st.opmath_type(x.dtype)
    go = contiguous(to(grad_output, compute))
    grad_input = empty(tuple(x.shape), dtype=compute, device=x.device)
    loops(x.device, "pooling").max_pool2d_backward(buffer(grad_input), go._flat_buffer(), idx._flat_buffer(),
                                                   H * W, g[-2] * g[-1])
    return to(grad_input, x.dtype)


def max_pool2d(x, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """``max_pool2d``, CompositeImplicitAutograd: the values of ``max_pool2d_with_indices``."""
    return call("max_pool2d_with_indices", x, kernel_size, stride, padding, dilation, ceil_mode)[0]
