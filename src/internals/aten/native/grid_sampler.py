"""Sampling an image or a volume at given points (``aten/src/ATen/native/GridSampler.cpp``, the
index and weight helpers of ``GridSampler.h``, the loops of ``cpu/GridSamplerKernel.cpp``) and the
affine grids that feed it (``AffineGridGenerator.cpp``).

Unlike resizing, where the positions read depend only on sizes, here they are data (the grid,
which may itself want a gradient). So each step is a tensor operation over all output points at
once, on whichever device the tensors live. Each spatial dim contributes its own taps: a position
along that dim and a 1-d weight (bilinear: the two neighbours, bicubic: four, nearest: one), with
the weight's first and second derivatives in the pixel coordinate. A point reads the product of
the dims' taps (4 or 16 pixels of an image, 8 of a volume), weighted by the product of their
weights, pixels outside the image reading zero. Everything else follows from that one picture:

* forward: the weighted reads summed (``gather`` from the flattened planes);
* backward: each output gradient added into the pixels it read (``scatter_add_``), and, for the
  grid, the weights' derivatives times the values read, times d(pixel)/d(grid);
* double backward: the backward is linear in the output gradient and in the input, so its own
  derivatives are the same reads and scatters with the weights' first and second derivatives.

That composition serves every device. On the CPU, for float32 and float64, the forward and the
backward run as loops instead, one pass over the points as torch's kernels make
(``cpu/grid_sampler.py``), with the same arithmetic; the double backward stays composed, so it
can itself be differentiated.
"""
import itertools
import math

import numpy as np

from ...c10 import scalar_type as st
from ..dispatcher import call
from .copy import contiguous
from .cpu.parallel_for import pick
from .dispatch_stub import loops

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2
CUBIC_A = -0.75      # the cubic convolution constant torch uses (``get_cubic_upsample_coefficients``)


# ---- checks (``check_grid_sampler_common``, ``check_grid_sampler_2d``, ``check_grid_sampler_3d``)
def _check(input, grid, interpolation_mode, dims):
    if input.dtype != grid.dtype:       # torch's bare dtype check on grid fires first
        raise RuntimeError(f"expected scalar type {input.dtype.torch_name} but found "
                           f"{grid.dtype.torch_name.capitalize()}")
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but input is on "
                           f"{input.device} and grid is on {grid.device}")
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but "
                           f"got grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {i} being empty")
    if input.dim() != dims + 2 or grid.dim() != dims + 2:
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of dimensions, "
                           f"but got {sizes}")
    if dims == 3 and interpolation_mode == BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if dims == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.torch_name}'")


# ---- coordinates (``grid_sampler_compute_source_index_set_grad``, ``compute_coordinates``)
def _clip(x, size, grad=None):
    """``clip_coordinates_set_grad``: clamp to [0, size-1]; the derivative is 0 at and past the ends."""
    clipped = call("clamp", x, 0, size - 1)
    if grad is None:
        return clipped, None
    inside = call("logical_and", call("gt.Scalar", x, 0), call("lt.Scalar", x, size - 1))
    return clipped, call("mul.Tensor", grad, call("_to_copy", inside, dtype=x.dtype))


def _reflect(x, twice_low, twice_high, grad=None):
    """``reflect_coordinates_set_grad``: fold x into [low, high] as a mirror would, the sign of the
    derivative flipping with each reflection."""
    if twice_low == twice_high:
        return call("zeros_like", x), None if grad is None else call("zeros_like", x)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = call("sub.Tensor", x, call("full", [], low, dtype=x.dtype, device=x.device))
    sign = call("sub.Tensor", call("full", [], 1.0, dtype=x.dtype, device=x.device),
                call("mul.Scalar", call("_to_copy", call("lt.Scalar", shifted, 0), dtype=x.dtype), 2))
    shifted = call("abs", shifted)
    extra = call("fmod.Scalar", shifted, span)
    flips = call("floor", call("div.Scalar", shifted, span))
    even = call("eq.Scalar", call("fmod.Scalar", flips, 2), 0)
    folded = call("where.self", even, call("add.Scalar", extra, low),
                  call("add.Scalar", call("rsub.Scalar", extra, span), low))
    if grad is None:
        return folded, None
    return folded, call("mul.Tensor", grad, call("where.self", even, sign, call("neg", sign)))


