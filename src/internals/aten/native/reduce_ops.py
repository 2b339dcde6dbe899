"""Reductions: sum, mean, prod, amax, amin, max, argmax, argmin (``ReduceOps.cpp``,
``TensorCompare.cpp`` in ``aten/src/ATen/native``).

The input's dims split into kept (outer) and reduced (inner) ones; the output is contiguous
over the kept dims (``keepdim=True`` keeps the reduced ones as size 1). Integer and bool sums
and products accumulate in int64, as torch's do.

The reductions torch declares structured are declared so here: a meta step (the checks, the
output dtype, and ``make_reduction``: the output allocated, or ``out=`` checked and resized)
and an impl step (the reduce loop run into that output, ``reduce_into``). ``structured``
makes the out= kernel the YAML names; the functional overloads are derived from it.
"""

import builtins
import itertools
import math
from collections import namedtuple

import numpy as np

from ...c10 import scalar_type as st
from ...c10.tensor_impl import contiguous_strides
from ...c10.wrap_dim import wrap_dim
from ...return_types import return_type
from .. import dispatcher
from ..tensor_iterator import TensorIterator, check_no_overlap, running_kernel_name
from . import scalar_ops as ops
from .copy import cast_like, to
from .dispatch_stub import loops, refuse_float8
from .resize import resize_output
from .structured import set_output, structured, structured_variant
from .tensor_factories import empty, wrap_scalar


def normalize_dims(dims, ndim, in_order=False):
    """Wrap negative dims and check range, as ``maybe_wrap_dim`` does.

    No dims, or an empty list of them, means every dim: ``make_dim_mask`` in ``ReduceOpsUtils.h``
    treats ``dim=[]`` as a full reduction (``x.sum(dim=[])`` is ``x.sum()``).
    """
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        return tuple(range(ndim))
    if dims == tuple(range(ndim)):      # every dim, as returned above: the impl step gets the meta's
        return dims
    if isinstance(dims, int):
        dims = (dims,)
    out, n = [], ndim or 1    # a 0-dim tensor takes dim 0 and -1
    # sum and most reductions wrap every dim before comparing any; ``in_order`` (var, std and
    # vector_norm) wraps and compares them one at a time
    for d in () if in_order else dims:
        wrap_dim(d, n)
    for d in dims:
        d = wrap_dim(d, n)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()


def _out_shape(x, dims, keepdim):
    if not dims:        # nothing reduced (a 0-dim input): the shape stays
        return x._impl.sizes
    return tuple(1 if d in dims else n for d, n in enumerate(x._impl.sizes) if keepdim or d not in dims)


def _reduce(op, x, dims, keepdim, out_dtype, name, out=None):
    """The reduce loop of ``op`` over ``dims``, into ``out`` when it can take the loop's writes
    (contiguous, of the result's dtype), else into a fresh tensor that is then copied to it."""
    impl = x._impl      # what the kernel reads of x, read directly (no Tensor accessors)
    x_dtype = impl.dtype
    if x_dtype is st.complex32:     # torch's reduce kernels dispatch without ComplexHalf
        raise NotImplementedError(f'"{name}_{impl.device.type}" not implemented for \'ComplexHalf\'')
    if x_dtype.is_float8 and (out_dtype.is_float8 or op in (ops.ARGMAX, ops.ARGMIN)):
        # nor with the float8 types (a sum into float32 reads float32: the input is cast first)
        running = running_kernel_name(impl.device)
        refuse_float8(_FLOAT8_REDUCE_NAMES.get(running, running), x)
    given, dims = dims, normalize_dims(dims, len(impl.sizes))
    if op in (ops.AMAX, ops.AMIN, ops.ARGMAX, ops.ARGMIN) and impl.numel() == 0:
        zero_dim = _first_empty_dim(x, given, dims, name)
        if zero_dim is None:
            return out if out is not None else empty(_out_shape(x, dims, keepdim), dtype=out_dtype, device=x.device)
        raise IndexError(f"{name}(): Expected reduction dim {zero_dim} to have non-zero size.")
    direct = out is not None and out._impl.dtype is out_dtype and out._impl.is_contiguous()
    result = out if direct else empty(_out_shape(x, dims, keepdim), dtype=out_dtype, device=impl.device)
    arg = op in (ops.ARGMAX, ops.ARGMIN)
    # As ``make_reduction``: the input is cast to the dtype the loop accumulates in first.
    xc = cast_like(x, st.opmath_type(x_dtype) if arg else _accumulate_dtype(x_dtype, out_dtype))
    reduce = loops(impl.device, "reduce")
    if arg:
        it = TensorIterator.reduce_op(result, xc, dims, out_dtype=st.int64, in_memory_order=False)
        it.for_each(lambda buffers, *geometry: reduce.arg_reduce_loop(op, *buffers, *geometry))
    else:
        it = TensorIterator.reduce_op(result, xc, dims)
        init = xc._impl.dtype.numpy_type.type(1 if op == ops.PROD else 0)
        it.for_each(lambda buffers, *geometry: reduce.reduce_loop(op, *buffers, init, *geometry))
    return result if out is None or direct else dispatcher.call("copy_", out, result)


