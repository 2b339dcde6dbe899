"""out= kernels: ``torch.add(a, b, out=c)`` runs the operator's ``.out`` overload (``add.out``).

torch writes most operators once, as a *structured* kernel: a meta function computes the
output's sizes, strides and dtype, and the ``impl`` writes the values. The functional variant
allocates the output the meta function asks for; the out variant is handed ``out`` and checks
it (torchgen's generated ``structured_add_out_out::set_output_strided`` with its ``resize_out``):

1. the dtype: each operator family has its own rule (a TensorIterator op casts to a wider
   ``out``, ``mm`` wants the dtype exactly, ``sum`` computes *in* ``out``'s dtype, ...);
2. the sizes: ``resize_output`` (``Resize.cpp``) resizes an ``out`` of other sizes, with a
   deprecation warning unless it had no elements; a resized ``out`` takes the strides the meta
   function computed, one that already fits keeps its own;
3. then the values are written into it, and ``out`` itself is returned.

Here the functional kernel is the meta function and the ``impl`` at once: the out kernel runs it
and copies its result into the checked ``out`` (``copy_``, which casts). So every operator has one
kernel, and its out variant is registered from the YAML (``register_native_functions``) rather
than written: an ``.out`` entry without a ``dispatch:`` gets ``structured_out`` over the kernels of
its functional overload (the entry of the same signature).
"""
import itertools
import math
import warnings

import numpy as np

from ..._tensor_base import TensorBase
from ...c10 import scalar_type as st
from ..dispatcher import call
from ..tensor_iterator import _overlap, assert_no_internal_overlap, check_no_overlap, output_layout
from .reduce_ops import normalize_dims
from .resize import resize_output

__all__ = ["structured_out", "out_dtype_rule"]

# The dtype rule of each operator's out= variant, where it is not its family's (below).
OUT_DTYPE_RULES = {
    # unary_op and clamp: TensorIterator with no cast to the outputs (``check_all_same_dtype``)
    "neg": "same", "abs": "same", "clamp": "same",
    "where": "where",
    "cat": "cat", "stack": "cat",
    "index_select": "index_select",
    # reductions and scans compute in ``out``'s dtype when no dtype is given
    "sum": "from_out", "prod": "from_out", "cumsum": "from_out", "mean": "from_out_float",
    "arange": "arange",
    # unary_op (``build_borrowing_unary_op``): out must have the input's dtype, checked first
    **dict.fromkeys(("sign", "floor", "ceil", "trunc", "frac", "fix", "round", "bitwise_not", "gelu", "silu",
                     "softplus"), "unary"),
    # their own checks, against the input's dtype, before anything runs
    "nan_to_num": "nan_to_num", "amax": "amax", "amin": "amax", "cummax": "cummax", "cummin": "cummax",
    "cumprod": "from_out", "logcumsumexp": "cummax",
    # checked by their kernels, each in its own words (``_OWN_CHECKS`` below)
    **dict.fromkeys(("kthvalue", "median", "mode", "any", "all"), "own"),
}


def out_dtype_rule(name, functional_schema, tensor_iterator):
    """The rule for the out= variant of ``name``: the table's, else a factory's (TensorOptions:
    the values made in ``out``'s dtype), a TensorIterator op's (``structured_inherits:
    TensorIteratorBase``: the result cast to ``out`` if that is safe), else ``exact``."""
    if name in OUT_DTYPE_RULES:
        return OUT_DTYPE_RULES[name]
    if any(a.name == "layout" for a in functional_schema.arguments.flat_kwarg_only):
        return "factory"
    return "iterator" if tensor_iterator else "exact"


# The rules of operators built on a TensorIterator that checks its operands' memory
# (``check_mem_overlap``: no partial overlap of ``out`` with an input), and of those that refuse
# any overlap at all (``cat``'s and ``index_select``'s ``assert_no_overlap``).
_PARTIAL_OVERLAP_RULES = ("iterator", "same", "where")
_ANY_OVERLAP_RULES = ("cat", "index_select")
# Scans and sorts check their resized outputs the same way, in their kernels (``cumsum(x, 0,
# out=x.t())`` is refused; ``sum(x, 0, out=x)`` is not).
_CHECKED_AFTER_RESIZE = ("cumsum", "cumprod", "logcumsumexp", "sort", "msort", "topk", "kthvalue", "max", "min",
                         "mode")


