"""CUDA kernels of ``_cdist_forward`` and ``_cdist_backward`` (``aten/src/ATen/native/cuda/
DistanceKernel.cu``): a thread per pair (per gradient element), in the CPU loops' order."""
from numba import cuda

from ..distance import element_gradient, pair_distance
from .loops import launch_config


@cuda.jit
def _cdist(out, t1, t2, batches, r1, r2, m, p, one, kind, fused):
    e = cuda.grid(1)
    while e < batches * r1 * r2:
        b, i, j = e // (r1 * r2), (e // r2) % r1, e % r2
        out[e] = pair_distance(t1, (b * r1 + i) * m, t2, (b * r2 + j) * m, m, p, one, kind, fused)
        e += cuda.gridsize(1)


def cdist_loop(out, t1, t2, batches, r1, r2, m, p, one, kind, fused):
    blocks, threads = launch_config(batches * r1 * r2)
    _cdist[blocks, threads](out, t1, t2, batches, r1, r2, m, p, one, kind, fused)


@cuda.jit
def _cdist_backward(out, grad, t1, t2, dist, batches, r1, r2, m, p, one, kind):
    e = cuda.grid(1)
    while e < batches * r1 * m:
        element_gradient(out, grad, t1, t2, dist, e, r1, r2, m, p, one, kind)
        e += cuda.gridsize(1)


def cdist_backward_loop(out, grad, t1, t2, dist, batches, r1, r2, m, p, one, kind):
    blocks, threads = launch_config(batches * r1 * m)
    _cdist_backward[blocks, threads](out, grad, t1, t2, dist, batches, r1, r2, m, p, one, kind)
