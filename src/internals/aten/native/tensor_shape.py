"""Views: new sizes, strides and offset over the same storage, no data touched.

Mirrors ``aten/src/ATen/native/TensorShape.cpp`` and, for ``view``, ``computeStride`` in
``aten/src/ATen/TensorUtils.cpp``. Every view shares its base's storage and version counter.
"""
import math
import warnings

import numpy as np

from ...c10 import scalar_type as st
from ...c10.dispatch_key import DispatchKey
from ...c10.local_dispatch_key_set import tls
from ...c10.memory_format import contiguous_format
from ...c10.sparse_csr_tensor_impl import SparseCsrTensorImpl
from ...c10.sparse_tensor_impl import SparseTensorImpl
from ...c10.sym import is_symbolic, sym_max, sym_min
from ...c10.tensor_impl import (
    COMPRESSED_LAYOUTS,
    TensorImpl,
    check_in_bounds,
    contiguous_strides,
    is_channels_last,
    sparse_coo,
)
from ...c10.wrap_dim import dim_list_to_bitset, wrap_dim
from .. import dispatcher
from ..tensor_iterator import assert_no_internal_overlap, assert_no_overlap
from .copy import contiguous, fill_, same_device_copy
from .dispatch_stub import refuse_float8, refuse_unlisted_dtypes
from .elementwise import common_device
from .structured import set_output, structured
from .tensor_factories import empty


def make_view(base, sizes, strides, offset=None, dtype=None):
    view = alias_impl(base, sizes, strides, offset, dtype, base._impl.version_counter)
    return type(base)._from_impl(view, base=base)


def alias_impl(x, sizes, strides, offset, dtype, version_counter):
    """A new TensorImpl over ``x``'s storage (``alias_with_sizes_and_strides``)."""
    impl = x._impl
    alias = TensorImpl(impl.storage, sizes, strides, impl.storage_offset if offset is None else offset,
                       dtype or impl.dtype, version_counter)
    alias.key_set = impl.key_set      # an alias is what its base is: normal, inference, ...
    return alias


def detach(x):
    """The same data and version counter, out of the graph (``detach`` in ``TensorShape.cpp``).

    No view bookkeeping: its ``_base`` is None, as torch's, since autograd never looks through it;
    the shared version counter still lets autograd see in-place writes made through it.
    """
    impl = x._impl
    if impl.layout is sparse_coo:
        # A sparse tensor has no storage to alias: torch's ``shallow_copy_and_detach`` copies the
        # impl, so the detached tensor shares the indices and values tensors themselves (an in-place
        # ``mul_`` through either changes both) and the version counter.
        out = SparseTensorImpl(impl.sizes, impl.indices, impl.values, impl.coalesced)
        out.version_counter = impl.version_counter
        return type(x)._from_impl(out)
    if impl.layout in COMPRESSED_LAYOUTS:
        # the same for the compressed layouts: their three tensors shared, no strides to alias
        out = SparseCsrTensorImpl(impl.sizes, impl.compressed_indices, impl.plain_indices, impl.values, impl.layout)
        out.version_counter = impl.version_counter
        return type(x)._from_impl(out)
    return type(x)._from_impl(alias_impl(x, impl.sizes, impl.strides, None, None, impl.version_counter))


def alias(x):
    """``alias``: a view of the whole of ``x``, a new tensor over the same elements (``x[...]``)."""
    return make_view(x, x.shape, x.stride())


def _unsafe_view(x, shape):
    """``view``'s geometry, not tracked as a view: no base, a version counter of its own.

    For results no one else holds (``reshape``'s fresh copy, ``matmul``'s product), where view
    bookkeeping would only make in-place ops on them look like writes into a base.
    """
    shape = infer_size(_shape_arg(shape), x.numel())
    strides = compute_stride(tuple(x.shape), x.stride(), shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return type(x)._from_impl(alias_impl(x, shape, strides, None, None, None))


def as_strided(x, size, stride, storage_offset=None):
    size, stride, offset = _strided_geometry(x, size, stride, storage_offset)
    if x._impl.device.type == "meta" and not any(map(is_symbolic, (*size, *stride, offset))):
        return _meta_as_strided(x, size, stride, offset)
    return make_view(x, size, stride, offset)


def _strided_geometry(x, size, stride, storage_offset):
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):    # torch finds out while computing the bytes the view needs
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    return size, stride, x.storage_offset() if storage_offset is None else storage_offset


def _meta_as_strided(x, size, stride, offset):
    """``as_strided_tensorimpl_meta``: on the meta device the view is not held to its storage's
    bytes (there are none to read; torch's meta kernel skips that check), the other checks stay."""
    impl = x._impl
    check_in_bounds(math.inf, size, stride, offset, impl.dtype.itemsize, storage=impl.storage)
    view = TensorImpl(impl.storage, size, stride, offset, impl.dtype, impl.version_counter, fresh=True)
    view.key_set = impl.key_set
    return type(x)._from_impl(view, base=x)


def infer_size(shape, numel):
    """Resolve one -1 in ``shape`` (``infer_size_dv`` in ``aten/src/ATen/InferSize.h``)."""
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
            known *= s
    if -1 not in shape:
        if known != numel:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        return tuple(shape)
    if known == 0 and numel == 0:   # any size fits the -1: NumPy and torch refuse to guess
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
                           "dimension size -1 can be any value and is ambiguous")
    if known == 0 or numel % known:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    shape[shape.index(-1)] = numel // known
    return tuple(shape)


