"""CPU max and average pooling (``aten/src/ATen/native/cpu/MaxPoolKernel.cpp``), over contiguous (planes, H,
W) buffers the host sized from the checked geometry: every index below is inside its buffer."""
from numba import njit, prange

from ..pooling import avg_pool_backward_plane, avg_pool_output


@njit(parallel=True, cache=True)
def max_pool2d(out, indices, inp, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    planes = inp.size // (H * W)
    for p in prange(planes):
        for oh in range(OH):
            h0 = oh * sh - ph
            while h0 < 0:           # the first row of the window inside the input
                h0 += dh
            h1 = min(oh * sh - ph + (kh - 1) * dh + 1, H)
            for ow in range(OW):
                w0 = ow * sw - pw
                while w0 < 0:
                    w0 += dw
                w1 = min(ow * sw - pw + (kw - 1) * dw + 1, W)
                at = h0 * W + w0
                best = inp[p * H * W + at]
                for h in range(h0, h1, dh):
                    for w in range(w0, w1, dw):
                        v = inp[p * H * W + h * W + w]
                        if v > best or v != v:          # a NaN wins, as in torch's loop
                            best, at = v, h * W + w
                out[(p * OH + oh) * OW + ow] = best
                indices[(p * OH + oh) * OW + ow] = at


@njit(parallel=True, cache=True)
def max_pool2d_backward(grad_input, grad_output, indices, plane_in, plane_out):
    # One task per plane: the sums of one plane go to that plane only, so tasks never race.
    planes = grad_input.size // plane_in
    for p in prange(planes):
        for i in range(plane_in):
            grad_input[p * plane_in + i] = 0
        for j in range(plane_out):
            grad_input[p * plane_in + indices[p * plane_out + j]] += grad_output[p * plane_out + j]


# Average pooling, plain and adaptive (``cpu/AvgPoolKernel.cpp``, ``cpu/AdaptiveAvgPoolKernel.cpp``):
# ``windows`` holds each output row's [h0, h1) and divisor count, then each column's (see
# ``pooling.avg_window``); the host clipped them to the input.
@njit(parallel=True, cache=True)
def avg_pool2d(out, inp, H, W, OH, OW, windows, divisor, per_dim):
    planes = inp.size // (H * W)
    for p in prange(planes):
        for oh in range(OH):
            for ow in range(OW):
                out[(p * OH + oh) * OW + ow] = avg_pool_output(inp, p, H, W, OH, OW, oh, ow, windows, divisor,
                                                               per_dim)


@njit(parallel=True, cache=True)
def avg_pool2d_backward(grad_input, grad_output, H, W, OH, OW, windows, divisor, per_dim):
    """One task per plane: windows overlap, and only the plane's task adds into it."""
    for p in prange(grad_input.size // (H * W)):
        avg_pool_backward_plane(grad_input, grad_output, p, H, W, OH, OW, windows, divisor, per_dim)
