"""CPU loops of grid sampling (``aten/src/ATen/native/GridSampler.cpp``'s 3-d loops and
``_grid_sampler_2d_cpu_fallback``, ``cpu/GridSamplerKernel.cpp``'s 2-d ones), over contiguous
buffers the host laid out: the input as (N, C, P) with P its pixels, the grid as (N, L, dims)
with L its points, the output and its gradient as (N, C, L).

Three passes share one picture. ``grid_taps`` turns each point's coordinates into its taps: per
grid dim (x, y[, z]), K positions along that dim (1 nearest, 2 bilinear, 4 bicubic), each an
offset in the flattened plane, whether it lies inside, its 1-d weight and that weight's
derivative in the pixel coordinate, and d(pixel)/d(grid) for the dim. A point then reads the
product of its dims' taps (x fastest, as torch names them nw, ne, sw, se), weighted by the
product of their weights; a tap outside the image reads 0. All arithmetic runs in the data's
own precision: the host passes the constants as arrays of the data's dtype, since a bare literal
would widen float32 arithmetic to float64.
"""
import numpy as np
from numba import prange
from numba.extending import register_jitable

from .parallel_for import parallel_loop

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


# Numbers the loops need in the data's precision, made on the host (``constants``): a bare
# literal would make float32 arithmetic float64. Per dim, the host also gives (``dim_constants``):
DIM_SCALE, DIM_HIGH, DIM_LOW, DIM_SPAN = 0, 1, 2, 3   # (size-1)/2 or size/2; size-1; the mirrors
ONE, HALF, A2, A3, A2X3, A3X2, A, A5, A8, A4, AX3, A10 = range(12)
CUBIC_A = -0.75      # the cubic convolution constant torch uses (``get_cubic_upsample_coefficients``)


def constants(dtype):
    """ONE, HALF and the cubic kernel's coefficients (a+2, a+3, 3(a+2), 2(a+3), a, 5a, 8a, 4a,
    3a, 10a), as ``dtype`` numbers."""
    a = CUBIC_A
    return np.array([1, 0.5, a + 2, a + 3, 3 * (a + 2), 2 * (a + 3), a, 5 * a, 8 * a, 4 * a, 3 * a, 10 * a],
                    dtype=dtype)


def dim_constants(sizes, align_corners, dtype):
    """Per grid dim (sizes in grid order W, H[, D]): the unnormalising scale, the last pixel, and
    where the reflection's mirrors stand (low, and the span between them)."""
    rows = []
    for size in sizes:
        scale = (size - 1) / 2 if align_corners else size / 2
        low, span = (0, size - 1) if align_corners else (-0.5, size)
        rows.append((scale, size - 1, low, span))
    return np.array(rows, dtype=dtype).reshape(len(sizes), 4)


# ---- coordinates (``GridSampler.h``: ``clip_coordinates_set_grad``, ``reflect_coordinates_set_grad``)
@register_jitable
def clip(x, high, one):
    """x clamped to [0, high] (NaN stays NaN, as ``clamp`` keeps it), and the factor its
    derivative takes: 1 strictly inside, 0 at and past the ends."""
    zero = one - one
    factor = one if zero < x < high else zero
    if x < zero:
        return zero, factor
    if x > high:
        return high, factor
    return x, factor


@register_jitable
def reflect(x, low, span, one):
    """x folded into [low, low + span] as by mirrors at both ends, and the sign of its
    derivative, which flips with each reflection (no room between the mirrors: 0)."""
    zero = one - one
    if span == zero:
        return zero, zero
    shifted = x - low
    sign = -one if shifted < zero else one
    shifted = abs(shifted)
    extra = np.fmod(shifted, span)
    flips = np.floor(shifted / span)
    if np.fmod(flips, one + one) == zero:
        return extra + low, sign
    return (span - extra) + low, -sign