def compute_stride(old_sizes, old_strides, new_sizes):
    """``computeStride``: strides for ``new_sizes`` over the old layout, or None if impossible.

    Walk the old dims from the last, grouping them into chunks that are contiguous among
    themselves (each dim's stride is the next one's stride times its size). A chunk can be
    reshaped freely; the new dims must consume whole chunks.
    """
    if not old_sizes:    # a 0-dim tensor has one element: any shape of ones is a view of it
        return (1,) * len(new_sizes)
    numel = 1
    for s in old_sizes:
        numel *= s
    if numel == 0:
        return contiguous_strides(new_sizes) if old_sizes != tuple(new_sizes) else old_strides
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(old_sizes) - 1, -1, -1):
        tensor_numel *= old_sizes[tensor_d]
        if tensor_d == 0 or (old_sizes[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def view(x, *shape):
    impl = x._impl      # the sizes and strides as the kernel reads them (no Tensor accessors: no frames)
    shape = infer_size(_shape_arg(shape), impl.numel())
    strides = compute_stride(impl.sizes, impl.strides, shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    if (_traced_sizes(impl.sizes) or _traced_sizes(shape)) and impl.is_contiguous():
        sizes, strides = reshaped_geometry(impl.sizes, impl.strides, shape)
        return make_view(x, _fresh_symbols(sizes, impl.sizes), strides)
    return make_view(x, _view_sizes(impl.sizes, shape), strides)


def _traced_sizes(sizes):
    for n in sizes:     # (a loop, not ``any(generator)``: every view comes here)
        if type(n) is not int and is_symbolic(n):
            return True
    return False


def reshaped_geometry(sizes, strides, new):
    """The sizes and strides torch's symbolic ``view`` of a contiguous tensor gives: its Python
    reference (``_reshape_view_helper`` in ``torch/_refs``) builds each new size from the old
    ones, left to right -- a size equal to the old one is that one; else old sizes are
    multiplied (``flatten``) until the new size divides the product, which is then split
    (``split_dim``) into the new size and the rest -- so a view of ``[s75, s96]`` as ``(2, 6)``
    has sizes ``2`` and ``(s75*s96)//2``, expressions of the inputs' symbols, not the numbers;
    each step's strides are its own (a split's outer stride is the inner size times the stride)."""
    numel = 1
    for n in sizes:
        numel = numel * n
    if numel == 0 or not sizes or not new:     # torch's special cases take the sizes as given
        return tuple(new), contiguous_strides(new)
    if len(new) == 1:
        return (numel,), (1,)                   # ``as_strided(a, [a.numel()], [1])``
    if len(new) == 2 and len(sizes) == 1:
        return tuple(new), (new[1], 1)
    sizes, strides, i = list(sizes), list(strides), 0
    for length in new:
        if i >= len(sizes):         # a trailing new size of 1: the last size split by itself
            sizes.append(1)
            strides.append(strides[-1])
        elif length != sizes[i]:
            accum, end = sizes[i], i
            while accum % length != 0:
                end += 1
                accum = accum * sizes[end]
            sizes[i:end + 1], strides[i:end + 1] = [accum], [strides[end]]
            if accum != length:
                inner = accum // length
                sizes[i:i + 1], strides[i:i + 1] = [length, inner], [inner * strides[i], strides[i]]
        i += 1
    return tuple(sizes[:i]), tuple(strides[:i])      # trailing old sizes of 1 squeezed away


def _fresh_symbols(sizes, old):
    """The sizes as torch's view leaves them (see ``_view_sizes``): the input's own up to the
    first that changed, then each symbol a new node of the same expression."""
    out, kept = [], True
    for i, n in enumerate(sizes):
        kept = kept and i < len(old) and n is old[i]
        out.append(type(n)(type(n.node)(n.node.expr, n.node.shape_env, n.node.pytype))
                   if not kept and is_symbolic(n) else n)
    return tuple(out)


def _view_sizes(old, new):
    """The sizes a view's output carries when they are symbols. torch's symbolic ``view`` runs its
    Python reference (``_reshape_view_helper``), which keeps the input's own size where the new
    size is the old one at that place, up to the first that is not, and computes each later size
    afresh (``collapse_view``, ``split_dim``): a new symbol of the same value, which a tracer then
    reads back from the view's output, as torch's graph does (``sym_size(view_2, 0)``)."""
    for n in new:       # (a loop, not ``any(generator)``: every view comes here)
        if type(n) is not int and is_symbolic(n):
            break
    else:
        return new
    sizes, kept = [], True
    for i, n in enumerate(new):
        kept = kept and i < len(old) and _same_size(old[i], n)
        if kept:
            sizes.append(old[i])
        elif is_symbolic(n):
            sizes.append(type(n)(type(n.node)(n.node.expr, n.node.shape_env, n.node.pytype)))
        else:
            sizes.append(n)
    return tuple(sizes)


def _same_size(a, b):
    if a is b:
        return True
    try:
        return bool(a == b)
    except RuntimeError:      # a size that depends on data: not known to be the same
        return False


def reshape(x, *shape):
    """CompositeImplicitAutograd, as in torch: a view when the strides allow it, else a copy.

    It calls operators only, so autograd and modes see a ``view`` (a contiguous tensor, or any
    under a dispatch mode), an ``_reshape_alias`` (a tensor that is not contiguous), or a
    ``clone`` and an ``_unsafe_view`` of the copy (not tracked as a view: it owns its fresh
    storage alone).
    """
    if x.is_contiguous():   # torch's first case: the shape as given, -1 and all (``view(x, [-1])``)
        return dispatcher.call("view", x, list(_shape_arg(shape)))
    shape = infer_size(_shape_arg(shape), x.numel())
    strides = compute_stride(tuple(x.shape), x.stride(), shape)
    if strides is None:
        return dispatcher.call("_unsafe_view", dispatcher.call("clone", x, memory_format=contiguous_format),
                               list(shape))
    if _subclass_like(x) or any(map(is_symbolic, (*shape, *strides, *x.shape))):
        return dispatcher.call("view", x, list(shape))      # what a mode or a tracer can replay
    return dispatcher.call("_reshape_alias", x, list(shape), list(strides))


def _reshape_alias(x, size, stride):
    """``reshape``'s view of a tensor that is not contiguous (``_reshape_alias`` in
    ``TensorShape.cpp``): the strides ``reshape`` computed, the same storage offset. Its
    autograd node is ``ReshapeAliasBackward0``, where a contiguous tensor's reshape gives
    ``ViewBackward0``."""
    return make_view(x, tuple(size), tuple(stride))


def _subclass_like(x):
    """``isTensorSubclassLike``: a tensor subclass, or any tensor while a dispatch mode is on.
    torch's ``reshape`` calls ``view`` for those instead of ``_reshape_alias``."""
    return DispatchKey.Python in tls.included or DispatchKey.Python in x._impl.key_set


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def transpose(x, dim0, dim1):
    d0, d1 = wrap_dim(dim0, x.dim()), wrap_dim(dim1, x.dim())
    if x.dim() == 0:
        return make_view(x, (), ())
    sizes, strides = list(x.shape), list(x.stride())
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return make_view(x, sizes, strides)


def t(x):
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.dim()}D")
    return transpose(x, 0, 1) if x.dim() == 2 else make_view(x, x.shape, x.stride())


def permute(x, *dims):
    dims = _shape_arg(dims)
    if len(dims) != x.dim():
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {x.dim()} is not "
                           f"equal to len(dims) = {len(dims)}")
    dims = [wrap_dim(d, x.dim()) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return make_view(x, [x.shape[d] for d in dims], [x.stride()[d] for d in dims])


def _movedim_order(x, source, destination):
    """The permutation that moves dims ``source`` to ``destination`` (checked as torch checks them)."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    given = {"source": src, "destination": dst}
    if x.dim() == 0:     # a scalar's one dim is 0 or -1, and moving it changes nothing
        for d in src + dst:
            wrap_dim(d, 0)
        return []
    src = [wrap_dim(d, x.dim()) for d in src]
    dst = [wrap_dim(d, x.dim()) for d in dst]
    for name, wrapped in (("source", src), ("destination", dst)):
        if len(set(wrapped)) != len(wrapped):    # the message shows the dims as given
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given[name]})")
    order = [None] * x.dim()
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(x.dim()) if d not in src)
    return [o if o is not None else next(rest) for o in order]


def movedim(x, source, destination):
    """``movedim.int`` and ``movedim.intlist`` (CompositeImplicitAutograd, as torch's): a permute."""
    return dispatcher.call("permute", x, _movedim_order(x, source, destination))


def expand(x, *sizes, implicit=False):
    sizes = _shape_arg(sizes)
    if len(sizes) < x.dim():
        raise RuntimeError(f"expand({x._type_name()}{{{list(x.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({x.dim()})")
    lead = len(sizes) - x.dim()
    new_sizes, new_strides = [0] * len(sizes), [0] * len(sizes)
    # ``inferExpandGeometry`` walks from the last dim. A new leading dim is a size-1 dim whose
    # stride is the next dim's size * stride (as if it had always been there), then expanded.
    next_size, next_stride = 1, 0
    for i in range(len(sizes) - 1, -1, -1):
        size = sizes[i]
        if i < lead:
            if size < 0:
                raise RuntimeError(f"The expanded size of the tensor ({size}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            old, stride = 1, next_size * next_stride
        else:
            old, stride = x.shape[i - lead], x.stride()[i - lead]
        if size == -1:
            size = old
        if old != size:
            if old != 1:
                raise RuntimeError(f"The expanded size of the tensor ({size}) must match the existing size "
                                   f"({old}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                                   f"Tensor sizes: {list(x.shape)}")
            stride = 0
        new_sizes[i], new_strides[i] = size, stride
        next_size, next_stride = size, stride
    return make_view(x, new_sizes, new_strides)


def narrow(x, dim, start, length):
    """``narrow_symint`` (TensorShape.cpp): the checks in torch's order (the length's sign before
    the start's range) and its bound as torch writes it, ``start <= size - length``: with traced
    sizes the one sum recorded is the slice's end, as in torch's graph."""
    if x.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, x.dim())
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if not start <= size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return dispatcher.call("slice.Tensor", x, d, start, start + length, 1)     # CompositeImplicitAutograd


def narrow_tensor(x, dim, start, length):
    """``narrow.Tensor``: the start given as a 0-dim integer tensor, read with ``item()``."""
    if start.dim() != 0 or start.dtype.category != st.INTEGRAL:
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return narrow(x, dim, start.item(), length)


def slice_bounds(size, start, end):
    """``slice``'s start and end, wrapped if negative and clamped into ``[0, size]`` (None: the ends)."""
    start, end = 0 if start is None else start, size if end is None else end
    start, end = start + size if start < 0 else start, end + size if end < 0 else end
    start = min(max(start, 0), size)
    return start, min(max(end, start), size)


def slice_tensor(x, dim=0, start=None, end=None, step=1):
    """``slice.Tensor``: every ``step``-th element of ``[start, end)`` along ``dim`` (``x[1:3]``)."""
    if x.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, x.dim())
    start, end = slice_bounds(x.shape[d], start, end)
    return _slice(x, d, start, end, step)


def _slice(x, d, start, stop, step):
    """The view; as torch's int64 arithmetic, a step near 2**63 wraps the size and stride around
    (into a size of 0, or a negative stride that the view's check refuses)."""
    sizes, strides = list(x.shape), list(x.stride())
    offset = x.storage_offset() + start * strides[d]
    n = _wrap_int64(stop - start + step - 1)
    sizes[d] = max(0, abs(n) // step * (1 if n >= 0 else -1))     # C++ division truncates
    strides[d] = _wrap_int64(strides[d] * step)
    return make_view(x, sizes, strides, offset)


def _wrap_int64(v):
    if is_symbolic(v):      # a traced size: a size, never near 2**63
        return v
    return (v + 2**63) % 2**64 - 2**63


def select(x, dim, index):
    impl = x._impl
    if not impl.sizes:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(impl.sizes))
    size = impl.sizes[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(impl.sizes)} at "
                         f"dimension {d}")
    if index < 0:           # (an addition, not ``%``: the size may be a traced symbol)
        index += size
    sizes, strides = list(impl.sizes), list(impl.strides)
    offset = impl.storage_offset + index * strides[d]
    del sizes[d], strides[d]
    return make_view(x, sizes, strides, offset)


def squeeze(x, dim=None):
    if dim is None:
        dims = range(x.dim())
    else:
        dims = dim_list_to_bitset([dim] if isinstance(dim, int) else dim, x.dim())
    keep = [d for d in range(x.dim()) if not (d in dims and x.shape[d] == 1)]
    return make_view(x, [x.shape[d] for d in keep], [x.stride()[d] for d in keep])


def unsqueeze(x, dim):
    d = wrap_dim(dim, x.dim() + 1)
    sizes, strides = list(x.shape), list(x.stride())
    # The new dim's stride lets it sit in a contiguous layout (``inferUnsqueezeGeometry``).
    stride = 1 if d >= x.dim() else sizes[d] * strides[d]
    sizes.insert(d, 1)
    strides.insert(d, stride)
    return make_view(x, sizes, strides)


# The gradients of select and slice (TensorShape.cpp's ``select_backward_symint``,
# ``slice_backward``): zeros of the input's sizes with the gradient copied into the view.
def select_backward(grad_output, input_sizes, dim, index):
    out = dispatcher.call("zeros", list(input_sizes), dtype=grad_output.dtype, device=grad_output.device)
    dispatcher.call("copy_", dispatcher.call("select.int", out, dim, index), grad_output)
    return out


def slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = dispatcher.call("zeros", list(input_sizes), dtype=grad_output.dtype, device=grad_output.device)
    dispatcher.call("copy_", dispatcher.call("slice.Tensor", out, dim, start, end, step), grad_output)
    return out


# The in-place view operators (TensorShape.cpp's ``t_``, ``squeeze_``, ...): ``x`` itself takes
# the geometry its view would have; no element moves.
def _take_geometry(x, view):
    impl, v = x._impl, view._impl
    impl.sizes, impl.strides, impl.storage_offset = v.sizes, v.strides, v.storage_offset
    return x


def t_(x):
    return _take_geometry(x, t(x))


def transpose_(x, dim0, dim1):
    return _take_geometry(x, transpose(x, dim0, dim1))


def squeeze_(x, dim=None):
    return _take_geometry(x, squeeze(x, dim))


def unsqueeze_(x, dim):
    return _take_geometry(x, unsqueeze(x, dim))


def as_strided_(x, size, stride, storage_offset=None):
    """Bounds checked on the meta device too, as torch's ``as_strided_`` checks them."""
    return _take_geometry(x, make_view(x, *_strided_geometry(x, size, stride, storage_offset)))


def flatten(x, start_dim=0, end_dim=-1):
    """``flatten.using_ints`` (CompositeImplicitAutograd, as torch's): a reshape, or ``x`` itself
    when there is nothing to flatten."""
    s, e = wrap_dim(start_dim, x.dim()), wrap_dim(end_dim, x.dim())
    if x.dim() == 0:
        return dispatcher.call("reshape", x, [1])
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    n = 1
    for size in x.shape[s:e + 1]:
        n *= size
    return dispatcher.call("reshape", x, [*x.shape[:s], n, *x.shape[e + 1:]])


def unflatten(x, dim, sizes):
    """``unflatten.int`` (CompositeImplicitAutograd, as torch's): a view."""
    d = wrap_dim(dim, x.dim())
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_size(sizes, x.shape[d])
    except RuntimeError as e:     # reworded for unflatten, as torch's handle_unflatten_exception does
        if "is invalid for input of size" in str(e):
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
                               f"{d} ({x.shape[d]}) in the input tensor") from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    return dispatcher.call("view", x, [*x.shape[:d], *sizes, *x.shape[d + 1:]])


def diagonal(x, offset=0, dim1=0, dim2=1):
    d1, d2 = wrap_dim(dim1, x.dim()), wrap_dim(dim2, x.dim())
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    start = x.storage_offset()
    # sym_max/sym_min: with symbolic sizes the length stays a symbol (``Min(s0, s1 - 1)``, as
    # torch's), where Python's min would guard on which side is smaller
    if offset >= 0:
        length = sym_max(0, sym_min(x.shape[d1], x.shape[d2] - offset))
        if length:
            start += offset * x.stride()[d2]
    else:
        length = sym_max(0, sym_min(x.shape[d1] + offset, x.shape[d2]))
        if length:
            start -= offset * x.stride()[d1]
    keep = [d for d in range(x.dim()) if d not in (d1, d2)]
    sizes = [x.shape[d] for d in keep] + [length]
    strides = [x.stride()[d] for d in keep] + [x.stride()[d1] + x.stride()[d2]]
    return make_view(x, sizes, strides, start)


def unfold(x, dimension, size, step):
    d = wrap_dim(dimension, x.dim())
    extent = x.shape[d] if x.dim() else 1
    if size > extent:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {extent} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    sizes, strides = list(x.shape), list(x.stride())
    if x.dim() == 0:
        return make_view(x, [size], [1])
    sizes[d] = (extent - size) // step + 1
    inner_stride = strides[d]
    strides[d] *= step
    return make_view(x, sizes + [size], strides + [inner_stride])


def unfold_backward(grad_in, input_sizes, dim, size, step):
    """unfold's gradient (``UnfoldBackward.cpp``): zeros of the input's sizes, each window's
    slice added where the window sits; windows overlap when step < size, so the adds add up."""
    out = dispatcher.call("zeros", list(input_sizes), dtype=grad_in.dtype, device=grad_in.device)
    if not input_sizes:             # a 0-dim input has the one window of size 1
        return dispatcher.call("copy_", out, dispatcher.call("view", grad_in, []))
    d = wrap_dim(dim, len(input_sizes))
    sizes, strides = list(out.shape), list(out.stride())
    sizes[d], strides[d] = grad_in.shape[d], strides[d] * step
    for j in range(size):           # the j-th element of every window: one strided view of out
        view = dispatcher.call("as_strided", out, sizes, strides, j * out.stride(d))
        dispatcher.call("add_.Tensor", view, dispatcher.call("select.int", grad_in, -1, j))
    return out


def split(x, split_size, dim=0):
    """``split.Tensor``: pieces of ``split_size`` along ``dim``, the last one shorter."""
    if x.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:     # checked before the dim
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    d = wrap_dim(dim, x.dim())
    size = x.shape[d]
    if split_size == 0 and size:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    # Always at least one piece (an empty dim gives one empty piece).
    pieces = max(int((size + split_size - 1) // split_size), 1) if split_size else 1
    # the last piece's length as arithmetic, not a min(): under symbolic tracing it is an
    # expression of the size (``s96 - 4``), decided on by no guard, as TensorShape.cpp's split
    last = split_size - (split_size * pieces - size)
    return tuple(narrow(x, d, i * split_size, split_size if i < pieces - 1 else last) for i in range(pieces))


def split_sizes(x, split_size, dim=0):
    """``split.sizes``, CompositeImplicitAutograd: a list of sizes is ``split_with_sizes``."""
    return dispatcher.call("split_with_sizes", x, split_size, dim)


def split_with_sizes(x, split_sizes, dim=0):
    """Pieces of the given sizes along ``dim``, which must add up to its size."""
    if x.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x.dim())
    sections = list(split_sizes)
    if any(n < 0 for n in sections):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sections}")
    if sum(sections) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[d]} (input tensor's "
                           f"size at dimension {dim}), but got split_sizes={sections}")   # the dim as given
    out, start = [], 0
    for n in sections:
        out.append(narrow(x, d, start, n))
        start += n
    return tuple(out)


