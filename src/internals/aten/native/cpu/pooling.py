"""CPU max pooling (``aten/src/ATen/native/cpu/MaxPoolKernel.cpp``), over contiguous (planes, H,
W) buffers the host sized from the checked geometry: every index below is inside its buffer."""
from numba import njit, prange


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
