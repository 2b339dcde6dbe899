"""Upsampling (``aten/src/ATen/native/UpSample.h``, ``UpSampleNearest{1,2,3}d.cpp``,
``UpSampleLinear1d.cpp``, ``UpSampleBilinear2d.cpp``, ``UpSampleTrilinear3d.cpp``,
``UpSampleBicubic2d.cpp``, the loops in ``cpu/UpSampleKernel.cpp``).

Every output position reads one (nearest, nearest-exact), two (linear) or four (cubic) input
positions per resized dim, and which ones, with which weights, depends only on the sizes and
scales. So the positions and weights are computed once on the host, in torch's arithmetic
(float32 for the nearest index, the input's precision for the weights), and the data moves
through the indexing kernels, on the CPU and on CUDA alike:

* forward: ``index_select`` along each resized dim; the reads are weighted and added in tap
  order (``x[i0]·w0 + x[i1]·w1 + ...``, the inner dim first, as torch's ``Interpolate`` nests them);
* backward: the gradient of each output position is added into the input position(s) it read,
  with one ``index_add_`` over the flattened plane, in torch's loop order (output positions in
  order, then the corners: (h0,w0), (h0,w1), (h1,w0), (h1,w1) for bilinear, width outermost for
  bicubic), so repeated positions accumulate in the order torch's loop adds them.
"""
import functools
import inspect
import itertools
import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.memory_format import channels_last_strides, contiguous_format, suggest_memory_format
from ..dispatcher import call
from .structured import set_output, structured
from .tensor_factories import from_host


# ---- indices and weights (UpSample.h)
def _scale(scale, in_size, out_size, dtype):
    """``compute_scales_value``: 1/scale where a positive scale was given, else in/out."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(in_size) / dtype(out_size)


def nearest_indices(in_size, out_size, scale, dtype=None):
    """``nearest_idx``: the input position each output position copies, ``floorf(i · scale)``
    in float, with short cuts for equal and doubled sizes. With a ``dtype``, the sums of the
    generic N-d loop instead (``HelperInterpNearest``, which the 1-d and 3-d kernels use): no
    short cuts, and the scale in the input's precision."""
    out = np.arange(out_size, dtype=np.int64)
    if dtype is not None:
        real = _scale(scale, in_size, out_size, dtype) * out.astype(dtype)
        return np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
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


def nearest_exact_indices(in_size, out_size, scale, dtype=None):
    """``nearest_exact_idx``: the input position nearest the output position's centre,
    ``floorf((i + 0.5) · scale)``, the product in double (an int plus 0.5 times a float), the
    floor in float. With a ``dtype``, the generic loop's ``floorf(src + 0.5)`` of the source
    position ``(i + 0.5) · scale - 0.5`` (clamped at 0) in the input's precision
    (``HelperInterpNearestExact``, used by the 1-d and 3-d kernels)."""
    if dtype is not None:
        ratio = _scale(scale, in_size, out_size, dtype)
        real = np.maximum(ratio * (np.arange(out_size).astype(dtype) + dtype(0.5)) - dtype(0.5), dtype(0))
        return np.minimum(np.floor((real + dtype(0.5)).astype(np.float32)).astype(np.int64), in_size - 1)
    ratio = np.float64(_scale(scale, in_size, out_size, np.float32))
    real = ((np.arange(out_size, dtype=np.float64) + 0.5) * ratio).astype(np.float32)
    return np.minimum(np.floor(real).astype(np.int64), in_size - 1)


def _cubic_coefficients(t, dtype):
    """``get_cubic_upsample_coefficients``: Keys' cubic convolution weights (A = -0.75) of the
    four positions around a source point at distance ``t`` past the second one."""
    a, one = dtype(-0.75), dtype(1)

    def near(x):       # |x| <= 1
        return ((a + dtype(2)) * x - (a + dtype(3))) * x * x + one

    def far(x):        # 1 < |x| < 2
        return ((a * x - dtype(5) * a) * x + dtype(8) * a) * x - dtype(4) * a

    rest = (one - t).astype(dtype)
    return [far((t + one).astype(dtype)), near(t), near(rest), far((rest + one).astype(dtype))]


