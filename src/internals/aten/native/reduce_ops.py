"""Reductions: sum, mean, prod, amax, amin, max, argmax, argmin (``ReduceOps.cpp``,
``TensorCompare.cpp`` in ``aten/src/ATen/native``).

The input's dims split into kept (outer) and reduced (inner) ones; the output is contiguous
over the kept dims (``keepdim=True`` keeps the reduced ones as size 1). Integer and bool sums
and products accumulate in int64, as torch's do.
"""

import math

import numpy as np

from ...c10 import scalar_type as st
from ...c10.wrap_dim import wrap_dim
from ...return_types import return_type
from .. import dispatcher
from ..tensor_iterator import TensorIterator
from . import scalar_ops as ops
from .copy import cast_like, to
from .dispatch_stub import loops
from .tensor_factories import empty, wrap_scalar


def normalize_dims(dims, ndim, in_order=False):
    """Wrap negative dims and check range, as ``maybe_wrap_dim`` does.

    No dims, or an empty list of them, means every dim: ``make_dim_mask`` in ``ReduceOpsUtils.h``
    treats ``dim=[]`` as a full reduction (``x.sum(dim=[])`` is ``x.sum()``).
    """
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        return tuple(range(ndim))
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
    return tuple(1 if d in dims else n for d, n in enumerate(x.shape) if keepdim or d not in dims)


def _reduce(op, x, dims, keepdim, out_dtype, name):
    given, dims = dims, normalize_dims(dims, x.dim())
    if op in (ops.AMAX, ops.AMIN, ops.ARGMAX, ops.ARGMIN) and x.numel() == 0:
        zero_dim = _first_empty_dim(x, given, dims, name)
        if zero_dim is None:
            return empty(_out_shape(x, dims, keepdim), dtype=out_dtype, device=x.device)
        raise IndexError(f"{name}(): Expected reduction dim {zero_dim} to have non-zero size.")
    out = empty(_out_shape(x, dims, keepdim), dtype=out_dtype, device=x.device)
    arg = op in (ops.ARGMAX, ops.ARGMIN)
    # As ``make_reduction``: the input is cast to the dtype the loop accumulates in first.
    xc = cast_like(x, st.opmath_type(x.dtype) if arg else _accumulate_dtype(x.dtype, out_dtype))
    if arg:
        it = TensorIterator.reduce_op(out, xc, dims, out_dtype=st.int64, in_memory_order=False)
        reduce = loops(x.device, "reduce")
        return it.for_each(lambda buffers, *geometry: reduce.arg_reduce_loop(op, *buffers, *geometry))
    it = TensorIterator.reduce_op(out, xc, dims)
    init = np.dtype(xc.dtype.numpy_type).type(1 if op == ops.PROD else 0)
    return it.for_each(lambda buffers, *geometry: loops(x.device, "reduce").reduce_loop(op, *buffers, init, *geometry))


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
    return st.int64 if x.dtype.category <= st.INTEGRAL else x.dtype      # bool and integers: int64