# The selections along a dim check ``out`` as their kernel's iterator holds it, with the reduced
# dim put back (``compare_base_kernel`` unsqueezes it): ``max(x, 0, out=(x[0], i))`` of a (1, 4)
# ``x`` is then ``x`` itself, a full overlap, which runs. The dim's position among the arguments:
_SELECTS_ALONG_DIM = {"max": 1, "min": 1, "mode": 1, "kthvalue": 2}


def _as_kernel_sees(name, out, args, kwargs):
    """``out`` with the reduced dim of a selection back in place, when it was dropped."""
    at = _SELECTS_ALONG_DIM.get(name)
    if at is None or len(args) <= at and "dim" not in kwargs and name in ("max", "min"):
        return out._impl
    dim = args[at] if len(args) > at else kwargs.get("dim", -1)
    keepdim = args[at + 1] if len(args) > at + 1 else kwargs.get("keepdim", False)
    if keepdim or out.dim() >= args[0].dim():
        return out._impl
    return call("unsqueeze", out, dim if dim >= 0 else dim + args[0].dim())._impl


def _input_impls(args):
    return [t._impl for a in args for t in (a if isinstance(a, (list, tuple)) else (a,)) if isinstance(t, TensorBase)]


def _check_overlap(rule, out, args):
    """Refuse an ``out`` that overlaps an input where torch's kernel does, before anything runs."""
    inputs = _input_impls(args)
    if rule in _PARTIAL_OVERLAP_RULES:
        check_no_overlap(out._impl, inputs)
    elif rule in _ANY_OVERLAP_RULES:
        assert_no_internal_overlap(out._impl)
        if any(_overlap(out._impl, i) for i in inputs):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing "
                               "the operation.")


# The rules that check ``out`` against the input's dtype before the kernel runs (so a float
# ``bitwise_not`` into a bool ``out`` is refused for the dtype, not for the kernel's).
_INPUT_DTYPE_MESSAGES = {
    "unary": "Found dtype {got} but expected {want}",
    "nan_to_num": "nan_to_num: dtype of out: {got} should be same as input: {want}",
    "amax": ("Expected the dtype for input and out to match, but got {want} for input's dtype and {got} for out's "
             "dtype."),
    "cummax": "expected scalar_type {want} but found {got}",
}


def _type_name(dtype):
    return f"torch.{dtype.torch_name}Tensor"


def _bool_result(name, outs):
    if outs[0].dtype not in (st.bool_, st.uint8):
        return f"{name} only supports bool tensor for result, got: {outs[0].dtype.torch_name}"
    return None


# The dtype checks of the kernels that are not structured: (values, indices) outs, and the
# reductions to bool; each returns the message of the first failed check, or None.
_OWN_CHECKS = {
    "kthvalue": lambda self, outs: ("output values must be of same type as input" if outs[0].dtype is not self.dtype
                                    else "output indices must be of scalar type Long"
                                    if outs[1].dtype is not st.int64 else None),
    "median": lambda self, outs: (
        f"Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but type "
        f"{_type_name(outs[0].dtype)} does not equal {_type_name(self.dtype)} (while checking arguments for median)"
        if outs[0].dtype is not self.dtype else
        f"Expected tensor for argument #1 'indices' to have scalar type Long; but got {_type_name(outs[1].dtype)} "
        "instead (while checking arguments for median)" if outs[1].dtype is not st.int64 else None),
    "mode": lambda self, outs: next((f"expected scalar type '{want.torch_name}' but got '{out.dtype.torch_name}' for "
                                     f"{what} output" for out, want, what in zip(outs, (self.dtype, st.int64),
                                                                                  ("values", "indices"))
                                     if out.dtype is not want), None),
    "any": lambda self, outs: _bool_result("any", outs), "all": lambda self, outs: _bool_result("all", outs),
}


def _check_input_dtype(rule, self, outs):
    """The check of those rules: the first ``out`` has the input's dtype (cummax's second, the
    indices, is long)."""
    for out, want in zip(outs, (self.dtype, st.int64)):
        if out.dtype is not want:
            raise RuntimeError(_INPUT_DTYPE_MESSAGES[rule].format(want=want.torch_name, got=out.dtype.torch_name))