# the kernels torch's reductions refuse a float8 tensor in, where not ``{operator}_{device}``
_FLOAT8_REDUCE_NAMES = {"prod_cpu": "prod_out_cpu", "mean_cpu": "sum_cpu"}


def _first_empty_dim(x, given, dims, name):
    """The first reduced dim of size 0, as torch names it: amax and amin quote the dims as the
    caller wrote them (-1 stays -1), max/argmax/argmin take one dim and quote it wrapped."""
    if name in ("amax", "amin") and given is not None:
        given = [given] if isinstance(given, int) else list(given)
        return next((g for g in given if x.shape[g % x.dim()] == 0), None)
    return next((d for d in dims if x.shape[d] == 0), None)


def _accumulate_dtype(in_dtype, out_dtype):
    """A sum accumulates in its output's dtype, computed as ``opmath_type`` (float32 for 16-bit
    floats); so does a float16 input's sum into float32, whose input is cast first."""
    return st.opmath_type(in_dtype if in_dtype.is_reduced_float else out_dtype)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    dtype = x._impl.dtype
    return st.int64 if dtype.category <= st.INTEGRAL else dtype      # bool and integers: int64


# ---------------------------------------------------------------- meta and impl helpers
# What a reduction's meta step hands its impl step: the output, the input as the impl reads it
# (an alias taken before ``out`` was resized, when the two share memory), the reduced dims.
Reduction = namedtuple("Reduction", "result self dims keepdim shares_memory")


def make_reduction(out, self, dim, keepdim, dtype, reads_input_first=False):
    """``resize_reduction`` (``ReduceOpsUtils.h``), the meta step's last: the output's shape
    from the reduced dims, allocated in ``dtype``, or ``out`` checked against it (dtype and
    device, in the words of torchgen's ``check_inplace``) and resized to it, contiguous.
    ``reads_input_first``: the impl computes its values before it writes ``out`` (argmax, any,
    all), so an ``out`` that is the input itself is read as it was before the resize too."""
    dims = normalize_dims(dim, len(self._impl.sizes))
    shape = _out_shape(self, dims, keepdim)
    if out is None:     # ``set_output_raw_strided``: a fresh contiguous output (its sizes come from a tensor's)
        return Reduction(set_output(None, shape, dtype, self._impl.device), self, dims, keepdim, False)
    if out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {st.type_meta_name(dtype)}, "
                           f"but got {st.type_meta_name(out.dtype)} instead")
    if out.device != self.device:
        raise RuntimeError(f"Expected out tensor to have device {self.device}, but got {out.device} instead")
    shared = _shares_memory(out._impl, self._impl)
    if shared and (reads_input_first or self._impl is not out._impl):
        self = dispatcher.call("alias", self)      # the input as it was, before out is resized
    if resize_output(out, shape):
        out._impl.strides = contiguous_strides(shape)
    return Reduction(out, self, dims, keepdim, shared)


