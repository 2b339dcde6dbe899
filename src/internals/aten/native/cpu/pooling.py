"""CPU max and average pooling (``aten/src/ATen/native/cpu/MaxPoolKernel.cpp``), over contiguous (planes, H,
W) buffers the host sized from the checked geometry: every index below is inside its buffer."""
from numba import prange

from ..adaptive_max_pooling3d import adaptive_max3d_output
from ..average_pool3d import avg_pool3d_backward_plane, avg_pool3d_output
from ..dilated_max_pool3d import max_pool3d_output
from ..max_unpooling import max_unpool_plane
from ..pooling import (
    adaptive_max_output,
    avg_pool_backward_plane,
    avg_pool_output,
    max_pool_backward_plane,
    max_pool_output,
)
from .parallel_for import parallel_loop


@parallel_loop()
def max_pool2d(out, indices, inp, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    for p in prange(inp.size // (H * W)):
        for oh in range(OH):
            for ow in range(OW):
                i = (p * OH + oh) * OW + ow
                out[i], indices[i] = max_pool_output(inp, p, H, W, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)


@parallel_loop()
def max_pool2d_backward(grad_input, grad_output, indices, plane_in, plane_out):
    """One task per plane: the sums of one plane go to that plane only, so tasks never race."""
    for p in prange(grad_input.size // plane_in):
        max_pool_backward_plane(grad_input, grad_output, indices, p, plane_in, plane_out)


# Average pooling, plain and adaptive (``cpu/AvgPoolKernel.cpp``, ``cpu/AdaptiveAvgPoolKernel.cpp``):
# ``windows`` holds each output row's [h0, h1) and divisor count, then each column's (see
# ``pooling.avg_window``); the host clipped them to the input.
@parallel_loop()
def avg_pool2d(out, inp, H, W, OH, OW, windows, divisor, per_dim):
    planes = inp.size // (H * W)
    for p in prange(planes):
        for oh in range(OH):
            for ow in range(OW):
                out[(p * OH + oh) * OW + ow] = avg_pool_output(inp, p, H, W, OH, OW, oh, ow, windows, divisor,
                                                               per_dim)


@parallel_loop()
def avg_pool2d_backward(grad_input, grad_output, H, W, OH, OW, windows, divisor, per_dim):
    """One task per plane: windows overlap, and only the plane's task adds into it."""
    for p in prange(grad_input.size // (H * W)):
        avg_pool_backward_plane(grad_input, grad_output, p, H, W, OH, OW, windows, divisor, per_dim)


@parallel_loop()
def adaptive_max_pool2d(out, indices, inp, H, W, OH, OW, windows):
    """Adaptive max pooling (``cpu/AdaptiveMaxPoolKernel.cpp``): one task per plane."""
    for p in prange(inp.size // (H * W)):
        for oh in range(OH):
            for ow in range(OW):
                i = (p * OH + oh) * OW + ow
                out[i], indices[i] = adaptive_max_output(inp, p, H, W, OH, OW, oh, ow, windows)


# 3-d average pooling (``AveragePool3d.cpp``'s frame loops): one task per (image, channel) plane.
@parallel_loop()
def avg_pool3d(out, inp, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    for p in prange(inp.size // (T * H * W)):
        for ot in range(OT):
            for oh in range(OH):
                for ow in range(OW):
                    out[((p * OT + ot) * OH + oh) * OW + ow] = avg_pool3d_output(inp, p, T, H, W, OT, OH, OW, ot, oh,
                                                                                 ow, windows, divisor, adaptive)


@parallel_loop()
def avg_pool3d_backward(grad_input, grad_output, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    for p in prange(grad_input.size // (T * H * W)):
        avg_pool3d_backward_plane(grad_input, grad_output, p, T, H, W, OT, OH, OW, windows, divisor, adaptive)


# 3-d max pooling, dilated and adaptive (``cpu/MaxPoolKernel.cpp``, ``cpu/AdaptiveMaxPoolKernel.cpp``): one
# task per (image, channel) volume; the backward pass is ``max_pool2d_backward`` over volumes.
@parallel_loop()
def max_pool3d(out, indices, inp, T, H, W, OT, OH, OW, geometry):
    for p in prange(inp.size // (T * H * W)):
        for ot in range(OT):
            for oh in range(OH):
                for ow in range(OW):
                    i = ((p * OT + ot) * OH + oh) * OW + ow
                    out[i], indices[i] = max_pool3d_output(inp, p, T, H, W, geometry, ot, oh, ow)


@parallel_loop()
def adaptive_max_pool3d(out, indices, inp, T, H, W, OT, OH, OW, windows):
    for p in prange(inp.size // (T * H * W)):
        for ot in range(OT):
            for oh in range(OH):
                for ow in range(OW):
                    i = ((p * OT + ot) * OH + oh) * OW + ow
                    out[i], indices[i] = adaptive_max3d_output(inp, p, T, H, W, OT, OH, OW, ot, oh, ow, windows)


# Max unpooling (``cpu/MaxUnpoolKernel.cpp``): one task per (image, channel) plane or volume.
@parallel_loop()
def max_unpool(out, inp, indices, plane_in, plane_out):
    for p in prange(out.size // plane_out):
        max_unpool_plane(out, inp, indices, p, plane_in, plane_out)