def _check_dtype(rule, name, result, out):
    """``out`` may receive ``result``: each rule's check, in torch's words."""
    want, got = result.dtype, out.dtype
    if rule in _INPUT_DTYPE_MESSAGES:
        return      # checked before the kernel ran
    if rule in ("iterator", "from_out_float") and not st.can_cast(want, got):
        raise RuntimeError(f"result type {want.torch_name} can't be cast to the desired output type {got.torch_name}")
    if rule == "cat" and not st.can_cast(want, got):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {got.torch_name}")
    if want is got or rule in ("iterator", "from_out_float", "cat", "from_out", "factory", "arange", "own"):
        return
    if rule == "same":
        raise RuntimeError(f"Found dtype {got.torch_name} but expected {want.torch_name}")
    if rule == "where":
        raise RuntimeError(f"Expected out type to be {want.torch_name} but got {got.torch_name}")
    if rule == "index_select":
        raise RuntimeError(f"{name}(): self and result must have the same scalar type")
    raise RuntimeError(f"Expected out tensor to have dtype {st.type_meta_name(want)}, "
                       f"but got {st.type_meta_name(got)} instead")


def _resize_arange(out, shape):
    """``arange_out`` resizes by itself, with a warning of its own (``RangeFactories.cpp``)."""
    if out._impl.numel() != shape[0]:
        if out._impl.numel() > 0:
            warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} "
                          f"which does not match the computed number of elements {shape[0]}. Note that this may "
                          f"occur as a result of rounding error. The out tensor will be resized to a tensor of shape "
                          f"({shape[0]},).", UserWarning, stacklevel=2)
        call("resize_", out, shape)
    return False


def _resize(rule, out, result, self):
    """Resize ``out`` to the result's sizes; a resized one takes the result's strides (torch's
    ``resize_out``: ``as_strided_`` with the strides the meta function gave). Factories resize
    with ``resize_``: no warning, contiguous strides. Two kernels are not structured: ``cummax``
    resizes with ``resize_output`` (contiguous strides), and ``nan_to_num`` copies an integer
    input that way, a float one through ``TensorIterator::unary_op`` (the input's layout)."""
    if rule == "arange":
        return _resize_arange(out, result.shape)
    if rule == "factory":
        call("resize_", out, result.shape)
        return
    if not resize_output(out, result.shape) or rule == "cummax":
        return
    if rule == "nan_to_num":    # a float input's TensorIterator lays it out; an integer one is copied
        if not (self.dtype.is_floating_point or self.dtype.is_complex):
            return
        out._impl.strides = output_layout([self._impl], result.shape)
    else:
        out._impl.strides = result._impl.strides       # dense, as a fresh result is: fits the storage


def _functional_kwargs(rule, args, kwargs, outs):
    """What the functional kernel gets besides the inputs: the dtype ``out`` asks for, where the
    rule computes in it (``mean`` only from a floating input into a floating ``out``); a
    factory's options too (its out= overload has none)."""
    if rule in ("from_out", "from_out_float") and kwargs.get("dtype") is None:
        dtype = outs[0].dtype
        floating = all(d.is_floating_point or d.is_complex for d in (dtype, args[0].dtype))
        if rule == "from_out" or floating:
            kwargs = {**kwargs, "dtype": dtype}
    elif rule in ("factory", "arange"):
        kwargs = {**kwargs, "dtype": outs[0].dtype, "device": outs[0].device}
    return kwargs


# Reductions accumulate in ``out`` itself, filled with the identity first, and torch does not
# check it against the input (``sum(x, 0, out=x[0])`` runs): an input sharing its memory is read
# part-way written. ``cascade_sum`` (sum, nansum, and mean, a sum then divided in place) reads the
# whole input into its accumulators before it writes; ``binary_kernel_reduce`` (prod, amax, amin)
# writes each output element before it reads the next one's inputs. ``out`` that *is* the input
# was resized with it, and what the kernel then reads is the identity it wrote.
_REDUCTIONS_IN_OUT = {"sum": 0, "nansum": 0, "mean": 0, "prod": 1, "amax": "lowest", "amin": "highest"}
_READS_ALL_FIRST = ("sum", "nansum", "mean")