def reduce_into(r, compute, identity, reads_all_first=False, resize_again=False):
    """The impl step's loop: ``compute(x, dims, keepdim, out)`` reduces into ``r.result``.

    torch's reduce kernels accumulate in the output itself, first filled with the identity, and
    nothing checks it against the input (``sum(x, 0, out=x[0])`` runs): an input that shares
    its memory is read part-way written. ``cascade_sum`` (sum, nansum, mean) reads the whole
    input before it writes (``reads_all_first``); ``binary_kernel_reduce`` (prod, amax, amin)
    writes each output element before it reads the next one's inputs. ``out`` that *is* the
    input was resized with it, and what is read then is the identity written into it;
    ``resize_again``: mean's ``sum_out`` resizes that ``out`` once more."""
    out = r.result
    if not r.shares_memory:
        return compute(r.self, r.dims, r.keepdim, out)
    dispatcher.call("fill_.Scalar", out, _identity(identity, out.dtype))
    if reads_all_first or r.self._impl is out._impl:
        value = compute(r.self, r.dims, r.keepdim, None)
        if resize_again:
            resize_output(out, value.shape)
        return dispatcher.call("copy_", out, value)
    kept = [d for d in range(r.self.dim()) if d not in r.dims]
    slices = dispatcher.call("permute", r.self, kept + list(r.dims))
    inner = list(range(len(r.dims)))
    for index in itertools.product(*(range(r.self.shape[d]) for d in kept)):
        value = compute(_select(slices, index), inner, False, None)
        where = iter(index)
        out_index = [0 if d in r.dims else next(where) for d in range(r.self.dim())] if r.keepdim else index
        dispatcher.call("copy_", _select(out, out_index), value)
    return out


def _shares_memory(a, b):
    """The two views' byte ranges in one storage meet (whether or not an element is shared)."""
    if a.storage is not b.storage or a.numel() == 0 or b.numel() == 0:
        return False

    def span(t):
        lo = t.storage_offset + builtins.sum(builtins.min(0, (n - 1) * s) for n, s in zip(t.sizes, t.strides))
        hi = t.storage_offset + builtins.sum(builtins.max(0, (n - 1) * s) for n, s in zip(t.sizes, t.strides))
        return lo * t.dtype.itemsize, (hi + 1) * t.dtype.itemsize
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def _identity(value, dtype):
    """The value the output is filled with: a number, or the dtype's extremes (amax's, amin's)."""
    if not isinstance(value, str):
        return value
    lowest = value == "lowest"
    if dtype.is_floating_point:
        return -math.inf if lowest else math.inf
    if dtype is st.bool_:
        return not lowest
    info = np.iinfo(dtype.numpy_type)
    return int(info.min if lowest else info.max)


def _select(t, index):
    for i in index:
        t = dispatcher.call("select.int", t, 0, i)
    return t


def _loop(op, name, dtype):
    """A ``compute`` for ``reduce_into``: the reduce loop of ``op``, in ``dtype``. (A named
    function, not a lambda: it is kernel code, and a lambda here reads as a loop.)"""
    def compute(x, dims, keepdim, out):
        return _reduce(op, x, dims, keepdim, dtype, name, out)
    return compute


# ---- sum and prod: TORCH_META_FUNC2(sum, dim_IntList), TORCH_META_FUNC2(prod, dim_int)
def _from_optional(self, dtype, out):
    """``infer_dtype_from_optional``: the dtype asked for, else ``out``'s, else the input's
    (integers and bool widened to int64)."""
    if dtype is None and out is not None:
        return out.dtype
    return _sum_dtype(self, dtype)


def meta_sum(out, self, dim, keepdim=False, *, dtype=None):
    return make_reduction(out, self, dim, keepdim, _from_optional(self, dtype, out))


