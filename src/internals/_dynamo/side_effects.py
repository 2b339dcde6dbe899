"""Writes a traced function makes to Python state that outlives the call (``torch/_dynamo/side_effects.py``).

Dynamo records a write to a global, to an attribute of an object from outside the frame, or
to a list or dict it did not create, and replays it with the real values after each call of
the compiled graph. This compiler traces by running the function, so such a write happens while
it is traced -- with fake tensors, or with symbols for the values read -- and never when the
compiled graphs run. ``PythonState`` takes a shallow picture of what the function can reach
before a trace, says afterwards whether the trace wrote any of it, and puts back what it was.
Where every value written is a tensor the trace computed, a value that was there before, a
plain constant, an int computed from number inputs traced as symbols (``nonlocal k; k += 1``),
or a new list or tuple of those, the writes become a ``Replay``: the computed tensors are extra
outputs of the graph, and after each call of it the writes are made again with the tensors it
returned and the ints computed from the call's numbers, as Dynamo's codegen does after its
graph; so is a module's buffer rebound (``self.running = self.running * 0.5 + x``) where the
graph takes the module's buffers as inputs, read again on the next call. Any other write (a
new dict or object, a symbol, a set) makes the caller run the function eagerly, which writes
once per call, with real values. A function cut at its graph breaks (``resume_execution``) is
pictured again at each cut (``again``): the writes since the last cut are the graph segment's
before it, made again after that segment's graph, before the break's own step, as Dynamo
applies the pending side effects before the instruction that breaks.
"""
import types

from .._tensor import Tensor
from ..c10.sym import SymInt
from .guards import _names

__all__ = ["PythonState", "Replay"]

_MISSING = object()
# values whose own state a write cannot reach through the function, or that hold no state of
# the program's: their binding is checked, not their contents
_OPAQUE = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, Tensor,
           int, float, complex, bool, str, bytes, type(None))
# values a replay may write again as they are: nothing a call could change inside them
_CONSTANTS = (int, float, complex, bool, str, bytes, type(None))