def _pad(x, size, padding_mode, align_corners, grad=None):
    """``compute_coordinates``: a coordinate folded into the image by the padding rule (zeros
    leaves it where it is: reads outside give 0)."""
    if padding_mode == BORDER:
        return _clip(x, size, grad)
    if padding_mode == REFLECTION:
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x, grad = _reflect(x, *bounds, grad)
        return _clip(x, size, grad)
    return x, grad


def _source_index(coord, size, padding_mode, align_corners, mode):
    """A normalised coordinate in [-1, 1] as a pixel coordinate, and d(pixel)/d(coord). Bicubic
    pads each tap it reads instead of the coordinate (``get_value_bounded``), so its coordinate
    is only unnormalised."""
    scale = (size - 1) / 2 if align_corners else size / 2
    x = call("mul.Scalar", call("add.Scalar", coord, 1), scale)
    if not align_corners:
        x = call("sub.Scalar", x, 0.5)
    grad = call("full", list(coord.shape), scale, dtype=coord.dtype, device=coord.device)
    if mode == BICUBIC:
        return x, grad
    return _pad(x, size, padding_mode, align_corners, grad)


# ---- one dim's taps: (position, weight, d weight, d² weight), numbers standing for constants
def _cubic_weights(t):
    """``get_cubic_upsample_coefficients`` at the four taps around a point ``t`` past the second,
    with the first and second derivatives in the pixel coordinate (d/dt, as t grows with it)."""
    a = CUBIC_A

    def near(x):       # |x| <= 1: ((a+2)x - (a+3))x² + 1, and its derivatives
        return (call("add.Scalar", call("mul.Tensor", call("mul.Tensor", call("sub.Scalar", call(
                    "mul.Scalar", x, a + 2), a + 3), x), x), 1),
                call("mul.Tensor", call("sub.Scalar", call("mul.Scalar", x, 3 * (a + 2)), 2 * (a + 3)), x),
                call("sub.Scalar", call("mul.Scalar", x, 6 * (a + 2)), 2 * (a + 3)))

    def far(x):        # 1 < |x| < 2: ((ax - 5a)x + 8a)x - 4a
        return (call("sub.Scalar", call("mul.Tensor", call("add.Scalar", call("mul.Tensor", call("sub.Scalar", call(
                    "mul.Scalar", x, a), 5 * a), x), 8 * a), x), 4 * a),
                call("add.Scalar", call("mul.Tensor", call("sub.Scalar", call("mul.Scalar", x, 3 * a), 10 * a), x),
                     8 * a),
                call("sub.Scalar", call("mul.Scalar", x, 6 * a), 10 * a))
    rest = call("rsub.Scalar", t, 1)
    outer, inner = far(call("add.Scalar", t, 1)), near(t)
    mirrored_inner, mirrored_outer = near(rest), far(call("add.Scalar", rest, 1))
    # the last two are functions of 1 - t: their first derivative changes sign
    flip = [(w, call("neg", d1), d2) for w, d1, d2 in (mirrored_inner, mirrored_outer)]
    return [outer, inner, *flip]


def _dim_taps(x, mode):
    if mode == NEAREST:                # std::nearbyint: halves go to the even neighbour
        return [(call("round", x), 1, 0, 0)]
    low = call("floor", x)
    t = call("sub.Tensor", x, low)
    if mode == BILINEAR:
        return [(low, call("rsub.Scalar", t, 1), -1, 0), (call("add.Scalar", low, 1), t, 1, 0)]
    return [(call("add.Scalar", low, j - 1), *w) for j, w in enumerate(_cubic_weights(t))]