def cubic_indices(in_size, out_size, align_corners, scale, dtype, guarded=True):
    """The four input positions (clamped to the edge) and weights of each output position.
    Unlike the linear modes the source position is not clamped at 0 (``cubic=true``), so the
    first outputs may lean on a position left of the edge. The forward kernel guards the index
    and distance (``guard_index_and_lambda``); the backward loop uses the bare floor."""
    out = np.arange(out_size, dtype=np.int64).astype(dtype)
    if align_corners:
        ratio = dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
        real = (ratio * out).astype(dtype)
    else:
        real = (_scale(scale, in_size, out_size, dtype) * (out + dtype(0.5)) - dtype(0.5)).astype(dtype)
    i0 = np.floor(real.astype(np.float32)).astype(np.int64)
    t = (real - i0.astype(dtype)).astype(dtype)
    if guarded:
        i0 = np.minimum(i0, in_size - 1)
        t = np.minimum(np.maximum((real - i0.astype(dtype)).astype(dtype), dtype(0)), dtype(1)).astype(dtype)
    indices = [np.clip(i0 - 1 + j, 0, in_size - 1) for j in range(4)]
    return indices, [w.astype(dtype) for w in _cubic_coefficients(t, dtype)]


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


def _weight_dtype(x, family="upsample_linear"):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{family}" not implemented for \'{x.dtype.torch_name}\'')
    return np.float64 if x.dtype == st.float64 else np.float32


def _out_like(x, result):
    """The output in the layout torch's structured kernels allocate (``suggest_memory_format``)."""
    layout = suggest_memory_format(x.shape, x.stride()) if x.device.type == "cpu" else None
    out = call("empty.memory_format", list(result.shape), dtype=x.dtype, device=x.device, memory_format=layout)
    return call("copy_", out, result)


def _index(values, device):
    return from_host(np.ascontiguousarray(values, dtype=np.int64), st.int64, device)


# ---- forward
def _resize(x, output_size, taps):
    """Resize dim by dim, the innermost first (torch's loop nests the reads with the innermost
    dim deepest): each dim's output is its taps' ``index_select``s, weighted and added in tap
    order. ``taps(k)`` gives dim k's index arrays and weights (None: copy, as nearest does)."""
    result = x
    for k in reversed(range(len(output_size))):
        d = x.dim() - len(output_size) + k
        indices, weights = taps(k, x.shape[d])
        shape = [1] * x.dim()
        shape[d] = output_size[k]
        total = None
        for j, idx in enumerate(indices):
            part = call("index_select", result, d, _index(idx, x.device))
            if weights is not None:
                part = call("mul.Tensor", part, call("view", from_host(weights[j], x.dtype, x.device), shape))
            total = part if total is None else call("add.Tensor", total, part)
        result = total
    return _out_like(x, result)


def _nearest(x, output_size, scales, exact=False):
    """The 2-d kernels index with ``nearest_idx``/``nearest_exact_idx``; the 1-d and 3-d ones
    with the generic loop's sums, in the input's precision (float for uint8; other integer
    dtypes are refused there, as torch's dispatch refuses them)."""
    _check_input(x, output_size, len(output_size))
    pick = nearest_exact_indices if exact else nearest_indices
    dtype = None
    if len(output_size) != 2:
        if not (x.dtype.is_floating_point or x.dtype == st.uint8):
            raise NotImplementedError(f'"compute_indices_weights_nearest" not implemented for '
                                      f"'{x.dtype.torch_name}'")
        dtype = np.float64 if x.dtype == st.float64 else np.float32
    return _resize(x, output_size, lambda k, size: ([pick(size, output_size[k], scales[k], dtype)], None))


def _linear(x, output_size, align_corners, scales):
    _check_input(x, output_size, len(output_size))
    if x.dtype == st.uint8 and len(output_size) == 2:
        return _uint8_separable(x, output_size, align_corners, scales, "bilinear", antialias=False)
    dtype = _weight_dtype(x, "compute_indices_weights_linear" if len(output_size) == 3 else "upsample_linear")

    def taps(k, size):
        i0, i1, l0, l1 = linear_indices(size, output_size[k], align_corners, scales[k], dtype)
        return [i0, i1], [l0, l1]
    return _resize(x, output_size, taps)


def _cubic(x, output_size, align_corners, scales):
    _check_input(x, output_size, len(output_size))
    if x.dtype == st.uint8:
        return _uint8_separable(x, output_size, align_corners, scales, "bicubic", antialias=False)
    dtype = _weight_dtype(x, "compute_indices_weights_cubic")
    return _resize(x, output_size, lambda k, size: cubic_indices(size, output_size[k], align_corners, scales[k], dtype))


def upsample_nearest1d(x, output_size, scales=None):
    return _nearest(x, list(output_size), [scales])


def upsample_nearest2d(x, output_size, scales_h=None, scales_w=None):
    return _nearest(x, list(output_size), [scales_h, scales_w])


def upsample_nearest3d(x, output_size, scales_d=None, scales_h=None, scales_w=None):
    return _nearest(x, list(output_size), [scales_d, scales_h, scales_w])


