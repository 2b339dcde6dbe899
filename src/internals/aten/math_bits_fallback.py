"""The boxed fallback shared by the two lazy math bits (``aten/src/ATen/native/MathBitsFallback.h``).

A math bit is a dispatch key a tensor carries to say that the values it shows are a
self-inverse function of the stored ones: ``Conjugate`` (the conjugates, ``conj()``) and
``Negative`` (the negatives, ``_neg_view`` and ``conj().imag``). Kernels read storage as it is,
so an operator that does not know about a bit must not see a tensor that has it. Both keys sit
below autograd and above ``ADInplaceOrView`` (``Negative`` the higher), so the fallback runs
after autograd has recorded the call on the lazy tensor, and before any kernel:

- a view operator (its aliased arguments are read-only, ``Tensor(a)``) runs as it is: the view
  copies its input's key set, so it keeps the bit;
- any other operator gets its inputs with the bit materialized (``clone``, which resolves it);
- an in-place or out= operator whose written argument has the bit writes into a resolved clone,
  and the clone is then copied back (``copy_`` applies the bit's function again as it writes).

``copy_`` and ``clone`` must understand the bits themselves (``aten/native/copy.py``): the
fallback is built on them, so they are fallthroughs, as are the operators that never read
values (``empty_like``, ``is_complex`` ...). A tensor without the bit has no such key: ordinary
calls never reach any of this.
"""
from .._tensor_base import TensorBase
from . import dispatcher
from .dispatcher import KernelFunction, impl

__all__ = ["fallback_impl", "register_fallthroughs", "VIEW_FNS", "TENSOR_UTILITIES_AND_CONSTRUCTORS", "BOTH_BITS"]


def _writes(op, name):
    """Whether the operator writes the arguments its outputs alias (in-place, out=: True), only
    reads them (a view: False), or has no aliased argument (None). Both at once is refused, as
    torch's ``MathOpFallback`` refuses it."""
    flags = {a.annotation.is_write for a in op.schema.arguments.flat_all if a.annotation is not None}
    if len(flags) > 1:
        raise RuntimeError(f"Unsupported operator for {name} fallback: {op.schema.name}{name} fallback doesn't "
                           "work for operators with a mix mutable and non-mutable inputs that alias with outputs, this "
                           "must be implemented manually.  If you got this error on a core op, please report a bug "
                           "to PyTorch.")
    return flags.pop() if flags else None


def _argument_is_written(op):
    """Per argument name: True when the schema marks it written (``Tensor(a!)``)."""
    return {a.name: a.annotation is not None and a.annotation.is_write for a in op.schema.arguments.flat_all}


class _Resolver:
    """Materializes the arguments with one bit, remembering the written one with its clone."""

    def __init__(self, op, name, is_bit_set):
        self.op, self.name, self.is_bit_set = op, name, is_bit_set
        self.written = _argument_is_written(op)
        self.mutable = []

    def __call__(self, value, arg_name):
        written = self.written.get(arg_name, False)
        if isinstance(value, TensorBase):
            return self._tensor(value, written)
        if isinstance(value, (list, tuple)) and any(isinstance(t, TensorBase) and self.is_bit_set(t) for t in value):
            if written:
                raise RuntimeError(f" fallback doesn't currently support mutable TensorLists with {self.name} inputs. "
                                   f"Please materialize all the {self.name} input tensor(s) in the mutable TensorList "
                                   f"inputs before calling {self.op.schema.name}")
            return type(value)(dispatcher.call("clone", t) if isinstance(t, TensorBase) and self.is_bit_set(t) else t
                               for t in value)
        return value

    def _tensor(self, value, written):
        if not self.is_bit_set(value):
            return value
        clone = dispatcher.call("clone", value)
        if written:
            if self.mutable:
                raise RuntimeError(f"{self.name} fallback does not support operators with more than one mutable "
                                   f"tensors with {self.name}bit set to true.")
            self.mutable.append((value, clone))
        return clone


def fallback_impl(key, name, is_bit_set, op, keys, args, kwargs):
    """``MathOpFallback::fallback_impl`` for the bit of ``key``: see the module docstring."""
    below = keys.below(key)
    if _writes(op, name) is False:           # a view: it copies its input's key set, bit included
        return op.redispatch(below, *args, **kwargs)
    resolve = _Resolver(op, name, is_bit_set)
    names = [a.name for a in op.schema.arguments.flat_positional]
    args = tuple(resolve(a, n) for n, a in zip(names + [None] * (len(args) - len(names)), args))
    kwargs = {k: resolve(v, k) for k, v in kwargs.items()}
    result = op.redispatch(below, *args, **kwargs)
    for original, clone in resolve.mutable:   # at most one: copy_ applies the bit again as it writes
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


# The fallthroughs both bits share (``MathBitFallThroughLists.h``): views and their in-place
# forms keep the key set, so the bit; the utilities and constructors read no values.
VIEW_FNS = ("as_strided_", "detach", "detach_", "diagonal", "expand", "expand_as", "movedim.int", "movedim.intlist",
            "narrow", "permute", "select.Dimname", "select.int", "squeeze", "squeeze_", "transpose.int",
            "transpose.Dimname", "transpose_", "t", "t_", "real", "imag", "view_as_real", "unflatten.int",
            "unflatten.Dimname", "unfold", "unsqueeze", "unsqueeze_", "view_as", "unbind.int", "unbind.Dimname",
            "split.Tensor", "split_with_sizes", "swapaxes", "swapdims", "chunk", "reshape", "alias", "hsplit.int",
            "hsplit.array", "dsplit.int", "dsplit.array", "vsplit.int", "vsplit.array", "conj", "_conj",
            "_unsafe_view", "resize_", "as_strided", "view")
TENSOR_UTILITIES_AND_CONSTRUCTORS = ("empty_like", "empty.memory_format", "empty.out", "empty_strided", "full_like",
                                     "stride.int", "stride.Dimname", "size.int", "size.Dimname", "is_complex",
                                     "is_floating_point", "requires_grad_")
# Both bits: copy_ and clone read them (copy.py); resolve_conj and resolve_neg end in clone.
BOTH_BITS = ("copy_", "clone", "resolve_conj", "resolve_neg", "set_", "set_.source_Storage_storage_offset",
             "set_.source_Tensor", "_has_same_storage_numel", "_new_zeros_with_same_feature_meta",
             "repeat_interleave.Tensor", "repeat_interleave.self_Tensor", "repeat_interleave.self_int")


def register_fallthroughs(key, names):
    """A fallthrough at ``key`` for each of ``names`` this package defines."""
    through = KernelFunction(None, f"fallthrough registered at internals/aten/{_file_of(key)}", fallthrough=True)
    for name in names:
        if name in dispatcher.aten_ops:
            impl(f"aten::{name}", key, through)


def _file_of(key):
    return {"Conjugate": "conjugate_fallback.py", "Negative": "negate_fallback.py"}[key]
