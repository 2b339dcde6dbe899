"""CPU sort and selection loops (``aten/src/ATen/native/cpu/SortingKernel.cpp``): the rows
run in parallel, each sorted by ``sorting.sort_row``."""
from numba import prange

from ..sorting import select_in_row, sort_row
from .parallel_for import parallel_loop


@parallel_loop()
def _sort(values, idx, tmp, keys, rows, n, descending):
    for r in prange(rows):
        lo, hi = r * n, (r + 1) * n
        row_keys, row_idx = keys[lo:hi], idx[lo:hi]
        sort_row(row_keys, row_idx, tmp[lo:hi], n, descending)
        out = values[lo:hi]
        for i in range(n):
            out[i] = row_keys[row_idx[i]]


def sort_loop(values, idx, tmp, keys, rows, n, descending):
    _sort(values, idx, tmp, keys, rows, n, descending)


@parallel_loop()
def _select(kind, out_values, out_idx, values, idx, rows, n, k):
    for r in prange(rows):
        p = select_in_row(kind, values[r * n:(r + 1) * n], n, k)
        out_values[r] = values[r * n + p]
        out_idx[r] = idx[r * n + p]


def select_loop(kind, out_values, out_idx, values, idx, rows, n, k):
    _select(kind, out_values, out_idx, values, idx, rows, n, k)