def _upsample_nearest_exact1d(x, output_size, scales=None):
    return _nearest(x, list(output_size), [scales], exact=True)


def _upsample_nearest_exact2d(x, output_size, scales_h=None, scales_w=None):
    return _nearest(x, list(output_size), [scales_h, scales_w], exact=True)


def _upsample_nearest_exact3d(x, output_size, scales_d=None, scales_h=None, scales_w=None):
    return _nearest(x, list(output_size), [scales_d, scales_h, scales_w], exact=True)


def upsample_linear1d(x, output_size, align_corners, scales=None):
    return _linear(x, list(output_size), align_corners, [scales])


def upsample_bilinear2d(x, output_size, align_corners, scales_h=None, scales_w=None):
    return _linear(x, list(output_size), align_corners, [scales_h, scales_w])


def upsample_trilinear3d(x, output_size, align_corners, scales_d=None, scales_h=None, scales_w=None):
    return _linear(x, list(output_size), align_corners, [scales_d, scales_h, scales_w])


def upsample_bicubic2d(x, output_size, align_corners, scales_h=None, scales_w=None):
    return _cubic(x, list(output_size), align_corners, [scales_h, scales_w])


# ---- backward: one accumulating ``index_add_`` over each (N·C) plane
def _flat_sources(reads, in_sizes, order):
    """Flattened input positions of every read, in torch's loop order (output positions
    row-major, then the reads of one position with the dims of ``order`` outermost first), and
    each dim's weight of those reads. ``reads[k]`` is dim k's (index arrays, weight arrays)."""
    out_sizes = [len(r[0][0]) for r in reads]
    strides = [math.prod(in_sizes[k + 1:]) for k in range(len(reads))]

    def grid(k, values):           # dim k's per-position values, laid over the output grid
        shape = [1] * len(reads)
        shape[k] = out_sizes[k]
        return np.broadcast_to(np.reshape(values, shape), out_sizes)
    index, weights = [], [[] for _ in reads]
    for corner in itertools.product(*(range(len(reads[k][0])) for k in order)):
        tap = dict(zip(order, corner))
        index.append(sum(grid(k, reads[k][0][tap[k]] * strides[k]) for k in range(len(reads))))
        for k in range(len(reads)):
            weights[k].append(grid(k, reads[k][1][tap[k]]))
    flat = [np.stack(w, axis=-1).reshape(-1) for w in weights]
    return np.stack(index, axis=-1).reshape(-1), flat


def _scatter_back(grad, input_size, reads, weight_steps=None, order=None, keep_layout=False):
    """``weight_steps`` says how torch weighs each read's gradient: "product" multiplies the
    dims' weights together first, then the gradient (the linear loops); "gradient first" takes
    the gradient times each dim's weight in ``order``, innermost first (the bicubic loop);
    None adds the gradient as it is (nearest). ``keep_layout``: see ``_grad_input_layout``."""
    input_size = list(input_size)
    order = order or list(range(len(reads)))
    planes, in_sizes = math.prod(input_size[:2]), input_size[2:]
    index, weights = _flat_sources(reads, in_sizes, order)
    per_plane = math.prod(grad.shape[2:])
    g = call("reshape", grad, [planes, per_plane])
    repeats = len(index) // per_plane
    if repeats > 1:      # an output position read `repeats` input positions: its gradient goes to each
        g = call("reshape", call("expand", call("unsqueeze", g, 2), [planes, per_plane, repeats]),
                 [planes, per_plane * repeats])
    if weight_steps == "product":
        g = call("mul.Tensor", g, from_host(functools.reduce(np.multiply, weights), grad.dtype, grad.device))
    elif weight_steps == "gradient first":
        for k in reversed(order):
            g = call("mul.Tensor", g, from_host(weights[k], grad.dtype, grad.device))
    out = call("zeros", [planes, math.prod(in_sizes)], dtype=grad.dtype, device=grad.device)
    call("index_add_", out, 1, _index(index, grad.device), g)
    out = call("view", out, input_size)
    return _grad_input_layout(grad, out) if keep_layout else out


def _grad_input_layout(grad, grad_input):
    """The 2-d nearest, bilinear and trilinear backward metas allocate grad_input in grad_output's
    suggested memory format, so a channels-last gradient gives a channels-last one (bicubic's and
    the 3-d nearest ones' do not)."""
    layout = suggest_memory_format(grad.shape, grad.stride()) if grad.device.type == "cpu" else None
    if layout is None or layout is contiguous_format:
        return grad_input
    return call("clone", grad_input, memory_format=layout)


