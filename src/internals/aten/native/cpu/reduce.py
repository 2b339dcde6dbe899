"""CPU reductions (``aten/src/ATen/native/cpu/Reduce.h``, ``ReduceOpsKernel.cpp``, ``SumKernel.cpp``).

The caller splits the input's dims into *outer* ones (kept: one output element each) and
*inner* ones (reduced), both fastest-first and coalesced; the output is contiguous. Which loop
runs depends on where the unit stride is, as in ATen's ``binary_kernel_reduce_vec``:

* **contiguous**: the reduced dim 0 has stride 1 (``x.sum(-1)``). Each output element is one
  task; its rows are folded in blocks of ``BLOCK`` elements by a plain indexed loop that LLVM
  vectorises, keeping several vector accumulators (allowed by ``reassoc``).
* **columns**: the kept dim 0 has stride 1 (``x.sum(0)`` of a row-major matrix). A task owns a
  block of ``WIDTH`` neighbouring outputs and sweeps the reduced positions, folding each
  contiguous row segment into a vector of column partials: the inner loop runs along memory.
* **strided**: anything else (e.g. every other column); one task per output element, walking
  its inputs with a strided loop, folded in the same blocks and ladder as the contiguous loop.
  (The caller orders the reduced dims by stride first, so a transposed input's full sum is
  contiguous, not strided.)

Each loop body is one task, run by a ``prange`` driver compiled twice (``parallel_for``): on the
thread pool, or for a small input or after ``set_num_threads(1)`` on the calling thread (as
``at::parallel_for`` does).

Float sums are accurate as torch's cascade sum (``cascade_sum`` in ``SumKernel.cpp``) is: partial
results are folded into a short ladder of accumulators, each taking ``FAN`` values before it is
added to the next, so no accumulator grows to many times the size of what it is adding. A float32
or float64 sum along contiguous rows goes further and follows torch's own order (``_cascade_task``),
so that it has torch's bits, up to 32,768 elements (where torch's sum runs on one thread); columns,
strided sums and larger ones keep the ladder above, which runs at memory speed.
"""
import math

import numpy as np
from numba import njit, prange

from ..offset_calculator import index_to_offset
from ..scalar_ops import AMAX, AMIN, SUM, arg_better, like, reduce_combine
from .parallel_for import parallel_loop, pick

BLOCK = 2048    # elements folded by one vectorised pass of the contiguous loop (long: its end is a horizontal sum)
WIDTH = 1024    # outputs per task of the columns loop: a 4 KiB page per row, partials stay in L1
FAN = 16        # values an accumulator of the ladder takes before it moves up a level
CASCADE_SUM = "cascade sum"     # the kernels' key for a float sum: torch's order on contiguous rows
SERIAL_SUM = 32768              # at::internal::GRAIN_SIZE: torch sums up to this many elements on one thread


@njit(cache=True)
def _numel(shape, first_dim):
    n = 1
    for d in range(first_dim, shape.size):
        n *= shape[d]
    return n


@njit(cache=True)
def _segment(a, base, r, inner_shape, inner_strides, width):
    """The ``width`` inputs of reduced position ``r`` for the columns loop, as a slice: indexing
    a slice from 0 lets LLVM see the index is never negative, so it drops Numba's wraparound
    check (which would otherwise turn every vector load into a gather)."""
    p = base + index_to_offset(r, inner_shape, inner_strides, 0)
    return a[p:p + width]


# The loop bodies, one task each, inlined into a parallel driver and a serial one (see ``_build_reduce``).
# ``op`` arrives as a compile-time constant, so each (op, dtype) pair compiles to straight-line code.
# Max and min start from the first input (they are idempotent, so it may be folded in again); sum
# and prod from ``init``.
@njit(inline="always")
def _climb(op, start, part, low, mid, high, n_low, n_mid):
    """Put one block's partial result on the ladder: ``low`` takes ``FAN`` of them, then moves
    up into ``mid``, which moves up into ``high`` after ``FAN`` of its own."""
    low, n_low = reduce_combine(op, low, part), n_low + 1
    if n_low == FAN:
        mid, low, n_low, n_mid = reduce_combine(op, mid, low), start, 0, n_mid + 1
        if n_mid == FAN:
            high, mid, n_mid = reduce_combine(op, high, mid), start, 0
    return low, mid, high, n_low, n_mid