def chunk(x, chunks, dim=0):
    """``chunk`` (CompositeImplicitAutograd, as torch's): a ``split`` into pieces of the size that
    makes ``chunks`` of them, or ``chunks`` empty pieces of an empty dim (``split_with_sizes``)."""
    if x.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = x.shape[wrap_dim(dim, x.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return dispatcher.call("split_with_sizes", x, [0] * chunks, dim)
    return dispatcher.call("split.Tensor", x, split_size, dim)


# ---- unsafe_split (TensorShape.cpp): split's pieces, not tracked as views
def _unviewed(pieces):
    """Each piece over the same memory with a version counter of its own and no base, as torch's
    ``unsafe_split`` gives: for callers (the RNN cells) that never write into them, so autograd
    need not treat a write into one as a write into the input."""
    return tuple(type(p)._from_impl(alias_impl(p, tuple(p.shape), p.stride(), p.storage_offset(), None, None))
                 for p in pieces)


def unsafe_split(x, split_size, dim=0):
    return _unviewed(dispatcher.call("split.Tensor", x, split_size, dim))


def unsafe_split_with_sizes(x, split_sizes, dim=0):
    return _unviewed(dispatcher.call("split_with_sizes", x, split_sizes, dim))


def unsafe_chunk(x, chunks, dim=0):
    """``unsafe_chunk``, CompositeImplicitAutograd: chunk's arithmetic over ``unsafe_split``."""
    if x.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = x.shape[wrap_dim(dim, x.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return dispatcher.call("unsafe_split_with_sizes", x, [0] * chunks, dim)
    return dispatcher.call("unsafe_split.Tensor", x, split_size, dim)


# ---- tensor_split (TensorShape.cpp): pieces as ``slice.Tensor`` views, so each has SliceBackward0
def _tensor_split_dim(x, dim):
    if x.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    return wrap_dim(dim, x.dim())


def tensor_split_sections(x, sections, dim=0):
    """``sections`` pieces as even as can be: the first ``size % sections`` one longer."""
    d = _tensor_split_dim(x, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    shortest, longer = divmod(x.shape[d], sections)
    pieces, start = [], 0
    for k in range(sections):
        size = shortest + (k < longer)
        pieces.append(dispatcher.call("slice.Tensor", x, d, start, start + size))
        start += size
    return tuple(pieces)


def tensor_split_indices(x, indices, dim=0):
    """Pieces cut before each index (``slice`` clamps, so indices past the end give empties)."""
    d = _tensor_split_dim(x, dim)
    pieces, start = [], 0
    for end in indices:
        pieces.append(dispatcher.call("slice.Tensor", x, d, start, end))
        start = end
    pieces.append(dispatcher.call("slice.Tensor", x, d, start, x.shape[d]))
    return tuple(pieces)


def tensor_split(x, tensor_indices_or_sections, dim=0):
    """The tensor overload: a 0-dim long tensor is a number of sections, a 1-dim one indices
    (``dim`` is checked by the overload it calls)."""
    _tensor_split_dim(x, 0)
    t = tensor_indices_or_sections
    if t.device.type != "cpu":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {t.device}")
    if t.dtype is not st.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{t.dtype.torch_name}")
    if t.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {t.dim()} dims")
    if t.dim() == 0:
        return dispatcher.call("tensor_split.sections", x, int(t.item()), dim)
    return dispatcher.call("tensor_split.indices", x, [int(v) for v in t._host_values()], dim)


def _numpy_split(name, x, sections_or_indices, min_dim, dim):
    """hsplit/vsplit/dsplit (TensorShape.cpp): ``tensor_split`` along ``dim``; a count of sections
    must divide the dim's size."""
    if x.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with "
                           f"{x.dim()} dimensions!")
    if isinstance(sections_or_indices, int):
        if sections_or_indices == 0 or x.shape[dim] % sections_or_indices:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{x.shape[dim]} is not divisible by the split_size {sections_or_indices}!")
        return dispatcher.call("tensor_split.sections", x, sections_or_indices, dim)
    return dispatcher.call("tensor_split.indices", x, list(sections_or_indices), dim)


def hsplit(x, sections_or_indices):
    return _numpy_split("hsplit", x, sections_or_indices, 1, 0 if x.dim() == 1 else 1)


def vsplit(x, sections_or_indices):
    return _numpy_split("vsplit", x, sections_or_indices, 2, 0)


def dsplit(x, sections_or_indices):
    return _numpy_split("dsplit", x, sections_or_indices, 3, 2)


# ---------------------------------------------------------------------- joining and copies (TensorShape.cpp)
# These copy into a fresh output through the copy kernel (``copy.same_device_copy``), or move
# elements by offsets the host computed (``indexing.move``); the result is never a view. cat is
# structured, as torch's: a meta step (the checks, the output's sizes, dtype and memory format)
# and an impl step (each input copied into its slice), ``cat.out`` the primary form.
def _fresh(sizes, dtype, device):
    """A contiguous output, checked as ``empty`` checks its sizes (negative, or too many bytes)."""
    return empty(tuple(sizes), dtype=dtype, device=device)


def meta_cat(out, tensors, dim=0):
    """``TORCH_PRECOMPUTE_META_FUNC(cat)`` (TensorShape.cpp): the tensors, of one device, joinable
    along ``dim`` (a 1-d empty tensor joins anything, the legacy rule, and is skipped); the
    output of their sizes with ``dim``'s summed, in their promoted dtype, contiguous or
    channels-last when every input is (``cat_compute_output_memory_format``). A given ``out``
    sets the dtype, which the promoted one must cast to; once resized it may not reach an
    element twice nor share memory with an input."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    device = common_device(*tensors)
    dtype = st.result_type(*tensors)
    if out is not None:
        if not st.can_cast(dtype, out.dtype):
            raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                            f"{out.dtype.torch_name}")
        dtype = out.dtype
    kept = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)]
    if not kept:
        return set_output(out, (0,), dtype, device)
    if any(t.dim() == 0 for t in kept):
        i = next(i for i, t in enumerate(tensors) if t.dim() == 0)
        raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    first = kept[0]
    d = wrap_dim(dim, first.dim())
    for i, t in enumerate(tensors):
        if t.dim() == 1 and t.numel() == 0:
            continue
        if t.dim() != first.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.dim()} and {t.dim()}")
        for k in range(t.dim()):
            if k != d and t.shape[k] != first.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{first.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    sizes = list(first.shape)
    sizes[d] = sum(t.shape[d] for t in kept)
    strides = None
    if first.dim() == 4 and all(is_channels_last(tuple(t.shape), t.stride()) and not t.is_contiguous()
                                for t in tensors):
        n, c, h, w = sizes
        strides = (h * w * c, 1, w * c, c)
    given = out is not None
    out = set_output(out, sizes, dtype, device, strides)
    if given:
        assert_no_internal_overlap(out._impl)
        for t in tensors:
            assert_no_overlap(out._impl, t._impl)
    return out


def impl_cat(out, tensors, dim=0):
    """``TORCH_IMPL_FUNC(cat_out_cpu)``: each tensor copied (and cast) into its slice of the
    output along ``dim``, skipped 1-d empty ones aside."""
    kept = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)]
    if not kept or out.numel() == 0:
        return out
    d = wrap_dim(dim, kept[0].dim())
    start = 0
    for t in kept:
        same_device_copy(_slice(out, d, start, start + t.shape[d], 1), t)
        start += t.shape[d]
    return out


cat_out = structured(meta_cat, impl_cat)


def cat(tensors, dim=0):
    """``cat``'s derived functional kernel, for the joins written with it."""
    return impl_cat(meta_cat(None, tensors, dim), tensors, dim)


def stack(tensors, dim=0):
    """``stack`` (CompositeExplicitAutograd, as torch's): the tensors, all of one shape, along a
    new dim ``dim``, by ``cat`` of their unsqueezed views."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = wrap_dim(dim, tensors[0].dim() + 1)
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    return dispatcher.call("cat", [unsqueeze(t, d) for t in tensors], d)


def unbind(x, dim=0):
    """``unbind``: the slices along ``dim``, as views."""
    d = wrap_dim(dim, x.dim())
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return tuple(select(x, d, i) for i in range(x.shape[d]))


def repeat(x, repeats):
    """``repeat``: ``x`` tiled ``repeats[d]`` times along each dim (leading dims added as needed)."""
    from .indexing import element_offsets, move, walk  # indexing imports tensor_shape: a real cycle
    repeats = list(repeats)
    if len(repeats) < x.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    padded = _padded(x, len(repeats))
    lead = len(repeats) - x.dim()
    strides = (0,) * lead + tuple(x.stride())
    sizes = [_wrap_int64(r * s) for r, s in zip(repeats, padded)]     # int64 products, as torch's
    out = _fresh(sizes, x.dtype, x.device)     # checks the sizes, not the repeats: 0 times -1 is 0
    if out.numel():
        src = element_offsets([np.arange(n) % s for n, s in zip(sizes, padded)], strides, x.storage_offset())
        move(out, walk(out), x, src)
    return out


def _padded(x, ndim):
    return (1,) * (ndim - x.dim()) + tuple(x.shape)


def diag_embed(x, offset=0, dim1=-2, dim2=-1):
    """``diag_embed``: the last dim of ``x`` written on a diagonal of new zero matrices."""
    n = x.shape[-1] + abs(offset) if x.dim() else 1 + abs(offset)
    ndim = x.dim() + 1
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    batch = list(x.shape[:-1])
    sizes = []
    for k in range(ndim):
        sizes.append(n if k in (d1, d2) else batch.pop(0))
    out = fill_(_fresh(sizes, x.dtype, x.device), 0)
    same_device_copy(diagonal(out, offset, d1, d2), x)
    return out


def view_dtype(x, dtype):
    """``view.dtype``: the same bytes read as another dtype. With another item size the last dim
    is rescaled: it must have stride 1, and the other strides, the offset and (to widen) the last
    size must divide evenly (``view_dtype`` in TensorConversions.cpp, checked in its order).

    The result shares the storage and the version counter, but it is no view to autograd:
    derivatives.yaml marks ``view.dtype`` non-differentiable, and torch's ``as_view`` records
    only differentiable views, so ``_base`` is None and ``_is_view()`` is False."""
    sizes, strides, offset = _dtype_view_layout(x, dtype)
    return type(x)._from_impl(alias_impl(x, sizes, strides, offset, dtype, x._impl.version_counter))


def _dtype_view_layout(x, dtype):
    """Sizes, strides and offset of ``x`` read as ``dtype``, with torch's checks in torch's order:
    narrowing checks the last stride only; widening checks the last size and the offset first."""
    old, new = x.dtype.itemsize, dtype.itemsize
    sizes, strides, offset = list(x.shape), list(x.stride()), x.storage_offset()
    if old == new:
        return sizes, strides, offset
    what = f"to view {x.dtype.torch_name} as {dtype.torch_name} (different element sizes)"
    if x.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if old > new:                          # narrower elements: each old one becomes ``ratio``
        _check_last_stride(strides, what)
        ratio = old // new
        sizes[-1] *= ratio
        return sizes, [s * ratio for s in strides[:-1]] + [1], offset * ratio
    ratio = new // old
    if sizes[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {sizes[-1]}")
    if offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
    _check_last_stride(strides, what)
    for s in strides[:-1]:
        if s % ratio:
            raise RuntimeError(f"self.stride(i) must be divisible by {ratio} {what}, but got {s}")
    sizes[-1] //= ratio
    return sizes, [s // ratio for s in strides[:-1]] + [1], offset // ratio


def _check_last_stride(strides, what):
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")


# ---------------------------------------------------------------------- composites (CompositeImplicitAutograd)
# Written with operators, through the dispatcher, as torch writes them: autograd sees the
# operators they call.
def concat(tensors, dim=0):
    return dispatcher.call("cat", tensors, dim)


def hstack(tensors):
    tensors = [atleast_1d(t) for t in tensors]
    return dispatcher.call("cat", tensors, 0 if tensors and tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return dispatcher.call("cat", [atleast_2d(t) for t in tensors], 0)


def atleast_1d(x):
    return dispatcher.call("reshape", x, [1]) if x.dim() == 0 else x


def atleast_2d(x):
    if x.dim() == 0:
        return dispatcher.call("reshape", x, [1, 1])
    return dispatcher.call("unsqueeze", x, 0) if x.dim() == 1 else x


def atleast_1d_sequence(tensors):
    return [atleast_1d(t) for t in tensors]


def atleast_2d_sequence(tensors):
    return [atleast_2d(t) for t in tensors]


def atleast_3d(x):
    """A 0-dim tensor as (1, 1, 1), a vector (n) as (1, n, 1), a matrix (m, n) as (m, n, 1)."""
    if x.dim() == 0:
        return dispatcher.call("reshape", x, [1, 1, 1])
    if x.dim() == 1:
        return dispatcher.call("unsqueeze", dispatcher.call("unsqueeze", x, 0), -1)
    return dispatcher.call("unsqueeze", x, -1) if x.dim() == 2 else x


def atleast_3d_sequence(tensors):
    return [atleast_3d(t) for t in tensors]


def tile(x, dims):
    dims = list(dims)
    return dispatcher.call("repeat", x, [1] * (x.dim() - len(dims)) + dims)


def swapaxes(x, axis0, axis1):
    return dispatcher.call("transpose.int", x, axis0, axis1)


def swapdims(x, dim0, dim1):
    return dispatcher.call("transpose.int", x, dim0, dim1)


def swapdims_(x, dim0, dim1):
    return dispatcher.call("transpose_", x, dim0, dim1)


def moveaxis(x, source, destination):
    """``moveaxis.int`` and ``moveaxis.intlist``: the ``movedim`` of the same overload."""
    overload = "movedim.int" if isinstance(source, int) else "movedim.intlist"
    return dispatcher.call(overload, x, source, destination)


def trace(x):
    """``trace`` (``ReduceOps.cpp``): the sum of a matrix's main diagonal; integers sum in int64."""
    refuse_float8("trace", x)       # the dispatch comes first in torch's CPU kernel
    if x.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.dim()}")
    if x.dtype is st.bool_:
        raise NotImplementedError('"trace" not implemented for \'Bool\'')
    refuse_unlisted_dtypes("trace", x)
    dtype = st.int64 if x.dtype.category == st.INTEGRAL else None
    return dispatcher.call("sum", dispatcher.call("diagonal", x, 0, 0, 1), dtype=dtype)


def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    """``diagonal_backward``: zeros of the input's sizes with the gradient on that diagonal."""
    out = dispatcher.call("new_zeros", grad_output, list(input_sizes))
    same_device_copy(diagonal(out, offset, dim1, dim2), grad_output)
    return out


def diagonal_copy(x, offset=0, dim1=0, dim2=1):
    """``diagonal_copy``: the ``diagonal`` view's elements in a new contiguous tensor."""
    return dispatcher.call("clone", diagonal(x, offset, dim1, dim2), memory_format=contiguous_format)


def diag(x, diagonal=0):
    """``diag``: a vector's diagonal matrix, or a matrix's diagonal as a new vector."""
    if x.dim() == 1:
        return dispatcher.call("diag_embed", x, diagonal, 0, 1)
    if x.dim() != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.dim()}D")
    return dispatcher.call("diagonal_copy", x, diagonal, 0, 1)


def diagflat(x, offset=0):
    """``diagflat``: the elements of ``x``, flattened, on a diagonal of a new matrix."""
    return dispatcher.call("diag", dispatcher.call("view", contiguous(x), [-1]), offset)


def repeat_interleave_self_int(x, repeats, dim=None, output_size=None):
    """An int count: each element's copies side by side, as torch decomposes it (a new dim after
    ``dim``, expanded, copied, flattened away; Repeat.cpp)."""
    d = wrap_dim(0 if dim is None else dim, x.dim())
    if dim is None:
        x = _flatten(x)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = dispatcher.call("unsqueeze", x, d + 1)
    sizes = list(x.shape)
    sizes[d + 1] = repeats
    copies = dispatcher.call("expand", x, sizes)
    if output_size is not None and output_size != repeats * sizes[d]:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {repeats * sizes[d]} but got "
                           f"{output_size}")
    return _flatten(dispatcher.call("clone", copies, memory_format=contiguous_format), d, d + 1)


def _flatten(x, start=0, end=-1):
    return dispatcher.call("flatten.using_ints", x, start, end)


def repeat_interleave_self_tensor(x, repeats, dim=None, output_size=None):
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    n = x.size(dim) if dim is not None else x.numel()
    if repeats.dim() == 0 or repeats.numel() == 1:
        repeats = dispatcher.call("expand", dispatcher.call("reshape", repeats, [1]), [n])
    elif repeats.shape[0] != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats.shape[0]} and input.size({0 if dim is None else dim}) = {n}")
    return _interleave(x, dispatcher.call("repeat_interleave.Tensor", repeats, output_size=output_size), dim)


