"""Sampling an image at given points (``aten/src/ATen/native/GridSampler.cpp``, the index helpers of
``GridSampler.h``, the vectorised loops of ``cpu/GridSamplerKernel.cpp``) and the affine grids
that feed it (``AffineGridGenerator.cpp``).

Unlike resizing, where the positions read depend only on sizes, here they are data (the grid,
which may itself want a gradient). So each step is a tensor operation over all output points at
once, on whichever device the tensors live: the normalised coordinates become pixel coordinates
(with torch's padding rule folded in and its derivative kept), the corner pixels are gathered
from the flattened planes (corners outside the image read zero), and the weights combine them in
the order torch's loop does. The backward adds each output gradient into the corners it read
(``scatter_add_``) and, for the grid, differentiates the weights.
"""
import math

from ...c10 import scalar_type as st
from ..dispatcher import call

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


# ---- checks (``check_grid_sampler_common``, ``check_grid_sampler_2d``)
def _check(input, grid, interpolation_mode):
    if input.dtype != grid.dtype:       # torch's bare dtype check on grid fires first
        raise RuntimeError(f"expected scalar type {input.dtype.torch_name.capitalize()} but found "
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
    if input.dim() != 4 or grid.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"{sizes}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_2d_cpu" not implemented for '
                                  f"'{input.dtype.torch_name.capitalize()}'")
    if interpolation_mode == BICUBIC:
        raise NotImplementedError("internals' grid_sampler_2d has no bicubic mode")


# ---- coordinates (``grid_sampler_compute_source_index_set_grad``)
def _clip(x, size, grad):
    """``clip_coordinates_set_grad``: clamp to [0, size-1]; the derivative is 0 at and past the ends."""
    inside = call("logical_and", call("gt.Scalar", x, 0), call("lt.Scalar", x, size - 1))
    return call("clamp", x, 0, size - 1), call("mul.Tensor", grad, call("_to_copy", inside, dtype=x.dtype))


def _reflect(x, twice_low, twice_high, grad):
    """``reflect_coordinates_set_grad``: fold x into [low, high] as a mirror would, the sign of the
    derivative flipping with each reflection."""
    if twice_low == twice_high:
        return call("zeros_like", x), call("zeros_like", x)
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
    return folded, call("mul.Tensor", grad, call("where.self", even, sign, call("neg", sign)))


def _source_index(coord, size, padding_mode, align_corners):
    """A normalised coordinate in [-1, 1] as a pixel coordinate, and d(pixel)/d(coord)."""
    scale = (size - 1) / 2 if align_corners else size / 2
    x = call("mul.Scalar", call("add.Scalar", coord, 1), scale)
    if not align_corners:
        x = call("sub.Scalar", x, 0.5)
    grad = call("full", list(coord.shape), scale, dtype=coord.dtype, device=coord.device)
    if padding_mode == BORDER:
        x, grad = _clip(x, size, grad)
    elif padding_mode == REFLECTION:
        bounds = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x, grad = _reflect(x, *bounds, grad)
        x, grad = _clip(x, size, grad)
    return x, grad


# ---- corners
def _corner(x, y, height, width):
    """Flat indices of pixel (x, y) in an (H, W) plane, and whether it lies inside (else it reads 0)."""
    inside = call("logical_and", call("logical_and", call("ge.Scalar", x, 0), call("le.Scalar", x, width - 1)),
                  call("logical_and", call("ge.Scalar", y, 0), call("le.Scalar", y, height - 1)))
    xi = call("_to_copy", call("clamp", x, 0, width - 1), dtype=st.int64)
    yi = call("_to_copy", call("clamp", y, 0, height - 1), dtype=st.int64)
    return call("add.Tensor", call("mul.Scalar", yi, width), xi), inside


def _read(planes, index, inside):
    """The value of every channel at each point's corner: (N, C, L), zero outside the image."""
    n, c, _ = planes.shape
    spread = call("expand", call("unsqueeze", index, 1), [n, c, index.shape[-1]])
    values = call("gather", planes, 2, spread)
    return call("masked_fill.Scalar", values, call("unsqueeze", call("logical_not", inside), 1), 0)