def _shares_memory(a, b):
    """The two views' byte ranges in one storage meet (whether or not an element is shared)."""
    if a.storage is not b.storage or a.numel() == 0 or b.numel() == 0:
        return False
    def span(t):
        lo = t.storage_offset + sum(min(0, (n - 1) * s) for n, s in zip(t.sizes, t.strides))
        hi = t.storage_offset + sum(max(0, (n - 1) * s) for n, s in zip(t.sizes, t.strides))
        return lo * t.dtype.itemsize, (hi + 1) * t.dtype.itemsize
    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def _identity(name, dtype):
    """The value ``out`` is filled with: amax's and amin's are the dtype's extremes."""
    value = _REDUCTIONS_IN_OUT[name]
    if not isinstance(value, str):
        return value
    lowest = value == "lowest"
    if dtype.is_floating_point:
        return -math.inf if lowest else math.inf
    if dtype is st.bool_:
        return not lowest
    info = np.iinfo(dtype.numpy_type)
    return int(info.min if lowest else info.max)


def _reduce_in_out(name, functional, args, kwargs, out):
    """The reduction of ``args[0]`` into ``out`` that overlaps it, as torch's kernels run it."""
    x, dims = args[0], args[1] if len(args) > 1 else kwargs.pop("dim", None)
    keepdim = args[2] if len(args) > 2 else kwargs.pop("keepdim", False)
    call("fill_.Scalar", out, _identity(name, out.dtype))
    if name in _READS_ALL_FIRST or x._impl is out._impl:
        result = functional(x, dims, keepdim, *args[3:], **kwargs)
        if name == "mean" and x._impl is out._impl:     # mean's sum_out resizes its out again
            resize_output(out, result.shape)
        return call("copy_", out, result)
    reduced = normalize_dims(dims, x.dim())
    kept = [d for d in range(x.dim()) if d not in reduced]
    slices = call("permute", x, kept + list(reduced))
    rest_dims = 0 if isinstance(dims, int) else list(range(len(reduced)))
    for index in itertools.product(*(range(x.shape[d]) for d in kept)):
        value = functional(_select(slices, index), rest_dims, False, *args[3:], **kwargs)
        where = iter(index)
        out_index = [0 if d in reduced else next(where) for d in range(x.dim())] if keepdim else index
        call("copy_", _select(out, out_index), value)
    return out


def _select(t, index):
    for i in index:
        t = call("select.int", t, 0, i)
    return t


def structured_out(name, functional, out_names, rule):
    """The out= kernel of operator ``name`` (base name, for messages) over the functional kernel
    ``functional``: it takes the out= overload's arguments, the outputs by their schema names."""
    def out_kernel(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        for out in outs:
            _check_overlap(rule, out, (*args, *kwargs.values()))
        if rule in _INPUT_DTYPE_MESSAGES:
            _check_input_dtype(rule, args[0], outs)
        elif rule == "own" and (message := _OWN_CHECKS[name](args[0], outs)) is not None:
            raise RuntimeError(message)
        # a dtype given to a reduction or scan is the result's, which ``out`` must have exactly
        checked = "exact" if rule.startswith("from_out") and kwargs.get("dtype") is not None else rule
        in_out = name in _REDUCTIONS_IN_OUT and _shares_memory(outs[0]._impl, args[0]._impl)
        if in_out and args[0]._impl is not outs[0]._impl:
            args = (call("alias", args[0]), *args[1:])      # the input as it was, before out is resized
        kwargs = _functional_kwargs(rule, args, kwargs, outs)
        results = functional(*args, **kwargs)
        results = results if len(outs) > 1 else (results,)
        for out, result in zip(outs, results):
            _check_dtype(checked, name, result, out)
            if out.device != result.device:
                raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} "
                                   "instead")
        for out, result in zip(outs, results):
            _resize(rule, out, result, args[0])
            if in_out:
                return _reduce_in_out(name, functional, args, kwargs, out)
            if name in _CHECKED_AFTER_RESIZE:
                check_no_overlap(_as_kernel_sees(name, out, args, kwargs), _input_impls(args))
        if name in _SELECTS_ALONG_DIM and outs[0]._impl is args[0]._impl:
            # out resized the input with it: the kernel selects from that, and resizes again
            results = functional(*args, **kwargs)
            for out, result in zip(outs, results):
                resize_output(out, result.shape)
        for out, result in zip(outs, results):
            call("copy_", out, result)
        return tuple(outs) if len(outs) > 1 else outs[0]
    out_kernel.__name__ = out_kernel.__qualname__ = f"{name}_out"
    return out_kernel
