"""Elementwise CUDA kernels (``aten/src/ATen/native/cuda/Loops.cuh``, ``CUDALoops.cuh``).

One thread per element, in a grid-stride loop: each thread starts at its global index and
steps by the total number of threads, so any grid covers any size. Each thread turns its linear
index into per-operand offsets (ATen's ``OffsetCalculator``). Same arguments as the CPU loops.

A kernel is built once per op number by closing over it: the op number is then a compile-time
constant, and ``binary_op``'s overload picks the op's function while typing. Under the simulator
every thread is a Python thread, so the launch uses few threads (see ``launch_config``).
"""
import numpy as np
from numba import cuda

from ...._cuda_env import SIMULATED
from ..offset_calculator import index_to_offset
from ..scalar_ops import binary_op, ternary_op, unary_op


def launch_config(n):
    """(blocks, threads) for n elements: a full grid on a GPU, one small block simulated."""
    if SIMULATED:
        return 1, 32
    threads = 256
    return max(1, min((n + threads - 1) // threads, 4096)), threads


def to_device_meta(shape, strides, offsets):
    """The iteration geometry as device arrays (int64), copied once per launch."""
    return (cuda.to_device(np.ascontiguousarray(shape, dtype=np.int64)),
            cuda.to_device(np.ascontiguousarray(strides, dtype=np.int64)),
            cuda.to_device(np.ascontiguousarray(offsets, dtype=np.int64)))


@cuda.jit(device=True)
def element_offset(index, shape, strides, offsets, k):
    """Offset of element ``index`` (fastest-first linear order) in operand ``k``."""
    return offsets[k] + index_to_offset(index, shape, strides[k], 0)


def _numel(shape):
    return int(np.prod(shape)) if len(shape) else 1


_kernels = {}


def _cached(key, build):
    if key not in _kernels:
        _kernels[key] = build()
    return _kernels[key]


def _build_unary(op):
    @cuda.jit
    def kernel(out, a, n, shape, strides, offsets):
        i = cuda.grid(1)
        while i < n:
            out[element_offset(i, shape, strides, offsets, 0)] = unary_op(
                op, a[element_offset(i, shape, strides, offsets, 1)])
            i += cuda.gridsize(1)
    return kernel


def _build_binary(op):
    @cuda.jit
    def kernel(out, a, b, alpha, n, shape, strides, offsets):
        i = cuda.grid(1)
        while i < n:
            out[element_offset(i, shape, strides, offsets, 0)] = binary_op(
                op, a[element_offset(i, shape, strides, offsets, 1)],
                b[element_offset(i, shape, strides, offsets, 2)], alpha)
            i += cuda.gridsize(1)
    return kernel


def _build_ternary(op):
    @cuda.jit
    def kernel(out, a, b, c, value, n, shape, strides, offsets):
        i = cuda.grid(1)
        while i < n:
            out[element_offset(i, shape, strides, offsets, 0)] = ternary_op(
                op, a[element_offset(i, shape, strides, offsets, 1)], b[element_offset(i, shape, strides, offsets, 2)],
                c[element_offset(i, shape, strides, offsets, 3)], value)
            i += cuda.gridsize(1)
    return kernel


def _build_copy(cast):
    """A copy kernel that converts with ``cast`` (the output's NumPy type), as ATen's copy does with
    ``static_cast<dst_t>``: explicit, because under the simulator NumPy refuses to store an
    out-of-range integer (int16 300 into int8) where C, Numba and torch wrap it around."""
    @cuda.jit
    def kernel(out, a, n, shape, strides, offsets):
        i = cuda.grid(1)
        while i < n:
            out[element_offset(i, shape, strides, offsets, 0)] = cast(a[element_offset(i, shape, strides, offsets, 1)])
            i += cuda.gridsize(1)
    return kernel


@cuda.jit
def _fill_kernel(out, value, n, shape, strides, offsets):
    i = cuda.grid(1)
    while i < n:
        out[element_offset(i, shape, strides, offsets, 0)] = value
        i += cuda.gridsize(1)


def _launch(kernel, shape, strides, offsets, *args):
    n = _numel(shape)
    blocks, threads = launch_config(n)
    with np.errstate(all="ignore"):    # the simulator computes with NumPy scalars
        kernel[blocks, threads](*args, n, *to_device_meta(shape, strides, offsets))


def unary_loop(op, out, a, shape, strides, offsets):
    _launch(_cached(("unary", op), lambda: _build_unary(op)), shape, strides, offsets, out, a)


def binary_loop(op, out, a, b, alpha, shape, strides, offsets):
    _launch(_cached(("binary", op), lambda: _build_binary(op)), shape, strides, offsets, out, a, b, alpha)


def ternary_loop(op, out, a, b, c, value, shape, strides, offsets):
    _launch(_cached(("ternary", op), lambda: _build_ternary(op)), shape, strides, offsets, out, a, b, c, value)


def copy_loop(out, a, shape, strides, offsets):
    cast = np.dtype(out.dtype).type
    _launch(_cached(("copy", cast), lambda: _build_copy(cast)), shape, strides, offsets, out, a)


def fill_loop(out, value, shape, strides, offsets):
    _launch(_fill_kernel, shape, strides, offsets, out, value)