class PythonState:
    """The globals ``fn``'s code names, its closure cells and the arguments ``values``, with
    one level of their contents: a list's, dict's or set's items, an object's attributes.
    ``holders``: the ids of the modules whose buffers the graph takes as inputs, read again on
    each call, so that a buffer one of them rebinds may be made again by a replay."""

    def __init__(self, fn, values=(), own=(), holders=frozenset()):
        self.fn, self.values, self.own, self.holders = fn, values, own, holders
        code = getattr(fn, "__code__", None)
        glob = getattr(fn, "__globals__", None)
        # ``own``: the globals the trace itself puts in place (``print``, ``int``, ``math``)
        self.globals = {} if code is None or glob is None else \
            {name: glob.get(name, _MISSING) for name in _names(code) if name not in own}
        self.cells = [c for c in getattr(fn, "__closure__", None) or () if _filled(c)]
        self.cell_values = [c.cell_contents for c in self.cells]
        # a default value is the function's own (``log=[]``): a write to it is a write too
        function = getattr(fn, "__func__", fn)
        defaults = [*(getattr(function, "__defaults__", None) or ()),
                    *(getattr(function, "__kwdefaults__", None) or {}).values()]
        roots = [*self.globals.values(), *self.cell_values, *values, *defaults]
        if isinstance(fn, types.MethodType):
            roots.append(fn.__self__)   # a method's object: its attributes (``self.last = v``)
        elif not isinstance(fn, types.FunctionType):
            roots.append(fn)        # a module: its attributes (``self.count += 1``)
        seen, self.contents = set(), []
        for root in roots:
            if id(root) not in seen and root is not _MISSING and not isinstance(root, _OPAQUE):
                seen.add(id(root))
                self.contents.append((root, _contents(root)))
        # every object pictured, by identity: a write of one of them is a write of an old value
        self.known = {id(v) for v in roots} | {id(v) for _, c in self.contents if c is not None
                                               for v in _values(c)}
        # the objects whose contents a replay may write into: those there before the call
        self.targets = {id(root) for root, _ in self.contents}

    def again(self):
        """A picture taken now, for the writes made from here on (a graph segment's, whose
        writes are replayed after its own graph): what was there before the call stays the old
        values and the only objects a replay writes into, as in this picture."""
        later = PythonState(self.fn, self.values, self.own, self.holders)
        later.known, later.targets = self.known, self.targets
        return later

    def written(self):
        """Whether anything pictured changed since (by identity: ``v = v + 0`` is a write too)."""
        glob = getattr(self.fn, "__globals__", {})
        if any(glob.get(name, _MISSING) is not value for name, value in self.globals.items()):
            return True
        if any(_filled(c) and c.cell_contents is not v or not _filled(c)
               for c, v in zip(self.cells, self.cell_values, strict=True)):
            return True
        return any(not _same(_contents(root), before) for root, before in self.contents)

    def replay(self):
        """The writes made since the picture as a ``Replay``, or None where one cannot make them
        again (a new container or object, a symbol, a set changed)."""
        steps, outputs = [], []
        glob = getattr(self.fn, "__globals__", {})
        for name, value in self.globals.items():
            now = glob.get(name, _MISSING)
            if now is not value:
                steps.append(("global", name, _MISSING if now is _MISSING else self._written(now, outputs)))
        for cell, value in zip(self.cells, self.cell_values, strict=True):
            if not _filled(cell) or cell.cell_contents is not value:
                now = self._written(cell.cell_contents, outputs) if _filled(cell) else _UNREPLAYABLE
                steps.append(("cell", cell, now))
        for root, before in self.contents:
            after = _contents(root)
            if not _same(after, before):
                # a container the function made (a global bound to a new list, then appended
                # to): each call's replay made a new one, which the step would not reach
                steps.append(self._content_step(root, before, after, outputs) if id(root) in self.targets
                             else ("other", _UNREPLAYABLE))
        if any(part is _UNREPLAYABLE for step in steps for part in _flatten(step)):
            return None
        return Replay(steps, outputs)

    def _written(self, value, outputs):
        """``value`` as a replay writes it: a tensor the trace computed as the place of a graph
        output (``_Output``), an old value or a constant as it is, else ``_UNREPLAYABLE``."""
        if id(value) in self.known or isinstance(value, _CONSTANTS) and not isinstance(value, Tensor):
            return value
        if isinstance(value, Tensor):
            outputs.append(value)
            return _Output(len(outputs) - 1)
        if isinstance(value, SymInt):
            return _Number.of(value)
        if type(value) in (list, tuple):     # a new list or tuple: built again on each call
            items = [self._written(v, outputs) for v in value]
            return _UNREPLAYABLE if any(v is _UNREPLAYABLE for v in items) else _New(type(value), items)
        return _UNREPLAYABLE

    def _content_step(self, root, before, after, outputs):
        kind = before[0]
        if kind == "items" and isinstance(root, list):
            old = before[1]
            if len(after[1]) >= len(old) and all(a is b for a, b in zip(after[1], old, strict=False)):
                return ("extend", root, [self._written(v, outputs) for v in after[1][len(old):]])
            return ("items", root, [self._written(v, outputs) for v in after[1]])
        if kind in ("dict", "attributes"):
            old = dict(before[1])
            now = dict(after[1])
            changed = [(k, self._written(v, outputs)) for k, v in now.items() if k not in old or old[k] is not v]
            removed = [k for k in old if k not in now]
            if any(_is_registered(k) and not self._rebindable(root, k) for k, _ in changed) or \
                    any(map(_is_registered, removed)):
                # a module's parameter or buffer rebound: a graph that holds the old tensor as a
                # constant would keep it, so no replay keeps it right; the function runs eagerly
                return ("other", _UNREPLAYABLE)
            return (kind, root, changed, removed)
        return ("other", _UNREPLAYABLE)

    def _rebindable(self, root, key):
        """Whether a replay may rebind the registered entry ``key`` of ``root``: a buffer of a
        module whose buffers are inputs of the graph, read again on the next call."""
        return key.startswith("_buffers.") and id(root) in self.holders

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


class _Output:
    """The place of a written tensor among the graph's extra outputs."""

    def __init__(self, index):
        self.index = index


