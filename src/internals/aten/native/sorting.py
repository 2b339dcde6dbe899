"""Sorting and selection: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``,
``nanmedian``, ``mode``, ``quantile``, ``nanquantile`` (``aten/src/ATen/native/Sorting.cpp``,
``TensorCompare.cpp``), the scans ``cumsum``, ``cumprod`` (``ReduceOps.cpp``), and ``unique``,
``unique_consecutive`` (``Unique.cpp``).

Every row along ``dim`` is sorted by one stable merge sort, ``sort_row`` below, that the CPU
loop (rows in parallel) and the CUDA kernel (a thread per row) both compile. NaN sorts as the
largest value, as in torch. The selections are read off the sorted rows.

``topk`` and ``sort.stable`` are declared as torch declares them, structured: a meta step (``k``
checked, the outputs' sizes and layout) and an impl step writing into the outputs,
``topk.values`` and ``sort.values_stable`` the primary forms. torch does not
declare the other selections structured, but each has an out= kernel of its own, which the
functional (and in-place) kernel runs into fresh outputs: ``kthvalue_out``, ``median_dim_out``,
``mode_out``, ``cummax_out``, ``logcumsumexp_out``... check ``out`` in their own words, resize
it, and write the values computed here into it.
"""
import numpy as np
from numba.extending import register_jitable

from ...c10 import scalar_type as st
from ...c10.tensor_impl import contiguous_strides
from .. import dispatcher
from ..empty_tensor import is_meta_execution
from ..tensor_iterator import assert_no_overlap, broadcast_shapes, check_no_overlap, output_layout
from .copy import buffer, contiguous, to
from .dispatch_stub import loops, refuse_float8, refuse_unlisted_dtypes
from .reduce_ops import _not_complex, _return_type, normalize_dims
from .resize import resize_output
from .structured import set_output, structured
from .tensor_factories import empty, from_host
from .tensor_shape import wrap_dim


@register_jitable
def _greater(x, y):
    """x > y with NaN above every number (two NaNs are equal)."""
    return x > y or (x != x and y == y)


@register_jitable
def sort_row(keys, idx, tmp, n, descending):
    """Bottom-up merge sort of the positions 0..n-1 of ``keys`` into ``idx`` (``tmp``: scratch).
    Stable: of two equal keys the earlier position comes first, either direction."""
    for i in range(n):
        idx[i] = i
    src, dst, width, swaps = idx, tmp, 1, 0
    while width < n:
        lo = 0
        while lo < n:
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                # take from the right run only if its key strictly comes first
                if j < hi and (i >= mid or (_greater(keys[src[j]], keys[src[i]]) if descending
                                            else _greater(keys[src[i]], keys[src[j]]))):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
            lo += 2 * width
        src, dst = dst, src
        swaps += 1
        width *= 2
    if swaps % 2:
        for i in range(n):
            idx[i] = tmp[i]


KTH, MEDIAN, MODE = range(3)


@register_jitable
def select_in_row(kind, values, n, k):
    """The position, in one sorted row, of the k-th value (k from 0), of the lower median (the
    first NaN if the row has one, as torch's median), or of the mode: the value of the longest
    run, the smallest of equally long ones, at the run's end (its last index, as torch's)."""
    if kind == KTH:
        return k
    if kind == MEDIAN:
        if values[n - 1] != values[n - 1]:
            p = 0
            while values[p] == values[p]:
                p += 1
            return p
        return (n - 1) // 2
    best, best_len, run = 0, 0, 0
    for p in range(n):
        run = run + 1 if p > 0 and values[p] == values[p - 1] else 1
        if run > best_len:
            best, best_len = p, run
    return best


def _rows(x, dim):
    """x with ``dim`` last, as a contiguous (rows, n) tensor in a dtype the loops compare:
    float32 for the 16-bit floats and uint8 for bool (both convert back exactly)."""
    compute = st.float32 if x.dtype.is_reduced_float else (st.uint8 if x.dtype is st.bool_ else x.dtype)
    moved = _last(x, dim)
    return _from_zero(contiguous(to(moved, compute))), moved.shape


def _last(x, dim):
    """``x`` with ``dim`` moved last; a 0-dim ``x`` as one element."""
    return dispatcher.call("movedim.int", x, dim, -1) if x.dim() else dispatcher.call("reshape", x, [1])


def _unlast(t, x, dim):
    """A dim-last ``t`` with its last dim moved back to ``dim`` (to 0-dim when ``x`` is)."""
    return dispatcher.call("movedim.int", t, -1, dim) if x.dim() else dispatcher.call("reshape", t, [])