def _interleave(x, index, dim):
    if dim is None:
        return dispatcher.call("index_select", _flatten(x), 0, index)
    return dispatcher.call("index_select", x, dim, index)


def where_cond(condition):
    """``where(condition)``: ``condition.nonzero(as_tuple=True)``, one index vector per dim."""
    if condition.dim() == 0:        # as a vector of one element
        condition = dispatcher.call("unsqueeze", condition, 0)
    return dispatcher.call("unbind.int", dispatcher.call("nonzero", condition), 1)


def argwhere(x):
    return dispatcher.call("nonzero", x)


# ---- meshgrid (TensorShape.cpp) and fill_diagonal_ (Fill.cpp): compositions of views
def meshgrid(tensors):
    """``meshgrid`` without ``indexing``: torch warns (once per call site here, as Python's
    default filter shows a warning) and indexes as "ij"."""
    warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                  UserWarning, stacklevel=2)
    return meshgrid_indexing(tensors, indexing="ij")


def meshgrid_indexing(tensors, *, indexing):
    """Each 0-d or 1-d tensor viewed along its own dim and expanded to the grid's shape; "xy"
    swaps the first two inputs, then the first two grids back."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a.dtype is not b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    elif indexing != "ij" and indexing != "xy":
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(dispatcher.call("expand", dispatcher.call("view", t, view_shape), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def fill_diagonal_(self, fill_value, wrap=False):
    """The main diagonal of a matrix (or of an n-cube) filled through one strided view: stride
    the sum of the strides; a tall matrix with ``wrap`` also gets the diagonals below, one view
    that starts ``width + 1`` rows down."""
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if n > 2 and any(size != height for size in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset, stride = self.storage_offset(), sum(self.stride())
    size = min(height, width)
    dispatcher.call("fill_.Scalar", dispatcher.call("as_strided", self, [size], [stride], offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        wrapped = dispatcher.call("as_strided", self, [wrap_size], [stride], offset + self.stride(0) * (width + 1))
        dispatcher.call("fill_.Scalar", wrapped, fill_value)
    return self


# ---- more composites of TensorShape.cpp and Itertools.cpp
def ravel(x):
    """``self.contiguous().view(-1)``."""
    if not x.is_contiguous():
        x = dispatcher.call("clone", x, memory_format=contiguous_format)
    return dispatcher.call("view", x, [-1])


def column_stack(tensors):
    """Vectors and scalars as columns (``reshape(numel, 1)``), then ``hstack``."""
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return hstack([dispatcher.call("reshape", t, [t.numel(), 1]) if t.dim() <= 1 else t for t in tensors])


def _atleast_3d(x):
    if x.dim() == 0:
        return dispatcher.call("reshape", x, [1, 1, 1])
    if x.dim() == 1:
        return dispatcher.call("unsqueeze", dispatcher.call("unsqueeze", x, 0), -1)
    return dispatcher.call("unsqueeze", x, -1) if x.dim() == 2 else x


def dstack(tensors):
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return dispatcher.call("cat", [_atleast_3d(t) for t in tensors], 2)


def block_diag(tensors):
    """CompositeExplicitAutograd: each input (a scalar or vector as one row) copied into its block
    of a zero matrix of the inputs' promoted dtype."""
    if not tensors:
        return empty((1, 0))
    device = tensors[0].device
    for i, t in enumerate(tensors):
        if t.device != device:
            raise RuntimeError(f"torch.block_diag: input tensors must all be on the same device. Input 0 is on "
                               f"device {device} and input {i} is on device {t.device}")
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
        blocks.append(t if t.dim() == 2 else dispatcher.call("expand", t, [1, t.numel()]))
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    result = dispatcher.call("zeros", [rows, cols], dtype=st.result_type(*tensors), device=device)
    r = c = 0
    for b in blocks:
        h, w = b.shape
        rows_of_block = dispatcher.call("slice.Tensor", result, 0, r, r + h)
        dispatcher.call("copy_", dispatcher.call("slice.Tensor", rows_of_block, 1, c, c + w), b)
        r, c = r + h, c + w
    return result


