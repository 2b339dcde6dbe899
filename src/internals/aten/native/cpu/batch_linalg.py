"""CPU batched LU and inverse (``BatchLinearAlgebraKernel.cpp`` calls LAPACK per matrix): one
matrix per parallel task, through the routines ``lapack.py`` shares with the CUDA kernels."""
from numba import prange

from ..lapack import getrf, getri
from .parallel_for import parallel_loop


@parallel_loop()
def lu_factor(a, pivots, infos, m, n):
    for b in prange(infos.size):
        infos[b] = getrf(a, b * m * n, m, n, pivots, b * min(m, n))


@parallel_loop()
def lu_inverse(out, lu, pivots, n, trans):
    for b in prange(lu.size // max(n * n, 1)):
        getri(lu, b * n * n, n, pivots, b * n, out, trans)