# ---- the points' taps over all dims
def _layout(input, grid, mode, padding_mode, align_corners):
    """Every tap of every output point (flattened to L points): [(flat index expanded over the
    channels, outside mask, per-dim (weight, d weight, d² weight))], the dims in grid order
    (x, y[, z]); and d(pixel)/d(grid) per dim. Taps are listed with the last grid coordinate
    outermost, x innermost, as torch's loops name them (nw, ne, sw, se; then the bottom plane's).
    The weights are (N, 1, L), ready to scale the (N, C, L) values read."""
    (n, c), sizes = input.shape[:2], list(input.shape[2:])[::-1]   # sizes in grid order: W, H[, D]
    flat = call("reshape", grid, [n, -1, len(sizes)])
    coords = [_source_index(call("select.int", flat, 2, d), size, padding_mode, align_corners, mode)
              for d, size in enumerate(sizes)]
    # A point's taps are the product of its dims' taps, so each dim's positions are found once
    # (not once per combination: bicubic's 16 taps share 4 positions per dim).
    per_dim, stride = [], 1
    for (x, _), size in zip(coords, sizes):
        per_dim.append(_dim_reads(call("unsqueeze", x, 1), size, stride, mode, padding_mode, align_corners))
        stride *= size
    taps = []
    for choice in itertools.product(*per_dim[::-1]):
        (index, inside, w), *rest = choice[::-1]
        weights = [w]
        for offset, ok, w in rest:
            index, inside = call("add.Tensor", index, offset), call("logical_and", inside, ok)
            weights.append(w)
        taps.append((call("expand", index, [n, c, index.shape[-1]]), call("logical_not", inside), weights))
    return taps, [m for _, m in coords]


def _dim_reads(x, size, stride, mode, padding_mode, align_corners):
    """One dim's taps for (N, 1, L) pixel coordinates ``x``: [(offset of the tap's pixel in the
    flattened plane, whether it lies inside along this dim, (weight, d weight, d² weight))].
    Outside, a tap reads 0 and takes no gradient; its offset is clamped so the read stays in the
    storage. The taps' positions are stacked so each step runs once for all of them."""
    taps = _dim_taps(x, mode)
    p = call("stack", [t[0] for t in taps])
    if mode == BICUBIC:     # bicubic pads each tap it reads (``get_value_bounded``)
        p = _pad(p, size, padding_mode, align_corners)[0]
    ok = call("logical_and", call("ge.Scalar", p, 0), call("le.Scalar", p, size - 1))
    offset = call("mul.Scalar", call("_to_copy", call("clamp", p, 0, size - 1), dtype=st.int64), stride)
    return list(zip(call("unbind.int", offset), call("unbind.int", ok), [tuple(t[1:]) for t in taps]))


# ---- weights as products of the dims' factors
def _product(factors):
    """A product of per-point tensors and numbers: None for one, 0 for zero."""
    out, number = None, 1
    for f in factors:
        if isinstance(f, (int, float)):
            number *= f
        else:
            out = f if out is None else call("mul.Tensor", out, f)
    if number == 0:
        return 0
    if out is None:
        return None if number == 1 else number
    return out if number == 1 else call("mul.Scalar", out, number)


def _weight(w):
    """The tap's weight: the product of its dims' weights (x first, as torch multiplies them)."""
    return _product([f[0] for f in w])


def _slope(w, d):
    """d weight / d (pixel coordinate of dim d)."""
    return _product([f[1] if e == d else f[0] for e, f in enumerate(w)])


def _curvature(w, d, e):
    """d² weight / d(dim d) d(dim e)."""
    if d == e:
        return _product([f[2] if k == d else f[0] for k, f in enumerate(w)])
    return _product([f[1] if k in (d, e) else f[0] for k, f in enumerate(w)])


def _sum(terms):
    """Sum of per-point tensors and numbers (0 when nothing is left)."""
    out, number = None, 0
    for t in terms:
        if isinstance(t, (int, float)):
            number += t
        else:
            out = t if out is None else call("add.Tensor", out, t)
    if out is None:
        return number
    return out if number == 0 else call("add.Scalar", out, number)


def _apply(values, weight):
    """(N, C, L) values times a per-point weight (N, 1, L), a number or None (one); None for zero."""
    if weight is None:
        return values
    if isinstance(weight, (int, float)):
        return None if weight == 0 else call("mul.Scalar", values, weight)
    return call("mul.Tensor", values, weight)


def _accumulate(total, part):
    if part is None:
        return total
    return part if total is None else call("add.Tensor", total, part)


# ---- reads and scatters over the flattened planes
def _planes(x):
    return call("reshape", x, [x.shape[0], x.shape[1], -1])


def _read(planes, index, outside):
    """The value of every channel at each point's tap: (N, C, L), zero outside the image."""
    return call("masked_fill.Scalar", call("gather", planes, 2, index), outside, 0)


