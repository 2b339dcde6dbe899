"""Python dispatch: ``__torch_dispatch__`` and TorchDispatchMode (``torch/utils/_python_dispatch.py``,
``aten/src/ATen/core/PythonFallbackKernel.cpp``).

Two dispatch keys bring Python into the dispatcher. A tensor whose class defines
``__torch_dispatch__`` carries the Python key; so does every call while a TorchDispatchMode is
active (the mode adds it to the thread-local included set). The Python key's backend fallback
then hands the call -- already below Autograd, so after the graph was recorded -- to the mode
on top of the stack (popped while it runs, so its own calls go below it), or else to the
tensor subclass.
"""
import ast
import contextlib
import threading

from .._ops import ops
from .._tensor_base import TensorBase
from ..aten import dispatcher
from ..c10 import scalar_type as st
from ..c10.dispatch_key import PYTHON_KEYS, DispatchKey
from ..c10.local_dispatch_key_set import tls
from ..c10.tensor_impl import NoStorage
from ._pytree import tree_leaves

__all__ = ["TorchDispatchMode", "python_fallback", "register_python_fallbacks", "overload_of",
           "_get_current_dispatch_mode"]

class _ModeStack(threading.local):
    def __init__(self):
        self.modes = []


_stack = _ModeStack()


def _sync_python_keys():
    tls.included = tls.included | PYTHON_KEYS if _stack.modes else tls.included - PYTHON_KEYS


def _push_mode(mode):
    _stack.modes.append(mode)
    _sync_python_keys()


def _pop_mode():
    mode = _stack.modes.pop()
    _sync_python_keys()
    return mode


@contextlib.contextmanager
def _disable_current_modes():
    """Every dispatch mode off the stack for a while, put back after (torch's
    ``_disable_current_modes``; ``as_subclass`` runs its alias so, unseen by modes)."""
    saved, _stack.modes = _stack.modes, []
    _sync_python_keys()
    try:
        yield saved
    finally:
        _stack.modes = saved
        _sync_python_keys()


def _get_current_dispatch_mode():
    return _stack.modes[-1] if _stack.modes else None


class TorchDispatchMode:
    """Subclass it and define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``;
    inside ``with mode:`` every operator call reaches it, after autograd."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, *exc):
        if _stack.modes and _stack.modes[-1] is self:
            _pop_mode()


def overload_of(op):
    """The OpOverload object (``internals.ops.aten.add.Tensor``) of an operator handle."""
    name = op.name.split("::", 1)[1]
    base, _, overload = name.partition(".")
    return getattr(getattr(getattr(ops, op.namespace), base), overload or "default")


def _subclass_types(args, kwargs):
    seen = []
    for a in tree_leaves((args, kwargs)):
        if isinstance(a, TensorBase) and hasattr(type(a), "__torch_dispatch__") and type(a) not in seen:
            seen.append(type(a))
    return tuple(seen)


def python_fallback(op, keys, *args, **kwargs):
    """The Python key's fallback: the mode on top of the stack, else the subclasses' handlers."""
    func, types = overload_of(op), _subclass_types(args, kwargs)
    args, kwargs = _as_given(op, args, kwargs)
    if _stack.modes:
        mode = _pop_mode()
        try:
            return mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            _push_mode(mode)
    for cls in types:
        result = cls.__torch_dispatch__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(f"Multiple dispatch failed for '{op.name}'; all __torch_dispatch__ handlers returned "
                    f"NotImplemented:\n\n  - tensor subclasses: {list(types)}")


def _as_given(op, args, kwargs):
    """The arguments a handler sees, as torch's ``parseIValuesToPyArgsKwargs`` shows them: trailing
    positional arguments and keyword arguments at their schema defaults are left out
    (``x.sum(0)`` shows ``(x, [0])``, ``x.add(y, alpha=1)`` shows ``{}``), and a wrapped number
    is the Python number it wraps (``x * 1.702`` shows ``(x, 1.702)``: ``toPyObject``)."""
    args = _sized_lists(op, tuple(_unwrapped(a) for a in args))
    kwargs = {k: _unwrapped(v) for k, v in kwargs.items()} if kwargs else kwargs
    if op.schema is None:
        return args, kwargs
    arguments = op.schema.arguments
    positional = arguments.flat_positional
    end = len(args)
    while end and end <= len(positional) and _is_default(args[end - 1], _default_text(positional[end - 1])):
        end -= 1
    defaults = {a.name: _default_text(a) for a in arguments.flat_kwarg_only}
    kwargs = {name: value for name, value in kwargs.items() if not _is_default(value, defaults.get(name))}
    return args[:end], kwargs


def _unwrapped(value):
    """A wrapped number (the 0-dim tensor the binding made of a Python scalar) as that scalar:
    bool, int, float or complex by its dtype. A fake one has no value to read and stays a tensor,
    unless it wraps a symbol (an ``item()`` of fake tracing): then it is that symbol."""
    if not isinstance(value, TensorBase) or not value._impl.is_wrapped_number:
        return value
    impl = value._impl
    if isinstance(impl.storage, NoStorage):
        return getattr(impl.storage, "symbol", value)
    unsigned = st.wrapped_uint64_value(impl)
    # a wrapped number is always a CPU bool, int64, float64 or complex128: one element to read
    return unsigned if unsigned is not None else impl.storage.typed(impl.dtype)[impl.storage_offset].item()


def _is_default(value, default):
    """Is ``value`` the schema's ``default`` (a string such as ``None``, ``1``, ``False``, ``[]``)?"""
    if default is None or isinstance(value, TensorBase):
        return False
    if default == "None":
        return value is None
    if isinstance(value, st.dtype):          # a ScalarType default is its name: ``dtype=long``
        return value.torch_name.lower() == default
    try:
        expected = ast.literal_eval(default)      # 1, 1.0, True, 'none', []; a name such as ``long`` is not one
    except ValueError:
        return False
    if isinstance(expected, list):
        return isinstance(value, (list, tuple)) and list(value) == expected
    return type(value) is type(expected) and value == expected


