"""Strided CPU loops for elementwise ops, mirroring ``aten/src/ATen/native/cpu/Loops.h``.

Every loop takes typed flat buffers (the whole storage of each operand), never Tensor objects,
plus the iteration geometry a TensorIterator computed:

* ``shape``: sizes with dimension 0 the fastest-moving (TensorIterator's order);
* ``strides[k, d]``: operand k's stride, in elements, along dimension d (operand 0 is the output);
* ``offsets[k]``: operand k's storage offset.

The work is cut into chunks of ``GRAIN`` elements along dimension 0 (``at::internal::GRAIN_SIZE``)
and the chunks run in parallel; a small op runs on the calling thread instead (a serial build of
the same loop, see ``parallel_for.pick``), as ``at::parallel_for`` does below its grain size. A chunk whose
operands are all unit-stride takes a plain indexed loop that LLVM vectorises: over slices indexed
from 0, so that LLVM can see no index is negative and drop Numba's wraparound check (which would
otherwise keep the loop scalar). So does a chunk
with one scalar operand (stride 0, as ``x * 2`` has), read once: ``Loops.h``'s vectorized loop
has the same two cases (``is_contiguous`` and ``is_contiguous_scalar``).

A loop is built once per op number by a factory that closes over it, as on CUDA: Numba types a
closed-over int as a compile-time literal, so ``binary_op``'s overload resolves the op while
typing and each (op, dtypes) pair compiles to its own loop. The int closure pickles the same way
in every process, so Numba's on-disk cache (``cache=True``) finds the compiled loop next time.
That is why the loop closes over the op and nothing else (a closure over a jitted function would
miss the cache in every new process: a dispatcher pickles with an id of its own process).

Each chunk's branches are written out in the loop's own body, not in a helper inlined into it:
Numba inlines a function by deep-copying its IR into every caller, which took a quarter of each
loop's compile time, and a cold test run compiles some 450 of these loops (one per op and dtypes).
"""
import numpy as np
from numba import njit, prange

from ..offset_calculator import index_to_offset
from ..scalar_ops import IDENTITY, binary_op, ternary_op, unary_op
from .parallel_for import GRAIN, parallel_loop, pick  # GRAIN: elements per parallel chunk


@njit(inline="always")
def _start(row, shape, strides, offsets, k):
    """Element index at which operand ``k`` starts outer row ``row`` (dims 1.. are outer)."""
    return offsets[k] + index_to_offset(row, shape, strides[k], 1)


@njit(inline="always")
def _tasks(shape):
    """(rows, chunks per row): the parallel tasks of one loop."""
    rows = 1
    for d in range(1, shape.size):
        rows *= shape[d]
    return rows, (shape[0] + GRAIN - 1) // GRAIN


@njit(inline="always")
def _span(task, per_row, shape):
    """The outer row and the [lo, hi) range of dimension 0 that one task covers."""
    lo = (task % per_row) * GRAIN
    return task // per_row, lo, min(lo + GRAIN, shape[0])


def _build_unary(op):
    @parallel_loop(error_model="numpy")
    def loop(out, a, in_place, shape, strides, offsets):
        rows, per_row = _tasks(shape)
        for t in prange(rows * per_row):
            row, lo, hi = _span(t, per_row, shape)
            s0, s1 = strides[0, 0], strides[1, 0]
            p0, p1 = _start(row, shape, strides, offsets, 0), _start(row, shape, strides, offsets, 1)
            if s0 == 1 and s1 == 1 and in_place and p0 == p1:      # ``x.exp_()``: see ``_IN_PLACE``
                x = a[p1 + lo:p1 + hi]
                for i in range(hi - lo):
                    x[i] = unary_op(op, x[i])
            elif s0 == 1 and s1 == 1:
                o, x = out[p0 + lo:p0 + hi], a[p1 + lo:p1 + hi]
                for i in range(hi - lo):
                    o[i] = unary_op(op, x[i])
            elif s0 == 1 and s1 == 0:       # one input value for every output: a fill
                o, y = out[p0 + lo:p0 + hi], unary_op(op, a[p1])
                for i in range(hi - lo):
                    o[i] = y
            else:
                for i in range(lo, hi):
                    out[p0 + i * s0] = unary_op(op, a[p1 + i * s1])
    return loop