def _interpolate(planes, taps, weigh):
    """Σ over taps of weigh(tap weights) · the tap's values: the forward's sum in tap order."""
    out = None
    for index, outside, w in taps:
        out = _accumulate(out, _apply(_read(planes, index, outside), weigh(w)))
    return out


def _scatter(g, taps, weigh, like):
    """The transpose of ``_interpolate``: each point's (N, C, L) gradient times weigh(tap weights),
    added into the pixels the tap read."""
    n, c = like.shape[:2]
    acc = call("zeros", [n, c, math.prod(like.shape[2:])], dtype=like.dtype, device=like.device)
    for index, outside, w in taps:
        part = _apply(g, weigh(w))
        if part is None:
            continue
        call("scatter_add_", acc, 2, index, call("masked_fill.Scalar", part, outside, 0))
    return call("view", acc, list(like.shape))


def _per_coordinate(g, values_for, multipliers, grid):
    """A grid-shaped gradient: for each coordinate d, Σ_c g · values_for(d), times d(pixel)/d(grid)."""
    parts = []
    for d, mult in enumerate(multipliers):
        v = values_for(d)
        s = call("zeros_like", mult) if v is None else call("sum.dim_IntList", call("mul.Tensor", v, g), [1])
        parts.append(call("reshape", call("mul.Tensor", s, mult), list(grid.shape[:-1])))
    # each coordinate's part takes the grid's shape before the stack, so the result is the
    # stack itself (torch's node for it: StackBackward0), not a view of one
    return call("stack", parts, -1)


# ---- the CPU loops (``grid_sampler_2d_cpu``, ``grid_sampler_3d_cpu`` and their backwards)
def _runs_loops(input):
    """The CPU has loops for float32 and float64; other devices (the CUDA simulator, meta) and
    the 16-bit floats compose the sampler from operators."""
    return input.device.type == "cpu" and input.dtype in (st.float32, st.float64)


def _cpu_taps(input, grid, mode, padding_mode, align_corners):
    """Every point's taps per grid dim (see ``cpu/grid_sampler.py``), and the loop module."""
    kernels = loops(input.device, "grid_sampler")
    sizes = list(input.shape[2:])[::-1]                  # grid order: W, H[, D]
    points, dims = math.prod(grid.shape[:-1]), len(sizes)
    taps = 1 if mode == NEAREST else 2 if mode == BILINEAR else 4
    dtype = input.dtype.numpy_type
    cube = (points, dims, taps)
    layout = (np.empty(cube, np.int64), np.empty(cube, np.bool_), np.empty(cube, dtype), np.empty(cube, dtype),
              np.empty((points, dims), dtype))
    pick(kernels.grid_taps, (points, dims))(
        contiguous(grid)._flat_buffer(), np.array(sizes, np.int64),
        kernels.dim_constants(sizes, align_corners, dtype), kernels.constants(dtype), mode, padding_mode,
        bool(align_corners), *layout)
    return kernels, taps, layout


def _sample_cpu(input, grid, mode, padding_mode, align_corners):
    (n, c), plane, points = input.shape[:2], math.prod(input.shape[2:]), math.prod(grid.shape[1:-1])
    kernels, taps, (offsets, inside, weights, _, _) = _cpu_taps(input, grid, mode, padding_mode, align_corners)
    out = call("empty.memory_format", [n, c, *grid.shape[1:-1]], dtype=input.dtype, device=input.device)
    pick(kernels.grid_sample_forward, (n, c, points, taps ** len(input.shape[2:])))(
        out._flat_buffer(), contiguous(input)._flat_buffer(), c, plane, points, taps, offsets, inside, weights)
    return out