def cartesian_prod(tensors):
    """``meshgrid(indexing="ij")`` of the vectors, each grid flattened, stacked as columns."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = dispatcher.call("meshgrid.indexing", tensors, indexing="ij")
    return dispatcher.call("stack", [dispatcher.call("flatten.using_ints", g, 0, -1) for g in grids], 1)


# The scatter forms of the views (TensorShape.cpp's ``select_scatter_symint``, ``slice_scatter``,
# ``diagonal_scatter``, ``as_strided_scatter_symint``): a copy of ``self`` whose view is replaced
# by ``src``. They are the functional inverse of a view -- what functionalization writes where a
# program wrote through one -- so each is a copy, the view of the copy, and one copy_ into it.
def clone_preserve_strides(x):
    """A copy of ``x``'s whole storage, viewed with ``x``'s sizes, strides and offset: the result
    is laid out as ``x`` is even where ``x`` is not dense, so a view of it (an ``as_strided`` with
    ``x``'s own numbers) lands on the same elements. An expanded ``x`` (a stride 0 over more than
    one element: ``has_internal_overlap``) gets a plain clone instead, or the copy_ into the view
    would write one element many times."""
    if any(stride == 0 and size > 1 for size, stride in zip(x.shape, x.stride())):
        return dispatcher.call("clone", x)
    numel = x._impl.storage.nbytes() // x.element_size()
    whole = dispatcher.call("clone", as_strided(x, (numel,), (1,), 0))
    return as_strided(whole, tuple(x.shape), x.stride(), x.storage_offset())


def _scatter_into_view(x, src, view_of):
    out = clone_preserve_strides(x)
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")
    same_device_copy(view, src)
    return out


def select_scatter(x, src, dim, index):
    return _scatter_into_view(x, src, lambda out: dispatcher.call("select.int", out, dim, index))


def slice_scatter(x, src, dim=0, start=None, end=None, step=1):
    return _scatter_into_view(x, src, lambda out: dispatcher.call("slice.Tensor", out, dim, start, end, step))


def diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    return _scatter_into_view(x, src, lambda out: diagonal(out, offset, dim1, dim2))


def as_strided_scatter(x, src, size, stride, storage_offset=None):
    return _scatter_into_view(x, src, lambda out: as_strided(out, size, stride, storage_offset))


def check_dim_size(t, dim, dim_size, size):
    """``check_dim_size`` (``TensorUtils.cpp``): ``t`` has ``dim`` dims and ``size`` elements along
    dim ``dim_size``; a RuntimeError in torch's words otherwise."""
    if t.dim() != dim or t.shape[dim_size] != size:
        raise RuntimeError(f"Expected a tensor of dimension {dim} and tensor.size[{dim_size}] == {size} but got: "
                           f"dimension {t.dim()} and tensor.size[{dim_size}] = {t.shape[dim_size]}")