class _Number:
    """An int the trace computed from number inputs traced as symbols (``k += 1`` on a
    closed-over ``k``): made again from the call's values of those inputs, as Dynamo's codegen
    computes it after the graph. ``expr`` is over the inputs' symbols."""

    def __init__(self, expr):
        self.expr = expr

    @classmethod
    def of(cls, value):
        """The write of ``value``, or ``_UNREPLAYABLE`` where its expression is not over backed
        symbols or does not evaluate to an int for their example values."""
        env = value.node.shape_env
        expr = value.node.expr
        hints = getattr(env, "hints", {})
        if not expr.free_symbols or not expr.free_symbols <= hints.keys():
            return _UNREPLAYABLE
        number = cls(expr)
        return number if number.value({s: hints[s] for s in expr.free_symbols}) is not None else _UNREPLAYABLE

    def value(self, numbers):
        """The int for ``numbers`` ({symbol: value}), or None where it does not evaluate to one."""
        if not self.expr.free_symbols <= numbers.keys():
            return None
        out = self.expr.xreplace({s: v for s, v in numbers.items() if s in self.expr.free_symbols})
        if type(out) is int:        # the expression was one symbol: its value as it is
            return out
        return int(out) if getattr(out, "is_Integer", False) else None


class _New:
    """A list or tuple the trace made, of written values: each call makes a new one."""

    def __init__(self, kind, items):
        self.kind, self.items = kind, items

    def build(self, value):
        return self.kind(value(v) for v in self.items)


_UNREPLAYABLE = object()


def _flatten(step):
    for part in step:
        if isinstance(part, list):
            for item in part:
                yield from (item if isinstance(item, tuple) else (item,))
        else:
            yield part


class Replay:
    """Writes to Python state made again after each call of a graph (Dynamo's side effects
    codegen): ``outputs`` are the tensors the trace wrote, which the graph returns after its
    own output; ``steps`` say where each goes."""

    def __init__(self, steps, outputs):
        self.steps, self.outputs = steps, outputs
        # whether an int computed from number inputs is written: the call's values make it
        self.numbers_written = any(isinstance(part, _Number) for step in steps for part in _flatten(step))

    def numbers_within(self, symbols):
        """Whether every int written is computed from ``symbols`` alone (the number inputs': not
        a size's, which no input of the replay gives)."""
        return all(part.expr.free_symbols <= symbols for step in self.steps for part in _flatten(step)
                   if isinstance(part, _Number))

    def __call__(self, fn, tensors, numbers=None):
        """Make the writes of ``fn``'s call again, the written tensors being ``tensors`` and the
        number inputs' symbols having the values ``numbers``."""
        def value(v):
            if isinstance(v, _New):
                return v.build(value)
            if isinstance(v, _Number):
                return v.value(numbers or {})
            return tensors[v.index] if isinstance(v, _Output) else v
        for kind, target, *rest in self.steps:
            if kind == "global":
                if rest[0] is _MISSING:
                    fn.__globals__.pop(target, None)
                else:
                    fn.__globals__[target] = value(rest[0])
            elif kind == "cell":
                target.cell_contents = value(rest[0])
            elif kind == "extend":
                target.extend(value(v) for v in rest[0])
            elif kind == "items":
                target[:] = [value(v) for v in rest[0]]
            elif kind == "dict":
                target.update((k, value(v)) for k, v in rest[0])
                for k in rest[1]:
                    target.pop(k, None)
            elif kind == "attributes":
                for k, v in rest[0]:
                    # a buffer rebound (``_buffers.running``) is set by its name, as the module's code did
                    setattr(target, k.partition(".")[2] if _is_registered(k) else k, value(v))
                for k in rest[1]:
                    delattr(target, k)


def _values(contents):
    """The values one level of contents holds (a dict's and an object's values, not keys)."""
    if contents[0] == "set":
        return contents[2]
    return [v[1] if contents[0] in ("dict", "attributes") else v for v in contents[1]]


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
    if not isinstance(attributes, dict):
        return None
    # a module's parameters, buffers and submodules live in dicts of its own (``self.running =
    # y`` writes ``_buffers``): their entries are pictured too, keyed ``_buffers.running``
    registered = [(f"{name}.{k}", v) for name in _REGISTRIES if isinstance(attributes.get(name), dict)
                  for k, v in attributes[name].items()]
    return ("attributes", list(attributes.items()) + registered)


# The dicts an ``nn.Module`` keeps its parameters, buffers and submodules in.
_REGISTRIES = ("_parameters", "_buffers", "_modules")


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
        attributes.update((k, v) for k, v in before[1] if not _is_registered(k))
        for name in _REGISTRIES:
            if isinstance(attributes.get(name), dict):
                attributes[name].clear()
        for k, v in before[1]:
            if _is_registered(k):
                registry, _, key = k.partition(".")
                attributes[registry][key] = v


def _is_registered(key):
    """An entry of a module's parameters, buffers or submodules (``_buffers.running``)."""
    return isinstance(key, str) and key.partition(".")[0] in _REGISTRIES and "." in key