def impl_sum(r, self, dim, keepdim=False, *, dtype=None):
    return reduce_into(r, _loop(ops.SUM, "sum", r.result._impl.dtype), 0, reads_all_first=True)


sum_out = structured(meta_sum, impl_sum)      # and from it sum.dim_IntList
_sum = structured_variant(sum_out, inplace=False)


def sum(x, *, dtype=None):
    """``sum`` of every element: the structured kernel over no dims."""
    return _sum(x, None, False, dtype=dtype)


def meta_prod(out, self, dim, keepdim=False, *, dtype=None):
    return make_reduction(out, self, dim, keepdim, _from_optional(self, dtype, out))


def impl_prod(r, self, dim, keepdim=False, *, dtype=None):
    return reduce_into(r, _loop(ops.PROD, "prod", r.result.dtype), 1)


prod_out = structured(meta_prod, impl_prod)   # and from it prod.dim_int
_prod = structured_variant(prod_out, inplace=False)


def prod(x, *, dtype=None):
    """``prod`` of every element: the structured kernel over every dim."""
    return _prod(x, None, False, dtype=dtype)


def nansum_out(self, dim=None, keepdim=False, *, dtype=None, out=None):
    """``nansum_out`` (ReduceOps.cpp; not structured): sum with NaN read as zero. torch's kernel
    dispatches on floating types only, while an integer tensor, which holds no NaN, is summed as
    it is; ``out`` must have the result's dtype."""
    if self.dtype.is_complex:
        raise RuntimeError(f"nansum on {self.device.type.upper()} does not support complex inputs")
    r = make_reduction(out, self, dim, keepdim, _sum_dtype(self, dtype))
    def compute(x, dims, keepdim, out):
        return _reduce(ops.SUM, _nan_as_zero(x), dims, keepdim, r.result.dtype, "nansum", out)
    return reduce_into(r, compute, 0, reads_all_first=True)


def _nan_as_zero(x):
    """torch's kernel reads each NaN as it loads it as a zero."""
    return dispatcher.call("nan_to_num", x, 0.0, math.inf, -math.inf) if x.dtype.is_floating_point else x


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    return nansum_out(x, dim, keepdim, dtype=dtype)


def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """CompositeImplicitAutograd: ``nansum`` divided by the count of the elements that are not NaN."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{x.dtype.torch_name}")
    count = dispatcher.call("sum.dim_IntList", dispatcher.call("logical_not_", dispatcher.call("isnan", x)), dim,
                            keepdim)
    return dispatcher.call("div.Tensor", dispatcher.call("nansum", x, dim, keepdim, dtype=dtype), count)


# ---- mean: TORCH_META_FUNC2(mean, dim), TORCH_IMPL_FUNC(mean_out)
def _floating(dtype):
    return dtype.is_floating_point or dtype.is_complex


def meta_mean(out, self, dim, keepdim=False, *, dtype=None):
    """The input's dtype (or the one asked for) must be floating; without one asked for, a
    floating ``out`` is the result's dtype, and another ``out`` cannot take a floating result."""
    in_dtype = dtype or self.dtype
    if in_dtype.category <= st.INTEGRAL:
        which = "Optional" if dtype else "Input"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either a floating point "
                           f"or complex dtype. Got: {in_dtype.torch_name}")
    if dtype is None and out is not None:
        if not _floating(out.dtype):
            raise RuntimeError(f"result type {in_dtype.torch_name} can't be cast to the desired output type "
                               f"{out.dtype.torch_name}")
        in_dtype = out.dtype
    return make_reduction(out, self, dim, keepdim, in_dtype)