def _nearest_backward(grad, output_size, input_size, scales, exact=False):
    dims = len(output_size)
    _check_sizes(input_size, output_size, dims)
    _check_grad(grad, output_size, input_size)
    pick = nearest_exact_indices if exact else nearest_indices
    reads = [([pick(input_size[2 + k], output_size[k], scales[k])], [np.ones(output_size[k])])
             for k in range(dims)]
    return _scatter_back(grad, input_size, reads, keep_layout=dims == 2)


def _linear_backward(grad, output_size, input_size, align_corners, scales):
    dims = len(output_size)
    _check_sizes(input_size, output_size, dims)
    _check_grad(grad, output_size, input_size)
    dtype = _weight_dtype(grad)
    reads = []
    for k in range(dims):
        i0, i1, l0, l1 = linear_indices(input_size[2 + k], output_size[k], align_corners, scales[k], dtype)
        reads.append(([i0, i1], [l0, l1]))
    return _scatter_back(grad, input_size, reads, "product", keep_layout=dims >= 2)


def _cubic_backward(grad, output_size, input_size, align_corners, scales):
    """The bicubic backward loop reads the 4×4 block with the width outermost and weighs the
    gradient by the height's weight, then the width's."""
    _check_sizes(input_size, output_size, 2)
    _check_grad(grad, output_size, input_size)
    dtype = _weight_dtype(grad, "upsample_bicubic2d_backward")
    if list(input_size[2:]) == list(output_size):       # torch's loop copies when the sizes agree
        return call("clone", grad, memory_format=contiguous_format)
    reads = [cubic_indices(input_size[2 + k], output_size[k], align_corners, scales[k], dtype, guarded=False)
             for k in range(2)]
    return _scatter_back(grad, input_size, reads, "gradient first", order=[1, 0])


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


def upsample_nearest3d_backward(grad_output, output_size, input_size, scales_d=None, scales_h=None, scales_w=None):
    return _nearest_backward(grad_output, list(output_size), list(input_size), [scales_d, scales_h, scales_w])


def _upsample_nearest_exact1d_backward(grad_output, output_size, input_size, scales=None):
    return _nearest_backward(grad_output, list(output_size), list(input_size), [scales], exact=True)


def _upsample_nearest_exact2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    return _nearest_backward(grad_output, list(output_size), list(input_size), [scales_h, scales_w], exact=True)


def _upsample_nearest_exact3d_backward(grad_output, output_size, input_size, scales_d=None, scales_h=None,
                                       scales_w=None):
    return _nearest_backward(grad_output, list(output_size), list(input_size), [scales_d, scales_h, scales_w],
                             exact=True)


def upsample_trilinear3d_backward(grad_output, output_size, input_size, align_corners, scales_d=None,
                                  scales_h=None, scales_w=None):
    return _linear_backward(grad_output, list(output_size), list(input_size), align_corners,
                            [scales_d, scales_h, scales_w])


def upsample_bicubic2d_backward(grad_output, output_size, input_size, align_corners, scales_h=None,
                                scales_w=None):
    return _cubic_backward(grad_output, list(output_size), list(input_size), align_corners, [scales_h, scales_w])


# ---- anti-aliased downsampling (``_upsample_{bilinear,bicubic,lanczos}2d_aa``): each output
# position averages every input position under a filter stretched by the scale, as PIL resizes
# (``HelperInterpBase::_compute_indices_min_size_weights_aa`` in cpu/UpSampleKernel.cpp)
def _triangle(x, dtype):
    """The linear filter: 1 - |x| inside (-1, 1)."""
    x = np.abs(x)
    return np.where(x < 1, (1.0 - x.astype(np.float64)).astype(dtype), dtype(0)).astype(dtype)


def _keys_cubic(x, dtype):
    """The cubic filter with Keys' a = -0.5 (PIL's; the plain bicubic mode uses -0.75)."""
    x, a, one = np.abs(x).astype(dtype), dtype(-0.5), dtype(1)
    near = ((a + dtype(2)) * x - (a + dtype(3))) * x * x + one
    far = ((a * x - dtype(5) * a) * x + dtype(8) * a) * x - dtype(4) * a
    return np.where(x < 1, near, np.where(x < 2, far, dtype(0))).astype(dtype)


