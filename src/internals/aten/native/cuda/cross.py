"""CUDA kernel of ``linalg_cross`` for floating dtypes: a thread per row of 3, the CPU loop's
arithmetic (``aten/src/ATen/native/cuda/CrossKernel.cu``)."""
from numba import cuda

from ..cross import cross_row
from .loops import launch_config


@cuda.jit
def _cross(out, a, b, rows):
    r = cuda.grid(1)
    while r < rows:
        cross_row(out, a, b, 3 * r)
        r += cuda.gridsize(1)


def cross_loop(out, a, b, rows):
    blocks, threads = launch_config(rows)
    _cross[blocks, threads](out, a, b, rows)