def _mean_values(dtype):
    """The sum, then divided by the count; float16/bfloat16 sum and divide in float32 (torch's
    op-math type), then round once: a float16 sum of 100 x 1000. would overflow to inf before
    the division brought it back in range."""
    compute = st.float32 if dtype.is_reduced_float else dtype

    def values(x, dims, keepdim, out):
        count = 1
        for d in dims:
            count *= x.shape[d]
        total = _reduce(ops.SUM, x, dims, keepdim, compute, "mean", out if compute is dtype else None)
        if count:
            total = dispatcher.call("div_.Tensor", total, wrap_scalar(count))
        else:
            total = dispatcher.call("fill_.Scalar", total, float("nan"))
        if out is None:
            return to(total, dtype)
        return total if total is out else dispatcher.call("copy_", out, total)
    return values


def impl_mean(r, self, dim, keepdim=False, *, dtype=None):
    if r.result.dtype is st.complex32:        # mean is sum's kernel, then a division
        raise NotImplementedError('"sum_cpu" not implemented for \'ComplexHalf\'')
    return reduce_into(r, _mean_values(r.result.dtype), 0, reads_all_first=True, resize_again=True)


mean_out = structured(meta_mean, impl_mean)   # and from it mean.dim
_mean = structured_variant(mean_out, inplace=False)


def mean(x, *, dtype=None):
    """``mean`` of every element: the structured kernel over no dims."""
    return _mean(x, None, False, dtype=dtype)


# ---- amax and amin: TORCH_META_FUNC(amax), TORCH_META_FUNC(amin)
def _check_not_all_of_empty(name, x):
    """A max or min over every dim of an empty tensor: no dim was named, so torch says so.
    (Naming a zero-size dim is an IndexError, raised by ``_reduce``.)"""
    if x.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")


def _meta_extreme(name, kernel, out, self, dim, keepdim):
    """amax's and amin's meta: ``out`` has the input's dtype, checked first; a reduction over
    every dim of an empty input, a complex input, a named dim of size 0 are refused."""
    if out is not None and out.dtype is not self.dtype:
        raise RuntimeError(f"Expected the dtype for input and out to match, but got {self.dtype.torch_name} for "
                           f"input's dtype and {out.dtype.torch_name} for out's dtype.")
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        _check_not_all_of_empty(name, self)
    _not_complex(self, kernel)
    zero_dim = _first_empty_dim(self, dim, normalize_dims(dim, self.dim()), name) if self.numel() == 0 else None
    if zero_dim is not None:
        raise IndexError(f"{name}(): Expected reduction dim {zero_dim} to have non-zero size.")
    return make_reduction(out, self, dim, keepdim, self.dtype)


def meta_amax(out, self, dim=(), keepdim=False):
    return _meta_extreme("amax", "max_values_cpu", out, self, dim, keepdim)


def impl_amax(r, self, dim=(), keepdim=False):
    return reduce_into(r, _loop(ops.AMAX, "amax", self.dtype), "lowest")


def meta_amin(out, self, dim=(), keepdim=False):
    return _meta_extreme("amin", "min_values_cpu", out, self, dim, keepdim)


def impl_amin(r, self, dim=(), keepdim=False):
    return reduce_into(r, _loop(ops.AMIN, "amin", self.dtype), "highest")


amax_out = structured(meta_amax, impl_amax)   # and from them amax, amin
amin_out = structured(meta_amin, impl_amin)


def meta_aminmax(min, max, self, *, dim=None, keepdim=False):
    """``TORCH_META_FUNC(aminmax)`` (``TensorCompare.cpp``): the empty-dimension checks, then
    both outputs of the input's dtype and the reduced shape (every dim, kept as ones with
    ``keepdim``; else none), contiguous, or ``out=`` checked and resized."""
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        shape = (1,) * self.dim() if keepdim else ()
    else:
        d = wrap_dim(dim, self.dim())
        if self.numel() == 0 and self.dim() and self.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        sizes = list(enumerate(self.shape))
        shape = tuple(1 if i == d else n for i, n in sizes) if keepdim else tuple(n for i, n in sizes if i != d)
    return tuple(set_output(out, shape, self.dtype, self.device) for out in (min, max))


