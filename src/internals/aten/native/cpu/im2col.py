"""CPU im2col and col2im (``aten/src/ATen/native/Unfold2d.cpp``, ``im2col.h``).

``inp`` is an (N, C, H, W) image and ``cols`` its columns (N, C·kh·kw, OH·OW), both contiguous
and flat; the host (``native/convolution.py``) sized them from the checked geometry, so every
index below lies inside its buffer. Column row ``(c·kh + ki)·kw + kj``, entry ``oh·OW + ow``
holds ``inp[c, oh·sh − ph + ki·dh, ow·sw − pw + kj·dw]``, or 0 in the padding.
"""
from numba import prange

from .parallel_for import parallel_loop


@parallel_loop()
def im2col(cols, inp, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    N = inp.size // (C * H * W)
    L = OH * OW
    # One task per (image, channel): it fills that channel's kh·kw rows of the image's columns.
    for plane in prange(N * C):
        n, c = plane // C, plane % C
        src = plane * H * W
        for ki in range(kh):
            for kj in range(kw):
                dst = (n * C * kh * kw + (c * kh + ki) * kw + kj) * L
                for oh in range(OH):
                    h = oh * sh - ph + ki * dh
                    for ow in range(OW):
                        w = ow * sw - pw + kj * dw
                        inside = 0 <= h < H and 0 <= w < W
                        cols[dst + oh * OW + ow] = inp[src + h * W + w] if inside else 0


@parallel_loop()
def col2im(out, cols, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    # Gathered, not scattered: each task sums into its own (image, channel) plane only, so the
    # tasks write disjoint elements and need no atomics.
    N = out.size // (C * H * W)
    L = OH * OW
    for plane in prange(N * C):
        n, c = plane // C, plane % C
        dst = plane * H * W
        for i in range(H * W):
            out[dst + i] = 0
        for ki in range(kh):
            for kj in range(kw):
                src = (n * C * kh * kw + (c * kh + ki) * kw + kj) * L
                for oh in range(OH):
                    h = oh * sh - ph + ki * dh
                    if 0 <= h < H:
                        for ow in range(OW):
                            w = ow * sw - pw + kj * dw
                            if 0 <= w < W:
                                out[dst + h * W + w] += cols[src + oh * OW + ow]
