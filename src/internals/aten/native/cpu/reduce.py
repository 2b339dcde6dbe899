"""CPU reductions (``aten/src/ATen/native/cpu/ReduceOpsKernel.cpp``, ``Reduce.h``).

The caller splits the input's dims into *outer* ones (kept: one output element each) and
*inner* ones (reduced), both fastest-first. Each output element is reduced by one thread; the
outputs run in parallel. Inner dimension 0 is walked by a plain strided loop, the others by
index arithmetic once per row.
"""
import numpy as np
from numba import njit, prange

from ..scalar_ops import AMAX, AMIN, arg_better, reduce_combine


@njit(cache=True)
def _offset(index, shape, strides, first_dim):
    """Offset of linear ``index`` (fastest-first from ``first_dim``) in elements."""
    pos, rest = 0, np.int64(index)      # a prange index may be unsigned: keep the arithmetic signed
    for d in range(first_dim, shape.size):
        pos += (rest % shape[d]) * strides[d]
        rest //= shape[d]
    return pos


@njit(cache=True)
def _numel(shape, first_dim):
    n = 1
    for d in range(first_dim, shape.size):
        n *= shape[d]
    return n


@njit(parallel=True, cache=True)
def reduce_loop(op, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    """out[o] = fold of ``op`` over the inner elements of output element o (out is contiguous)."""
    n0, s0 = inner_shape[0], inner_strides[0]
    rows = _numel(inner_shape, 1)
    for o in prange(_numel(outer_shape, 0)):
        base = offset + _offset(o, outer_shape, outer_strides, 0)
        acc = a[base] if (op == AMAX or op == AMIN) else init
        for r in range(rows):
            p = base + _offset(r, inner_shape, inner_strides, 1)
            for k in range(n0):
                acc = reduce_combine(op, acc, a[p + k * s0])
        out[o] = acc


@njit(parallel=True, cache=True)
def arg_reduce_loop(op, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    """out[o] = position (row-major over the reduced dims) of the max/min of element o's inputs."""
    n0, s0 = inner_shape[0], inner_strides[0]
    rows = _numel(inner_shape, 1)
    for o in prange(_numel(outer_shape, 0)):
        base = offset + _offset(o, outer_shape, outer_strides, 0)
        best, best_at = a[base], 0
        for r in range(rows):
            p = base + _offset(r, inner_shape, inner_strides, 1)
            for k in range(n0):
                x = a[p + k * s0]
                if arg_better(op, best, x):
                    best, best_at = x, r * n0 + k
        out[o] = best_at
