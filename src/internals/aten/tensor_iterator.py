"""TensorIterator: from an elementwise op's operands to the loops a kernel runs.

Mirrors ``aten/src/ATen/TensorIterator.cpp``. ``build`` follows its steps:

1. ``compute_shape``: broadcast the inputs' shapes.
2. ``fast_set_up``: if every input has that shape and they share a dense layout, the output
   takes it and the whole op is one flat loop.
3. Otherwise ``compute_strides`` (stride 0 along broadcast dims), ``reorder_dimensions`` (sort
   dims by ascending stride, ties going to the first operand that can break them) and allocate
   the output in that order, so it inherits its inputs' layout.
4. ``coalesce_dimensions``: merge neighbouring dims that every operand walks as one.

Strides here are in elements (torch keeps bytes), and dimension 0 is the fastest-moving one,
as in torch after reordering.
"""
import numpy as np

from ..c10.tensor_impl import contiguous_strides, is_channels_last, is_contiguous, is_non_overlapping_and_dense

__all__ = ["broadcast_shapes", "Geometry", "geometry", "output_layout", "coalesce", "check_no_overlap"]


def broadcast_shapes(*shapes):
    """``compute_shape``: fold the operands' shapes into one, pair by pair, with ``infer_size``."""
    result = ()
    for shape in shapes:
        result = infer_size(result, tuple(shape)) if result else tuple(shape)
    return result


def infer_size(a, b):
    """``infer_size``: align two shapes on the right; sizes must match or be 1.

    Walks from the last dim, as torch does, so a mismatch is reported at the last dim that has
    one, numbered in the result ("tensor a" is the shape so far, "tensor b" the new operand's).
    """
    if a == b:                  # the usual case, and nothing to check
        return a
    ndim = max(len(a), len(b))
    result = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if offset < len(a) else 1
        size_b = b[len(b) - 1 - offset] if offset < len(b) else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                               f"at non-singleton dimension {i}")
        result[i] = size_b if size_a == 1 else size_a
    return tuple(result)


class Geometry:
    """What a loop needs: ``shape`` (fastest first), ``strides[k, d]`` and ``offsets[k]``."""

    def __init__(self, shape, strides, offsets):
        if not shape:           # a 0-dim op is a loop of one element
            shape, strides = [1], [[0] for _ in strides]
        self.shape = np.array(shape, dtype=np.int64)
        self.strides = np.array(strides, dtype=np.int64).reshape(len(offsets), len(shape))
        self.offsets = np.array(offsets, dtype=np.int64)

    def numel(self):
        return int(np.prod(self.shape))


def _operand_strides(impl, shape):
    """``compute_strides``: the operand's strides over the broadcast shape (0 where broadcast)."""
    lead = len(shape) - len(impl.sizes)
    strides = [0] * lead
    for i, (size, stride) in enumerate(zip(impl.sizes, impl.strides)):
        strides.append(0 if size == 1 and shape[lead + i] != 1 else stride)
    return strides


def _reorder(shape, strides):
    """``reorder_dimensions``: a permutation putting dims in ascending-stride order.

    ``perm[i]`` is the original dim that lands at position i (position 0 is the fastest). It
    starts as n-1, ..., 0 (row-major) and an insertion sort moves a dim only when some operand
    strictly prefers it, so broadcast (stride 0) dims and ties keep their row-major place.
    """
    def should_swap(d0, d1):
        for op_strides in strides:
            s0, s1 = op_strides[d0], op_strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:   # equal strides: the smaller size goes first
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[d0], perm[d1])
            if cmp > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif cmp < 0:
                break
    return perm


def _output_strides(shape, perm):
    """Contiguous strides in the permuted order (``compatible_stride`` + ``invert_perm``)."""
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous_strides(shape)
    strides, step = [0] * len(shape), 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _fast_layout(impls):
    """``compute_fast_setup_type``: the strides every operand shares, if they allow one flat loop."""
    if all(is_contiguous(i.sizes, i.strides) for i in impls):
        return "contiguous"
    if all(is_channels_last(i.sizes, i.strides) for i in impls):
        return "channels_last"
    if all(is_non_overlapping_and_dense(i.sizes, i.strides) for i in impls):
        if all(i.strides == impls[-1].strides for i in impls):
            return impls[-1].strides
    return None


def _channels_last_strides(sizes):
    n, c, h, w = sizes
    return (h * w * c, 1, w * c, c)


