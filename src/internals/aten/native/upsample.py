"""Upsampling (``aten/src/ATen/native/UpSample.h``, ``UpSampleNearest{1,2}d.cpp``,
``UpSampleLinear1d.cpp``, ``UpSampleBilinear2d.cpp``, the loops in ``cpu/UpSampleKernel.cpp``).

Every output position reads one (nearest) or two (linear) input positions per resized dim, and
which ones, with which weights, depends only on the sizes and scales. So the positions and weights
are computed once on the host, in torch's arithmetic (float32 for the nearest index, the input's
precision for the linear weights), and the data moves through the indexing kernels:

* forward: ``index_select`` along each resized dim; for linear modes the two reads are weighted
  and added (``x[i0]·λ0 + x[i1]·λ1``, the inner dim first, as torch's ``Interpolate`` nests them);
* backward: the gradient of each output position is added into the input position(s) it read,
  with one ``index_add_`` over the flattened plane, in torch's loop order (output positions in
  order, and for bilinear the four corners (h0,w0), (h0,w1), (h1,w0), (h1,w1)), so repeated
  positions accumulate in the order torch's loop adds them.
"""
import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.memory_format import suggest_memory_format
from ..dispatcher import call
from .tensor_factories import from_host


# ---- indices and weights (UpSample.h)
def _scale(scale, in_size, out_size, dtype):
    """``compute_scales_value``: 1/scale where a positive scale was given, else in/out."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size) / dtype(out_size)


def nearest_indices(in_size, out_size, scale):
    """``nearest_idx``: the input position each output position copies."""
    out = np.arange(out_size, dtype=np.int64)
    if out_size == in_size:
        return out
    if out_size == 2 * in_size:
        return out >> 1
    ratio = _scale(scale, in_size, out_size, np.float32)
    return np.minimum(np.floor(out.astype(np.float32) * ratio).astype(np.int64), in_size - 1)


def linear_indices(in_size, out_size, align_corners, scale, dtype):
    """``compute_source_index_and_lambda``: (i0, i1, λ0, λ1) per output position; the ratio and
    source position in the input's precision, the index by ``floorf``."""
    out = np.arange(out_size, dtype=np.int64)
    if out_size == in_size:
        return out, out, np.ones(out_size, dtype), np.zeros(out_size, dtype)
    if align_corners:
        ratio = dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
        real = ratio * out.astype(dtype)
    else:
        ratio = _scale(scale, in_size, out_size, dtype)
        real = np.maximum(ratio * (out.astype(dtype) + dtype(0.5)) - dtype(0.5), dtype(0))
    i0 = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    lambda1 = np.minimum(np.maximum(real - i0.astype(dtype), dtype(0)), dtype(1)).astype(dtype)
    i1 = i0 + (i0 < in_size - 1)
    return i0, i1, (dtype(1) - lambda1).astype(dtype), lambda1


# ---- checks (``upsample_1d_common_check``, ``upsample_2d_common_check``)
def _check_sizes(input_size, output_size, dims):
    if len(output_size) != dims:
        raise RuntimeError(f"It is expected output_size equals to {dims}, but got size {len(output_size)}")
    if len(input_size) != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size {len(input_size)}")
    spatial_in, names = list(input_size[2:]), "HW"[-dims:] if dims <= 2 else "DHW"
    if min(spatial_in) <= 0 or min(output_size) <= 0:
        given_in = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial_in))
        given_out = ", ".join(f"{n}: {s}" for n, s in zip(names, output_size))
        joiner = " and output" if dims == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given_in}){joiner} "
                           f"({given_out})")


def _check_input(x, output_size, dims):
    if x.dim() != dims + 2 or (x.numel() == 0 and math.prod(x.shape[1:]) == 0):
        raise RuntimeError(f"Non-empty {dims + 2}D data tensor expected but got a tensor with sizes {list(x.shape)}")
    _check_sizes(x.shape, output_size, dims)


def _weight_dtype(x):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"upsample_linear" not implemented for \'{x.dtype.torch_name.capitalize()}\'')
    return np.float64 if x.dtype == st.float64 else np.float32


def _out_like(x, result):
    """The output in the layout torch's structured kernels allocate (``suggest_memory_format``)."""
    layout = suggest_memory_format(x.shape, x.stride()) if x.device.type == "cpu" else None
    out = call("empty.memory_format", list(result.shape), dtype=x.dtype, device=x.device, memory_format=layout)
    return call("copy_", out, result)


def _index(values, device):
    return from_host(np.ascontiguousarray(values, dtype=np.int64), st.int64, device)


# ---- forward
def _nearest(x, output_size, scales):
    dims = len(output_size)
    _check_input(x, output_size, dims)
    result = x
    for k, (out_size, scale) in enumerate(zip(output_size, scales)):
        d = x.dim() - dims + k
        result = call("index_select", result, d, _index(nearest_indices(x.shape[d], out_size, scale), x.device))
    return _out_like(x, result)


