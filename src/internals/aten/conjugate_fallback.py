"""The conjugate bit's boxed fallback (``aten/src/ATen/ConjugateFallback.cpp`` with
``aten/src/ATen/native/MathBitsFallback.h``).

``conj()`` of a complex tensor copies nothing: it returns a view whose key set holds the
``Conjugate`` key, and the values it shows are the conjugates of the stored ones. Kernels read
storage as it is, so an operator that does not know about the bit must not see such a tensor.
The ``Conjugate`` key sits between ``Python`` and ``ADInplaceOrView``, below autograd, so its
fallback runs after autograd has recorded the call on the lazy tensor, and before any kernel:

- a view operator (its aliased arguments are read-only, ``Tensor(a)``) runs as it is: the view
  copies its input's key set, so it keeps the bit;
- any other operator gets its conjugate inputs materialized (``clone``, which resolves the bit);
- an in-place or out= operator whose written argument has the bit writes into a resolved clone,
  and the clone is then copied back (``copy_`` stores the conjugates again).

``copy_`` and ``clone`` must understand the bit themselves (the fallback is built on them), and a
few operators that never read values pass straight through (``empty_like``, ``is_complex`` ...).
A tensor without the bit has no ``Conjugate`` key: ordinary calls never reach any of this.
"""
from .._tensor_base import TensorBase
from ..c10.dispatch_key import DispatchKey
from . import dispatcher
from .dispatcher import KernelFunction, impl, register_fallback
from .native.tensor_shape import alias_impl

__all__ = ["register_conjugate_fallback", "conjugate_fallback", "physical", "CONJUGATE_FALLTHROUGH"]

# Operators the fallback leaves alone: they make new tensors from metadata only, or answer a
# question about the tensor (torch's list, ConjugateFallback.cpp, cut to the ones defined here).
CONJUGATE_FALLTHROUGH = ("empty_like", "empty.out", "empty_strided", "full_like", "is_complex",
                         "is_floating_point", "requires_grad_", "resize_", "set_", "set_.source_Storage_storage_offset",
                         "set_.source_Tensor")


def physical(t):
    """``t`` without the bit: the same storage, sizes and strides, showing the stored values.
    Not a tracked view: the fallback hands it only to kernels, below autograd."""
    out = TensorBase._from_impl(alias_impl(t, t._impl.sizes, t._impl.strides, None, None, t._impl.version_counter))
    out._impl._set_conj(False)
    return out


def _writes(op):
    """Whether the operator writes the arguments its outputs alias (in-place, out=: True), only
    reads them (a view: False), or has no aliased argument (None). Both at once is refused, as
    torch's ``MathOpFallback`` refuses it."""
    flags = {a.annotation.is_write for a in op.schema.arguments.flat_all if a.annotation is not None}
    if len(flags) > 1:
        raise RuntimeError(f"Unsupported operator for Conjugate fallback: {op.schema.name}. Conjugate fallback doesn't "
                           "work for operators with a mix mutable and non-mutable inputs that alias with outputs, this "
                           "must be implemented manually.  If you got this error on a core op, please report a bug "
                           "to PyTorch.")
    return flags.pop() if flags else None


def _argument_is_written(op):
    """Per argument name: True when the schema marks it written (``Tensor(a!)``)."""
    return {a.name: a.annotation is not None and a.annotation.is_write for a in op.schema.arguments.flat_all}


def _resolve(value, name, written, mutable):
    """One argument with its conjugate tensors materialized; a written one is remembered with its
    clone, to be copied back after the call."""
    if isinstance(value, TensorBase):
        if not value._impl.is_conj():
            return value
        clone = dispatcher.call("clone", value)
        if written:
            if mutable:
                raise RuntimeError("Conjugate fallback does not support operators with more than one mutable tensors "
                                   "with Conjugatebit set to true.")
            mutable.append((value, clone))
        return clone
    if isinstance(value, (list, tuple)) and any(isinstance(t, TensorBase) and t._impl.is_conj() for t in value):
        if written:
            raise RuntimeError(f" fallback doesn't currently support mutable TensorLists with Conjugate inputs. Please "
                               f"materialize all the Conjugate input tensor(s) in the mutable TensorList inputs before "
                               f"calling {name}")
        return type(value)(dispatcher.call("clone", t) if isinstance(t, TensorBase) and t._impl.is_conj() else t
                           for t in value)
    return value


def conjugate_fallback(op, keys, *args, **kwargs):
    """``MathOpFallback::fallback_impl`` for the conjugate bit: see the module docstring."""
    below = keys.below(DispatchKey.Conjugate)
    if _writes(op) is False:           # a view: it copies its input's key set, bit included
        return op.redispatch(below, *args, **kwargs)
    written = _argument_is_written(op)
    names = [a.name for a in op.schema.arguments.flat_positional]
    mutable = []
    args = tuple(_resolve(a, str(op.schema.name), written.get(n, False), mutable)
                 for n, a in zip(names + [None] * (len(args) - len(names)), args))
    kwargs = {k: _resolve(v, str(op.schema.name), written.get(k, False), mutable) for k, v in kwargs.items()}
    result = op.redispatch(below, *args, **kwargs)
    for original, clone in mutable:   # at most one: copy_ conjugates again as it writes
        if tuple(original.shape) != tuple(clone.shape):          # an out= the kernel resized
            dispatcher.call("resize_", original, list(clone.shape))
        dispatcher.call("copy_", original, clone)
        result = _swap(result, clone, original)
    return result


def _swap(result, clone, original):
    """The operator's result with the written clone replaced by the tensor the caller passed."""
    if result is clone:
        return original
    if isinstance(result, tuple):
        return tuple(original if r is clone else r for r in result)
    return result


def copy_conjugate(keys, self, src, non_blocking=False):
    """``copy_`` reads and writes through the bit (``copy_impl`` in ``Copy.cpp`` conjugates when the
    two bits differ): the stored values of ``self`` become the conjugates of ``src``'s values when
    ``self`` has the bit, ``src``'s values otherwise."""
    target, source = physical(self) if self._impl.is_conj() else self, src
    if isinstance(src, TensorBase) and src._impl.is_conj():
        source = physical(src)
    if self._impl.is_conj() != (isinstance(src, TensorBase) and src._impl.is_conj()):
        source = dispatcher.call("conj_physical", source)
    dispatcher.find("copy_").redispatch(keys.below(DispatchKey.Conjugate), target, source, non_blocking)
    return self


def clone_conjugate(keys, self, *, memory_format=None):
    """``clone`` resolves the bit: a new tensor holding the values shown, without the bit."""
    out = dispatcher.find("clone").redispatch(keys.below(DispatchKey.Conjugate), physical(self),
                                              memory_format=memory_format)
    return dispatcher.call("conj_physical_", out)


def register_conjugate_fallback():
    """After the native operators: the fallthroughs go to those of torch's list defined here."""
    register_fallback("Conjugate", KernelFunction(conjugate_fallback, boxed=True))
    through = KernelFunction(None, "fallthrough registered at internals/aten/conjugate_fallback.py", fallthrough=True)
    for name in CONJUGATE_FALLTHROUGH:
        if name in dispatcher.aten_ops:
            impl(f"aten::{name}", "Conjugate", through)
    impl("aten::copy_", "Conjugate", KernelFunction(copy_conjugate, with_keyset=True))
    impl("aten::clone", "Conjugate", KernelFunction(clone_conjugate, with_keyset=True))