def _from_zero(t):
    """``t`` starting at element 0 of its buffer, as the loops read it (a contiguous view may
    start further in)."""
    return dispatcher.call("clone", t) if t.storage_offset() else t


def _sorted_rows(x, dim, descending):
    """(values, indices), each with ``dim`` last and contiguous."""
    rows, shape = _rows(x, dim)
    n = shape[-1] if shape else 1
    idx = empty(shape, dtype=st.int64, device=x.device)
    values = empty(shape, dtype=rows.dtype, device=x.device)
    if rows.numel() and not is_meta_execution():       # (metadata only: no values to sort)
        tmp = empty(shape, dtype=st.int64, device=x.device)
        loops(x.device, "sorting").sort_loop(buffer(values), buffer(idx), buffer(tmp), buffer(rows),
                                             rows.numel() // n, n, descending)
    return to(values, x.dtype), idx


def _dim(x, dim):
    return normalize_dims(dim, x.dim())[0] if x.dim() else wrap_dim(dim, 0)


def _no_bool(x, kernel):
    """The CPU selection kernels dispatch on all types but bool (and complex)."""
    if x.dtype is st.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    _not_complex(x, kernel)


def _sortable(x, name):
    if x.dtype.is_complex:
        raise RuntimeError(f" {name} does not support complex dtypes on CPU")


def meta_sort_stable(values, indices, self, *, stable=None, dim=-1, descending=False):
    """``TORCH_META_FUNC2(sort, stable)`` (Sorting.cpp): outputs of self's sizes, laid out as
    self (``empty_like``): a dense self's strides exactly (an empty one counts as dense), others
    made dense (``infer_dense_strides``); values in self's dtype, indices int64 (or the ``out=``
    tensors checked and resized, which may not overlap ``self`` then: the kernel's copy refuses
    it)."""
    _dim(self, dim)
    dense = self.numel() == 0 or self._impl.is_non_overlapping_and_dense()
    layout = tuple(self.stride()) if dense else output_layout([self._impl], tuple(self.shape))
    given = values is not None, indices is not None
    values = set_output(values, self.shape, self.dtype, self.device, layout)
    indices = set_output(indices, self.shape, st.int64, self.device, layout)
    for out, was_given in zip((values, indices), given):
        if was_given:
            check_no_overlap(out._impl, [self._impl])
    return values, indices


def impl_sort_stable(outs, self, *, stable=None, dim=-1, descending=False):
    """``TORCH_IMPL_FUNC(sort_stable_out)``: each row along ``dim`` sorted by one stable merge
    sort (NaN last), written into the outputs; a one-element 0-dim self copied, its index 0."""
    refuse_float8("sorting_kernel_method_name", self)
    values, indices = outs
    _sortable(self, "Sort")
    if self.dim() == 0:
        dispatcher.call("copy_", values, self)
        dispatcher.call("zero_", indices)
        return _return_type("sort")(values, indices)
    d = _dim(self, dim)
    rows, idx = _sorted_rows(self, d, descending)
    dispatcher.call("copy_", values, _unlast(rows, self, d))
    dispatcher.call("copy_", indices, _unlast(idx, self, d))
    return _return_type("sort")(values, indices)


sort_stable_out = structured(meta_sort_stable, impl_sort_stable, outputs=2)


def sort(x, dim=-1, descending=False):
    """``sort`` (CompositeExplicitAutograd in torch): ``sort.stable``'s derived functional kernel,
    unstable being stable here."""
    return impl_sort_stable(meta_sort_stable(None, None, x, dim=dim, descending=descending), x, dim=dim,
                            descending=descending)


def argsort(x, dim=-1, descending=False):
    """CompositeImplicitAutograd, as torch's: the indices of a ``sort``."""
    return dispatcher.call("sort", x, dim, descending)[1]


def argsort_stable(x, *, stable, dim=-1, descending=False):
    return dispatcher.call("sort.stable", x, stable=stable, dim=dim, descending=descending)[1]


def msort(x):
    """CompositeImplicitAutograd: ``sort`` along dim 0, the values."""
    return dispatcher.call("sort", x, 0, False)[0]


def _selection(x, dim, keepdim, name, kind, k=0):
    """(value, index) at the position ``select_in_row`` picks in each sorted row along ``dim``."""
    values, idx = _sorted_rows(x, dim, False)
    rows, n = values.numel() // max(values.shape[-1], 1), values.shape[-1]
    compute = st.float32 if x.dtype.is_reduced_float else (st.uint8 if x.dtype is st.bool_ else x.dtype)
    v = empty(values.shape[:-1], dtype=compute, device=x.device)
    i = empty(values.shape[:-1], dtype=st.int64, device=x.device)
    if rows and n:
        loops(x.device, "sorting").select_loop(kind, buffer(v), buffer(i), buffer(to(values, compute)), buffer(idx),
                                               rows, n, k)
    v = to(v, x.dtype)
    if keepdim and x.dim():
        v, i = dispatcher.call("unsqueeze", v, dim), dispatcher.call("unsqueeze", i, dim)
    return _return_type(name)(v, i)


def meta_topk(values, indices, self, k, dim=-1, largest=True, sorted=True):
    """``TORCH_META_FUNC(topk)`` (Sorting.cpp): ``k`` within the dim's size; outputs of self's
    sizes with ``k`` along ``dim`` (contiguous, or the ``out=`` tensors checked and resized),
    values in self's dtype, indices int64. A given output may not overlap ``self`` once resized
    (the kernel's check, the rule the generic out= kernel kept as ``overlap: after_resize``)."""
    d = _dim(self, dim)
    if not 0 <= k <= (self.shape[d] if self.dim() else 1):
        raise RuntimeError("selected index k out of range")
    shape = list(self.shape)
    if shape:
        shape[d] = k
    given = values is not None, indices is not None
    values = set_output(values, shape, self.dtype, self.device)
    indices = set_output(indices, shape, st.int64, self.device)
    for out, was_given in zip((values, indices), given):
        if was_given:
            check_no_overlap(out._impl, [self._impl])
    return values, indices


def impl_topk(outs, self, k, dim=-1, largest=True, sorted=True):
    """``TORCH_IMPL_FUNC(topk_out_cpu)``: a 0-dim ``self`` copied whatever ``k`` (0 or 1), its
    index 0; else the first ``k`` of each row sorted along ``dim`` (largest first when
    ``largest``), written into the outputs."""
    values, indices = outs
    if self.dtype is st.bool_ and not self.is_cuda:     # (CUDA's refusal is not checked here)
        raise RuntimeError("topk does not support bool dtypes on CPU")
    refuse_unlisted_dtypes("topk_cpu", self, complex32=False)
    _sortable(self, "topk")
    if self.dim() == 0:
        dispatcher.call("copy_", values, self)
        dispatcher.call("zero_", indices)
        return _return_type("topk")(values, indices)
    d = _dim(self, dim)
    rows, idx = _sorted_rows(self, d, largest)
    rows, idx = (dispatcher.call("narrow", t, -1, 0, k) for t in (rows, idx))
    dispatcher.call("copy_", values, _unlast(rows, self, d))
    dispatcher.call("copy_", indices, _unlast(idx, self, d))
    return _return_type("topk")(values, indices)


topk_out = structured(meta_topk, impl_topk, outputs=2)


def fresh_contiguous(t):
    """``t`` with the contiguous strides a fresh torch output has: ``contiguous`` keeps an empty
    tensor's strides (any strides count as contiguous then), and a size-1 dim's stride (a (4, 1)
    tensor of strides (1, 4) is contiguous too)."""
    if not t.numel():
        return empty(tuple(t.shape), dtype=t.dtype, device=t.device)
    t, strides = contiguous(t), contiguous_strides(tuple(t.shape))
    if tuple(t.stride()) == strides:
        return t
    return dispatcher.call("as_strided", t, list(t.shape), list(strides), t.storage_offset())


# ---- the selections' out= kernels. Each resizes ``values`` and ``indices`` with the reduced dim
# kept, as its kernel writes them: ``_reduction_with_indices_allocate_or_resize_output``
# (ReduceOpsUtils.h) and mode's ``compare_base_kernel`` first unsqueeze an ``out`` that lacks the
# dim, so that one of the right sizes keeps its strides; the dim is squeezed away again after.
def _fresh_selection_outputs(self):
    """The empty outputs torch's functional kernels hand to their out= kernel."""
    return (empty((0,), dtype=self.dtype, device=self.device),
            empty((0,), dtype=st.int64, device=self.device))


def _kept_dim_shape(self, d):
    shape = list(self.shape)
    if shape:
        shape[d] = 1
    return shape


def _reduced_shape(self, d, keepdim):
    return _kept_dim_shape(self, d) if keepdim else [n for i, n in enumerate(self.shape) if i != d]


def _resize_with_kept_dim(outs, shape, d, keepdim, lacks_dim):
    for out in outs:
        if not keepdim and lacks_dim(out):
            dispatcher.call("unsqueeze_", out, d)
        resize_output(out, shape)


def _write_with_kept_dim(outs, results, self, d, keepdim):
    """The kept-dim results copied into the outputs, the dim then dropped unless ``keepdim``."""
    for out, result in zip(outs, results):
        dispatcher.call("copy_", out, result)
        if not keepdim and self.dim():
            dispatcher.call("squeeze_.dim", out, d)
    return tuple(outs)      # an out= call returns a plain pair; the binding names it


def kthvalue_out(self, k, dim=-1, keepdim=False, *, values, indices):
    """``kthvalue_out_impl_cpu`` (Sorting.cpp): ``values`` may not overlap the input at all
    (checked before the resize), then the outputs are checked and resized."""
    d = _dim(self, dim)
    n = self.shape[d] if self.dim() else 1
    _check_nonempty("kthvalue", self, d)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    assert_no_overlap(values._impl, self._impl)
    if values.dtype is not self.dtype or values.device != self.device:
        raise RuntimeError("output values must be of same type as input")
    if indices.dtype is not st.int64:
        raise RuntimeError("output indices must be of scalar type Long")
    refuse_unlisted_dtypes(f"kthvalue_{self.device.type}", self, complex32=False)
    _resize_with_kept_dim((values, indices), _kept_dim_shape(self, d), d, keepdim,
                          lambda out: out.dim() == self.dim() - 1)
    if self.dim() == 0:         # the element itself, whatever its dtype
        return dispatcher.call("copy_", values, self), dispatcher.call("zero_", indices)
    _no_bool(self, "kthvalue_cpu")
    for out in (values, indices):
        check_no_overlap(out._impl, [])
    return _write_with_kept_dim((values, indices), _selection(self, d, True, "kthvalue", KTH, k - 1), self, d,
                                keepdim)


def kthvalue(x, k, dim=-1, keepdim=False):
    values, indices = _fresh_selection_outputs(x)
    return _return_type("kthvalue")(*kthvalue_out(x, k, dim, keepdim, values=values, indices=indices))


def _check_nonempty(name, x, d):
    if x.dim() and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _type_name(dtype):
    return f"torch.{dtype.torch_name}Tensor"


def _median_out(self, dim, keepdim, values, indices, rows):
    """``median_with_indices_impl`` (Sorting.cpp), for median and nanmedian: the outputs resized
    to the reduced sizes, then checked against the input as the kernel reads it (a copy when
    the dim is strided: nothing to overlap then). ``rows(x, d)``: the kept-dim results."""
    d = _dim(self, dim)
    _check_nonempty("median", self, d)
    if indices.dtype is not st.int64:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                           f"{_type_name(indices.dtype)} instead (while checking arguments for median)")
    if values.dtype is not self.dtype:
        raise RuntimeError(f"Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; "
                           f"but type {_type_name(values.dtype)} does not equal {_type_name(self.dtype)} (while "
                           "checking arguments for median)")
    for out in (values, indices):
        resize_output(out, _reduced_shape(self, d, keepdim))
    reads = self if self.dim() else dispatcher.call("unsqueeze", self, 0)
    wrap_dim(d, reads.dim())            # an output that is the input resized it
    kept = [out if keepdim and self.dim() else dispatcher.call("unsqueeze", out, d) for out in (values, indices)]
    if reads.stride(d) <= 1:
        for out in kept:
            check_no_overlap(out._impl, [reads._impl])
    _no_bool(self, "median_out")
    for out, result in zip(kept, rows(reads, d)):
        dispatcher.call("copy_", out, result)
    return values, indices