@njit(inline="always")
def _contiguous_task(op, o, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    n0, rows = inner_shape[0], _numel(inner_shape, 1)
    base = offset + index_to_offset(o, outer_shape, outer_strides, 0)
    start = a[base] if op == AMAX or op == AMIN else init
    low, mid, high, n_low, n_mid = start, start, start, 0, 0    # the ladder
    for r in range(rows):
        p = base + index_to_offset(r, inner_shape, inner_strides, 1)
        for k0 in range(0, n0, BLOCK):
            part, block = start, a[p + k0:p + min(k0 + BLOCK, n0)]
            for k in range(block.size):
                part = reduce_combine(op, part, block[k])
            low, mid, high, n_low, n_mid = _climb(op, start, part, low, mid, high, n_low, n_mid)
    out[o] = reduce_combine(op, high, reduce_combine(op, mid, low))


# torch's float sum (``cascade_sum`` in ``SumKernel.cpp``, as built for AVX2: vectors of 32 bytes,
# 8 floats or 4 doubles), followed step by step so that a float32 or float64 sum along a contiguous
# row rounds as torch's does, bit for bit (single-threaded: torch splits a reduction of more than
# 32,768 elements between its threads). A row is read as vectors, four at a time (``row_sum``'s
# ILP); ``multi_row_sum`` adds each group into level 0 of a small ladder and empties a level into
# the next every ``2^level_power`` groups; then the levels, the leftover vectors, the four
# accumulators and finally the vector's lanes are added in order, after the scalar tail.
@njit(inline="always")
def _ceil_log2(n):
    bits, value = 0, 1
    while value < n:
        bits, value = bits + 1, value * 2
    return bits


@njit(inline="always")
def _add_group(acc, a, base, lanes):
    """Four vectors from ``base`` into level 0's four accumulators. The vector widths are spelled
    as constants, so that LLVM turns each into one vector add, as torch's ``Vectorized`` is."""
    if lanes == 8:
        for j in range(4):
            for k in range(8):
                acc[0, j, k] += a[base + j * 8 + k]
    elif lanes == 4:
        for j in range(4):
            for k in range(4):
                acc[0, j, k] += a[base + j * 4 + k]
    else:
        for j in range(4):
            for k in range(lanes):
                acc[0, j, k] += a[base + j * lanes + k]


@njit(inline="always")
def _add_vectors(dst, src, vectors, lanes):
    """dst += src, element by element (explicit loops: an array expression this small would cost
    more in Numba's ufunc machinery than the adds themselves)."""
    for j in range(vectors):
        for k in range(lanes):
            dst[j, k] += src[j, k]


@njit(inline="always")
def _move_level(acc, low, high, lanes):
    """Level ``low`` of the ladder added into level ``high``, then emptied."""
    _add_vectors(acc[high], acc[low], 4, lanes)
    acc[low, :, :lanes] = 0


@njit(inline="always")
def _multi_row_sum(acc, a, p, groups, lanes):
    """Levels 0-3 of ``acc`` (4 levels x 4 vectors x lanes) over ``groups`` groups of 4 vectors."""
    power = max(4, _ceil_log2(groups) // 4)
    step, mask = 1 << power, (1 << power) - 1
    acc[:] = 0
    i = 0
    while i + step <= groups:
        for _ in range(step):
            _add_group(acc, a, p + i * 4 * lanes, lanes)
            i += 1
        for level in range(1, 4):
            _move_level(acc, level - 1, level, lanes)
            if i & (mask << (level * power)):
                break
    for g in range(i, groups):
        _add_group(acc, a, p + g * 4 * lanes, lanes)
    for level in range(1, 4):
        _add_vectors(acc[0], acc[level], 4, lanes)


@njit(inline="always")
def _row_sum(acc, a, p, vectors, lanes):
    """The sum of ``vectors`` vectors from ``p``, as one vector: acc[0, 0]."""
    groups = vectors // 4
    _multi_row_sum(acc, a, p, groups, lanes)
    for v in range(groups * 4, vectors):
        acc[0, 0] += a[p + v * lanes:p + (v + 1) * lanes]
    for k in range(1, 4):
        _add_vectors(acc[0, 0:1], acc[0, k:k + 1], 1, lanes)


@njit(inline="always")
def _cascade_row(acc, a, p, n):
    """``vectorized_inner_sum`` (a row of at least one vector), else ``scalar_inner_sum``."""
    lanes = 32 // a.itemsize
    if n < lanes:                       # scalars, four accumulators: lanes of width 1
        _row_sum(acc[:, :, :1], a, p, n, 1)
        return acc[0, 0, 0]
    vectors = n // lanes
    _row_sum(acc, a, p, vectors, lanes)
    total = like(a[p], 0)
    for k in range(vectors * lanes, n):
        total += a[p + k]
    for k in range(lanes):
        total += acc[0, 0, k]
    return total


@njit(inline="always")
def _cascade_task(o, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    """A float sum of contiguous rows, each summed as torch's cascade and added to the output in
    turn (torch's store accumulates each row into the output, which starts at zero). Past
    ``SERIAL_SUM`` elements torch splits the rows between its threads, an order not followed here:
    the row sums then climb the ladder, which keeps a long sum accurate."""
    base = offset + index_to_offset(o, outer_shape, outer_strides, 0)
    acc = np.zeros((4, 4, 32 // a.itemsize), a.dtype)
    zero = like(a[base], 0)
    rows = _numel(inner_shape, 1)
    low, mid, high, n_low, n_mid = zero, zero, zero, 0, 0
    for r in range(rows):
        part = _cascade_row(acc, a, base + index_to_offset(r, inner_shape, inner_strides, 1), inner_shape[0])
        if rows * inner_shape[0] <= SERIAL_SUM:
            low += part
        else:
            low, mid, high, n_low, n_mid = _climb(SUM, zero, part, low, mid, high, n_low, n_mid)
    out[o] = high + (mid + low)


@njit(inline="always")
def _columns_task(op, task, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    n0, n_in = outer_shape[0], _numel(inner_shape, 0)
    blocks = (n0 + WIDTH - 1) // WIDTH
    orow, j0 = task // blocks, (task % blocks) * WIDTH
    width = min(WIDTH, n0 - j0)
    base = offset + index_to_offset(orow, outer_shape, outer_strides, 1) + j0
    start = a[base:base + width].copy() if op == AMAX or op == AMIN else np.full(width, init)
    row, low, mid, high = start.copy(), start.copy(), start.copy(), start.copy()
    n_row, n_low, n_mid = 0, 0, 0
    for r in range(0, n_in, 4):
        if r + 4 <= n_in:   # four rows per pass: a quarter of the loads and stores of ``row``
            s0 = _segment(a, base, r, inner_shape, inner_strides, width)
            s1 = _segment(a, base, r + 1, inner_shape, inner_strides, width)
            s2 = _segment(a, base, r + 2, inner_shape, inner_strides, width)
            s3 = _segment(a, base, r + 3, inner_shape, inner_strides, width)
            for j in range(width):
                pair = reduce_combine(op, reduce_combine(op, s0[j], s1[j]), reduce_combine(op, s2[j], s3[j]))
                row[j] = reduce_combine(op, row[j], pair)
        else:
            for i in range(r, n_in):
                s0 = _segment(a, base, i, inner_shape, inner_strides, width)
                for j in range(width):
                    row[j] = reduce_combine(op, row[j], s0[j])
        n_row += 4
        if n_row == FAN:    # move up the ladder, a whole vector at a time
            n_row, n_low = 0, n_low + 1
            for j in range(width):
                low[j], row[j] = reduce_combine(op, low[j], row[j]), start[j]
            if n_low == FAN:
                n_low, n_mid = 0, n_mid + 1
                for j in range(width):
                    mid[j], low[j] = reduce_combine(op, mid[j], low[j]), start[j]
                if n_mid == FAN:
                    n_mid = 0
                    for j in range(width):
                        high[j], mid[j] = reduce_combine(op, high[j], mid[j]), start[j]
    first = orow * n0 + j0
    for j in range(width):
        out[first + j] = reduce_combine(op, high[j], reduce_combine(op, mid[j], reduce_combine(op, low[j], row[j])))


@njit(inline="always")
def _strided_task(op, o, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    """The contiguous task's blocks and ladder, over inputs ``s0`` apart."""
    n0, s0 = inner_shape[0], inner_strides[0]
    base = offset + index_to_offset(o, outer_shape, outer_strides, 0)
    start = a[base] if op == AMAX or op == AMIN else init
    low, mid, high, n_low, n_mid = start, start, start, 0, 0
    for r in range(_numel(inner_shape, 1)):
        p = base + index_to_offset(r, inner_shape, inner_strides, 1)
        for k0 in range(0, n0, BLOCK):
            part = start
            for k in range(k0, min(k0 + BLOCK, n0)):
                part = reduce_combine(op, part, a[p + k * s0])
            low, mid, high, n_low, n_mid = _climb(op, start, part, low, mid, high, n_low, n_mid)
    out[o] = reduce_combine(op, high, reduce_combine(op, mid, low))


@njit(inline="always")
def _column_tasks(outer_shape):
    """Tasks of the columns loop: a block of ``WIDTH`` outputs of one outer row each."""
    return _numel(outer_shape, 1) * ((outer_shape[0] + WIDTH - 1) // WIDTH)


def _build_reduce(op):
    """The three loops for one op, each as ``Twins``: a small reduction runs on the calling
    thread, as a small elementwise op does (``parallel_for.pick``). ``op`` is closed over, so
    Numba sees a constant (see ``loops.py`` on why the closure holds nothing else). A float sum
    along contiguous rows runs torch's cascade instead, with no ``reassoc`` (its order is the point)."""
    if op == CASCADE_SUM:
        @parallel_loop()
        def contiguous(out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
            for o in prange(_numel(outer_shape, 0)):
                _cascade_task(o, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset)
        op = SUM                        # the other loops add as sum does
    else:
        @parallel_loop(fastmath={"reassoc"})
        def contiguous(out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
            for o in prange(_numel(outer_shape, 0)):
                _contiguous_task(op, o, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides,
                                 offset)

    @parallel_loop()
    def columns(out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
        for task in prange(_column_tasks(outer_shape)):
            _columns_task(op, task, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset)

    @parallel_loop()
    def strided(out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
        for o in prange(_numel(outer_shape, 0)):
            _strided_task(op, o, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset)

    return contiguous, columns, strided


_kernels = {}


def reduce_loop(op, out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    """out[o] = fold of ``op`` over the inner elements of output element o (out is contiguous)."""
    sizes = outer_shape.tolist() + inner_shape.tolist()
    if op == SUM and a.dtype in (np.float32, np.float64) and math.prod(sizes) <= SERIAL_SUM:
        op = CASCADE_SUM        # torch's bits where torch sums on one thread; past that, the faster ladder
    if op not in _kernels:
        _kernels[op] = _build_reduce(op)
    contiguous, columns, strided = _kernels[op]
    if inner_strides[0] == 1 and inner_shape[0] > 1:
        kernels = contiguous
    elif outer_strides[0] == 1 and outer_shape[0] > 1:
        kernels = columns
    else:
        kernels = strided
    pick(kernels, sizes)(out, a, init, outer_shape, outer_strides, inner_shape, inner_strides, offset)


@njit(inline="always")
def _arg_task(op, o, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    n0, s0 = inner_shape[0], inner_strides[0]
    base = offset + index_to_offset(o, outer_shape, outer_strides, 0)
    best, best_at = a[base], 0
    for r in range(_numel(inner_shape, 1)):
        p = base + index_to_offset(r, inner_shape, inner_strides, 1)
        for k in range(n0):
            x = a[p + k * s0]
            if arg_better(op, best, x):
                best, best_at = x, r * n0 + k
    out[o] = best_at


@parallel_loop()
def _arg_reduce(op, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    for o in prange(_numel(outer_shape, 0)):
        _arg_task(op, o, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset)


def arg_reduce_loop(op, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset):
    """out[o] = position (row-major over the reduced dims) of the max/min of element o's inputs."""
    pick(_arg_reduce, outer_shape.tolist() + inner_shape.tolist())(
        op, out, a, outer_shape, outer_strides, inner_shape, inner_strides, offset)