def impl_aminmax(outs, self, *, dim=None, keepdim=False):
    """``amin`` and ``amax`` over ``dim`` (else every element) into the two outputs
    (``aminmax_stub`` / ``aminmax_allreduce_stub``: no complex case)."""
    refuse_float8(f"aminmax_{self.device.type}", self)
    _not_complex(self, "aminmax_cpu")
    dims = list(range(self.dim())) if dim is None else [wrap_dim(dim, self.dim())] if self.dim() else []
    for op, name, out in ((ops.AMIN, "amin", outs[0]), (ops.AMAX, "amax", outs[1])):
        dispatcher.call("copy_", out, _reduce(op, self, dims, keepdim, self.dtype, name))
    return return_type("aminmax", ("min", "max"))(*outs)       # an out= call returns a plain tuple


aminmax_out = structured(meta_aminmax, impl_aminmax, outputs=2)


def diff(x, n=1, dim=-1, prepend=None, append=None):
    """CompositeImplicitAutograd (``ReduceOps.cpp``): ``prepend`` and ``append`` concatenated
    along ``dim``, then ``n`` times the difference of neighbours (``logical_xor`` for bool); n = 0
    copies the input."""
    if x.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        _diff_check_shape(x, other, dim)
    if n == 0:
        return dispatcher.call("copy_", dispatcher.call("zeros_like", x), x)
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, x, append) if t is not None]
        x = dispatcher.call("cat", parts, dim)
    size = x.shape[wrap_dim(dim, x.dim())]
    length, result = size - 1, x
    for _ in range(n if n < size else size):     # (``min`` is the operator here)
        later = dispatcher.call("narrow", result, dim, 1, length)
        earlier = dispatcher.call("narrow", result, dim, 0, length)
        result = dispatcher.call("logical_xor" if x.dtype is st.bool_ else "sub.Tensor", later, earlier)
        length -= 1
    return result


def _diff_check_shape(x, other, dim):
    if other is None:
        return
    d = wrap_dim(dim, x.dim())
    if other.dim() != x.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.dim()):
        if i != d and other.shape[i] != x.shape[i]:
            raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match that of input except "
                               f"along the differencing dimension; input.size({i}) = {x.shape[i]}, but got "
                               f"tensor.size({i}) = {other.shape[i]}")


def _into(r, value):
    """The impl's last step where the loop wrote elsewhere: the value copied into the output."""
    return value if value is r.result else dispatcher.call("copy_", r.result, value)


# ---- argmax and argmin: TORCH_META_FUNC(argmax), TORCH_IMPL_FUNC(argmax_out)
def _meta_arg(name, out, self, dim, keepdim):
    """No bool or complex input; an empty one needs a dim, of non-zero size; the indices are long."""
    if self.dtype is st.bool_ or self.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support {'bool' if self.dtype is st.bool_ else 'complex'} input")
    if dim is None and self.numel() == 0:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    if dim is not None and self.numel() == 0:
        zero_dim = _first_empty_dim(self, dim, normalize_dims(dim, self.dim()), name)
        if zero_dim is not None:
            raise IndexError(f"{name}(): Expected reduction dim {zero_dim} to have non-zero size.")
    return make_reduction(out, self, dim, keepdim, st.int64, reads_input_first=True)


def _impl_arg(op, name, r, dim, keepdim):
    """Over every element (no dim), the flattened input's index, shaped as the output."""
    if dim is None:
        flat = dispatcher.call("reshape", r.self, [-1])
        return _into(r, dispatcher.call("reshape", _reduce(op, flat, 0, False, st.int64, name), r.result.shape))
    return _reduce(op, r.self, dim, keepdim, st.int64, name, None if r.shares_memory else r.result)


def meta_argmax(out, self, dim=None, keepdim=False):
    return _meta_arg("argmax", out, self, dim, keepdim)


def impl_argmax(r, self, dim=None, keepdim=False):
    return _impl_arg(ops.ARGMAX, "argmax", r, dim, keepdim)