def median_dim_out(self, dim, keepdim=False, *, values, indices):
    return _median_out(self, dim, keepdim, values, indices, lambda x, d: _selection(x, d, True, "median", MEDIAN))


def median_dim(x, dim, keepdim=False):
    values, indices = _fresh_selection_outputs(x)
    return _return_type("median")(*median_dim_out(x, dim, keepdim, values=values, indices=indices))


def median(x):
    """The median of every element: NaN for an empty tensor."""
    refuse_unlisted_dtypes(f"median_{x.device.type}", x, complex32=False)
    if x.numel() == 0:
        return dispatcher.call("fill_.Scalar", empty((), dtype=x.dtype, device=x.device), float("nan"))
    _no_bool(x, "median_cpu")
    return median_dim(dispatcher.call("reshape", x, [-1]), 0).values


def _nanmedian_rows(x, d):
    """The lower median of each row's values other than NaN, and its index, the dim kept
    (``median_with_indices_impl`` with ``ignore_nan``); a row of NaN only gives its first NaN.
    Sorted rows put NaN last, so the median sits at ``(n - nans - 1) // 2``."""
    values, idx = _sorted_rows(x, d, False)
    nans = dispatcher.call("sum.dim_IntList", dispatcher.call("isnan", values), [-1], True)
    at = dispatcher.call("clamp_min", (values.shape[-1] - 1 - nans) // 2, 0)
    return tuple(_unlast(dispatcher.call("gather", t, -1, at), x, d) for t in (values, idx))


def nanmedian_dim_out(self, dim, keepdim=False, *, values, indices):
    return _median_out(self, dim, keepdim, values, indices, _nanmedian_rows)


def nanmedian_dim(x, dim, keepdim=False):
    values, indices = _fresh_selection_outputs(x)
    return _return_type("nanmedian")(*nanmedian_dim_out(x, dim, keepdim, values=values, indices=indices))


def nanmedian(x):
    """The median of every element other than NaN: NaN for an empty tensor or one of NaN only."""
    if x.numel() == 0:
        return dispatcher.call("fill_.Scalar", empty((), dtype=x.dtype, device=x.device), float("nan"))
    _no_bool(x, "median_cpu")
    return nanmedian_dim(dispatcher.call("reshape", x, [-1]), 0).values


# ---------------------------------------------------------------------- quantile (Sorting.cpp)
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_interpolation(interpolation):
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")


def _quantile_checks(x, q):
    if x.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (st.float32, st.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if x.dtype is not q.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if x.device != q.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")


def _quantile_shape(x, q, dim, keepdim, wrapped):
    """``quantile_output_shape``: the reduced shape, with one leading entry per q of a 1-D ``q``."""
    if dim is not None and x.dim():
        shape = list(x.shape)
        if keepdim:
            shape[wrapped] = 1
        else:
            del shape[wrapped]
    else:
        shape = [1] * x.dim() if keepdim else []
    return [q.numel(), *shape] if q.dim() else shape


def _sorted_for_quantile(x, dim, wrapped):
    """The values sorted along the reduced dim, moved last (all of them, flattened, with no dim)."""
    if dim is None:
        return dispatcher.call("sort", dispatcher.call("flatten.using_ints", x))[0]
    if wrapped == x.dim() - 1:
        return dispatcher.call("sort", x)[0]
    return dispatcher.call("sort", dispatcher.call("transpose.int", dispatcher.call("unsqueeze", x, -1), wrapped,
                                                   -1))[0]


def _quantile_ranks(sorted_values, q, ignore_nan):
    """Each q as a fractional position in its sorted row, one column per q: among the values other
    than NaN for nanquantile (0 in a row of NaN only), the last position, a NaN, where quantile's
    row holds one."""
    if ignore_nan:
        count = dispatcher.call("sum.dim_IntList", dispatcher.call("logical_not", dispatcher.call(
            "isnan", sorted_values)), [-1], True)
        ranks = q * (count - 1)
        return dispatcher.call("masked_fill.Scalar", ranks, ranks < 0, 0)
    last = sorted_values.shape[-1] - 1
    has_nan = dispatcher.call("any.dim", dispatcher.call("isnan", sorted_values), -1, True)
    ranks = q * last
    shape = list(broadcast_shapes(ranks.shape, has_nan.shape))         # ``broadcast_tensors``
    return dispatcher.call("masked_fill.Scalar", dispatcher.call("expand", ranks, shape), dispatcher.call(
        "expand", has_nan, shape), last)


def _quantile(x, q, dim, keepdim, interpolation, ignore_nan):
    """``quantile_impl`` and ``quantile_compute``: sort, turn each q into a fractional rank, then
    read the value at it or between the two around it, as ``interpolation`` says."""
    _quantile_checks(x, q)
    wrapped = wrap_dim(0 if dim is None else dim, x.dim())
    shape = _quantile_shape(x, q, dim, keepdim, wrapped)
    if x.device.type == "cpu" and not bool(dispatcher.call("all", (q >= 0) & (q <= 1))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    sorted_values = _sorted_for_quantile(x, dim, wrapped)
    if q.dim() == 0:
        shape = [1, *shape]
    sorted_values = dispatcher.call("view", sorted_values, [*shape[1:], sorted_values.shape[-1]])
    if sorted_values.shape[-1] > 2 ** 24:        # ranks are held in floats
        raise RuntimeError("quantile() input tensor is too large")
    ranks = _quantile_ranks(sorted_values, q, ignore_nan)
    rounding = {"lower": "floor_", "higher": "ceil_", "nearest": "round_"}.get(interpolation)
    if rounding:
        dispatcher.call(rounding, ranks)
    below = ranks.to(st.int64)
    values = dispatcher.call("gather", sorted_values, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = dispatcher.call("full_like", ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = dispatcher.call("ceil_", ranks).to(st.int64)
        dispatcher.call("lerp_.Tensor", values, dispatcher.call("gather", sorted_values, -1, above), weights)
    if q.dim() == 0:
        return dispatcher.call("squeeze_.dim", values, -1)
    dispatcher.call("transpose_", dispatcher.call("unsqueeze_", values, 0), 0, -1)
    return dispatcher.call("squeeze_.dim", values, -1)


def _scalar_q(x, q):
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    return dispatcher.call("scalar_tensor", q, dtype=x.dtype, device=x.device)


def quantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    _check_interpolation(interpolation)
    return _quantile(x, q, dim, keepdim, interpolation, ignore_nan=False)


def quantile_scalar(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    return quantile(x, _scalar_q(x, q), dim, keepdim, interpolation=interpolation)


def nanquantile(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    _check_interpolation(interpolation)
    return _quantile(x, q, dim, keepdim, interpolation, ignore_nan=True)


def nanquantile_scalar(x, q, dim=None, keepdim=False, *, interpolation="linear"):
    return nanquantile(x, _scalar_q(x, q), dim, keepdim, interpolation=interpolation)

def mode_out(self, dim=-1, keepdim=False, *, values, indices):
    """``mode_out`` (TensorCompare.cpp): the dtypes checked first; an empty input only resizes
    the outputs, a 0-dim one is its own mode (outputs resized without the warning); otherwise
    ``compare_base_kernel`` resizes them with the dim kept and refuses a partial overlap with
    the input (a full one runs)."""
    for out, want, what in ((values, self.dtype, "values"), (indices, st.int64, "indices")):
        if out.dtype is not want:
            raise RuntimeError(f"expected scalar type '{want.torch_name}' but got '{out.dtype.torch_name}' for "
                               f"{what} output")
    d = _dim(self, dim)
    _check_nonempty("mode", self, d)
    if self.numel() == 0:
        for out in (values, indices):
            resize_output(out, _reduced_shape(self, d, keepdim))
        return values, indices
    if self.dim() == 0:
        for out in (values, indices):
            dispatcher.call("resize_", out, [])
        return dispatcher.call("copy_", values, self), dispatcher.call("zero_", indices)
    _resize_with_kept_dim((values, indices), _kept_dim_shape(self, d), d, keepdim, lambda out: out.dim() >= d)
    for out in (values, indices):
        check_no_overlap(out._impl, [self._impl])
    _not_complex(self, "mode_cpu")
    return _write_with_kept_dim((values, indices), _selection(self, d, True, "mode", MODE), self, d, keepdim)


def mode(x, dim=-1, keepdim=False):
    refuse_unlisted_dtypes(f"mode_{x.device.type}", x, complex32=False)
    values, indices = _fresh_selection_outputs(x)
    return _return_type("mode")(*mode_out(x, dim, keepdim, values=values, indices=indices))


# ---- scans
def _scan(x, dim, dtype, product):
    """cumsum/cumprod: integers and bool accumulate in int64 unless ``dtype`` says otherwise, the
    16-bit floats in float32; the result is contiguous, as torch's. The kernels have no bool
    case: a bool ``dtype`` is refused."""
    d = _dim(x, dim)
    out_dtype = dtype or (x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else st.int64)
    if out_dtype is st.bool_:
        raise NotImplementedError(f'"{"cumprod" if product else "cumsum"}_out_cpu" not implemented for \'Bool\'')
    compute = st.float32 if out_dtype.is_reduced_float else out_dtype
    rows = _from_zero(contiguous(to(_last(x, d), compute)))
    result = empty(rows.shape, dtype=compute, device=x.device)
    n = rows.shape[-1] if rows.dim() else 1
    if result.numel():
        # CPU ``acc_type``: float32 and complex64 accumulate in double precision
        acc = {st.float32: np.float64, st.complex64: np.complex128}.get(out_dtype, compute.numpy_type)
        init = np.dtype(acc).type(1 if product else 0)
        loops(x.device, "scan").scan_loop(buffer(result), buffer(rows), result.numel() // n, n, product, init)
    return fresh_contiguous(to(_unlast(result, x, d), out_dtype))


# cumsum and cumprod (TORCH_META_FUNC(cumsum), TORCH_IMPL_FUNC(cumsum_out) in ReduceOps.cpp):
# the meta step picks the result's dtype (the one asked for, else ``out``'s, else the input's,
# integers and bool widened to int64) and allocates it with the input's sizes, contiguous, or
# checks ``out`` and resizes it; the impl step refuses an ``out`` that the resized result
# partly overlaps with the input (its iterator's check), then scans in that dtype.
def _meta_scan(out, self, dim, dtype):
    wrap_dim(dim, self.dim())
    if out is None:
        integral = self.dtype.category <= st.INTEGRAL
        return empty(self.shape, dtype=dtype or (st.int64 if integral else self.dtype), device=self.device)
    want = dtype or out.dtype
    if out is self and out.dtype is not want:        # the in-place kernel: torchgen's ``check_inplace``
        raise RuntimeError(f"Bad in-place call: input tensor dtype {st.type_meta_name(self.dtype)} and output "
                           f"tensor dtype {st.type_meta_name(want)} should match")
    if out.dtype is not want:
        raise RuntimeError(f"Expected out tensor to have dtype {st.type_meta_name(want)}, but got "
                           f"{st.type_meta_name(out.dtype)} instead")
    if out.device != self.device:
        raise RuntimeError(f"Expected out tensor to have device {self.device}, but got {out.device} instead")
    if resize_output(out, self.shape):
        out._impl.strides = contiguous_strides(tuple(self.shape))
    return out


def _impl_scan(result, self, dim, product):
    check_no_overlap(result._impl, [self._impl])
    return dispatcher.call("copy_", result, _scan(self, dim, result.dtype, product))


def meta_cumsum(out, self, dim, *, dtype=None):
    return _meta_scan(out, self, dim, dtype)


def impl_cumsum(result, self, dim, *, dtype=None):
    refuse_unlisted_dtypes("cumsum_out_cpu", result)
    return _impl_scan(result, self, dim, False)


def meta_cumprod(out, self, dim, *, dtype=None):
    return _meta_scan(out, self, dim, dtype)


def impl_cumprod(result, self, dim, *, dtype=None):
    refuse_unlisted_dtypes("cumprod_out_cpu", result)
    return _impl_scan(result, self, dim, True)


cumsum_out = structured(meta_cumsum, impl_cumsum)      # and from them cumsum, cumprod
cumprod_out = structured(meta_cumprod, impl_cumprod)


# logcumsumexp, cummax and cummin (ReduceOps.cpp): out= kernels of their own, the functional
# ones running them into fresh contiguous outputs. Each checks its outputs' dtypes
# (``check_scalar_type_device_layout_equal``), resizes them to the input's sizes (contiguous
# when resized) and writes the scan computed here into them.
def _check_scalar_type(out, want):
    if out.dtype is not want:
        raise RuntimeError(f"expected scalar_type {want.torch_name} but found {out.dtype.torch_name}")


def _log_scan(x, d):
    """log of the running sum of exponentials along ``d``, accumulated as cumsum's floats are
    (from -inf), contiguous."""
    rows, shape = _rows(x, d)
    result = empty(rows.shape, dtype=rows.dtype, device=x.device)
    n = shape[-1] if shape else 1
    if result.numel():
        acc = np.float64 if x.dtype is st.float32 else rows.dtype.numpy_type.type
        loops(x.device, "scan").log_scan_loop(buffer(result), buffer(rows), result.numel() // n, n, acc(-np.inf),
                                              acc(0))
    return to(_unlast(result, x, d), x.dtype)


def logcumsumexp_out(self, dim, *, out):
    """``logcumsumexp_out`` over ``_logcumsumexp_out_cpu``: floating dtypes only; ``out``
    resized, then refused if it partly overlaps the input (the scan's iterator)."""
    _check_scalar_type(out, self.dtype)
    d = _dim(self, dim)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{self.dtype.torch_name}\'')
    if resize_output(out, self.shape):
        out._impl.strides = contiguous_strides(tuple(self.shape))
    check_no_overlap(out._impl, [self._impl])
    return dispatcher.call("copy_", out, _log_scan(self, d))


def logcumsumexp(x, dim):
    return logcumsumexp_out(x, dim, out=empty(x.shape, dtype=x.dtype, device=x.device))


def _extreme_scan_out(name, self, dim, is_max, values, indices):
    """``cummax_out``/``cummin_out``: the running extreme along ``dim`` and the index it was
    found at; a 0-dim input is its own extreme, at index 0 (its dim -1 or 0), and an empty one
    reads no dim."""
    _check_scalar_type(values, self.dtype)
    _check_scalar_type(indices, st.int64)
    if self.dim() == 0 and dim not in (0, -1):
        raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    for out in (values, indices):
        if resize_output(out, self.shape):
            out._impl.strides = contiguous_strides(tuple(self.shape))
    if self.dim() == 0:
        return dispatcher.call("copy_", values, self), dispatcher.call("zero_", indices)
    if self.numel():
        d = _dim(self, dim)
        rows, shape = _rows(self, d)
        found = empty(rows.shape, dtype=rows.dtype, device=self.device)
        at = empty(rows.shape, dtype=st.int64, device=self.device)
        loops(self.device, "scan").extreme_scan_loop(buffer(found), buffer(at), buffer(rows),
                                                     found.numel() // shape[-1], shape[-1], is_max)
        dispatcher.call("copy_", values, _unlast(found, self, d))
        dispatcher.call("copy_", indices, _unlast(at, self, d))
    return values, indices


def cummax_out(self, dim, *, values, indices):
    return _extreme_scan_out("cummax", self, dim, True, values, indices)


def cummin_out(self, dim, *, values, indices):
    return _extreme_scan_out("cummin", self, dim, False, values, indices)


def _fresh_scan_outputs(self):
    return (empty(self.shape, dtype=self.dtype, device=self.device),
            empty(self.shape, dtype=st.int64, device=self.device))


def cummax(x, dim):
    refuse_unlisted_dtypes(f"cummax_{x.device.type}", x, complex32=False)
    values, indices = _fresh_scan_outputs(x)
    return _return_type("cummax")(*cummax_out(x, dim, values=values, indices=indices))


def cummin(x, dim):
    refuse_unlisted_dtypes(f"cummin_{x.device.type}", x, complex32=False)
    values, indices = _fresh_scan_outputs(x)
    return _return_type("cummin")(*cummin_out(x, dim, values=values, indices=indices))


# ---------------------------------------------------------------------- unique (Unique.cpp)
def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """The distinct values in ascending order (sorted or not, as torch's CPU kernel gives them),
    where each element's value lies among them (``inverse``, shaped as ``self``) and how often
    each occurs (``counts``); the two left unasked are empty. Found on the host with NumPy: the
    values decide the result's size. The CPU kernel sorts, so it has no complex case."""
    refuse_float8("unique", self)
    _not_complex(self, "unique")
    values = np.asarray(self._host_values()).reshape(-1)
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    nothing = empty([0], dtype=st.int64, device=self.device)
    return (from_host(uniq, self.dtype, self.device),
            from_host(inverse.reshape(tuple(self.shape)), st.int64, self.device) if return_inverse else nothing,
            from_host(counts, st.int64, self.device) if return_counts else nothing)


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """The distinct slices along ``dim``, in lexicographic order (``_unique_dim_cpu_template``
    sorts them so, ``sorted`` or not), each slice's position among them, and their counts."""
    _not_complex(self, "unique_dim")
    return _unique_slices(self, dim, False, return_inverse, return_counts)


def _unique_slices(self, dim, consecutive, return_inverse, return_counts):
    """``_unique_dim_cpu_template``: the slices along ``dim`` kept once (all equal ones, or each
    run of equal neighbours when ``consecutive``). A zero-size dim other than ``dim`` leaves no
    slice to compare: torch refuses."""
    if self.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, self.dim())
    if any(n == 0 for d, n in enumerate(self.shape) if d != dim):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    values = np.asarray(self._host_values())
    nothing = empty([0], dtype=st.int64, device=self.device)
    if values.shape[dim] == 0:      # no slice: a contiguous copy, as torch's early return
        empty_result = from_host(np.ascontiguousarray(values), self.dtype, self.device)
        return empty_result, nothing, nothing
    slices = np.moveaxis(values, dim, 0)
    if consecutive:
        uniq, inverse, counts = _runs(slices.reshape(slices.shape[0], -1), slices)
    else:
        uniq, inverse, counts = np.unique(slices, return_inverse=True, return_counts=True, axis=0)
    # the slices stacked along dim 0, then that dim moved back into place: a view, as torch's
    output = dispatcher.call("movedim.int", from_host(np.ascontiguousarray(uniq), self.dtype, self.device), 0, dim)
    return (output,
            from_host(inverse.reshape(-1), st.int64, self.device) if return_inverse else nothing,
            from_host(counts, st.int64, self.device) if return_counts else nothing)


def _runs(rows, items):
    """(first item of each run, each row's run number, each run's length) of the runs of equal
    consecutive rows (compared with ``!=``: a NaN starts a run of its own)."""
    starts = np.ones(rows.shape[0], dtype=bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = np.flatnonzero(starts)
    return items[first], np.cumsum(starts) - 1, np.diff(np.append(first, rows.shape[0]))


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive elements kept once, each element's run number (``inverse``,
    shaped as ``self``) and each run's length (``counts``); along ``dim``, runs of equal
    slices. The two left unasked are empty. Found on the host with NumPy, as ``_unique2``."""
    if dim is not None and not (dim == 0 and self.dim() == 1):
        return _unique_slices(self, dim, True, return_inverse, return_counts)
    values = np.asarray(self._host_values()).reshape(-1)
    nothing = empty([0], dtype=st.int64, device=self.device)
    uniq, inverse, counts = _runs(values.reshape(-1, 1), values)
    return (from_host(uniq, self.dtype, self.device),
            from_host(inverse.reshape(tuple(self.shape)), st.int64, self.device) if return_inverse else nothing,
            from_host(counts, st.int64, self.device) if return_counts else nothing)