def _lanczos3(x, dtype):
    """The Lanczos-3 filter: sinc(x) · sinc(x/3) inside (-3, 3)."""
    x = np.abs(x).astype(dtype)

    def sinc(v):
        v = v.astype(dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            scaled = (v * dtype(np.pi)).astype(dtype)
            return np.where(v == 0, dtype(1), (np.sin(scaled) / scaled).astype(dtype)).astype(dtype)
    return np.where(x < 3, (sinc(x) * sinc((x.astype(np.float64) / 3.0).astype(dtype))).astype(dtype), dtype(0))


_AA_FILTERS = {"bilinear": (2, _triangle), "bicubic": (4, _keys_cubic), "lanczos": (6, _lanczos3)}


def _area_scale(in_size, out_size, align_corners, scale, dtype):
    """``area_pixel_compute_scale`` in the input's precision."""
    if align_corners:
        return dtype(in_size - 1) / dtype(out_size - 1) if out_size > 1 else dtype(0)
    return _scale(scale, in_size, out_size, dtype)


def antialias_indices(in_size, out_size, align_corners, scale, dtype, mode):
    """Each output position's window of input positions and their normalised filter weights,
    as ``width`` taps (index, weight) per position: the filter's support grows with the scale
    when shrinking, the window runs from ``xmin`` for ``xsize`` positions, and the taps past it
    have weight 0 (their index clamped to the edge). Mixed precisions as torch's: the centre is
    a double product rounded to the input's precision, the offsets are double before the filter."""
    taps, filt = _AA_FILTERS[mode]
    s = _area_scale(in_size, out_size, align_corners, scale, dtype)
    support = dtype(taps * 0.5 * float(s)) if s >= 1 else dtype(taps * 0.5)
    width = int(math.ceil(support)) * 2 + 1
    i = np.arange(out_size, dtype=np.float64)
    center = (float(s) * (i + 0.5)).astype(dtype)
    invscale = dtype(1.0 / float(s)) if s >= 1 else dtype(1)
    xmin = np.maximum(np.trunc((center - support).astype(np.float64) + 0.5).astype(np.int64), 0)
    xsize = np.minimum(np.trunc((center + support).astype(np.float64) + 0.5).astype(np.int64), in_size) - xmin
    xsize = np.clip(xsize, 0, width)
    weights, total = [], np.zeros(out_size, dtype)
    for j in range(width):
        offset = ((xmin + j).astype(dtype) - center).astype(dtype).astype(np.float64) + 0.5
        w = np.where(j < xsize, filt((offset * float(invscale)).astype(dtype), dtype), dtype(0)).astype(dtype)
        weights.append(w)
        total = (total + w).astype(dtype)
    safe = np.where(total != 0, total, dtype(1)).astype(dtype)
    weights = [(w / safe).astype(dtype) for w in weights]
    indices = [np.minimum(xmin + j, in_size - 1) for j in range(width)]
    return indices, weights


def _check_antialias(x, output_size, mode):
    """The anti-aliased metas check the sizes first, then that the input is not empty; the
    kernels take float and double (and uint8, on its own integer path)."""
    _check_sizes(x.shape, output_size, 2)
    _check_input(x, output_size, 2)
    if x.dtype not in (st.float32, st.float64, st.uint8):
        raise NotImplementedError(f"\"compute_index_ranges_weights\" not implemented for "
                                  f"'{x.dtype.torch_name}'")
    return np.float64 if x.dtype == st.float64 else np.float32


def _antialias(x, output_size, align_corners, scales, mode):
    """The width first, then the height (torch's separable passes, each rounded to the input's
    dtype); a dim whose size does not change is copied."""
    output_size = list(output_size)
    dtype = _check_antialias(x, output_size, mode)
    if x.dtype == st.uint8:
        return _uint8_separable(x, output_size, align_corners, scales, mode, antialias=True)

    def taps(k, size):
        if size == output_size[k]:
            return [np.arange(size)], None
        return antialias_indices(size, output_size[k], align_corners, scales[k], dtype, mode)
    return _resize(x, output_size, taps)


def _antialias_backward(grad, output_size, input_size, align_corners, scales, mode):
    """Each output gradient times the product of its window's weights (width's times height's),
    added into the window, output positions in order, the height outermost within one. The
    bilinear one allocates the gradient in grad_output's suggested layout (the others do not)."""
    output_size, input_size = list(output_size), list(input_size)
    _check_sizes(input_size, output_size, 2)
    _check_grad(grad, output_size, input_size)
    dtype = _weight_dtype(grad, "compute_index_ranges_weights")
    reads = [antialias_indices(input_size[2 + k], output_size[k], align_corners, scales[k], dtype, mode)
             for k in range(2)]
    return _scatter_back(grad, input_size, reads, "product", keep_layout=mode == "bilinear")


def _upsample_bilinear2d_aa(x, output_size, align_corners, scales_h=None, scales_w=None):
    return _antialias(x, output_size, align_corners, [scales_h, scales_w], "bilinear")


def _upsample_bicubic2d_aa(x, output_size, align_corners, scales_h=None, scales_w=None):
    return _antialias(x, output_size, align_corners, [scales_h, scales_w], "bicubic")


def _upsample_lanczos2d_aa(x, output_size, align_corners, scales_h=None, scales_w=None):
    return _antialias(x, output_size, align_corners, [scales_h, scales_w], "lanczos")


def _upsample_bilinear2d_aa_backward(grad_output, output_size, input_size, align_corners, scales_h=None,
                                     scales_w=None):
    return _antialias_backward(grad_output, output_size, input_size, align_corners, [scales_h, scales_w], "bilinear")


def _upsample_bicubic2d_aa_backward(grad_output, output_size, input_size, align_corners, scales_h=None,
                                    scales_w=None):
    return _antialias_backward(grad_output, output_size, input_size, align_corners, [scales_h, scales_w], "bicubic")


def _upsample_lanczos2d_aa_backward(grad_output, output_size, input_size, align_corners, scales_h=None,
                                    scales_w=None):
    return _antialias_backward(grad_output, output_size, input_size, align_corners, [scales_h, scales_w], "lanczos")


# ---- uint8 images (``HelperInterpBase::_compute_index_ranges_int16_weights`` and
# ``basic_loop_separable_1d_{horizontal,vertical}<uint8_t>`` in cpu/UpSampleKernel.cpp): the
# weights are computed in double, scaled to int16 at the largest precision that keeps the
# biggest weight below 2**15, and each output is an exact integer sum, rounded by adding half
# of the last unit before the shift and clamped to [0, 255], as PIL resizes. Integer sums do
# not depend on their order, so every CPU (torch's AVX2 kernel or its generic loop) agrees.
def _filter_uint8(mode, antialias):
    """The filter in double: the triangle, Keys' cubic with a = -0.5 when anti-aliasing (PIL's)
    and a = -0.75 without (OpenCV's, as the float bicubic mode), or Lanczos-3."""
    if mode == "bilinear":
        return lambda v: 1.0 - abs(v) if abs(v) < 1.0 else 0.0
    if mode == "lanczos":
        def sinc(v):
            return 1.0 if v == 0.0 else math.sin(v * math.pi) / (v * math.pi)
        return lambda v: sinc(v) * sinc(v / 3.0) if -3.0 < v < 3.0 else 0.0
    a = -0.5 if antialias else -0.75

    def cubic(v):
        v = abs(v)
        if v < 1.0:
            return ((a + 2) * v - (a + 3)) * v * v + 1
        if v < 2.0:
            return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
        return 0.0
    return cubic


def uint8_weights(in_size, out_size, align_corners, scale, mode, antialias):
    """Per output position: the first input position, the int16 weights of its window (zeros
    past the window's end) and the precision they are scaled to. Without anti-aliasing the
    window is the plain 2 or 4 taps, the weights of taps past an edge added into the edge's one
    (``_compute_indices_min_size_weights``); the running maximum seen while adding them sets the
    precision, as torch's loop keeps it."""
    taps, _ = _AA_FILTERS[mode]
    filt = _filter_uint8(mode, antialias)
    if align_corners:
        s = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    starts, rows, wt_max = [], [], 0.0
    if antialias:
        support = taps * 0.5 * s if s >= 1.0 else taps * 0.5
        width = int(math.ceil(support)) * 2 + 1
        invscale = 1.0 / s if s >= 1.0 else 1.0
        for i in range(out_size):
            center = s * (i + 0.5)
            xmin = max(int(center - support + 0.5), 0)
            xsize = min(max(min(int(center + support + 0.5), in_size) - xmin, 0), width)
            w = [filt((j + xmin - center + 0.5) * invscale) for j in range(xsize)]
            total = 0.0
            for v in w:
                total += v
            if total != 0.0:
                w = [v / total for v in w]
                wt_max = max([wt_max] + w)
            starts.append(xmin)
            rows.append(w + [0.0] * (width - xsize))
    else:
        width, support = taps, taps // 2
        for i in range(out_size):
            real = s * i if align_corners else s * (i + 0.5) - 0.5
            if not align_corners and taps == 2 and real < 0:
                real = 0.0
            index = min(math.floor(real), in_size - 1)
            lam = min(max(real - index, 0.0), 1.0)
            lo = index - support + 1
            xmin = max(lo, 0)
            xsize = min(max(min(index + support + 1, in_size) - xmin, 0), width)
            w, k = [0.0] * width, 0
            for j in range(width):
                if lo + j <= 0:
                    k = 0
                elif lo + j >= in_size - 1:
                    k = xsize - 1
                w[k] += filt(float(j + 1 - support) - lam)
                wt_max = max(wt_max, w[k])
                k += 1
            starts.append(xmin)
            rows.append(w)
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = [[int(v * (1 << precision) - 0.5) if v * (1 << precision) < 0 else int(v * (1 << precision) + 0.5)
               for v in row] for row in rows]
    return np.array(starts, dtype=np.int64), np.array(scaled, dtype=np.int64).reshape(out_size, width), precision


def _uint8_separable(x, output_size, align_corners, scales, mode, antialias):
    """Width first, then height, each pass an exact int32 sum stored back as uint8; a dim whose
    size does not change is skipped (the whole input copied when neither does)."""
    result = x
    for k in reversed(range(len(output_size))):
        d = x.dim() - len(output_size) + k
        in_size = x.shape[d]
        if in_size == output_size[k]:
            continue
        starts, weights, precision = uint8_weights(in_size, output_size[k], align_corners, scales[k], mode, antialias)
        shape = [1] * x.dim()
        shape[d] = output_size[k]
        wide = call("_to_copy", result, dtype=st.int32)
        total = call("full", shape, 1 << (precision - 1), dtype=st.int32, device=x.device)
        for j in range(weights.shape[1]):
            idx = np.minimum(starts + j, in_size - 1)
            part = call("index_select", wide, d, _index(idx, x.device))
            w = call("view", from_host(weights[:, j].astype(np.int32), st.int32, x.device), shape)
            total = call("add.Tensor", total, call("mul.Tensor", part, w))
        # torch's ``>>`` on a possibly negative int: the floor, as floor division by 2**precision
        total = call("floor_divide.Scalar", total, 1 << precision)
        result = call("_to_copy", call("clamp", total, 0, 255), dtype=st.uint8)
    return _out_like(x, result)


# ---- the .vec overloads (``compute_output_size`` and ``get_scale_value`` in UpSample.cpp)
def _sizes_from(input, output_size, scale_factors):
    """The output size from exactly one of ``output_size`` and ``scale_factors`` (floor of the
    double product), and the scales the kernel then divides by."""
    spatial = input.dim() - 2
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        if len(output_size) != spatial:
            raise RuntimeError(f"It is expected output_size equals to {spatial}, but got size {len(output_size)}")
        return list(output_size), [None] * spatial
    if scale_factors is None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if len(scale_factors) != spatial:
        raise RuntimeError(f"It is expected scale_factors equals to {spatial}, but got size {len(scale_factors)}")
    return [int(input.shape[i + 2] * float(s)) for i, s in enumerate(scale_factors)], list(scale_factors)


def _upsample_bilinear2d_aa_vec(input, output_size, align_corners, scale_factors):
    size, scales = _sizes_from(input, output_size, scale_factors)
    return call("_upsample_bilinear2d_aa", input, size, align_corners, *scales)


def _upsample_bicubic2d_aa_vec(input, output_size, align_corners, scale_factors):
    size, scales = _sizes_from(input, output_size, scale_factors)
    return call("_upsample_bicubic2d_aa", input, size, align_corners, *scales)


def _upsample_lanczos2d_aa_vec(input, output_size, align_corners, scale_factors):
    size, scales = _sizes_from(input, output_size, scale_factors)
    return call("_upsample_lanczos2d_aa", input, size, align_corners, *scales)


# ---- the structured declarations (TORCH_META_FUNC / TORCH_IMPL_FUNC in each UpSample*.cpp): torch
# declares every upsample operator and its backward with out= primary. The meta step checks the
# sizes (and grad_output's shape) and lays the output out: a forward's as the input suggests, a
# backward's as grad_output suggests for the 2-d nearest and the (anti-aliased) bi- and trilinear ones, else
# contiguous; the impl step computes as above and writes into it. Every operator has the same
# two steps, so they are made from its kernel above, named after it.
def _bound(kernel, args, kwargs):
    bound = inspect.signature(kernel).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def _suggested_strides(t, shape):
    """``t.suggest_memory_format()``'s strides for ``shape`` on the CPU; contiguous (None) on CUDA."""
    fmt = suggest_memory_format(t.shape, t.stride()) if t.device.type == "cpu" else contiguous_format
    return None if fmt is contiguous_format else channels_last_strides(tuple(shape), fmt)


def _check_forward(x, output_size, dims):
    """``upsample_{1,2,3}d_common_check``: the sizes' lengths and values first, then a
    non-empty input of the operator's rank."""
    _check_sizes(x.shape, output_size, dims)
    _check_input(x, output_size, dims)


def _declared(kernel, meta_body, output):
    """``structured(meta, impl)`` over ``kernel``: ``meta_<name>(output, *kernel's arguments)``
    runs ``meta_body`` on the bound arguments, ``impl_<name>`` copies the kernel's result into
    the output the meta step laid out."""
    def meta(out, *args, **kwargs):
        return meta_body(out, _bound(kernel, args, kwargs))

    def impl(out, *args, **kwargs):
        return call("copy_", out, kernel(*args, **kwargs))
    name = kernel.__name__
    params = [inspect.Parameter(output, inspect.Parameter.POSITIONAL_OR_KEYWORD),
              *inspect.signature(kernel).parameters.values()]
    for step, prefix in ((meta, "meta_"), (impl, "impl_")):
        step.__name__ = step.__qualname__ = prefix + name
        step.__signature__ = inspect.Signature(params)
    return structured(meta, impl)


def _declared_forward(kernel, dims):
    def meta_body(out, a):
        x, size = a["x"], list(a["output_size"])
        _check_forward(x, size, dims)
        shape = [*x.shape[:2], *size]
        return set_output(out, shape, x.dtype, x.device, _suggested_strides(x, shape))
    return _declared(kernel, meta_body, "out")


def _declared_backward(kernel, dims, keep_layout=False):
    def meta_body(grad_input, a):
        grad, size, input_size = a["grad_output"], list(a["output_size"]), list(a["input_size"])
        _check_sizes(input_size, size, dims)
        _check_grad(grad, size, input_size)
        strides = _suggested_strides(grad, input_size) if keep_layout else None
        return set_output(grad_input, input_size, grad.dtype, grad.device, strides)
    return _declared(kernel, meta_body, "grad_input")


upsample_nearest1d_out = _declared_forward(upsample_nearest1d, 1)
upsample_nearest2d_out = _declared_forward(upsample_nearest2d, 2)
upsample_nearest3d_out = _declared_forward(upsample_nearest3d, 3)
_upsample_nearest_exact1d_out = _declared_forward(_upsample_nearest_exact1d, 1)
_upsample_nearest_exact2d_out = _declared_forward(_upsample_nearest_exact2d, 2)
_upsample_nearest_exact3d_out = _declared_forward(_upsample_nearest_exact3d, 3)
upsample_linear1d_out = _declared_forward(upsample_linear1d, 1)
upsample_bilinear2d_out = _declared_forward(upsample_bilinear2d, 2)
upsample_trilinear3d_out = _declared_forward(upsample_trilinear3d, 3)
upsample_bicubic2d_out = _declared_forward(upsample_bicubic2d, 2)
_upsample_bilinear2d_aa_out = _declared_forward(_upsample_bilinear2d_aa, 2)
_upsample_bicubic2d_aa_out = _declared_forward(_upsample_bicubic2d_aa, 2)
_upsample_lanczos2d_aa_out = _declared_forward(_upsample_lanczos2d_aa, 2)

upsample_nearest1d_backward_out = _declared_backward(upsample_nearest1d_backward, 1)
upsample_nearest2d_backward_out = _declared_backward(upsample_nearest2d_backward, 2, keep_layout=True)
upsample_nearest3d_backward_out = _declared_backward(upsample_nearest3d_backward, 3)
_upsample_nearest_exact1d_backward_out = _declared_backward(_upsample_nearest_exact1d_backward, 1)
_upsample_nearest_exact2d_backward_out = _declared_backward(_upsample_nearest_exact2d_backward, 2, keep_layout=True)
_upsample_nearest_exact3d_backward_out = _declared_backward(_upsample_nearest_exact3d_backward, 3)
upsample_linear1d_backward_out = _declared_backward(upsample_linear1d_backward, 1)
upsample_bilinear2d_backward_out = _declared_backward(upsample_bilinear2d_backward, 2, keep_layout=True)
upsample_trilinear3d_backward_out = _declared_backward(upsample_trilinear3d_backward, 3, keep_layout=True)
upsample_bicubic2d_backward_out = _declared_backward(upsample_bicubic2d_backward, 2)
_upsample_bilinear2d_aa_backward_out = _declared_backward(_upsample_bilinear2d_aa_backward, 2, keep_layout=True)
_upsample_bicubic2d_aa_backward_out = _declared_backward(_upsample_bicubic2d_aa_backward, 2)
_upsample_lanczos2d_aa_backward_out = _declared_backward(_upsample_lanczos2d_aa_backward, 2)