def meta_argmin(out, self, dim=None, keepdim=False):
    return _meta_arg("argmin", out, self, dim, keepdim)


def impl_argmin(r, self, dim=None, keepdim=False):
    return _impl_arg(ops.ARGMIN, "argmin", r, dim, keepdim)


argmax_out = structured(meta_argmax, impl_argmax)     # and from them argmax, argmin
argmin_out = structured(meta_argmin, impl_argmin)


def _max_min(op, name, x):
    """max or min over every element: one value (``max_all``)."""
    _check_not_all_of_empty(name, x)
    _not_complex(x, f"{name}_all")
    return _reduce(op, x, None, False, x.dtype, name)


# ---- max.dim and min.dim (TORCH_PRECOMPUTE_META_FUNC2(max, dim)): two outputs from one meta
# step, the values in the input's dtype and their indices (``resize_reduction_with_indices``)
def _meta_selection(name, outs, self, dim, keepdim):
    """A named dim of size 0 or a complex input is refused; each output is allocated, or checked
    and resized, as a reduction's."""
    d = wrap_dim(dim, self.dim())
    if self.numel() == 0 and _first_empty_dim(self, dim, [d], name) is not None:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if self.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    values, indices = outs
    return (make_reduction(values, self, d, keepdim, self.dtype),
            make_reduction(indices, self, d, keepdim, st.int64))


def _as_iterator_holds(r, self):
    """An output as the kernel's iterator holds it, the reduced dim put back (torch's
    ``compare_base_kernel`` unsqueezes it): ``max(x, 0, out=(x[0], i))`` of a (1, 4) ``x`` is
    then ``x`` itself, a full overlap, which runs; indices written over a row of the input are
    refused."""
    out = r.result
    if r.keepdim or out.dim() >= self.dim():
        return out._impl
    return dispatcher.call("unsqueeze", out, r.dims[0])._impl


def _impl_selection(op, arg_op, name, pair, self):
    """The values and indices along the dim (a bool input compares as uint8 for the position),
    copied into the outputs. An output that *is* the input was resized with it by the meta
    step: the values are selected from the resized input, and the outputs resized again."""
    for r in pair:
        check_no_overlap(_as_iterator_holds(r, self), [self._impl])
    values, indices = pair
    x = values.self
    results = (_reduce(op, x, values.dims, values.keepdim, x.dtype, name),
               _reduce(arg_op, x if x.dtype is not st.bool_ else cast_like(x, st.uint8), values.dims,
                       values.keepdim, st.int64, name))
    for r, result in zip(pair, results):
        if r.result._impl is x._impl:
            resize_output(r.result, result.shape)
        dispatcher.call("copy_", r.result, result)
    return return_type(name)(values.result, indices.result)     # an out= call returns a plain tuple


def meta_max_dim(max, max_values, self, dim, keepdim=False):
    return _meta_selection("max", (max, max_values), self, dim, keepdim)


def impl_max_dim(pair, self, dim, keepdim=False):
    return _impl_selection(ops.AMAX, ops.ARGMAX, "max", pair, self)


def meta_min_dim(min, min_indices, self, dim, keepdim=False):
    return _meta_selection("min", (min, min_indices), self, dim, keepdim)


def impl_min_dim(pair, self, dim, keepdim=False):
    return _impl_selection(ops.AMIN, ops.ARGMIN, "min", pair, self)


max_dim_out = structured(meta_max_dim, impl_max_dim, outputs=2)     # and from them max.dim, min.dim
min_dim_out = structured(meta_min_dim, impl_min_dim, outputs=2)


def _not_complex(x, kernel):
    """max, min, sorting and selection compare elements: torch's CPU kernels have no complex case."""
    if x.dtype.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype.torch_name}\'')


def _return_type(name):
    """``torch.return_types.max`` and friends: a named (values, indices) pair."""
    return return_type(name)


def max(x):
    return _max_min(ops.AMAX, "max", x)


def min(x):
    return _max_min(ops.AMIN, "min", x)