@register_jitable
def pad(x, dim, padding_mode, k):
    """``compute_coordinates``: the coordinate folded by the padding rule (zeros leaves it: reads
    outside give 0), and the factor its derivative takes."""
    one = k[ONE]
    if padding_mode == BORDER:
        return clip(x, dim[DIM_HIGH], one)
    if padding_mode == REFLECTION:
        x, sign = reflect(x, dim[DIM_LOW], dim[DIM_SPAN], one)
        x, factor = clip(x, dim[DIM_HIGH], one)
        return x, sign * factor
    return x, one


# ---- one dim's taps (``get_cubic_upsample_coefficients`` and the bilinear weights)
@register_jitable
def cubic_near(x, k):
    """The cubic convolution kernel for |x| <= 1, ((a+2)x - (a+3))x² + 1, and its derivative."""
    return (x * k[A2] - k[A3]) * x * x + k[ONE], (x * k[A2X3] - k[A3X2]) * x


@register_jitable
def cubic_far(x, k):
    """The kernel for 1 < |x| < 2, ((ax - 5a)x + 8a)x - 4a, and its derivative."""
    return ((x * k[A] - k[A5]) * x + k[A8]) * x - k[A4], (x * k[AX3] - k[A10]) * x + k[A8]


@register_jitable
def store_tap(point, d, j, p, high, stride, weight, slope, offsets, inside, weights, slopes):
    """Tap j of dim d at pixel coordinate p: inside when 0 <= p <= high (NaN is not)."""
    ok = p >= 0 and p <= high
    offsets[point, d, j] = int(p) * stride if ok else 0
    inside[point, d, j] = ok
    weights[point, d, j] = weight
    slopes[point, d, j] = slope


@register_jitable
def dim_taps(point, d, x, dim, stride, mode, padding_mode, k, offsets, inside, weights, slopes):
    """Dim d's taps around pixel coordinate x (already folded by the padding rule, except for
    bicubic, which folds each tap it reads, as ``get_value_bounded`` does)."""
    one, high = k[ONE], dim[DIM_HIGH]
    if mode == NEAREST:        # ``std::nearbyint``: halves go to the even neighbour
        store_tap(point, d, 0, np.rint(x), high, stride, one, one - one, offsets, inside, weights, slopes)
        return
    low = np.floor(x)
    t = x - low
    if mode == BILINEAR:
        store_tap(point, d, 0, low, high, stride, one - t, -one, offsets, inside, weights, slopes)
        store_tap(point, d, 1, low + one, high, stride, t, one, offsets, inside, weights, slopes)
        return
    rest = one - t
    w, s = cubic_far(t + one, k)
    store_tap(point, d, 0, pad(low - one, dim, padding_mode, k)[0], high, stride, w, s, offsets, inside, weights,
              slopes)
    w, s = cubic_near(t, k)
    store_tap(point, d, 1, pad(low, dim, padding_mode, k)[0], high, stride, w, s, offsets, inside, weights, slopes)
    # the last two are functions of 1 - t: their derivative changes sign
    w, s = cubic_near(rest, k)
    store_tap(point, d, 2, pad(low + one, dim, padding_mode, k)[0], high, stride, w, -s, offsets, inside, weights,
              slopes)
    w, s = cubic_far(rest + one, k)
    store_tap(point, d, 3, pad(low + one + one, dim, padding_mode, k)[0], high, stride, w, -s, offsets, inside,
              weights, slopes)


@parallel_loop()
def grid_taps(grid, sizes, dim_consts, k, mode, padding_mode, align_corners, offsets, inside, weights, slopes,
              multipliers):
    """Every point's taps per dim, and d(pixel)/d(grid). ``sizes`` in grid order (W, H[, D]).
    A coordinate c in [-1, 1] becomes (c + 1)·scale, less 0.5 without align_corners, as the
    vectorised ``ComputeLocationBase`` computes it."""
    points, dims = multipliers.shape
    for point in prange(points):
        stride = 1
        for d in range(dims):
            dim = dim_consts[d]
            x = (grid[point * dims + d] + k[ONE]) * dim[DIM_SCALE]
            if not align_corners:
                x = x - k[HALF]
            factor = k[ONE]
            if mode != BICUBIC:
                x, factor = pad(x, dim, padding_mode, k)
            multipliers[point, d] = dim[DIM_SCALE] * factor
            dim_taps(point, d, x, dim, stride, mode, padding_mode, k, offsets, inside, weights, slopes)
            stride *= sizes[d]


