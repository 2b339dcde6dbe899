"""Guards: what a traced graph assumed, checked again before every call (``torch/_dynamo/guards.py``).

Tracing runs the function once, so every Python value it read -- an argument that is not a
tensor, a closed-over number, a global dict, a module attribute, a closed-over tensor -- is baked
into the graph. A guard key is a hashable summary of all of them, computed on each call; a graph
is reused only under an equal key. As in Dynamo: tensors by metadata (TENSOR_MATCH), plain values
by equality (EQUALS_MATCH), functions, classes and modules by identity (ID_MATCH) plus the values
read through them. A value that can only be compared by identity and may change inside (an
arbitrary object) raises ``Unguardable``: the caller runs that call eagerly instead.
"""
import enum
import types

from .._tensor import Tensor
from ..amp.autocast_mode import get_autocast_dtype, is_autocast_enabled
from ..autograd import is_grad_enabled
from ..c10.scalar_type import get_default_dtype

__all__ = ["Unguardable", "GuardWalker", "global_state_key"]

_EQUALS = (int, bool, str, bytes, type(None), type(Ellipsis), slice, range, enum.Enum)
# Library code is taken as fixed: its functions and objects are guarded by identity only.
_LIBRARIES = {"internals", "torch", "numpy", "numba", "math", "builtins", "functools", "operator"}


class Unguardable(Exception):
    """A value the traced function read that no guard can check: the call runs eagerly."""


def global_state_key():
    """Global state a graph depends on: grad mode, autocast (per device, with its dtype), the
    default dtype (torch's GLOBAL_STATE guard)."""
    autocast = tuple((d, is_autocast_enabled(d), get_autocast_dtype(d)) for d in ("cpu", "cuda"))
    return is_grad_enabled(), autocast, get_default_dtype()


def tensor_meta(t):
    """TENSOR_MATCH: shape, strides, storage offset, dtype, device, requires_grad."""
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.dtype, str(t.device), t.requires_grad)


def _library(value):
    module = getattr(value, "__module__", None) or type(value).__module__ or ""
    return module.split(".")[0] in _LIBRARIES


class GuardWalker:
    """Builds guard keys; ``tensors`` collects every tensor met on the way (for the device and
    requires_grad checks of the caller)."""

    def __init__(self):
        self.tensors, self._seen = [], set()

    def argument(self, value):
        """An argument: tensors by metadata only (a new tensor of the same kind reuses the graph)."""
        if isinstance(value, Tensor):
            self.tensors.append(value)
            return ("tensor", *tensor_meta(value))
        if isinstance(value, (tuple, list)):
            return (type(value), tuple(self.argument(v) for v in value))
        if isinstance(value, dict):
            return ("dict", tuple((self._hashable(k), self.argument(v)) for k, v in value.items()))
        return self.value(value, "argument")

    def function(self, fn):
        """Everything ``fn`` reads from outside: its closure cells, the globals its code (and the
        code of functions nested in it) names, its defaults."""
        if isinstance(fn, types.MethodType):
            return ("method", self.value(fn.__self__, "self"), self.function(fn.__func__))
        if not isinstance(fn, types.FunctionType):
            return self.value(fn, getattr(fn, "__name__", "the function"))
        if id(fn) in self._seen:
            return ("seen", id(fn))
        self._seen.add(id(fn))
        code = fn.__code__
        names = _names(code)
        cells = []
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
            try:
                cells.append((name, self.value(cell.cell_contents, name, names)))
            except ValueError:                   # a cell not filled yet
                cells.append((name, "empty"))
        glob = tuple((n, self.value(fn.__globals__[n], n, names)) for n in sorted(names) if n in fn.__globals__)
        defaults = self.value((fn.__defaults__, fn.__kwdefaults__), "defaults", names)
        return ("function", id(code), tuple(cells), glob, defaults)

    def value(self, v, name, names=frozenset()):
        """A value read by name: ``names`` are the attribute names the reading code uses."""
        if isinstance(v, Tensor):
            self.tensors.append(v)
            # ID_MATCH too: the graph holds this very tensor as a constant. A one-element tensor
            # may be baked into a kernel as a number, so its value is guarded as well.
            value = v.item() if v.numel() == 1 and v.device.type != "meta" else None
            return ("tensor", id(v), tensor_meta(v), repr(value))
        if isinstance(v, (float, complex)):
            return (type(v), repr(v))            # repr: nan equals itself
        if isinstance(v, _EQUALS):
            return (type(v), v)
        if isinstance(v, (tuple, list)):
            return (type(v), tuple(self.value(x, name, names) for x in v))
        if isinstance(v, dict):
            return ("dict", tuple((self._hashable(k), self.value(x, name, names)) for k, x in v.items()))
        if isinstance(v, (types.FunctionType, types.MethodType)) and not _library(v):
            return self.function(v)
        from ..nn.modules.module import Module  # a real cycle: nn loads after _dynamo in the package's import
        if isinstance(v, (types.ModuleType, Module)):
            return self._object(v, name, names)
        if isinstance(v, type) or _library(v):
            return ("id", id(v))
        return self._object(v, name, names)

    def _object(self, v, name, names):
        """A module, an nn.Module or another object: by identity, plus the attributes read."""
        if id(v) in self._seen:
            return ("seen", id(v))
        self._seen.add(id(v))
        from ..nn.modules.module import Module  # a real cycle: nn loads after _dynamo in the package's import
        if isinstance(v, Module):       # its parameters, buffers, submodules and settings; its forward
            state = self.value(dict(vars(v)), name, names)
            return ("module", id(v), state, self.value(type(v).forward, "forward"))
        if isinstance(v, types.ModuleType):
            attrs = tuple((n, self.value(getattr(v, n), n, names)) for n in sorted(names) if hasattr(v, n))
            return ("pymodule", id(v), attrs)
        if type(v).__eq__ is not object.__eq__ and type(v).__hash__ is not None:
            return ("equals", type(v), v)
        raise Unguardable(f"cannot guard {name!r}: a {type(v).__name__} has no equality to check")

    def _hashable(self, key):
        try:
            hash(key)
        except TypeError:
            raise Unguardable(f"cannot guard a dict key of type {type(key).__name__}") from None
        return self.value(key, "key")


def _names(code):
    """The global and attribute names ``code`` and every code object nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return frozenset(names)