def _sample_backward_cpu(grad_output, input, grid, mode, padding_mode, align_corners, output_mask):
    """As torch's CPU kernels: grad_input only where ``output_mask`` asks for it, grad_grid always
    (zeros for nearest, whose reads are piecewise constant in the grid)."""
    (n, c), plane, points = input.shape[:2], math.prod(input.shape[2:]), math.prod(grid.shape[1:-1])
    kernels, taps, layout = _cpu_taps(input, grid, mode, padding_mode, align_corners)
    grad_input = (call("zeros", list(input.shape), dtype=input.dtype, device=input.device)
                  if output_mask[0] else None)
    want_grid = mode != NEAREST
    grad_grid = call("empty.memory_format" if want_grid else "zeros", list(grid.shape), dtype=grid.dtype,
                     device=grid.device)
    pick(kernels.grid_sample_backward, (n, c, points, taps ** len(input.shape[2:])))(
        np.empty(0, input.dtype.numpy_type) if grad_input is None else grad_input._flat_buffer(),
        grad_grid._flat_buffer(), contiguous(grad_output)._flat_buffer(), contiguous(input)._flat_buffer(),
        c, plane, points, taps, grad_input is not None, want_grid, *layout)
    return grad_input, grad_grid


# ---- the operators
def _sample(input, grid, mode, padding_mode, align_corners, dims):
    """``grid_sampler_{2,3}d``: output[n, c, *p] = input[n, c] read at grid[n, *p]."""
    _check(input, grid, mode, dims)
    if _runs_loops(input):
        return _sample_cpu(input, grid, mode, padding_mode, align_corners)
    taps, _ = _layout(input, grid, mode, padding_mode, align_corners)
    out = _interpolate(_planes(input), taps, _weight)
    return call("view", out, [*input.shape[:2], *grid.shape[1:-1]])


def _sample_backward(grad_output, input, grid, mode, padding_mode, align_corners, output_mask, dims):
    """(grad_input, grad_grid). The composition computes each only where ``output_mask`` asks for
    it; the CPU loops follow the mask for grad_input only and always return grad_grid, as torch's
    CPU kernels do."""
    _check(input, grid, mode, dims)
    if _runs_loops(input):
        return _sample_backward_cpu(grad_output, input, grid, mode, padding_mode, align_corners, output_mask)
    g = _planes(grad_output)
    taps, multipliers = _layout(input, grid, mode, padding_mode, align_corners)
    grad_input = _scatter(g, taps, _weight, input) if output_mask[0] else None
    grad_grid = None
    if output_mask[1]:
        if mode == NEAREST:           # reads are piecewise constant in the grid
            grad_grid = call("zeros", list(grid.shape), dtype=grid.dtype, device=grid.device)
        else:
            planes = _planes(input)
            grad_grid = _per_coordinate(g, lambda d: _interpolate(planes, taps, lambda w: _slope(w, d)),
                                        multipliers, grid)
    return grad_input, grad_grid


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sample(input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sample(input, grid, interpolation_mode, padding_mode, align_corners, 3)


def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                             output_mask):
    return _sample_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                            output_mask, 2)


def grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                             output_mask):
    return _sample_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                            output_mask, 3)


def grid_sampler_double_backward(gg_input, gg_grid, grad_output, input, grid, mode, padding_mode, align_corners,
                                 output_mask):
    """The derivatives of (grad_input, grad_grid) in (grad_output, input, grid), given the
    gradients ``gg_input`` and ``gg_grid`` of those two results (either may be None). With
    G_d = gg_grid_d · d(pixel_d)/d(grid_d), each tap's "mixed" weight Σ_d G_d ∂w/∂d carries the
    grid's part; d(pixel)/d(grid) is piecewise constant, so its own derivative is 0."""
    taps, multipliers = _layout(input, grid, mode, padding_mode, align_corners)
    dims, g = len(multipliers), _planes(grad_output)
    planes, gg_planes = _planes(input), None if gg_input is None else _planes(gg_input)
    pull = None
    if gg_grid is not None and mode != NEAREST:
        flat = call("reshape", gg_grid, [grid.shape[0], -1, dims])
        pull = [call("unsqueeze", call("mul.Tensor", call("select.int", flat, 2, d), m), 1)
                for d, m in enumerate(multipliers)]

    def mixed(w):
        return _sum(_apply_number(p, _slope(w, d)) for d, p in enumerate(pull))
    d_grad_output = d_input = d_grid = None
    if output_mask[0] and (gg_planes is not None or pull is not None):
        d_grad_output = None if gg_planes is None else _interpolate(gg_planes, taps, _weight)
        if pull is not None:
            d_grad_output = _accumulate(d_grad_output, _interpolate(planes, taps, mixed))
        d_grad_output = call("view", d_grad_output, list(grad_output.shape))
    if output_mask[1] and pull is not None:
        d_input = _scatter(g, taps, mixed, input)
    if output_mask[2] and (gg_planes is not None or pull is not None):
        d_grid = _grid_gradient(gg_input, pull, g, planes, taps, multipliers, grad_output, grid, mode, padding_mode,
                                align_corners)
    return d_grad_output, d_input, d_grid


