"""CUDA max and average pooling (``aten/src/ATen/native/cuda/DilatedMaxPool2d.cu``). Same buffers as
``cpu/pooling.py``: one thread per output element forward; backward, one thread per plane, so
that no two threads add into the same element (no atomics)."""
import numpy as np
from numba import cuda

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
from .loops import launch_config


@cuda.jit
def _max_pool2d(out, indices, inp, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    i = cuda.grid(1)
    while i < out.size:
        ow, oh, p = i % OW, (i // OW) % OH, i // (OH * OW)
        out[i], indices[i] = max_pool_output(inp, p, H, W, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)
        i += cuda.gridsize(1)


@cuda.jit
def _max_pool2d_backward(grad_input, grad_output, indices, plane_in, plane_out):
    p = cuda.grid(1)
    while p < grad_input.size // plane_in:
        max_pool_backward_plane(grad_input, grad_output, indices, p, plane_in, plane_out)
        p += cuda.gridsize(1)


def max_pool2d(out, indices, inp, *geometry):
    with np.errstate(all="ignore"):
        _max_pool2d[launch_config(out.size)](out, indices, inp, *geometry)


def max_pool2d_backward(grad_input, grad_output, indices, plane_in, plane_out):
    with np.errstate(all="ignore"):
        _max_pool2d_backward[launch_config(grad_input.size // plane_in)](grad_input, grad_output, indices,
                                                                        plane_in, plane_out)


# Average pooling, plain and adaptive (``cuda/AveragePool2d.cu``, ``cuda/AdaptiveAveragePooling.cu``):
# the windows as the CPU loops read them (``pooling.avg_window``).
@cuda.jit
def _avg_pool2d(out, inp, H, W, OH, OW, windows, divisor, per_dim):
    i = cuda.grid(1)
    while i < out.size:
        ow, oh, p = i % OW, (i // OW) % OH, i // (OH * OW)
        out[i] = avg_pool_output(inp, p, H, W, OH, OW, oh, ow, windows, divisor, per_dim)
        i += cuda.gridsize(1)


@cuda.jit
def _avg_pool2d_backward(grad_input, grad_output, H, W, OH, OW, windows, divisor, per_dim):
    p = cuda.grid(1)
    while p < grad_input.size // (H * W):
        avg_pool_backward_plane(grad_input, grad_output, p, H, W, OH, OW, windows, divisor, per_dim)
        p += cuda.gridsize(1)


def avg_pool2d(out, inp, H, W, OH, OW, windows, divisor, per_dim):
    with np.errstate(all="ignore"):
        _avg_pool2d[launch_config(out.size)](out, inp, H, W, OH, OW, windows, divisor, per_dim)


def avg_pool2d_backward(grad_input, grad_output, H, W, OH, OW, windows, divisor, per_dim):
    with np.errstate(all="ignore"):
        _avg_pool2d_backward[launch_config(grad_input.size // (H * W))](grad_input, grad_output, H, W, OH, OW,
                                                                        windows, divisor, per_dim)


# Adaptive max pooling (``cuda/AdaptiveMaxPooling2d.cu``): one thread per output element.
@cuda.jit
def _adaptive_max_pool2d(out, indices, inp, H, W, OH, OW, windows):
    i = cuda.grid(1)
    while i < out.size:
        ow, oh, p = i % OW, (i // OW) % OH, i // (OH * OW)
        out[i], indices[i] = adaptive_max_output(inp, p, H, W, OH, OW, oh, ow, windows)
        i += cuda.gridsize(1)


def adaptive_max_pool2d(out, indices, inp, H, W, OH, OW, windows):
    with np.errstate(all="ignore"):
        _adaptive_max_pool2d[launch_config(out.size)](out, indices, inp, H, W, OH, OW, windows)


# 3-d average pooling (``cuda/AveragePool3d.cu``): one thread per output element forward, one per
# plane backward.
@cuda.jit
def _avg_pool3d(out, inp, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    i = cuda.grid(1)
    while i < out.size:
        ow, oh, ot, p = i % OW, (i // OW) % OH, (i // (OW * OH)) % OT, i // (OT * OH * OW)
        out[i] = avg_pool3d_output(inp, p, T, H, W, OT, OH, OW, ot, oh, ow, windows, divisor, adaptive)
        i += cuda.gridsize(1)


@cuda.jit
def _avg_pool3d_backward(grad_input, grad_output, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    p = cuda.grid(1)
    while p < grad_input.size // (T * H * W):
        avg_pool3d_backward_plane(grad_input, grad_output, p, T, H, W, OT, OH, OW, windows, divisor, adaptive)
        p += cuda.gridsize(1)


def avg_pool3d(out, inp, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    with np.errstate(all="ignore"):
        _avg_pool3d[launch_config(out.size)](out, inp, T, H, W, OT, OH, OW, windows, divisor, adaptive)


def avg_pool3d_backward(grad_input, grad_output, T, H, W, OT, OH, OW, windows, divisor, adaptive):
    with np.errstate(all="ignore"):
        _avg_pool3d_backward[launch_config(grad_input.size // (T * H * W))](grad_input, grad_output, T, H, W, OT, OH,
                                                                            OW, windows, divisor, adaptive)


# 3-d max pooling, dilated and adaptive (``cuda/DilatedMaxPool3d.cu``, ``cuda/AdaptiveMaxPooling3d.cu``): one
# thread per output element; the backward pass is ``max_pool2d_backward`` over volumes.
@cuda.jit
def _max_pool3d(out, indices, inp, T, H, W, OT, OH, OW, geometry):
    i = cuda.grid(1)
    while i < out.size:
        ow, oh, ot, p = i % OW, (i // OW) % OH, (i // (OW * OH)) % OT, i // (OT * OH * OW)
        out[i], indices[i] = max_pool3d_output(inp, p, T, H, W, geometry, ot, oh, ow)
        i += cuda.gridsize(1)


@cuda.jit
def _adaptive_max_pool3d(out, indices, inp, T, H, W, OT, OH, OW, windows):
    i = cuda.grid(1)
    while i < out.size:
        ow, oh, ot, p = i % OW, (i // OW) % OH, (i // (OW * OH)) % OT, i // (OT * OH * OW)
        out[i], indices[i] = adaptive_max3d_output(inp, p, T, H, W, OT, OH, OW, ot, oh, ow, windows)
        i += cuda.gridsize(1)


def max_pool3d(out, indices, inp, T, H, W, OT, OH, OW, geometry):
    with np.errstate(all="ignore"):
        _max_pool3d[launch_config(out.size)](out, indices, inp, T, H, W, OT, OH, OW, geometry)


def adaptive_max_pool3d(out, indices, inp, T, H, W, OT, OH, OW, windows):
    with np.errstate(all="ignore"):
        _adaptive_max_pool3d[launch_config(out.size)](out, indices, inp, T, H, W, OT, OH, OW, windows)


# Max unpooling (``cuda/MaxUnpooling.cu``): torch's kernel has a thread per input element, which
# races where two inputs name one position; here a thread per plane writes in the plane's order.
@cuda.jit
def _max_unpool(out, inp, indices, plane_in, plane_out):
    p = cuda.grid(1)
    while p < out.size // plane_out:
        max_unpool_plane(out, inp, indices, p, plane_in, plane_out)
        p += cuda.gridsize(1)


def max_unpool(out, inp, indices, plane_in, plane_out):
    _max_unpool[launch_config(out.size // plane_out)](out, inp, indices, plane_in, plane_out)
