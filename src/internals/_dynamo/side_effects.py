"""Writes a traced function makes to Python state that outlives the call (``torch/_dynamo/side_effects.py``).

Dynamo records a write to a global, to an attribute of an object from outside the frame, or
to a list or dict it did not create, and replays it with the real values after each call of
the compiled graph. This compiler traces by running the function, so such a write happens while
it is traced -- with fake tensors, or with symbols for the values read -- and never when the
compiled graphs run. ``PythonState`` takes a shallow picture of what the function can reach
before a trace, says afterwards whether the trace wrote any of it, and puts back what it was:
the caller then runs the function eagerly, which writes once per call, with real values.
"""
import types

from .._tensor import Tensor
from .guards import _names

__all__ = ["PythonState"]

_MISSING = object()
# values whose own state a write cannot reach through the function, or that hold no state of
# the program's: their binding is checked, not their contents
_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, Tensor,
           int, float, complex, bool, str, bytes, type(None))


class PythonState:
    """The globals ``fn``'s code names, its closure cells and the arguments ``values``, with
    one level of their contents: a list's, dict's or set's items, an object's attributes."""

    def __init__(self, fn, values=()):
        self.fn = fn
        code = getattr(fn, "__code__", None)
        glob = getattr(fn, "__globals__", None)
        self.globals = {} if code is None or glob is None else \
            {name: glob.get(name, _MISSING) for name in _names(code)}
        self.cells = [c for c in getattr(fn, "__closure__", None) or () if _filled(c)]
        self.cell_values = [c.cell_contents for c in self.cells]
        roots = [*self.globals.values(), *self.cell_values, *values]
        if isinstance(fn, types.MethodType):
            roots.append(fn.__self__)   # a method's object: its attributes (``self.last = v``)
        elif not isinstance(fn, types.FunctionType):
            roots.append(fn)        # a module: its attributes (``self.count += 1``)
        seen, self.contents = set(), []
        for root in roots:
            if id(root) not in seen and root is not _MISSING and not isinstance(root, _OPAQUE):
                seen.add(id(root))
                self.contents.append((root, _contents(root)))

    def written(self):
        """Whether anything pictured changed since (by identity: ``v = v + 0`` is a write too)."""
        glob = getattr(self.fn, "__globals__", {})
        if any(glob.get(name, _MISSING) is not value for name, value in self.globals.items()):
            return True
        if any(_filled(c) and c.cell_contents is not v or not _filled(c)
               for c, v in zip(self.cells, self.cell_values, strict=True)):
            return True
        return any(not _same(_contents(root), before) for root, before in self.contents)

    def restore(self):
        """Put back every binding and content pictured."""
        glob = getattr(self.fn, "__globals__", None)
        for name, value in self.globals.items():
            if value is _MISSING:
                glob.pop(name, None)
            elif glob.get(name, _MISSING) is not value:
                glob[name] = value
        for cell, value in zip(self.cells, self.cell_values, strict=True):
            cell.cell_contents = value
        for root, before in self.contents:
            if not _same(_contents(root), before):
                _put_back(root, before)


def _filled(cell):
    try:
        cell.cell_contents  # noqa: B018 -- an empty cell raises
    except ValueError:
        return False
    return True


def _contents(value):
    """One level of ``value``: a list's or tuple's items, a dict's items, a set's members, an
    object's attributes (None for what has none)."""
    if isinstance(value, (list, tuple)):
        return ("items", list(value))
    if isinstance(value, dict):
        return ("dict", list(value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", set(map(id, value)), list(value))
    attributes = getattr(value, "__dict__", None)
    return ("attributes", list(attributes.items())) if isinstance(attributes, dict) else None


def _same(a, b):
    if a is None or b is None or a[0] != b[0]:
        return a is b
    if a[0] == "set":
        return a[1] == b[1]
    return len(a[1]) == len(b[1]) and all(_identical(x, y) for x, y in zip(a[1], b[1], strict=True))


def _identical(x, y):
    if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y) == 2:     # a (key, value) pair
        return x[0] == y[0] and x[1] is y[1]
    return x is y


def _put_back(root, before):
    kind = before[0]
    if kind == "items" and isinstance(root, list):
        root[:] = before[1]
    elif kind == "dict":
        root.clear()
        root.update(before[1])
    elif kind == "set":
        root.clear()
        root.update(before[2])
    elif kind == "attributes":
        attributes = vars(root)
        attributes.clear()
        attributes.update(before[1])
