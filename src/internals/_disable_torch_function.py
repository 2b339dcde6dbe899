"""Switching ``__torch_function__`` off, and asking whether an object overrides it
(``torch/csrc/utils/disable_torch_function.cpp``).

``DisableTorchFunctionSubclass`` turns off the overrides of tensor subclasses while modes stay
on: ``Tensor.__torch_function__`` runs the real function under it, so the call does not come
back to the subclass. ``DisableTorchFunction`` turns off modes too. ``Parameter`` sets its
``__torch_function__`` to ``_disabled_torch_function_impl``, which marks a class as having no
override at all: its tensors count as plain ones.
"""
import sys

from . import _tensor_base
from .aten import python_torch_function_tls as tf

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled", "_is_torch_function_mode_enabled", "check_has_torch_function",
           "has_torch_function_attr", "_has_torch_function", "_has_torch_function_unary",
           "_has_torch_function_variadic", "asking_method", "asking_property"]

_tls = tf.tls       # the thread-local state itself (one object): ``_tls.mode_enabled`` is read per call

# Types an override is never looked for on (``is_basic_python_type``).
_BASIC_TYPES = frozenset({bool, int, float, complex, str, bytes, type(None), tuple, list, dict, set, frozenset,
                          slice, type(Ellipsis), type(NotImplemented)})


class DisableTorchFunctionSubclass:
    """``with DisableTorchFunctionSubclass():`` subclasses' overrides are skipped; modes still run."""

    def __enter__(self):
        self.old_state = tf.get_disabled_state()
        if self.old_state == tf.ENABLED:
            tf.set_disabled_state(tf.SUBCLASSES_DISABLED)

    def __exit__(self, *exc):
        tf.set_disabled_state(self.old_state)


class DisableTorchFunction:
    """``with DisableTorchFunction():`` neither subclass overrides nor modes run."""

    def __enter__(self):
        self.old_state = tf.get_disabled_state()
        tf.set_disabled_state(tf.ALL_DISABLED)

    def __exit__(self, *exc):
        tf.set_disabled_state(self.old_state)


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of a class that opts out (``Parameter``'s): it calls ``func``
    with subclass overrides off. A plain function, so the class attribute *is* this function and
    ``has_torch_function_attr`` can recognise it."""
    if isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        raise TypeError(f"expected List or Tuple (got {type(args).__name__})")
    old = tf.get_disabled_state()
    if old == tf.ENABLED:
        tf.set_disabled_state(tf.SUBCLASSES_DISABLED)
    try:
        return func(*args, **(kwargs or {}))
    finally:
        tf.set_disabled_state(old)


def _is_torch_function_enabled():
    return tf.torch_function_enabled()


def _is_torch_function_mode_enabled():
    return tf.torch_function_mode_enabled()


def has_torch_function_attr(obj):
    """The object's class defines a ``__torch_function__`` that is not the opt-out one."""
    attr = getattr(type(obj), "__torch_function__", None)
    return attr is not None and attr is not _disabled_torch_function_impl and not _is_torchs_tensor(obj)


def _is_torchs_tensor(obj):
    """A real torch tensor, which internals does not take as a tensor-like: its hook would run
    internals' function again under torch's own switch, which internals never reads (a loop)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def check_has_torch_function(obj, ignore_mode=False):
    """Whether a call with ``obj`` among its arguments must go to ``__torch_function__``: a mode is
    active (unless ``ignore_mode``), or ``obj`` is not an exact Tensor and its class overrides
    (``check_has_torch_function`` in ``python_arg_parser.h``)."""
    if not ignore_mode and tf.tls.mode_enabled:
        return True
    kind = type(obj)
    return (kind is not _tensor_base._tensor_class and kind not in _BASIC_TYPES and tf.tls.state == tf.ENABLED
            and has_torch_function_attr(obj))


def _has_torch_function(args):
    """``torch._C._has_torch_function``: any of ``args`` overrides, or a mode is active."""
    return tf.tls.mode_enabled or any(check_has_torch_function(a, ignore_mode=True) for a in args)


def _has_torch_function_unary(obj):
    return check_has_torch_function(obj)


def _has_torch_function_variadic(*args):
    return _has_torch_function(args)


def asking_method(fn, name, ask):
    """``fn``, a Tensor method torch binds in C++, behind that binding's first step: when ``self``
    or a mode overrides, ``ask(self, name, args, kwargs)`` runs instead (the frontend's handler)."""
    def method(self, *args, **kwargs):
        # an exact Tensor and no mode (kernels call these all the time): nothing to ask, and
        # ``check_has_torch_function``'s frame is not paid for
        if (type(self) is not _tensor_base._tensor_class or _tls.mode_enabled) and check_has_torch_function(self):
            return ask(self, name, args, kwargs)
        return fn(self, *args, **kwargs)
    method.__name__, method.__qualname__, method.__doc__ = fn.__name__, f"Tensor.{fn.__name__}", fn.__doc__
    method.__wrapped__ = fn
    return method


def asking_property(name, prop, ask_get, ask_set=None):
    """``prop`` with a getter (and, given ``ask_set``, a setter) that hands the access on when the
    tensor or a mode overrides, as torch's C++ getters (``THPVariable_get_shape`` ...) do: a mode
    then sees ``Tensor.shape.__get__`` with ``(x,)``, or ``Tensor.grad.__set__`` with ``(x, value)``."""
    fget, fset = prop.fget, prop.fset

    def get(self):
        # as ``asking_method``'s wrapper: an exact Tensor without a mode reads the property at once
        if (type(self) is not _tensor_base._tensor_class or _tls.mode_enabled) and check_has_torch_function(self):
            return ask_get(self, name)
        return fget(self)

    def set_(self, value):
        if check_has_torch_function(self):
            return ask_set(self, name, value)
        return fset(self, value)

    return property(get, set_ if fset is not None and ask_set is not None else fset, prop.fdel, prop.__doc__)