# ---------------------------------------------------------------------- the view-copy operators
# torch's ``{view}_copy`` operators (their kernels generated by ``gen_composite_view_copy_kernel``
# in torchgen): the view, then its elements cloned into a new contiguous tensor. They are what
# ``functionalize(remove='mutations_and_views')`` writes in place of views; their gradient
# formulas are the views' (nodes named after the view's, with ``_copy``).
def _copied(view):
    return dispatcher.call("clone", view, memory_format=contiguous_format)


def _each_copied(views):
    return tuple(_copied(v) for v in views)


def view_copy(self, size):
    """``view_copy_symint`` (TensorShape.cpp): a shape the strides cannot give as a view is
    reshaped (a copy either way), where ``view`` would refuse it."""
    shape = infer_size(list(size), self.numel())
    if compute_stride(tuple(self.shape), self.stride(), shape) is None:
        return dispatcher.call("reshape", self, list(size))
    return _copied(dispatcher.call("view", self, list(size)))


def view_copy_dtype(self, dtype):
    return _copied(dispatcher.call("view.dtype", self, dtype))


def alias_copy(self):
    return _copied(dispatcher.call("alias", self))


def detach_copy(self):
    return _copied(dispatcher.call("detach", self))


def as_strided_copy(self, size, stride, storage_offset=None):
    return _copied(dispatcher.call("as_strided", self, list(size), list(stride), storage_offset))


