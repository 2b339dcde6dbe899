"""Structured kernels and out= kernels: ``torch.add(a, b, out=c)`` runs the operator's ``.out``
overload (``add.out``).

torch writes most operators once, as a *structured* kernel: a meta function computes the
output's sizes, strides and dtype, and the ``impl`` writes the values. The functional variant
allocates the output the meta function asks for; the out variant is handed ``out`` and checks
it (torchgen's generated ``structured_add_out_out::set_output_strided`` with its ``resize_out``):

1. the dtype: each operator family has its own rule (a TensorIterator op casts to a wider
   ``out``, ``mm`` wants the dtype exactly, ``cat`` casts what it can, ...);
2. the sizes: ``resize_output`` (``Resize.cpp``) resizes an ``out`` of other sizes, with a
   deprecation warning unless it had no elements; a resized ``out`` takes the strides the meta
   function computed, one that already fits keeps its own;
3. then the values are written into it, and ``out`` itself is returned.

Operators declared that way here (``structured: True`` in the YAML: the binary families in
``binary_ops.py``, the unary ones in ``unary_ops.py``, the activations in ``activation.py``,
the reductions in ``reduce_ops.py`` and ``reduce_ops_math.py``) give ``structured`` a meta and
an impl step: out= is the primary kernel, and ``structured_variant`` derives the functional
and in-place kernels of the entries that name it in ``structured_delegate:``; the meta step
resizes ``out`` (the TensorIterator, or a reduction's ``make_reduction``).

Operators torch does not declare structured have out= kernels of their own in torch
(``kthvalue_out_cpu``, ``cummax_out``, ``nan_to_num_out``, ...), written so here too beside
their functional kernels, which run them. The rest are written as one functional kernel, the
meta function and the ``impl`` at once: their out kernel runs it and copies its result into the
checked ``out`` (``copy_``, which casts). That out variant is registered from the YAML
(``register_native_functions``) rather than written: an ``.out`` entry without a ``dispatch:``
gets ``structured_out`` over the kernels of its functional overload (the entry of the same
signature), following the entry's ``out_rules``.
"""
import functools
import inspect
import warnings

from ..._tensor_base import TensorBase
from ...c10 import scalar_type as st
from ...c10.tensor_impl import contiguous_strides
from ..dispatcher import call
from ..empty_tensor import _meta, empty_strided_generic
from ..tensor_iterator import assert_no_internal_overlap, assert_no_overlap, check_no_overlap
from .resize import resize_output

__all__ = ["structured_out", "out_dtype_rule", "structured", "structured_variant", "set_output"]


# ---------------------------------------------------------------- declared structured kernels
def structured(meta, impl, outputs=1):
    """The out= kernel of an operator declared as torch declares a structured one
    (``TORCH_META_FUNC`` and ``TORCH_IMPL_FUNC``): ``meta(out, *args)`` checks the arguments and
    builds the TensorIterator (shape, dtypes, and ``out`` resized, or allocated when None);
    ``impl(iterator, *args)`` runs the loop into it and returns the result. The YAML entry with
    ``structured: True`` names this kernel; its functional and in-place overloads name it in
    ``structured_delegate:`` and get ``structured_variant``'s kernels.

    The meta's first ``outputs`` parameters are the outputs, named as the schema names them
    (``out``; ``grad_input`` for a backward; ``max, max_values`` for ``max.dim_max``), each
    None when the output is to be allocated."""
    names = list(inspect.signature(meta).parameters)[:outputs]
    run = _skipped_under_meta_execution(impl)

    def out_kernel(*args, **kwargs):
        given = tuple(kwargs.pop(name) for name in names)
        result = run(meta(*given, *args, **kwargs), *args, **kwargs)
        return result if outputs == 1 else tuple(result)     # the outputs given, as torch's kernels return them
    out_kernel.meta, out_kernel.impl, out_kernel.outputs = meta, impl, outputs
    _named_after(out_kernel, meta, "_out", outputs=outputs, out=True)
    return out_kernel


def structured_variant(out_kernel, inplace):
    """The functional or in-place kernel of a ``structured_delegate:`` entry, as torchgen writes
    them (``structured_add_out_functional`` and ``..._inplace`` in ``RegisterCPU.cpp``): the same
    meta and impl, with no ``out`` (the iterator allocates it) or with ``self`` as ``out``."""
    meta, impl = out_kernel.meta, out_kernel.impl
    outputs = out_kernel.outputs
    nones = (None,) * outputs       # each output allocated by the meta step
    # A call with no keywords (the usual one) passes none on: ``**kwargs`` would copy a dict per
    # step. The test of ``_skipped_under_meta_execution`` is written out in both kernels (every
    # elementwise call passes here, and a frame costs as much as the test): the meta step's
    # outputs, when it made tensors and kernels run for metadata only; otherwise the impl step.
    if inplace:
        def kernel(self, *args, **kwargs):
            made = meta(self, self, *args, **kwargs) if kwargs else meta(self, self, *args)
            if isinstance(made, _MADE) and _metadata_only(made):
                return made
            return impl(made, self, *args, **kwargs) if kwargs else impl(made, self, *args)
    else:
        # the outputs' Nones bound once: ``meta(*nones, *args)`` would build a list on every call
        meta_allocating = functools.partial(meta, *nones)

        def kernel(*args, **kwargs):
            made = meta_allocating(*args, **kwargs) if kwargs else meta_allocating(*args)
            if isinstance(made, _MADE) and _metadata_only(made):
                return made
            return impl(made, *args, **kwargs) if kwargs else impl(made, *args)
    return _named_after(kernel, meta, "_" if inplace else "", outputs=1 if inplace else outputs)


