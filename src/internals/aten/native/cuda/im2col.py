"""CUDA im2col and col2im (``aten/src/ATen/native/cuda/im2col.cuh``). Same buffers and layout as
``cpu/im2col.py``; one thread per column entry, and for col2im one thread per image element,
which gathers the entries copied from it (no two threads write one element: no atomics)."""
import numpy as np
from numba import cuda

from .loops import launch_config


@cuda.jit
def _im2col(cols, inp, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    L = OH * OW
    i = cuda.grid(1)
    while i < cols.size:
        pos, row = i % L, i // L
        oh, ow = pos // OW, pos % OW
        kj, ki, c = row % kw, (row // kw) % kh, (row // (kh * kw)) % C
        n = row // (C * kh * kw)
        h, w = oh * sh - ph + ki * dh, ow * sw - pw + kj * dw
        inside = 0 <= h < H and 0 <= w < W
        cols[i] = inp[((n * C + c) * H + h) * W + w] if inside else 0
        i += cuda.gridsize(1)


@cuda.jit
def _col2im(out, cols, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    L = OH * OW
    i = cuda.grid(1)
    while i < out.size:
        w, h, plane = i % W, (i // W) % H, i // (H * W)
        n, c = plane // C, plane % C
        total = 0.0
        for ki in range(kh):
            for kj in range(kw):
                th, tw = h + ph - ki * dh, w + pw - kj * dw      # oh·sh and ow·sw, if this tap read (h, w)
                if th >= 0 and tw >= 0 and th % sh == 0 and tw % sw == 0 and th // sh < OH and tw // sw < OW:
                    row = n * C * kh * kw + (c * kh + ki) * kw + kj
                    total += cols[row * L + (th // sh) * OW + tw // sw]
        out[i] = total
        i += cuda.gridsize(1)


def im2col(cols, inp, *geometry):
    with np.errstate(all="ignore"):
        _im2col[launch_config(cols.size)](cols, inp, *geometry)


def col2im(out, cols, *geometry):
    with np.errstate(all="ignore"):
        _col2im[launch_config(out.size)](out, cols, *geometry)