def _build_binary(op):
    @parallel_loop(error_model="numpy")
    def loop(out, a, b, alpha, in_place, shape, strides, offsets):
        rows, per_row = _tasks(shape)
        for t in prange(rows * per_row):
            row, lo, hi = _span(t, per_row, shape)
            s0, s1, s2 = strides[0, 0], strides[1, 0], strides[2, 0]
            p0 = _start(row, shape, strides, offsets, 0)
            p1 = _start(row, shape, strides, offsets, 1)
            p2 = _start(row, shape, strides, offsets, 2)
            if s0 == 1 and s1 == 1 and s2 <= 1 and in_place and p0 == p1:     # ``x.add_(y)``: see ``_IN_PLACE``
                x = a[p1 + lo:p1 + hi]
                if s2 == 1:
                    ys = b[p2 + lo:p2 + hi]
                    for i in range(hi - lo):
                        x[i] = binary_op(op, x[i], ys[i], alpha)
                else:
                    y = b[p2]       # read once, as below
                    for i in range(hi - lo):
                        x[i] = binary_op(op, x[i], y, alpha)
            elif s0 == 1 and s1 == 1 and s2 == 1:
                o, x, y = out[p0 + lo:p0 + hi], a[p1 + lo:p1 + hi], b[p2 + lo:p2 + hi]
                for i in range(hi - lo):
                    o[i] = binary_op(op, x[i], y[i], alpha)
            elif s0 == 1 and s1 == 1 and s2 == 0:    # ``x * 2``: a scalar operand, read once
                o, x, y = out[p0 + lo:p0 + hi], a[p1 + lo:p1 + hi], b[p2]
                for i in range(hi - lo):
                    o[i] = binary_op(op, x[i], y, alpha)
            elif s0 == 1 and s1 == 0 and s2 == 1:
                o, x, y = out[p0 + lo:p0 + hi], a[p1], b[p2 + lo:p2 + hi]
                for i in range(hi - lo):
                    o[i] = binary_op(op, x, y[i], alpha)
            else:
                for i in range(lo, hi):
                    out[p0 + i * s0] = binary_op(op, a[p1 + i * s1], b[p2 + i * s2], alpha)
    return loop


class _Compiled(dict):
    """The loops (``Twins``) of each ("unary", "binary" or "ternary", op), built on first use. A
    hit is a plain dict lookup, in C; a miss runs ``__missing__`` (two threads may both build
    one: the same loops, either one kept)."""

    def __missing__(self, key):
        kind, op = key
        loops = self[key] = _BUILDERS[kind](op)
        return loops


_loops = _Compiled()


# ``_IN_PLACE``: in ``x.add_(y)`` the output is the first input. Two slices of one array are two
# arrays to LLVM: before vectorising ``o[i] = x[i] + y[i]`` it checks at run time that o does not
# overlap x, finds that it does, and runs its scalar version of the loop (half the speed here).
# So when ``out`` is ``a`` (the same typed buffer: same storage, same dtype) and both start at the
# same element, the loop stores through ``x`` itself, and LLVM has nothing to check.
def unary_loop(op, out, a, shape, strides, offsets):
    pick(_loops["unary", op], shape)(out, a, out is a, shape, strides, offsets)


def binary_loop(op, out, a, b, alpha, shape, strides, offsets):
    pick(_loops["binary", op], shape)(out, a, b, alpha, out is a, shape, strides, offsets)


def _build_ternary(op):
    @parallel_loop(error_model="numpy")
    def loop(out, a, b, c, value, in_place, shape, strides, offsets):
        rows, per_row = _tasks(shape)
        for t in prange(rows * per_row):
            row, lo, hi = _span(t, per_row, shape)
            s0, s1, s2, s3 = strides[0, 0], strides[1, 0], strides[2, 0], strides[3, 0]
            p0 = _start(row, shape, strides, offsets, 0)
            p1 = _start(row, shape, strides, offsets, 1)
            p2 = _start(row, shape, strides, offsets, 2)
            p3 = _start(row, shape, strides, offsets, 3)
            if s0 == 1 and s1 == 1 and s2 == 1 and s3 == 1 and in_place and p0 == p1:   # ``p.addcdiv_(m, d)``
                # ``a`` is ``out`` here; read it as ``out``, so that the branch also types for ``where``,
                # whose ``a`` is a bool condition (never its output)
                x, y, z = out[p1 + lo:p1 + hi], b[p2 + lo:p2 + hi], c[p3 + lo:p3 + hi]
                for i in range(hi - lo):
                    x[i] = ternary_op(op, x[i], y[i], z[i], value)
            elif s0 == 1 and s1 == 1 and s2 == 1 and s3 == 1:
                o, x, y, z = out[p0 + lo:p0 + hi], a[p1 + lo:p1 + hi], b[p2 + lo:p2 + hi], c[p3 + lo:p3 + hi]
                for i in range(hi - lo):
                    o[i] = ternary_op(op, x[i], y[i], z[i], value)
            elif s0 == 1 and s1 == 1 and s2 == 1 and s3 == 0:
                # a scalar last operand: relu's backward, where(x > 0, g, 0)
                o, x, y, z = out[p0 + lo:p0 + hi], a[p1 + lo:p1 + hi], b[p2 + lo:p2 + hi], c[p3]
                for i in range(hi - lo):
                    o[i] = ternary_op(op, x[i], y[i], z, value)
            else:
                for i in range(lo, hi):
                    out[p0 + i * s0] = ternary_op(op, a[p1 + i * s1], b[p2 + i * s2], c[p3 + i * s3], value)
    return loop


