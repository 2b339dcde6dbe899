"""CPU loop of ``searchsorted`` (``aten/src/ATen/native/Bucketization.cpp``'s
``searchsorted_cpu_contiguous``): the values in parallel, each searched in its row."""
from numba import prange

from ..bucketization import search
from .parallel_for import parallel_loop


@parallel_loop()
def _search(out, values, count, bd, sorter, n, per_row, right, use_sorter):
    for i in prange(count):
        start = (i // per_row) * n if per_row else 0
        out[i] = search(bd, start, start + n, values[i], right, sorter, use_sorter)


def search_loop(out, values, count, bd, sorter, n, per_row, right, use_sorter):
    """The first ``count`` values; ``per_row``: values per row of boundaries (0: one row for all)."""
    _search(out, values, count, bd, sorter, n, per_row, right, use_sorter)