def _grid_gradient(gg_input, pull, g, planes, taps, multipliers, grad_output, grid, mode, padding_mode,
                   align_corners):
    """The grid's part of the double backward. gg_input's term is the sampler's own grid gradient
    with gg_input sampled (torch's formula calls the backward operator for it, so it hangs from
    that node; zeros for nearest, whose samples do not move with the grid); gg_grid's term bends
    the weights a second time, one coordinate pair at a time, stacked per coordinate."""
    d_grid = None
    if gg_input is not None:
        d_grid = call(f"grid_sampler_{len(multipliers)}d_backward", grad_output, gg_input, grid, mode, padding_mode,
                      align_corners, [False, True])[1]
    if pull is not None:
        def bent(e):
            return _interpolate(planes, taps, lambda w: _sum(_apply_number(p, _curvature(w, d, e))
                                                             for d, p in enumerate(pull)))
        d_grid = _accumulate(d_grid, _per_coordinate(g, bent, multipliers, grid))
    return d_grid


def _apply_number(p, factor):
    """A per-point tensor p times a factor that may be a tensor, a number or None (one)."""
    if factor is None:
        return p
    if isinstance(factor, (int, float)):
        return 0 if factor == 0 else call("mul.Scalar", p, factor)
    return call("mul.Tensor", p, factor)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler``, CompositeImplicitAutograd: 4-D input to the 2-d operator, else the 3-d one."""
    if input.dim() == 4:
        return call("grid_sampler_2d", input, grid, interpolation_mode, padding_mode, align_corners)
    return call("grid_sampler_3d", input, grid, interpolation_mode, padding_mode, align_corners)


# ---- affine grids (``AffineGridGenerator.cpp``)
def _base_grid(theta, size, align_corners):
    """(N, *spatial, k+1): each output pixel's (x, y[, z], 1), each coordinate evenly spaced in
    [-1, 1] along its dim (pulled in by (steps-1)/steps without align_corners, so the points sit
    at pixel centres); x runs along the last dim."""
    spatial = list(size[2:])
    k = len(spatial)
    base = call("empty.memory_format", [size[0], *spatial, k + 1], dtype=theta.dtype, device=theta.device)
    for i in range(k):
        line = call("reshape", _linspace(theta, spatial[k - 1 - i], align_corners), [-1] + [1] * i)
        call("copy_", call("select.int", base, -1, i), line)
    call("fill_.Scalar", call("select.int", base, -1, k), 1)
    return base


def _linspace(theta, steps, align_corners):
    if steps <= 1:
        return call("full", [], 0.0, dtype=theta.dtype, device=theta.device)
    line = call("linspace", -1, 1, steps, dtype=theta.dtype, device=theta.device)
    if not align_corners:
        line = call("div.Scalar", call("mul.Scalar", line, steps - 1), steps)
    return line


def _check_affine(size):
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return len(size) - 2, size[0], math.prod(size[2:])


def affine_grid_generator(theta, size, align_corners):
    """``affine_grid_generator``: grid[n, ...] = theta[n] @ (x, y[, z], 1), one batched product."""
    k, n, points = _check_affine(size)
    base = call("view", _base_grid(theta, size, align_corners), [n, points, k + 1])
    grid = call("bmm", base, call("transpose.int", theta, 1, 2))
    return call("view", grid, [n, *size[2:], k])


def affine_grid_generator_backward(grad, size, align_corners):
    """``affine_grid_generator_backward``, CompositeImplicitAutograd: (base^T @ grad)^T."""
    k, n, points = _check_affine(size)
    base = call("view", _base_grid(grad, size, align_corners), [n, points, k + 1])
    grad_theta = call("bmm", call("transpose.int", base, 1, 2), call("reshape", grad, [n, points, k]))
    return call("transpose.int", grad_theta, 1, 2)
