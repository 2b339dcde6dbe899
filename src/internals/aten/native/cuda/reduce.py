"""CUDA reductions (``aten/src/ATen/native/cuda/Reduce.cuh``): a shared-memory tree per output.

One block per output element (grid-stride over outputs). Each thread folds a strided share of
the inputs into a private accumulator, writes it to shared memory, and the block halves the
active threads each step, combining pairs, until thread 0 holds the result. Same arguments as
the CPU reductions.
"""
import numba
import numpy as np
from numba import cuda

from ...._cuda_env import SIMULATED
from ..offset_calculator import index_to_offset
from ..scalar_ops import AMAX, AMIN, arg_better, reduce_combine

BLOCK = 32 if SIMULATED else 256    # a power of two: the tree halves it


def _build_reduce(op, acc_type):
    @cuda.jit
    def kernel(out, a, init, n_out, n_in, outer_shape, outer_strides, inner_shape, inner_strides, offset):
        partial = cuda.shared.array(BLOCK, acc_type)
        t = cuda.threadIdx.x
        o = cuda.blockIdx.x
        while o < n_out:
            base = offset + index_to_offset(o, outer_shape, outer_strides, 0)
            acc = a[base] if (op == AMAX or op == AMIN) else init
            j = t
            while j < n_in:
                acc = reduce_combine(op, acc, a[base + index_to_offset(j, inner_shape, inner_strides, 0)])
                j += BLOCK
            partial[t] = acc
            cuda.syncthreads()
            step = BLOCK // 2
            while step > 0:
                if t < step:
                    partial[t] = reduce_combine(op, partial[t], partial[t + step])
                cuda.syncthreads()
                step //= 2
            if t == 0:
                out[o] = partial[0]
            cuda.syncthreads()
            o += cuda.gridDim.x
    return kernel


def _build_arg_reduce(op, value_type):
    @cuda.jit
    def kernel(out, a, n_out, n_in, outer_shape, outer_strides, inner_shape, inner_strides, offset):
        values = cuda.shared.array(BLOCK, value_type)
        where = cuda.shared.array(BLOCK, numba.int64)
        t = cuda.threadIdx.x
        o = cuda.blockIdx.x
        while o < n_out:
            base = offset + index_to_offset(o, outer_shape, outer_strides, 0)
            best, best_at = a[base], 0
            j = t
            while j < n_in:
                x = a[base + index_to_offset(j, inner_shape, inner_strides, 0)]
                if arg_better(op, best, x):
                    best, best_at = x, j
                j += BLOCK
            values[t], where[t] = best, best_at
            cuda.syncthreads()
            step = BLOCK // 2
            while step > 0:
                if t < step:
                    x, at = values[t + step], where[t + step]
                    tie = (x == values[t] or (x != x and values[t] != values[t])) and at < where[t]
                    if arg_better(op, values[t], x) or tie:
                        values[t], where[t] = x, at
                cuda.syncthreads()
                step //= 2
            if t == 0:
                out[o] = where[0]
            cuda.syncthreads()
            o += cuda.gridDim.x
    return kernel


_kernels = {}


def _kernel(kind, op, np_type):
    key = (kind, op, np.dtype(np_type))
    if key not in _kernels:
        build = _build_reduce if kind == "reduce" else _build_arg_reduce
        _kernels[key] = build(op, numba.from_dtype(np.dtype(np_type)))
    return _kernels[key]


def _grid(n_out):
    return 1 if SIMULATED else max(1, min(n_out, 65535))


def _meta(*arrays):
    return [cuda.to_device(np.ascontiguousarray(x, dtype=np.int64)) for x in arrays]


def reduce_loop(op, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    n_out, n_in = int(np.prod(outer_shape)), int(np.prod(inner_shape))
    with np.errstate(all="ignore"):
        _kernel("reduce", op, out.dtype)[_grid(n_out), BLOCK](
            out, a, init, n_out, n_in, *_meta(outer_shape, outer_strides, inner_shape, inner_strides), offset)


def arg_reduce_loop(op, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    n_out, n_in = int(np.prod(outer_shape)), int(np.prod(inner_shape))
    _kernel("arg", op, a.dtype)[_grid(n_out), BLOCK](
        out, a, n_out, n_in, *_meta(outer_shape, outer_strides, inner_shape, inner_strides), offset)