def mode_detach(tensor):
    """``PyInterpreter::detach``: the mode on top of the stack makes a detached handle, through
    ``aten.detach``, for a TensorImpl shallow copy (popped while it runs, as for any operator)."""
    mode = _pop_mode()
    try:
        return mode.__torch_dispatch__(ops.aten.detach.default, (), (tensor,), {})
    finally:
        _push_mode(mode)


def python_tls_snapshot(op, keys, *args, **kwargs):
    """PythonTLSSnapshot sits above everything so Python state is captured first; then it steps aside."""
    return op.redispatch(keys.below(DispatchKey.PythonTLSSnapshot), *args, **kwargs)


def register_python_fallbacks():
    dispatcher.register_fallback("Python", dispatcher.KernelFunction(python_fallback, boxed=True))
    dispatcher.register_fallback("PythonTLSSnapshot", dispatcher.KernelFunction(python_tls_snapshot, boxed=True))


# (Below the fallbacks' registrations, whose line numbers chapter 5 prints.)
def _sized_lists(op, args):
    """An int given for a list of a fixed length (``int[2] kernel_size`` given ``2``) as that many
    copies, ``[2, 2]``: torch turns the argument into its schema's type when it boxes the call, so
    a handler sees the list, as the graph of ``max_pool2d(x, 2)`` records it."""
    if op.schema is None:
        return args
    positional = op.schema.arguments.flat_positional
    return tuple([a] * _fixed_length(p) if _fixed_length(p) and _is_int_like(a) else a
                 for a, p in zip(args, positional)) + args[len(positional):]


_REDUCTIONS = {"Mean": "1", "Sum": "2"}


def _default_text(argument):
    """An argument's default as ``_is_default`` reads it: an int default of a list of a fixed
    length is that many copies (``int[2] dilation=1`` is ``[1, 1]``), a reduction its number."""
    default, length = argument.default, _fixed_length(argument)
    if default in _REDUCTIONS:      # ``int reduction=Mean``: at::Reduction's value
        return _REDUCTIONS[default]
    if length and default is not None and default.lstrip("-").isdigit():
        return str([int(default)] * length)
    return default


def _fixed_length(argument):
    """N for an ``int[N]`` or ``SymInt[N]`` argument (optional or not), else None."""
    t = getattr(argument.type, "elem", None) if type(argument.type).__name__ == "OptionalType" else argument.type
    return getattr(t, "size", None) if type(t).__name__ == "ListType" else None


def _is_int_like(value):
    # an int or a traced size (``st.SymInt``: scalar_type's own import of it, so the import block
    # above, and the line numbers below it, stay as chapter 5 prints them)
    return isinstance(value, (int, st.SymInt)) and not isinstance(value, bool)
