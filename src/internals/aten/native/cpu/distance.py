"""CPU loops of ``_cdist_forward`` and ``_cdist_backward`` (``aten/src/ATen/native/cpu/
DistanceOpsKernel.cpp``): the pairs (the gradient's elements) in parallel."""
from numba import prange

from ..distance import element_gradient, pair_distance
from .parallel_for import parallel_loop


@parallel_loop()
def _cdist(out, t1, t2, batches, r1, r2, m, p, one, kind, fused):
    for e in prange(batches * r1 * r2):
        b, i, j = e // (r1 * r2), (e // r2) % r1, e % r2
        out[e] = pair_distance(t1, (b * r1 + i) * m, t2, (b * r2 + j) * m, m, p, one, kind, fused)


def cdist_loop(out, t1, t2, batches, r1, r2, m, p, one, kind, fused):
    """``out[b, i, j]`` = the distance of row i of batch b of ``t1`` to row j of ``t2``."""
    _cdist(out, t1, t2, batches, r1, r2, m, p, one, kind, fused)


@parallel_loop()
def _cdist_backward(out, grad, t1, t2, dist, batches, r1, r2, m, p, one, kind):
    for e in prange(batches * r1 * m):
        element_gradient(out, grad, t1, t2, dist, e, r1, r2, m, p, one, kind)


def cdist_backward_loop(out, grad, t1, t2, dist, batches, r1, r2, m, p, one, kind):
    _cdist_backward(out, grad, t1, t2, dist, batches, r1, r2, m, p, one, kind)