def ternary_loop(op, out, a, b, c, value, shape, strides, offsets):
    """Three inputs and a number: ``where`` (its condition first, no number) and ``addcmul``/``addcdiv``."""
    pick(_loops["ternary", op], shape)(out, a, b, c, value, out is a, shape, strides, offsets)


_BUILDERS = {"unary": _build_unary, "binary": _build_binary, "ternary": _build_ternary}


def copy_loop(out, a, shape, strides, offsets):
    """Copy with a cast to ``out``'s dtype: the identity op, converted as C converts on the store.

    On the calling thread (what ``pick`` chooses for one grain or less, or after
    ``set_num_threads(1)``) the cast is NumPy's, over views of the two buffers: ``np.copyto``
    converts element by element as C does, so it gives torch's ``static_cast`` bits wherever C
    defines the result, and it is compiled already. The identity loop compiles once per (output,
    input) dtype pair, about a second each: 40 of the 63 loops a cold run of the type promotion
    tests compiled. Past a grain the parallel loop runs, as ``at::parallel_for`` does."""
    twins = _loops["unary", IDENTITY]
    chosen = pick(twins, shape)
    if chosen is twins.serial and not _undefined_in_c(out, a):
        _numpy_copy(out, a, shape, strides, offsets)
    else:
        chosen(out, a, out is a, shape, strides, offsets)


def _undefined_in_c(out, a):
    """A float converted to an integer, where C leaves a value outside the integer's range (and
    NaN) undefined: the answer is the conversion instructions'. NumPy picks other instructions for
    a strided loop than for a contiguous one (float32 -1e30 to uint32: 0 strided, 2**31
    contiguous), so these pairs keep the compiled loop, the road they took before, whose answers
    for such values equal torch's on this machine (checked once, not tested: such a cast is
    undefined, CONTRIBUTING.md)."""
    return a.dtype.kind == "f" and out.dtype.kind in "iu"


# (input, output) type characters of a cast that can overflow to infinity (float64 1e300 to
# float32, as C gives it), or meet a signalling NaN (float32 to float64: the fnuz float8 NaN
# is one, and the cast quiets it, as C's does): NumPy then warns, which torch does not
_MAY_OVERFLOW = {(a, o) for a in "dD" for o in "fF"} | {("f", "d"), ("F", "D")}


def _view(buffer, sizes, strides, offset):
    """The elements one operand of a loop visits, as a NumPy view of its buffer: the loop's
    geometry (dimension 0 fastest, strides in elements) turned round into NumPy's."""
    size = buffer.itemsize
    return np.ndarray(sizes[::-1], buffer.dtype, buffer, offset * size, [s * size for s in strides[::-1]])


def _numpy_copy(out, a, shape, strides, offsets):
    sizes, strides, (p, q) = shape.tolist(), strides.tolist(), offsets.tolist()
    if strides == [[1], [1]]:       # contiguous (coalesced into one dim): slices, the cheapest views
        o, x = out[p:p + sizes[0]], a[q:q + sizes[0]]
    else:
        o, x = _view(out, sizes, strides[0], p), _view(a, sizes, strides[1], q)
    if (a.dtype.char, out.dtype.char) in _MAY_OVERFLOW:
        with np.errstate(over="ignore", invalid="ignore"):
            np.copyto(o, x, casting="unsafe")
    else:
        np.copyto(o, x, casting="unsafe")


def fill_loop(out, value, shape, strides, offsets):
    """A fill is a copy from one value that every element reads: an operand of stride 0."""
    source = np.full(1, value, dtype=out.dtype)
    copy_loop(out, source, shape, np.vstack((strides, np.zeros_like(strides))),
              np.array((offsets[0], 0), dtype=np.int64))
