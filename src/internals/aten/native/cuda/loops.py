"""Elementwise CUDA kernels (``aten/src/ATen/native/cuda/Loops.cuh``, ``CUDALoops.cuh``).

``gpu_kernel`` takes an iteration (buffers, sizes, strides, offsets, as the CPU loops do) the
way torch's does:

1. ``gpu_kernel``: an iteration whose element count or byte offsets pass ``int32`` is split
   into pieces that fit (``TensorIterator``'s ``with_32bit_indexing``), one launch per piece;
2. ``gpu_kernel_impl``: a contiguous iteration (one dim, unit strides) goes to
   ``launch_vectorized_kernel``, which picks a vector width from the operands' alignment
   (``can_vectorize_up_to``): ``vectorized_elementwise_kernel`` moves 2, 4 or 8 neighbours per
   access, and a width of 1 falls back to ``unrolled_elementwise_kernel``;
3. anything else (strided, broadcast, permuted) goes to ``launch_legacy_kernel``'s
   ``elementwise_kernel``, which turns each linear index into offsets (``OffsetCalculator``).

``launch_plan`` makes those decisions without running anything, so they can be read and tested
on any size. One difference: a float16 or bfloat16 op reaches these loops as float32 (the
iterator's ``cast_to_opmath``): on compute capability 9.x or 10.x its vectors are 4 wide where
torch's are 8.

A kernel is built once per (op, kernel, vector width) by closing over them: they are
then compile-time constants, as torch's template arguments are. Under the simulator every thread
is a Python thread, so a block has one warp and one block walks all the work (see ``grid``).
"""
from collections import namedtuple

import numpy as np
from numba import cuda

from ...._cuda_env import SIMULATED
from ...tensor_iterator import INT32_MAX, Geometry, can_use_32bit_indexing, with_32bit_indexing
from ..offset_calculator import index_to_offset
from ..scalar_ops import binary_op, ternary_op, unary_op

# num_threads() in ATen/native/cuda/thread_constants.h: four warps per block. One simulated.
NUM_THREADS = 32 if SIMULATED else 128
MAX_INDEX = INT32_MAX       # what one launch may index; a test lowers it to split small tensors

Launch = namedtuple("Launch", "kernel vec_size elems_per_thread numel geometry")
Launch.__doc__ = """One kernel launch: its name in ``CUDALoops.cuh``, the vector width (1 when
elements move one by one), how many elements each thread handles, and the piece it covers."""


def launch_config(n):
    """(blocks, threads) for a grid-stride kernel of n elements: a full grid on a GPU, one
    small block simulated (used by kernels outside this file)."""
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


@cuda.jit(device=True)
def operand_offset(index, shape, strides, offsets, k, trivial):
    """``TrivialOffsetCalculator`` (contiguous: the index itself) or ``OffsetCalculator``."""
    if trivial:
        return offsets[k] + index
    return element_offset(index, shape, strides, offsets, k)


# ---------------------------------------------------------------------- planning
def is_contiguous(geometry):
    """``TensorIteratorBase::is_contiguous``: one element, or one dim every operand walks at unit stride."""
    shape = geometry.shape
    if int(np.prod(shape)) == 1:
        return True
    return len(shape) == 1 and all(int(s[0]) == 1 for s in geometry.strides)


def can_vectorize_up_to(offset):
    """``memory::can_vectorize_up_to`` for one operand: the widest of 8, 4, 2 neighbours whose
    vector its address is aligned to. A storage starts at least 512-byte aligned (the caching
    allocator's rounding), so only the offset in elements decides."""
    for vec in (8, 4, 2):
        if offset % vec == 0:
            return vec
    return 1


def wide_vectors():
    """Whether this GPU gets 8-wide vectors: torch 2.13 compiles that kernel for compute
    capability 9.x and 10.x only (binary size). The simulator plays an older GPU."""
    return not SIMULATED and cuda.get_current_device().compute_capability[0] in (9, 10)


