"""``__torch_function__`` from Python (``torch/overrides.py``): TorchFunctionMode, and what a
function written in Python asks before it runs -- ``has_torch_function`` -- and does when the
answer is yes -- ``handle_torch_function``.

The generated bindings make the same check in ``_python_arg_parser.py`` (torch's C++ does it
there); the functions here serve the Python-written ones (``Tensor.backward``, the reflected
operators) and users who write their own.
"""
import contextlib
import functools
import warnings

from ._disable_torch_function import (
    _disabled_torch_function_impl,
    _has_torch_function,
    _has_torch_function_unary,
    _has_torch_function_variadic,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
)
from ._generated.python_torch_functions import FUNCTIONS
from ._ops import OpOverload, OpOverloadPacket
from ._python_arg_parser import append_overloaded_arg
from ._tensor_base import TensorBase
from .aten import python_torch_function_tls as _tf

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "handle_torch_function", "is_tensor_like", "resolve_name",
           "get_overridable_functions", "get_default_nowrap_functions"]

has_torch_function = _has_torch_function
has_torch_function_unary = _has_torch_function_unary
has_torch_function_variadic = _has_torch_function_variadic


# ---------------------------------------------------------------------- modes
class TorchFunctionMode:
    """Subclass it and define ``__torch_function__(self, func, types, args=(), kwargs=None)``:
    inside ``with mode:`` every public function call reaches it first, as the user wrote it
    (``internals.add``, ``Tensor.matmul``), before any dispatching. Calls it makes itself go to
    the modes below it on the stack."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, *exc):
        _pop_mode()


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each call unchanged: a base for modes that only look."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode):
    _tf.push_onto_stack(mode)


def _pop_mode():
    return _tf.pop_stack()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode():
    return _tf.get_stack_at(-1) if _tf.stack_len() else None


def _get_current_function_mode_stack():
    return [_tf.get_stack_at(i) for i in range(_tf.stack_len())]


# ---------------------------------------------------------------------- the Python-side check
def _get_overloaded_args(relevant_args):
    """The arguments whose class has a ``__torch_function__`` other than the opt-out one, one
    per class, subclasses first. Unlike the bindings' check, plain Tensors count: their class
    has the default override."""
    if not _is_torch_function_enabled():
        return []
    overloaded = None
    for arg in relevant_args:
        attr = getattr(type(arg), "__torch_function__", None)
        if attr is not None and attr is not _disabled_torch_function_impl:
            overloaded = append_overloaded_arg(overloaded, arg)
    return overloaded or []


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Run ``public_api(*args, **kwargs)`` through ``__torch_function__``: the mode on top of the
    stack first (popped while it runs), then each overriding argument of ``relevant_args`` in
    order, until one returns something other than NotImplemented."""
    overloaded_args = _get_overloaded_args(relevant_args)
    types = tuple(type(arg) for arg in overloaded_args)
    if _is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded_args:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg and method is not _disabled_torch_function_impl:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning, stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    message = (f"no implementation found for '{public_api.__module__}.{public_api.__name__}' on types that "
               f"implement __torch_function__: {[type(arg) for arg in overloaded_args]}")
    if _is_torch_function_mode_enabled():
        message += f" nor in mode {_get_current_function_mode()}"
    raise TypeError(message)


def is_tensor_like(inp):
    """A Tensor, or an object that says it behaves as one by defining ``__torch_function__``."""
    return isinstance(inp, TensorBase) or hasattr(inp, "__torch_function__")


def get_default_nowrap_functions():
    """The getters whose results Tensor's own ``__torch_function__`` does not convert."""
    from ._tensor import _DEFAULT_NOWRAP  # a real cycle: _tensor imports this module

    return set(_DEFAULT_NOWRAP)


# ---------------------------------------------------------------------- names
@functools.cache
def _overridable_names():
    """{public function: its dotted name} over ``internals``, ``internals.Tensor`` and
    ``internals.nn.functional``; a property's getter is named ``...shape.__get__``."""
    import internals  # a real cycle: the package imports _tensor, which imports this module
    from internals import functional as python_functions  # the same cycle
    from internals.nn import functional  # the same cycle, through nn's Parameter

    # As in torch's index, torch.functional's functions and the later of a Tensor method's names win
    # (torch.functional.norm, Tensor.abs rather than Tensor.__abs__); nn.functional's imports do not.
    names = {}
    for space, prefix, later_wins in ((internals, "internals", False),
                                      (python_functions, "internals.functional", True),
                                      (functional, "internals.nn.functional", False),
                                      (internals.Tensor, "internals.Tensor", True)):
        record = names.__setitem__ if later_wins else names.setdefault
        for name in (python_functions.__all__ if space is python_functions else dir(space)):
            is_tensor = space is internals.Tensor
            value = getattr(space, name, None)
            if isinstance(value, property):        # torch names every Tensor property, private ones too
                record(value.__get__, f"{prefix}.{name}.__get__")
                record(value.__set__, f"{prefix}.{name}.__set__")
                continue
            if name.startswith("_") and not (is_tensor and name.startswith("__") and name.endswith("__")):
                continue
            if callable(value) and not isinstance(value, type):
                record(value, f"{prefix}.{name}")
    for name, binding in FUNCTIONS.items():   # the bindings under the Python-written ones (norm, unique)
        names.setdefault(binding, f"internals.{name}")
    return names


def resolve_name(f):
    """The dotted name of a public function (``internals.Tensor.matmul``), or None; an operator
    overload is named by itself (``aten.mm.default``)."""
    if isinstance(f, (OpOverload, OpOverloadPacket)):
        return str(f)
    try:
        return _overridable_names().get(f)
    except TypeError:        # unhashable
        return None


def get_overridable_functions():
    """{namespace: [its public functions]}, the functions ``__torch_function__`` can see."""
    import internals  # a real cycle, as in _overridable_names
    from internals import functional as python_functions  # the same cycle
    from internals.nn import functional  # the same cycle

    spaces = {"internals": internals, "internals.functional": python_functions,
              "internals.nn.functional": functional, "internals.Tensor": internals.Tensor}
    out = {}
    for func, name in _overridable_names().items():
        if name.endswith(".__set__"):            # torch lists a property by its getter only
            continue
        prefix = name[:-len(".__get__")] if name.endswith(".__get__") else name
        out.setdefault(spaces[prefix.rpartition(".")[0]], []).append(func)
    return out
