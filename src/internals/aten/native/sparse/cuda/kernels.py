"""CUDA kernels of the sparse COO layout (``aten/src/ATen/native/sparse/cuda``).

One thread per row, entry or output element, in grid-stride loops; same buffers and arguments as
the CPU loops in ``sparse/cpu/kernels.py`` (read that file's docstring for the layouts), and the
same per-item work, from ``sparse/rows.py``. What is not here runs on the host, as the op code
says: the prefix sum of ``to_sparse``'s row flags and ``coalesce``'s sort. torch does both on the
GPU (``thrust``/``cub``); a sort is not what the course builds. ``merge_add`` has no CUDA twin:
torch's CUDA sparse + sparse concatenates the two entry lists instead of merging them.
"""
import numpy as np
from numba import cuda

from ...cuda.loops import launch_config
from ..rows import gather_row, linear_index_of, merge_segment, nonzero_row, row_pointers_at, scatter_row


@cuda.jit
def _nonzero_rows(flags, x, D):
    p = cuda.grid(1)
    while p < flags.size:
        nonzero_row(p, flags, x, D)
        p += cuda.gridsize(1)


@cuda.jit
def _gather_rows(indices, values, x, flags, positions, sizes, D, nnz):
    p = cuda.grid(1)
    while p < flags.size:
        gather_row(p, indices, values, x, flags, positions, sizes, D, nnz)
        p += cuda.gridsize(1)


@cuda.jit
def _linear_index(out, indices, sizes, nnz):
    j = cuda.grid(1)
    while j < nnz:
        linear_index_of(j, out, indices, sizes, nnz)
        j += cuda.gridsize(1)


@cuda.jit
def _merge_segments(out_indices, out_values, indices, values, perm, starts, S, D, nnz):
    s = cuda.grid(1)
    while s < starts.size - 1:
        merge_segment(s, out_indices, out_values, indices, values, perm, starts, S, D, nnz)
        s += cuda.gridsize(1)


@cuda.jit
def _scatter_rows(out, values, rows, D):
    j = cuda.grid(1)
    while j < rows.size:
        scatter_row(j, out, values, rows, D)
        j += cuda.gridsize(1)


@cuda.jit
def _csr_row_pointers(row_ptr, rows, nnz, M):
    k = cuda.grid(1)
    while k < nnz + 1:
        row_pointers_at(k, row_ptr, rows, nnz, M)
        k += cuda.gridsize(1)


@cuda.jit
def _spmm(out, row_ptr, cols, values, dense, M, N):
    """One thread per output element (i, j): row-partitioned, so no atomics are needed."""
    t = cuda.grid(1)
    while t < M * N:
        i, j = t // N, t % N
        out[t] = 0               # out comes from empty(): whatever was there, NaN included, is overwritten
        for k in range(row_ptr[i], row_ptr[i + 1]):
            out[t] += values[k] * dense[cols[k] * N + j]
        t += cuda.gridsize(1)


def _launch(kernel, n, *args):
    blocks, threads = launch_config(n)
    with np.errstate(all="ignore"):    # the simulator computes with NumPy scalars
        kernel[blocks, threads](*args)


def nonzero_rows(flags, x, D):
    _launch(_nonzero_rows, flags.size, flags, x, D)


def gather_rows(indices, values, x, flags, positions, sizes, D, nnz):
    _launch(_gather_rows, flags.size, indices, values, x, flags, positions, cuda.to_device(sizes), D, nnz)


def linear_index(out, indices, sizes, nnz):
    _launch(_linear_index, nnz, out, indices, cuda.to_device(sizes), nnz)


def merge_segments(out_indices, out_values, indices, values, perm, starts, S, D, nnz):
    _launch(_merge_segments, starts.size - 1, out_indices, out_values, indices, values, perm, starts, S, D, nnz)


def scatter_rows(out, values, rows, D):
    _launch(_scatter_rows, rows.size, out, values, rows, D)


def csr_row_pointers(row_ptr, rows, nnz, M):
    _launch(_csr_row_pointers, nnz + 1, row_ptr, rows, nnz, M)


def spmm(out, row_ptr, cols, values, dense, M, N):
    _launch(_spmm, M * N, out, row_ptr, cols, values, dense, M, N)