def expand_copy(self, size, *, implicit=False):
    return _copied(dispatcher.call("expand", self, list(size), implicit=implicit))


def permute_copy(self, dims):
    return _copied(dispatcher.call("permute", self, list(dims)))


def select_copy(self, dim, index):
    return _copied(dispatcher.call("select.int", self, dim, index))


def slice_copy(self, dim=0, start=None, end=None, step=1):
    return _copied(dispatcher.call("slice.Tensor", self, dim, start, end, step))


def squeeze_copy(self):
    return _copied(dispatcher.call("squeeze", self))


def squeeze_copy_dim(self, dim):
    return _copied(dispatcher.call("squeeze.dim", self, dim))


def squeeze_copy_dims(self, dim):
    return _copied(dispatcher.call("squeeze.dims", self, list(dim)))


def t_copy(self):
    return _copied(dispatcher.call("t", self))


def transpose_copy(self, dim0, dim1):
    return _copied(dispatcher.call("transpose.int", self, dim0, dim1))


def unfold_copy(self, dimension, size, step):
    return _copied(dispatcher.call("unfold", self, dimension, size, step))


def unsqueeze_copy(self, dim):
    return _copied(dispatcher.call("unsqueeze", self, dim))


def view_as_real_copy(self):
    return _copied(dispatcher.call("view_as_real", self))


