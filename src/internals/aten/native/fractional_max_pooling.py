"""Fractional max pooling (``aten/src/ATen/native/FractionalMaxPool2d.cpp``,
``FractionalMaxPool3d.cpp``, ``FractionalMaxPooling.h``).

The windows have a fixed size but pseudo-random starts: along each spatial dim, one sample u in
[0, 1) per (batch, plane), drawn by the Python caller with ``rand`` (so a seed gives torch's
windows), and a step alpha = (in - k) / (out - 1); window i starts at
int((i + u)·alpha) - int(u·alpha), the last at in - k (``generate_intervals``, computed in the
input's dtype as torch's is). Each output is its window's maximum, ``indices`` its position in the
input plane (or volume): the first maximum in the window's row-major order, or the last NaN.

torch has a loop of its own; here the windows are gathered with ``gather`` and the choice is made
with reductions (where, amax, amin), so the same code runs on every device. The backward pass is
max pooling's: each output's gradient added at the input position its index names.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from ..dispatcher import call
from .copy import contiguous, cpu, to
from .distributions import _round
from .pooling import _scatter_max_gradient
from .structured import set_output, structured
from .tensor_factories import from_host
from .unary_ops import _not_implemented

__all__ = ["fractional_max_pool2d_out_cpu", "fractional_max_pool2d_backward_cpu", "fractional_max_pool3d_out_cpu",
           "fractional_max_pool3d_backward_out_cpu", "fractional_max_pool3d_backward_cpu"]

_SPATIAL_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _check_samples(self, samples, dims):
    """``fractional_max_pool_check_shape``: one sample per spatial dim for each (batch, plane)."""
    if self.dtype is not samples.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batched = self.dim() == dims + 2
    batch, planes = (self.shape[0], self.shape[1]) if batched else (1, self.shape[0])
    n, c, d = samples.shape
    if n < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if c != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if d != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {d}.")


def _check(self, kernel_size, output_size, samples, dims):
    """The meta function's checks, in its order; the output's shape."""
    name = "fractional_max_pool2d()" if dims == 2 else "fractional_max_pool3d_out()"
    # an ``int[N]`` argument given as one int stands for N of them
    kernel_size, output_size = _sizes(kernel_size, dims), _sizes(output_size, dims)
    for what, values in (("kernel_size", kernel_size), ("output_size", output_size)):
        if len(values) != dims:
            raise RuntimeError(f"fractional_max_pool{dims}d: {what} must either be a single Int or tuple of Ints")
    if self.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}: Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(self.shape)}")
    for d in range(1, self.dim()):
        if self.shape[d] == 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but "
                               f"got{list(self.shape)} with dimension {d} being empty.")
    _check_samples(self, samples, dims)
    spatial = self.shape[-dims:]
    for what, o, k, size in zip(_SPATIAL_NAMES[dims], output_size, kernel_size, spatial):
        # the 3-d meta asks for one more element than the 2-d (``<`` where 2-d has ``<=``)
        if not (o + k - 1 <= size if dims == 2 else o + k - 1 < size):
            raise RuntimeError(f"{name}: pool {what} {k} too large relative to input {what} {size}")
    return (*self.shape[:-dims], *output_size)


def _intervals(samples, size, out_size, k, dtype):
    """``generate_intervals`` for every (batch, plane) at once: the window starts along one dim,
    with torch's arithmetic in the input's dtype (``static_cast<int>`` truncates)."""
    host = np.float64 if dtype is st.float64 else np.float32
    rounded = (lambda v: v) if dtype in (st.float32, st.float64) else (lambda v: _round(v, dtype))
    u = rounded(np.asarray(samples, dtype=host))
    starts = np.empty((*u.shape, out_size), np.int64)
    if out_size > 1:
        alpha = rounded(host(size - k) / host(out_size - 1))
        steps = np.arange(out_size - 1, dtype=host)
        scaled = rounded(rounded(steps + u[..., None]) * alpha)
        starts[..., :-1] = np.trunc(scaled).astype(np.int64) - np.trunc(rounded(u * alpha)).astype(np.int64)[..., None]
    starts[..., -1] = size - k
    return starts


def _window_positions(self, kernel_size, output_size, samples, dims):
    """(batch·planes, outputs, window) int64 positions in each input plane, row-major over the
    output and, within each window, over its elements."""
    spatial = tuple(self.shape[-dims:])
    planes = math.prod(self.shape[:-dims])
    batched = self.dim() == dims + 2
    used = samples[: self.shape[0]] if batched else samples[:1]
    wide = st.float64 if self.dtype is st.float64 else st.float32
    host = np.asarray(cpu(contiguous(to(used, wide)))._flat_buffer()).reshape(planes, dims)
    # a plane's samples are (w, h) in 2-d, the width's first; (t, h, w) in 3-d
    sample_of = (1, 0) if dims == 2 else (0, 1, 2)
    starts = [_intervals(host[:, sample_of[d]], spatial[d], output_size[d], kernel_size[d], self.dtype)
              for d in range(dims)]
    position = np.zeros((planes,) + tuple(output_size) + tuple(kernel_size), np.int64)
    for d in range(dims):
        shape = [planes] + [1] * (2 * dims)
        shape[1 + d] = output_size[d]
        offsets = [1] * (2 * dims + 1)
        offsets[1 + dims + d] = kernel_size[d]
        along = starts[d].reshape(shape) + np.arange(kernel_size[d]).reshape(offsets)
        position = position + along * math.prod(spatial[d + 1:])
    return position.reshape(planes, math.prod(output_size), math.prod(kernel_size))


def _pool(self, kernel_size, output_size, samples, dims, outs):
    if not self.dtype.is_floating_point:
        raise _not_implemented(f"fractional_max_pool{dims}d_out_frame", self)
    shape = tuple(outs[0].shape)
    positions = _window_positions(self, kernel_size, output_size, samples, dims)
    planes, outputs, window = positions.shape
    index = from_host(positions.reshape(planes, outputs * window), st.int64, self.device)
    flat = call("reshape", self, [planes, -1])
    values = call("reshape", call("gather", flat, 1, index), [planes, outputs, window])
    order = call("arange", window, dtype=st.int64, device=self.device)
    # the loop's ``val > maxVal || isnan(val)``: the first maximum, unless a NaN comes, then the last NaN
    first_max = call("amin", call("where.self", call("eq.Tensor", values, call("amax", values, [-1], True)), order,
                                  call("full_like", order, window)), [-1], True)
    last_nan = call("amax", call("where.self", call("isnan", values), order, call("full_like", order, -1)), [-1],
                    True)
    choice = call("where.self", call("ge.Scalar", last_nan, 0), last_nan, first_max)
    index = call("reshape", index, [planes, outputs, window])
    maxima = call("reshape", call("gather", values, 2, choice), list(shape))
    where = call("reshape", call("gather", index, 2, choice), list(shape))
    out, indices = outs
    return call("copy_", out, maxima), call("copy_", indices, where)


# ---- TORCH_META_FUNC(fractional_max_pool2d) / TORCH_IMPL_FUNC(fractional_max_pool2d_out_cpu)
def meta_fractional_max_pool2d(output, indices, self, kernel_size, output_size, random_samples):
    shape = _check(self, kernel_size, output_size, random_samples, 2)
    return (set_output(output, shape, self.dtype, self.device),
            set_output(indices, shape, st.int64, self.device))


def _sizes(values, dims):
    """An ``int[N]`` argument as N ints: one int (or a list of one, as autograd saves it) stands for N."""
    values = [values] if isinstance(values, int) else list(values)
    return values * dims if len(values) == 1 else values


def impl_fractional_max_pool2d(outs, self, kernel_size, output_size, random_samples):
    return _pool(self, _sizes(kernel_size, 2), _sizes(output_size, 2), random_samples, 2, outs)


fractional_max_pool2d_out_cpu = structured(meta_fractional_max_pool2d, impl_fractional_max_pool2d, outputs=2)


def meta_fractional_max_pool3d(output, indices, self, kernel_size, output_size, random_samples):
    shape = _check(self, kernel_size, output_size, random_samples, 3)
    return (set_output(output, shape, self.dtype, self.device),
            set_output(indices, shape, st.int64, self.device))


def impl_fractional_max_pool3d(outs, self, kernel_size, output_size, random_samples):
    return _pool(self, _sizes(kernel_size, 3), _sizes(output_size, 3), random_samples, 3, outs)


fractional_max_pool3d_out_cpu = structured(meta_fractional_max_pool3d, impl_fractional_max_pool3d, outputs=2)


# ---- the backward passes: the gradient laid out as the input, each output's gradient added where
# its index points (``fractional_max_pool2d_backward_out_single_batch_frame``)
def _check_backward(grad_output, self, output_size, dims):
    name = f"fractional_max_pool{dims}d_backward"
    expected = _sizes(output_size, dims)
    if list(grad_output.shape[-dims:]) != expected:
        what = "width" if dims == 2 else "time"
        got = grad_output.shape[-1] if dims == 2 else grad_output.shape[-3]
        want = expected[-1] if dims == 2 else expected[0]
        raise RuntimeError(f"{name}(): gradOutput {what} unexpected: expected {want}, got {got}")


def meta_fractional_max_pool2d_backward(grad_input, grad_output, self, kernel_size, output_size, indices):
    _check_backward(grad_output, self, output_size, 2)
    return set_output(grad_input, self.shape, self.dtype, self.device)


def impl_fractional_max_pool2d_backward(grad_input, grad_output, self, kernel_size, output_size, indices):
    return _scatter_max_gradient("fractional_max_pool2d_backward", grad_input, grad_output, self, indices, dims=2)


fractional_max_pool2d_backward_cpu = structured(meta_fractional_max_pool2d_backward,
                                                impl_fractional_max_pool2d_backward)


def fractional_max_pool3d_backward_out_cpu(grad_output, self, kernel_size, output_size, indices, *, grad_input):
    """Not structured in torch: the out= kernel, and the functional one calling it."""
    _check_backward(grad_output, self, output_size, 3)
    grad_input = set_output(grad_input, self.shape, self.dtype, self.device)
    return _scatter_max_gradient("fractional_max_pool3d_backward", grad_input, grad_output, self, indices, dims=3)


def fractional_max_pool3d_backward_cpu(grad_output, self, kernel_size, output_size, indices):
    return fractional_max_pool3d_backward_out_cpu(grad_output, self, kernel_size, output_size, indices,
                                                  grad_input=None)