def vec_size(itemsizes, offsets, wide=None):
    """``launch_vectorized_kernel``'s width: every operand aligned to it, at most 16 bytes of the
    output's type per access, and at most 4 unless the GPU has the 8-wide kernel. (Builds with
    CUDA before 12.8 also cap a 1-byte output at 4; torch 2.13's are newer.)"""
    wide = wide_vectors() if wide is None else wide
    vec = min(can_vectorize_up_to(int(o)) for o in offsets)
    return min(vec, 16 // itemsizes[0], 8 if wide else 4)


def elems_per_thread(itemsizes):
    """``elems_per_thread<io_size>``: 16 when a thread moves one byte per element, else 8."""
    return 16 if sum(itemsizes) == 1 else 8


def plan_one(itemsizes, geometry, casting=False):
    """``gpu_kernel_impl``'s choice for an iteration that fits 32-bit indexing. ``casting``: the
    operands' dtypes differ from the function's (a copy that converts), which torch never
    vectorizes: it loads and converts element by element."""
    n = int(np.prod(geometry.shape))
    if casting:
        if is_contiguous(geometry):     # launch_unrolled_kernel: thread_work_size() = 4
            return Launch("unrolled_elementwise_kernel", 1, 4, n, geometry)
        return Launch("elementwise_kernel", 1, 4, n, geometry)
    if is_contiguous(geometry):
        vec = vec_size(itemsizes, geometry.offsets)
        kernel = "vectorized_elementwise_kernel" if vec > 1 else "unrolled_elementwise_kernel"
        return Launch(kernel, vec, elems_per_thread(itemsizes), n, geometry)
    unroll = 2 if itemsizes[0] >= 4 else 4      # launch_legacy_kernel<128, unroll_factor>
    return Launch("elementwise_kernel", 1, unroll, n, geometry)


def launch_plan(itemsizes, geometry, max_index=None, casting=False):
    """``gpu_kernel``: the launches for an iteration, one per 32-bit-indexable piece."""
    max_index = MAX_INDEX if max_index is None else max_index
    geometry = Geometry(*geometry)
    if int(np.prod(geometry.shape)) == 0:
        return []
    if can_use_32bit_indexing(geometry, itemsizes, max_index):
        return [plan_one(itemsizes, geometry, casting)]
    pieces = with_32bit_indexing(geometry, itemsizes, max_index)
    return [plan_one(itemsizes, piece, casting) for piece in pieces]


def grid(launch):
    """Blocks for a launch: one per block of work on a GPU, as torch launches; one simulated,
    which then walks every block of work in turn (the kernels loop over their blocks)."""
    work = NUM_THREADS * launch.elems_per_thread
    return 1 if SIMULATED else (launch.numel + work - 1) // work


# ---------------------------------------------------------------------- kernels
def _kernel(element, launch):
    """One of the three kernels of ``CUDALoops.cuh`` around ``element(out, a, b, c, scalar,
    index, shape, strides, offsets, trivial)``, which computes one element."""
    nthreads, elems, vec = NUM_THREADS, launch.elems_per_thread, launch.vec_size
    trivial = launch.kernel != "elementwise_kernel"
    work = nthreads * elems

    @cuda.jit
    def kernel(out, a, b, c, scalar, n, shape, strides, offsets):
        tid = cuda.threadIdx.x
        block = cuda.blockIdx.x
        while block * work < n:
            start = block * work
            if vec > 1 and n - start >= work:
                # a full block, vectorized: each thread moves `vec` neighbours at a time,
                # one aligned vector access per operand on a GPU
                for i in range(elems // vec):
                    first = start + (tid + i * nthreads) * vec
                    for j in range(vec):
                        element(out, a, b, c, scalar, first + j, shape, strides, offsets, True)
            else:
                # unrolled: thread tid takes tid, tid + nthreads, ... so a warp reads neighbours
                index = start + tid
                for _ in range(elems):
                    if index < n:
                        element(out, a, b, c, scalar, index, shape, strides, offsets, trivial)
                    index += nthreads
            block += cuda.gridDim.x
    return kernel


def _unary_element(op):
    @cuda.jit(device=True)
    def element(out, a, b, c, scalar, i, shape, strides, offsets, trivial):
        out[operand_offset(i, shape, strides, offsets, 0, trivial)] = unary_op(
            op, a[operand_offset(i, shape, strides, offsets, 1, trivial)])
    return element


def _binary_element(op):
    @cuda.jit(device=True)
    def element(out, a, b, c, alpha, i, shape, strides, offsets, trivial):
        out[operand_offset(i, shape, strides, offsets, 0, trivial)] = binary_op(
            op, a[operand_offset(i, shape, strides, offsets, 1, trivial)],
            b[operand_offset(i, shape, strides, offsets, 2, trivial)], alpha)
    return element


def _ternary_element(op):
    @cuda.jit(device=True)
    def element(out, a, b, c, value, i, shape, strides, offsets, trivial):
        out[operand_offset(i, shape, strides, offsets, 0, trivial)] = ternary_op(
            op, a[operand_offset(i, shape, strides, offsets, 1, trivial)],
            b[operand_offset(i, shape, strides, offsets, 2, trivial)],
            c[operand_offset(i, shape, strides, offsets, 3, trivial)], value)
    return element


def _copy_element(cast):
    """Converts with ``cast`` (the output's NumPy type), as ATen's copy does with
    ``static_cast<dst_t>``: explicit, because under the simulator NumPy refuses to store an
    out-of-range integer (int16 300 into int8) where C, Numba and torch wrap it around."""
    @cuda.jit(device=True)
    def element(out, a, b, c, scalar, i, shape, strides, offsets, trivial):
        out[operand_offset(i, shape, strides, offsets, 0, trivial)] = cast(
            a[operand_offset(i, shape, strides, offsets, 1, trivial)])
    return element


@cuda.jit(device=True)
def _fill_element(out, a, b, c, value, i, shape, strides, offsets, trivial):
    out[operand_offset(i, shape, strides, offsets, 0, trivial)] = value


_elements, _kernels = {}, {}


def _cached(table, key, build):
    if key not in table:
        table[key] = build()
    return table[key]


def gpu_kernel(key, build_element, buffers, scalar, shape, strides, offsets, casting=False):
    """Run one elementwise op: ``buffers`` are the output then up to three inputs."""
    element = _cached(_elements, key, build_element)
    itemsizes = [np.dtype(b.dtype).itemsize for b in buffers]
    arrays = list(buffers) + [buffers[0]] * (4 - len(buffers))     # unused operand slots
    for launch in launch_plan(itemsizes, Geometry(shape, strides, offsets), casting=casting):
        kernel = _cached(_kernels, (key, launch.kernel, launch.vec_size, launch.elems_per_thread),
                         lambda launch=launch: _kernel(element, launch))
        with np.errstate(all="ignore"):    # the simulator computes with NumPy scalars
            kernel[grid(launch), NUM_THREADS](*arrays, scalar, launch.numel, *to_device_meta(*launch.geometry))


def unary_loop(op, out, a, shape, strides, offsets):
    gpu_kernel(("unary", op), lambda: _unary_element(op), (out, a), 0, shape, strides, offsets)


def binary_loop(op, out, a, b, alpha, shape, strides, offsets):
    gpu_kernel(("binary", op), lambda: _binary_element(op), (out, a, b), alpha, shape, strides, offsets)


def ternary_loop(op, out, a, b, c, value, shape, strides, offsets):
    gpu_kernel(("ternary", op), lambda: _ternary_element(op), (out, a, b, c), value, shape, strides, offsets)


def copy_loop(out, a, shape, strides, offsets):
    cast = np.dtype(out.dtype).type
    casting = np.dtype(out.dtype) != np.dtype(a.dtype)
    gpu_kernel(("copy", cast), lambda: _copy_element(cast), (out, a), 0, shape, strides, offsets, casting)


def fill_loop(out, value, shape, strides, offsets):
    gpu_kernel(("fill",), lambda: _fill_element, (out,), value, shape, strides, offsets)