@register_jitable
def combination(point, t, taps, dims, offsets, inside, weights):
    """Tap combination t of a point (x's tap fastest): its offset in the plane, whether every
    dim's tap lies inside, and its weight, the product of the dims' weights, x's first."""
    k = t % taps
    offset, ok, w = offsets[point, 0, k], inside[point, 0, k], weights[point, 0, k]
    for d in range(1, dims):
        t //= taps
        k = t % taps
        offset += offsets[point, d, k]
        ok = ok and inside[point, d, k]
        w = w * weights[point, d, k]
    return offset, ok, w


@register_jitable
def slope(point, t, taps, dims, e, weights, slopes):
    """d(weight of combination t)/d(pixel coordinate of dim e): dim e's factor replaced by its
    derivative."""
    w = weights[point, 0, 0]
    for d in range(dims):
        k = t % taps
        t //= taps
        f = slopes[point, d, k] if d == e else weights[point, d, k]
        w = f if d == 0 else w * f
    return w


@parallel_loop()
def grid_sample_forward(out, inp, C, P, L, taps, offsets, inside, weights):
    """out[n, c, l] = Σ over the point's tap combinations of value · weight, a tap outside the
    image reading 0 (its weight still multiplies it, so a NaN weight shows, as torch's masked
    gather does)."""
    dims = offsets.shape[1]
    combos = taps ** dims
    zero = out.dtype.type(0)
    for point in prange(offsets.shape[0]):
        n, q = point // L, point % L
        for c in range(C):
            plane = (n * C + c) * P
            acc = zero
            for t in range(combos):
                offset, ok, w = combination(point, t, taps, dims, offsets, inside, weights)
                term = (inp[plane + offset] if ok else zero) * w
                acc = term if t == 0 else acc + term
            out[(n * C + c) * L + q] = acc


@parallel_loop()
def grid_sample_backward(grad_input, grad_grid, grad_output, inp, C, P, L, taps, want_input, want_grid, offsets,
                         inside, weights, slopes, multipliers):
    """One task per image: its points add their gradients into that image's planes only, so
    tasks never race. grad_input: each point's gradient times each tap's weight, added into the
    pixel the tap read (points in order, as torch's loop adds them). grad_grid, per dim d:
    Σ_c grad · (Σ_taps value · d weight/d pixel_d), times d(pixel)/d(grid)."""
    dims = offsets.shape[1]
    combos = taps ** dims
    zero = inp.dtype.type(0)
    for n in prange(offsets.shape[0] // L):
        for q in range(L):
            point = n * L + q
            if want_input:
                for c in range(C):
                    g = grad_output[(n * C + c) * L + q]
                    for t in range(combos):
                        offset, ok, w = combination(point, t, taps, dims, offsets, inside, weights)
                        if ok:
                            grad_input[(n * C + c) * P + offset] += g * w
            if want_grid:
                for e in range(dims):
                    total = zero
                    for c in range(C):
                        plane = (n * C + c) * P
                        acc = zero
                        for t in range(combos):
                            offset, ok, w = combination(point, t, taps, dims, offsets, inside, weights)
                            term = (inp[plane + offset] if ok else zero) * slope(point, t, taps, dims, e, weights,
                                                                                  slopes)
                            acc = term if t == 0 else acc + term
                        total += acc * grad_output[(n * C + c) * L + q]
                    grad_grid[point * dims + e] = total * multipliers[point, e]