def _layout(input, grid, interpolation_mode, padding_mode, align_corners):
    """Pixel coordinates of every output point (flattened to L = H_out·W_out), their derivatives,
    and the corners read: [(flat index, inside mask, weight or None)], plus the bilinear pieces
    the grid gradient needs."""
    n, _, height, width = input.shape
    points = grid.shape[1] * grid.shape[2]
    flat = call("reshape", grid, [n, points, 2])
    ix, gx_mult = _source_index(call("select.int", flat, 2, 0), width, padding_mode, align_corners)
    iy, gy_mult = _source_index(call("select.int", flat, 2, 1), height, padding_mode, align_corners)
    if interpolation_mode == NEAREST:      # std::nearbyint: halves go to the even neighbour
        index, inside = _corner(call("round", ix), call("round", iy), height, width)
        return [(index, inside, None)], None
    x_w, y_n = call("floor", ix), call("floor", iy)
    x_e, y_s = call("add.Scalar", x_w, 1), call("add.Scalar", y_n, 1)
    w, n_ = call("sub.Tensor", ix, x_w), call("sub.Tensor", iy, y_n)
    e, s = call("rsub.Scalar", w, 1), call("rsub.Scalar", n_, 1)
    corners = [(x_w, y_n, call("mul.Tensor", s, e)), (x_e, y_n, call("mul.Tensor", s, w)),
               (x_w, y_s, call("mul.Tensor", n_, e)), (x_e, y_s, call("mul.Tensor", n_, w))]
    reads = [(*_corner(x, y, height, width), weight) for x, y, weight in corners]
    return reads, (w, e, n_, s, gx_mult, gy_mult)


# ---- the operators
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler_2d``: output[n, c, h, w] = input[n, c] read at grid[n, h, w] (x, y)."""
    _check(input, grid, interpolation_mode)
    n, c, height, width = input.shape
    planes = call("reshape", input, [n, c, height * width])
    reads, _ = _layout(input, grid, interpolation_mode, padding_mode, align_corners)
    out = None
    for index, inside, weight in reads:    # nw, ne, sw, se: summed in that order
        value = _read(planes, index, inside)
        if weight is not None:
            value = call("mul.Tensor", value, call("unsqueeze", weight, 1))
        out = value if out is None else call("add.Tensor", out, value)
    return call("view", out, [n, c, grid.shape[1], grid.shape[2]])


def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                             output_mask):
    """(grad_input, grad_grid), each only where ``output_mask`` asks for it."""
    _check(input, grid, interpolation_mode)
    n, c, height, width = input.shape
    g = call("reshape", grad_output, [n, c, -1])
    reads, pieces = _layout(input, grid, interpolation_mode, padding_mode, align_corners)
    grad_input = grad_grid = None
    if output_mask[0]:
        acc = call("zeros", [n, c, height * width], dtype=input.dtype, device=input.device)
        for index, inside, weight in reads:
            part = g if weight is None else call("mul.Tensor", g, call("unsqueeze", weight, 1))
            part = call("masked_fill.Scalar", part, call("unsqueeze", call("logical_not", inside), 1), 0)
            call("scatter_add_", acc, 2, call("expand", call("unsqueeze", index, 1), [n, c, index.shape[-1]]), part)
        grad_input = call("view", acc, list(input.shape))
    if output_mask[1]:
        grad_grid = _grid_gradient(input, grid, g, reads, pieces)
    return grad_input, grad_grid


def _grid_gradient(input, grid, g, reads, pieces):
    """d out / d (x, y): the bilinear weights' derivatives times the corner values, summed over
    channels, times d(pixel)/d(grid). Nearest reads are piecewise constant: zero."""
    if pieces is None:
        return call("zeros", list(grid.shape), dtype=grid.dtype, device=grid.device)
    n, c, height, width = input.shape
    planes = call("reshape", input, [n, c, height * width])
    nw, ne, sw, se = (_read(planes, index, inside) for index, inside, _ in reads)
    w, e, n_, s, gx_mult, gy_mult = (call("unsqueeze", p, 1) for p in pieces)
    gx = call("add.Tensor", call("mul.Tensor", call("sub.Tensor", ne, nw), s),
              call("mul.Tensor", call("sub.Tensor", se, sw), n_))
    gy = call("add.Tensor", call("mul.Tensor", call("sub.Tensor", sw, nw), e),
              call("mul.Tensor", call("sub.Tensor", se, ne), w))
    gx = call("mul.Tensor", call("sum.dim_IntList", call("mul.Tensor", gx, g), [1]), call("squeeze.dim", gx_mult, 1))
    gy = call("mul.Tensor", call("sum.dim_IntList", call("mul.Tensor", gy, g), [1]), call("squeeze.dim", gy_mult, 1))
    return call("view", call("stack", [gx, gy], -1), list(grid.shape))


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler``, CompositeImplicitAutograd: the checks, then the 2-d operator."""
    _check(input, grid, interpolation_mode)
    return call("grid_sampler_2d", input, grid, interpolation_mode, padding_mode, align_corners)


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
