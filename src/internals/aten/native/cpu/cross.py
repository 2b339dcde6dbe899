"""CPU loop of ``linalg_cross`` for floating dtypes (``aten/src/ATen/native/cpu/CrossKernel.cpp``):
rows of 3 in parallel, each component ``fma(a_j, b_k, -(a_k * b_j))``, the contraction torch's
compiler makes of ``a_j * b_k - a_k * b_j`` where the build has FMA (two roundings on x86-64
``default``)."""
from numba import prange

from ..cross import cross_row
from .parallel_for import parallel_loop


@parallel_loop()
def _cross(out, a, b, rows):
    for r in prange(rows):
        cross_row(out, a, b, 3 * r)


def cross_loop(out, a, b, rows):
    _cross(out, a, b, rows)