def _linear(x, output_size, align_corners, scales):
    dims = len(output_size)
    _check_input(x, output_size, dims)
    dtype = _weight_dtype(x)
    result = x
    for k in reversed(range(dims)):        # the innermost dim first, as torch nests the reads
        d = x.dim() - dims + k
        i0, i1, l0, l1 = linear_indices(x.shape[d], output_size[k], align_corners, scales[k], dtype)
        shape = [1] * x.dim()
        shape[d] = output_size[k]
        w0 = call("view", from_host(l0, x.dtype, x.device), shape)
        w1 = call("view", from_host(l1, x.dtype, x.device), shape)
        a = call("mul.Tensor", call("index_select", result, d, _index(i0, x.device)), w0)
        b = call("mul.Tensor", call("index_select", result, d, _index(i1, x.device)), w1)
        result = call("add.Tensor", a, b)
    return _out_like(x, result)


def upsample_nearest1d(x, output_size, scales=None):
    return _nearest(x, list(output_size), [scales])


def upsample_nearest2d(x, output_size, scales_h=None, scales_w=None):
    return _nearest(x, list(output_size), [scales_h, scales_w])


def upsample_linear1d(x, output_size, align_corners, scales=None):
    return _linear(x, list(output_size), align_corners, [scales])


def upsample_bilinear2d(x, output_size, align_corners, scales_h=None, scales_w=None):
    return _linear(x, list(output_size), align_corners, [scales_h, scales_w])


# ---- backward: one accumulating ``index_add_`` over each (N·C) plane
def _flat_sources(reads, in_sizes):
    """Flattened input positions and weights of every read, in torch's loop order: output
    positions row-major, then the reads of one position (the corners, h-major)."""
    if len(reads) == 1:
        (idx, wts), = reads
        return np.stack(idx, axis=1).reshape(-1), np.stack(wts, axis=1).reshape(-1)
    (hi, hw), (wi, ww) = reads
    index, weight = [], []
    for a in range(len(hi)):
        for b in range(len(wi)):
            index.append(hi[a][:, None, None] * in_sizes[1] + wi[b][None, None, :])
            weight.append(hw[a][:, None, None] * ww[b][None, None, :])
    index = np.concatenate([np.broadcast_to(i, (len(hi[0]), 1, len(wi[0]))) for i in index], axis=1)
    weight = np.concatenate([np.broadcast_to(w, (len(hw[0]), 1, len(ww[0]))) for w in weight], axis=1)
    # (oh, corner, ow) -> (oh, ow, corner)
    return index.transpose(0, 2, 1).reshape(-1), weight.transpose(0, 2, 1).reshape(-1)


def _scatter_back(grad, input_size, reads, weighted):
    input_size = list(input_size)
    planes, in_sizes = math.prod(input_size[:2]), input_size[2:]
    index, weight = _flat_sources(reads, in_sizes)
    per_plane = math.prod(grad.shape[2:])
    g = call("reshape", grad, [planes, per_plane])
    repeats = len(index) // per_plane
    if repeats > 1:      # an output position read `repeats` input positions: its gradient goes to each
        g = call("reshape", call("expand", call("unsqueeze", g, 2), [planes, per_plane, repeats]),
                 [planes, per_plane * repeats])
    if weighted:
        g = call("mul.Tensor", g, from_host(weight, grad.dtype, grad.device))
    out = call("zeros", [planes, math.prod(in_sizes)], dtype=grad.dtype, device=grad.device)
    call("index_add_", out, 1, _index(index, grad.device), g)
    return call("view", out, input_size)


def _nearest_backward(grad, output_size, input_size, scales):
    dims = len(output_size)
    _check_sizes(input_size, output_size, dims)
    _check_grad(grad, output_size, input_size)
    reads = [([nearest_indices(input_size[2 + k], output_size[k], scales[k])], [np.ones(output_size[k])])
             for k in range(dims)]
    return _scatter_back(grad, input_size, reads, weighted=False)


def _linear_backward(grad, output_size, input_size, align_corners, scales):
    dims = len(output_size)
    _check_sizes(input_size, output_size, dims)
    _check_grad(grad, output_size, input_size)
    dtype = _weight_dtype(grad)
    reads = []
    for k in range(dims):
        i0, i1, l0, l1 = linear_indices(input_size[2 + k], output_size[k], align_corners, scales[k], dtype)
        reads.append(([i0, i1], [l0, l1]))
    return _scatter_back(grad, input_size, reads, weighted=True)


def _check_grad(grad, output_size, input_size):
    """``upsample_*_backward``'s meta: the gradient has the forward output's full shape."""
    expected = [*input_size[:2], *output_size]
    if grad.dim() != len(expected):
        raise RuntimeError(f"Expected grad_output to be a tensor of dimension {len(expected)} but got: "
                           f"dimension {grad.dim()}")
    for i, size in enumerate(expected):
        if grad.shape[i] != size:
            raise RuntimeError(f"Expected grad_output to have the same shape as output; output.size({i}) = {size} "
                               f"but got grad_output.size({i}) = {grad.shape[i]}")


def upsample_nearest1d_backward(grad_output, output_size, input_size, scales=None):
    return _nearest_backward(grad_output, list(output_size), list(input_size), [scales])


def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    return _nearest_backward(grad_output, list(output_size), list(input_size), [scales_h, scales_w])


def upsample_linear1d_backward(grad_output, output_size, input_size, align_corners, scales=None):
    return _linear_backward(grad_output, list(output_size), list(input_size), align_corners, [scales])


def upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners, scales_h=None,
                                 scales_w=None):
    return _linear_backward(grad_output, list(output_size), list(input_size), align_corners,
                            [scales_h, scales_w])