def _skipped_under_meta_execution(impl):
    """``impl`` that, when kernels run for metadata only (a fake tensor's meta step), hands back
    the outputs the meta step made and computes nothing: torch's structured kernel on the Meta
    device has no impl at all. A meta step that built a TensorIterator returns the iterator,
    whose impl skips its loops itself, so that impl still runs."""
    def run(outputs, *args, **kwargs):
        # the type test first: an iterator (every elementwise call) goes straight to its impl
        if isinstance(outputs, _MADE) and _metadata_only(outputs):
            return outputs
        return impl(outputs, *args, **kwargs)
    run.__wrapped__ = impl
    return run


_MADE = (TensorBase, tuple)     # what a meta step that builds no iterator returns


def _metadata_only(outputs):
    """Whether the meta step's ``outputs`` (a tensor or a tuple) are all the call makes: kernels
    run for metadata only, and they are tensors. (The flag first: it is off on every call that
    computes, and a reduction's meta step returns a tuple that is not all tensors.)"""
    return _meta.active and (isinstance(outputs, TensorBase) or all(isinstance(t, TensorBase) for t in outputs))


def _named_after(kernel, meta, suffix, outputs=1, out=False):
    """Name a generated kernel after the declaration (``meta_add`` -> ``add_``), and give it the
    meta's signature and source line, for dispatch tables and ``registered at`` lines: the
    inputs, and for the out= kernel its outputs as keyword-only parameters."""
    name = meta.__name__.removeprefix("meta_") + suffix
    kernel.__name__ = kernel.__qualname__ = name
    kernel.__module__, kernel.__wrapped__ = meta.__module__, meta
    params = list(inspect.signature(meta).parameters.values())
    args = params[outputs:]
    if out:
        args += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, default=inspect.Parameter.empty)
                 for p in params[:outputs]]
        args.sort(key=lambda p: p.kind)
    kernel.__signature__ = inspect.Signature(args)
    return kernel

def set_output(out, shape, dtype, device, strides=None, self=None):
    """A meta step's ``set_output_raw_strided(i, sizes, {}, options)`` for a kernel that builds no
    TensorIterator (softmax, nll_loss, the pooling backwards): a fresh output, contiguous or with
    ``strides`` (the memory format the options name); else ``out`` checked as torchgen's
    ``resize_out`` checks it (dtype, then device) and resized, taking that layout when it had to be.
    An ``out`` that is ``self`` (the in-place form) is never resized: torchgen's ``check_inplace``
    asks for the dtype, device and sizes exactly."""
    strides = tuple(strides) if strides is not None else contiguous_strides(tuple(shape))
    if out is None:
        return empty_strided_generic(tuple(shape), strides, dtype, device)
    if out is self:
        for what, have, want in (("dtype", st.type_meta_name(out.dtype), st.type_meta_name(dtype)),
                                 ("device", out.device, device), ("size", list(out.shape), list(shape))):
            if have != want:
                raise RuntimeError(f"Bad in-place call: input tensor {what} {have} and output tensor {what} {want} "
                                   "should match")
        return out
    if out.dtype is not dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {st.type_meta_name(dtype)}, but got "
                           f"{st.type_meta_name(out.dtype)} instead")
    if out.device != device:
        raise RuntimeError(f"Expected out tensor to have device {device}, but got {out.device} instead")
    if resize_output(out, shape):
        out._impl.strides = strides
    return out


# ---------------------------------------------------------------- the generic out= kernel
# Each operator's own out= facts are in its YAML entry, ``out_rules:`` (an entry without it gets
# the default rules): ``dtype``, the rule ``out`` is checked by (below; the default is its
# family's, from ``out_dtype_rule``); ``overlap: after_resize`` for the sorts, whose kernels
# check the resized ``out`` against the inputs (``sort(x, 0, out=(x.t(), i))`` is refused,
# ``sum(x, 0, out=x)`` is not).
#
# The dtype rules: ``same`` (abs: TensorIterator with no cast to the outputs,
# ``check_all_same_dtype``), and ``where``, ``cat``, ``index_select``, ``arange``, ``linalg``
# (``checkLinalgCompatibleDtype``: any dtype the result casts to safely).


