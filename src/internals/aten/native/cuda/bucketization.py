"""CUDA kernel of ``searchsorted`` (``aten/src/ATen/native/cuda/Bucketization.cu``): a thread per
value, each searched in its row by the CPU loop's search."""
from numba import cuda

from ..bucketization import search
from .loops import launch_config


@cuda.jit
def _search(out, values, count, bd, sorter, n, per_row, right, use_sorter):
    i = cuda.grid(1)
    while i < count:
        start = (i // per_row) * n if per_row else 0
        out[i] = search(bd, start, start + n, values[i], right, sorter, use_sorter)
        i += cuda.gridsize(1)


def search_loop(out, values, count, bd, sorter, n, per_row, right, use_sorter):
    blocks, threads = launch_config(count)
    _search[blocks, threads](out, values, count, bd, sorter, n, per_row, right, use_sorter)