def coalesce(shape, strides):
    """``coalesce_dimensions``: merge dim d into the previous one where every operand allows.

    ``shape`` is fastest-first; ``strides`` a list per operand. Returns new lists.
    """
    if not shape:
        return [], [[] for _ in strides]
    shape, strides = list(shape), [list(s) for s in strides]
    prev = 0
    for d in range(1, len(shape)):
        mergeable = shape[prev] == 1 or shape[d] == 1 or all(
            shape[prev] * s[prev] == s[d] for s in strides)
        if mergeable:
            if shape[prev] == 1:
                for s in strides:
                    s[prev] = s[d]
            shape[prev] *= shape[d]
        else:
            prev += 1
            if prev != d:
                for s in strides:
                    s[prev] = s[d]
                shape[prev] = shape[d]
    return shape[:prev + 1], [s[:prev + 1] for s in strides]


def output_layout(input_impls, shape):
    """The strides torch gives a fresh output of an elementwise op over these inputs."""
    key = (tuple(shape), tuple([(i.sizes, i.strides) for i in input_impls]))
    strides = _layouts.get(key)
    if strides is None:
        strides = _layouts.put(key, _output_layout(input_impls, shape))
    return strides


def _output_layout(input_impls, shape):
    same_shape = all(i.sizes == shape for i in input_impls)
    if same_shape and input_impls:
        fast = _fast_layout(input_impls)
        if fast == "contiguous":
            return contiguous_strides(shape)
        if fast == "channels_last":
            return _channels_last_strides(shape)
        if fast is not None:
            return fast
    strides = [_operand_strides(i, shape) for i in input_impls]
    return _output_strides(shape, _reorder(shape, strides))


def geometry(impls, shape):
    """Loop geometry over ``impls`` (output first) sharing the broadcast ``shape``."""
    key = (tuple(shape), tuple([(i.sizes, i.strides, i.storage_offset) for i in impls]))
    g = _geometries.get(key)
    if g is None:
        g = _geometries.put(key, _geometry(impls, shape))
    return g


class _Memo(dict):
    """Layouts computed before, by operand sizes and strides: a training loop asks for the same
    few again and again, and recomputing them in Python would cost more than a small kernel.
    (Kernels only read a Geometry's arrays, so one can be shared.) Bounded: cleared when full."""

    def put(self, key, value, limit=4096):
        if len(self) >= limit:
            self.clear()
        self[key] = value
        return value


_layouts, _geometries = _Memo(), _Memo()


def _geometry(impls, shape):
    strides = [_operand_strides(i, shape) for i in impls]
    perm = _reorder(shape, strides)
    fast_shape = [shape[d] for d in perm]
    fast_strides = [[s[d] for d in perm] for s in strides]
    fast_shape, fast_strides = coalesce(fast_shape, fast_strides)
    return Geometry(fast_shape, fast_strides, [i.storage_offset for i in impls])


def _overlap(a, b):
    """``get_overlap_status``: 'full', 'partial' or None for two views."""
    if a is b:
        return "full"
    if a.numel() == 0 or b.numel() == 0 or a.storage is not b.storage:
        return None
    if not (a.is_non_overlapping_and_dense() and b.is_non_overlapping_and_dense()):
        return None     # too hard to tell: torch lets it through too
    a0, a1 = a.storage_offset * a.dtype.itemsize, (a.storage_offset + a.numel()) * a.dtype.itemsize
    b0, b1 = b.storage_offset * b.dtype.itemsize, (b.storage_offset + b.numel()) * b.dtype.itemsize
    if (a0, a1) == (b0, b1):
        return "full" if a.strides == b.strides else "partial"
    return "partial" if a0 < b1 and b0 < a1 else None


def has_internal_overlap(impl):
    """``has_internal_overlap``: some element reachable twice (a stride-0 dim of size > 1)."""
    if impl.is_non_overlapping_and_dense():
        return False
    return any(st == 0 and n > 1 for n, st in zip(impl.sizes, impl.strides))


def check_no_overlap(out, inputs):
    """TensorIterator's ``check_mem_overlap``: refuse writes that would race with themselves."""
    if has_internal_overlap(out):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers "
                           "to a single memory location. Please clone() the tensor before performing "
                           "the operation.")
    for i in inputs:
        if _overlap(out, i) == "partial":
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to "
                               "tensor refer to a single memory location. Please clone() the tensor before "
                               "performing the operation.")