def view_as_complex_copy(self):
    return _copied(dispatcher.call("view_as_complex", self))


def narrow_copy(self, dim, start, length):
    """``narrow_copy``: the narrowed elements, new and contiguous (torch's kernel copies them
    itself; the view and a clone give the same tensor)."""
    return _copied(dispatcher.call("narrow", self, dim, start, length))


def split_copy(self, split_size, dim=0):
    return _each_copied(dispatcher.call("split.Tensor", self, split_size, dim))


def split_with_sizes_copy(self, split_sizes, dim=0):
    return _each_copied(dispatcher.call("split_with_sizes", self, list(split_sizes), dim))


def unbind_copy(self, dim=0):
    return _each_copied(dispatcher.call("unbind.int", self, dim))


def _check_out_count(name, out, pieces):
    if len(out) != len(pieces):
        raise RuntimeError(f"{name} expected an out= argument of size {len(pieces)}, got size {len(out)}")


def _into_resized(out, pieces):
    """Each piece into its ``out``, as torchgen's generated out= kernels write one (the dtype
    exactly, ``out`` resized with ``resize_output``'s warning, then ``copy_``)."""
    for o, piece in zip(out, pieces):
        set_output(o, piece.shape, piece.dtype, piece.device)
        dispatcher.call("copy_", o, piece)


def split_copy_out(self, split_size, dim=0, *, out):
    """``split_copy_Tensor_out`` (TensorShape.cpp): each piece copied into its ``out`` as it is
    (``copy_`` broadcasts and casts; nothing is resized)."""
    pieces = dispatcher.call("split.Tensor", self, split_size, dim)
    _check_out_count("split_copy_Tensor_out()", out, pieces)
    for o, piece in zip(out, pieces):
        dispatcher.call("copy_", o, piece)


def split_with_sizes_copy_out(self, split_sizes, dim=0, *, out):
    pieces = dispatcher.call("split_with_sizes", self, list(split_sizes), dim)
    _check_out_count("split_with_sizes_copy_out", out, pieces)
    _into_resized(out, pieces)


def unbind_copy_out(self, dim=0, *, out):
    pieces = dispatcher.call("unbind.int", self, dim)
    _check_out_count("unbind_copy_int_out", out, pieces)
    _into_resized(out, pieces)
