"""CUDA batched LU and inverse (torch calls cuSOLVER or MAGMA): one thread per matrix, through the
routines ``lapack.py`` shares with the CPU kernels. Same buffers as ``cpu/batch_linalg.py``."""
import numpy as np
from numba import cuda

from ..lapack import getrf, getri
from .loops import launch_config


@cuda.jit
def _lu_factor(a, pivots, infos, m, n):
    b = cuda.grid(1)
    while b < infos.size:
        infos[b] = getrf(a, b * m * n, m, n, pivots, b * min(m, n))
        b += cuda.gridsize(1)


@cuda.jit
def _lu_inverse(out, lu, pivots, n, trans, batch):
    b = cuda.grid(1)
    while b < batch:
        getri(lu, b * n * n, n, pivots, b * n, out, trans)
        b += cuda.gridsize(1)


def lu_factor(a, pivots, infos, m, n):
    with np.errstate(all="ignore"):
        _lu_factor[launch_config(infos.size)](a, pivots, infos, m, n)


def lu_inverse(out, lu, pivots, n, trans):
    batch = lu.size // max(n * n, 1)
    with np.errstate(all="ignore"):
        _lu_inverse[launch_config(batch)](out, lu, pivots, n, trans, batch)