def out_dtype_rule(rules, functional_schema, tensor_iterator):
    """The dtype rule of an out= entry: its ``out_rules``' ``dtype``, else a factory's
    (TensorOptions: the values made in ``out``'s dtype), a TensorIterator op's
    (``structured_inherits: TensorIteratorBase``: the result cast to ``out`` if that is safe),
    else ``exact``."""
    if "dtype" in rules:
        return rules["dtype"]
    if any(a.name == "layout" for a in functional_schema.arguments.flat_kwarg_only):
        return "factory"
    return "iterator" if tensor_iterator else "exact"


# The rules of operators built on a TensorIterator that checks its operands' memory
# (``check_mem_overlap``: no partial overlap of ``out`` with an input), and of those that refuse
# any overlap at all (``cat``'s and ``index_select``'s ``assert_no_overlap``).
_PARTIAL_OVERLAP_RULES = ("iterator", "same", "where")
_ANY_OVERLAP_RULES = ("cat", "index_select")


def _input_impls(args):
    return [t._impl for a in args for t in (a if isinstance(a, (list, tuple)) else (a,)) if isinstance(t, TensorBase)]


def _check_overlap(rule, out, args):
    """Refuse an ``out`` that overlaps an input where torch's kernel does, before anything runs."""
    inputs = _input_impls(args)
    if rule in _PARTIAL_OVERLAP_RULES:
        check_no_overlap(out._impl, inputs)
    elif rule in _ANY_OVERLAP_RULES:
        assert_no_internal_overlap(out._impl)
        for i in inputs:
            assert_no_overlap(out._impl, i)


# The function a linalg out= check names: orgqr is torch.linalg.householder_product inside.
_LINALG_NAMES = {"linalg_householder_product": "linalg.householder_product", "orgqr": "linalg.householder_product"}


def _check_dtype(rule, name, result, out):
    """``out`` may receive ``result``: each rule's check, in torch's words."""
    want, got = result.dtype, out.dtype
    if rule == "iterator" and not st.can_cast(want, got):
        raise RuntimeError(f"result type {want.torch_name} can't be cast to the desired output type {got.torch_name}")
    if rule == "linalg":      # checkLinalgCompatibleDtype: a lower precision of the same kind is taken
        if not st.can_cast(want, got):
            raise RuntimeError(f"torch.{_LINALG_NAMES.get(name, name)}: Expected result to be safely castable from "
                               f"{want.torch_name} dtype, but got result with dtype {got.torch_name}")
        return
    if rule == "cat" and not st.can_cast(want, got):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {got.torch_name}")
    if want is got or rule in ("iterator", "cat", "factory", "arange"):
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


def _resize(rule, out, result):
    """Resize ``out`` to the result's sizes; a resized one takes the result's strides (torch's
    ``resize_out``: ``as_strided_`` with the strides the meta function gave). Factories resize
    with ``resize_``: no warning, contiguous strides."""
    if rule == "arange":
        return _resize_arange(out, result.shape)
    if rule == "factory":
        call("resize_", out, result.shape)
        return
    if rule == "linalg":
        # torch's linalg out= kernels write straight into an empty ``out`` of the result's dtype
        # (so it takes the result's column-major strides); any other goes through a temporary
        # and ``resize_output``, which leaves a resized ``out`` contiguous
        direct = out._impl.numel() == 0 and out.dtype is result.dtype
        if resize_output(out, result.shape) and direct:
            out._impl.strides = result._impl.strides
        return
    if resize_output(out, result.shape):
        out._impl.strides = result._impl.strides       # dense, as a fresh result is: fits the storage


def _functional_kwargs(rule, args, kwargs, outs):
    """What the functional kernel gets besides the inputs: a factory's options, from ``out``
    (its out= overload has none)."""
    if rule in ("factory", "arange"):
        kwargs = {**kwargs, "dtype": outs[0].dtype, "device": outs[0].device}
    return kwargs


def structured_out(name, functional, out_names, rule, rules=None):
    """The out= kernel of operator ``name`` (base name, for messages) over the functional kernel
    ``functional``: it takes the out= overload's arguments, the outputs by their schema names.
    ``rule`` is the dtype rule, ``rules`` the entry's ``out_rules`` (see above)."""
    after_resize = (rules or {}).get("overlap") == "after_resize"

    def out_kernel(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        for out in outs:
            _check_overlap(rule, out, (*args, *kwargs.values()))
        kwargs = _functional_kwargs(rule, args, kwargs, outs)
        results = functional(*args, **kwargs)
        results = results if len(outs) > 1 else (results,)
        for out, result in zip(outs, results):
            _check_dtype(rule, name, result, out)
            if out.device != result.device:
                raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} "
                                   "instead")
        for out, result in zip(outs, results):
            _resize(rule, out, result)
            if after_resize:
                check_no_overlap(out._impl, _input_impls(args))
        for out, result in zip(outs, results):
            call("copy_", out, result)
        return tuple(outs) if len(outs) > 1 else outs[0]
    out_kernel.__name__ = out_kernel.__qualname__ = f"{name}_out"
    return out_kernel