def sum(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce(ops.SUM, x, dim, keepdim, _sum_dtype(x, dtype), "sum")


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    """sum with NaN read as zero; torch's kernel dispatches on floating types only, while an
    integer tensor, which holds no NaN, is summed as it is (``nansum_out`` in ReduceOps.cpp)."""
    if x.dtype.is_complex:
        raise RuntimeError(f"nansum on {x.device.type.upper()} does not support complex inputs")
    if x.dtype.is_floating_point:     # torch's kernel reads each NaN as it loads it as a zero
        x = dispatcher.call("nan_to_num", x, 0.0, math.inf, -math.inf)
    return _reduce(ops.SUM, x, dim, keepdim, _sum_dtype(x, dtype), "nansum")


def nanmean(x, dim=None, keepdim=False, *, dtype=None):
    """CompositeImplicitAutograd: ``nansum`` divided by the count of the elements that are not NaN."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{x.dtype.torch_name}")
    count = dispatcher.call("sum.dim_IntList", dispatcher.call("logical_not_", dispatcher.call("isnan", x)), dim,
                            keepdim)
    return dispatcher.call("div.Tensor", dispatcher.call("nansum", x, dim, keepdim, dtype=dtype), count)


def prod(x, dim=None, keepdim=False, *, dtype=None):
    return _reduce(ops.PROD, x, dim, keepdim, _sum_dtype(x, dtype), "prod")


def mean(x, dim=None, keepdim=False, *, dtype=None):
    out_dtype = dtype or x.dtype
    if out_dtype.category <= st.INTEGRAL:
        which = "Optional" if dtype else "Input"
        raise RuntimeError(f"mean(): could not infer output dtype. {which} dtype must be either a floating point "
                           f"or complex dtype. Got: {out_dtype.torch_name}")
    dims = normalize_dims(dim, x.dim())
    count = 1
    for d in dims:
        count *= x.shape[d]
    # float16/bfloat16 sum and divide in float32 (torch's op-math type), then round once: a float16
    # sum of 100 x 1000. would overflow to inf before the division brought it back in range.
    compute = st.float32 if out_dtype.is_reduced_float else out_dtype
    total = _reduce(ops.SUM, x, dims, keepdim, compute, "mean")
    if count:
        total = dispatcher.call("div_.Tensor", total, wrap_scalar(count))
    else:
        total = dispatcher.call("fill_.Scalar", total, float("nan"))
    return to(total, out_dtype)


def _check_not_all_of_empty(name, x):
    """A max or min over every dim of an empty tensor: no dim was named, so torch says so.
    (Naming a zero-size dim is an IndexError, raised by ``_reduce``.)"""
    if x.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")


def amax(x, dim=(), keepdim=False):
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        _check_not_all_of_empty("amax", x)
    _not_complex(x, "max_values_cpu")
    return _reduce(ops.AMAX, x, dim, keepdim, x.dtype, "amax")


def amin(x, dim=(), keepdim=False):
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        _check_not_all_of_empty("amin", x)
    _not_complex(x, "min_values_cpu")
    return _reduce(ops.AMIN, x, dim, keepdim, x.dtype, "amin")


def aminmax(x, *, dim=None, keepdim=False):
    """``aminmax`` (``TensorCompare.cpp``): ``amin`` and ``amax`` over ``dim`` (else every element),
    checked first as its meta function checks."""
    if dim is None:
        if x.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = list(range(x.dim()))
    else:
        d = wrap_dim(dim, x.dim())
        if x.numel() == 0 and x.dim() and x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = [d] if x.dim() else []
    _not_complex(x, "aminmax_cpu")
    low, high = _reduce(ops.AMIN, x, dims, keepdim, x.dtype, "amin"), _reduce(ops.AMAX, x, dims, keepdim, x.dtype,
                                                                               "amax")
    return return_type("aminmax", ("min", "max"))(low, high)


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


def _arg(op, name, x, dim, keepdim):
    if x.dtype is st.bool_ or x.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support {'bool' if x.dtype is st.bool_ else 'complex'} input")
    if dim is None:
        if x.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        flat = dispatcher.call("reshape", x, [-1])
        out = _reduce(op, flat, 0, False, st.int64, name)
        return dispatcher.call("reshape", out, [1] * x.dim()) if keepdim else out
    return _reduce(op, x, dim, keepdim, st.int64, name)


def argmax(x, dim=None, keepdim=False):
    return _arg(ops.ARGMAX, "argmax", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False):
    return _arg(ops.ARGMIN, "argmin", x, dim, keepdim)


def _max_min(op, arg_op, name, x, dim, keepdim):
    if dim is None:
        _check_not_all_of_empty(name, x)
        _not_complex(x, f"{name}_all")
        return _reduce(op, x, None, False, x.dtype, name)
    if x.dtype.is_complex:
        wrap_dim(dim, x.dim())
        raise RuntimeError(f"{name}(): does not support complex input")
    values = _reduce(op, x, dim, keepdim, x.dtype, name)
    # bool compares as uint8 for the position; the values are unchanged.
    source = x if x.dtype is not st.bool_ else cast_like(x, st.uint8)
    indices = _reduce(arg_op, source, dim, keepdim, st.int64, name)
    return _return_type(name)(values, indices)


def _not_complex(x, kernel):
    """max, min, sorting and selection compare elements: torch's CPU kernels have no complex case."""
    if x.dtype.is_complex:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype.torch_name}\'')


def _return_type(name):
    """``torch.return_types.max`` and friends: a named (values, indices) pair."""
    return return_type(name)


def max(x, dim=None, keepdim=False):
    return _max_min(ops.AMAX, ops.ARGMAX, "max", x, dim, keepdim)


def min(x, dim=None, keepdim=False):
    return _max_min(ops.AMIN, ops.ARGMIN, "min", x, dim, keepdim)
