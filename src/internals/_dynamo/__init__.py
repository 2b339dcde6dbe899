"""``internals.compile``: guards, a cache of compiled graphs, recompiles (``torch/_dynamo``).

Dynamo reads a function's bytecode, captures the tensor operations into a graph, and installs
guards -- cheap checks on the inputs (shape, stride, dtype, device, requires_grad, the values of
Python constants) under which the captured graph is valid. A call that passes the guards of a
cached entry runs its compiled code; one that fails them all is traced and compiled again.

This version traces at call time with ``make_fx`` instead of reading bytecode, so it sees the
operators, not the Python. A read of a tensor's value (``.item()``, an ``if`` on a tensor) is a
graph break, as in Dynamo: the code before and after it is compiled as separate graphs, the read
runs eagerly between them, and each branch taken leads to its own graph after it, as to its own
resume function (``resume_execution.py``); a number read is a constant of the graph after it
until a call reads another value, which makes it an input of a graph that serves every value.
``print``, ``tolist()``, ``numpy()``, an operator whose output size depends on the data
(``nonzero``, ``x[mask]``) and ``requires_grad_()`` break the graph the same way, each run
between the graphs; a break inside a function the compiled one calls cuts the caller at the
call, as Dynamo runs that function as a frame of its own; a break inside a ``for`` loop's body,
a ``try`` block or a generator expression runs the function without graphs, as Dynamo does, but
for a list comprehension's loop: the comprehension runs eagerly as one call between two graphs,
as Dynamo runs its frame. A graph with no operation is compiled where Dynamo's graph would hold
a call (a library call that gives a tensor, ``F.dropout`` in eval) or return a value (the
operands of ``x[mask]``, a symbolic size printed), as Dynamo compiles a graph with calls or
outputs.

Shapes follow torch.compile's default, automatic dynamic shapes (``pgo.py``): the first graph
is static; a recompile caused by a size that changed traces that dim as a symbol (``s77``), and
its entry guards ``2 <= x.size()[0]`` and the ShapeEnv's other guards (``guards.TensorGuards``)
in place of the exact size, so one graph, whose kernels take the size as an argument, serves
every later size but 0 and 1. An int argument whose value changed becomes a symbol the same
way (``L['n']``), an argument of the graph after the tensors, and so does a float (torch 2.13
specializes no float: ``specialize_float=False``), any value but nan; an operator's Scalar
argument (``clamp(min=s)``, ``alpha=s``) takes the symbol without a guard on its value, as torch
passes the float to the operator from a graph input (``l_s_.item()``); a number the function
closes over is followed the same way (``k == 1.0``, then an input), and so is one inside an
argument or the compiled module, reached through attributes and dict entries
(``L['d']['opts']['scale']``, ``L['self'].settings.scale``: ``_Source``), but an int an
``nn.Module`` holds, which torch takes as a setting and guards by value. Of a dict argument, a
global dict or a closed-over one only the entries the function reads are guarded
(``_ReadDict``), and its keys where the function writes an entry, as in Dynamo.

The tensors the function holds -- a compiled module's parameters and buffers, those of the
modules it closes over, and the tensors it closes over itself -- are inputs of the graph after
the arguments and numbers, read again on each call and guarded by their metadata, as Dynamo
lifts them (``L['self']._buffers['running']``, ``G``-free closure cells): a buffer written in
place or rebound (``self.running = self.running * 0.5 + x``, made again after the graph), and a
closed-over tensor written in place, reach the caller's tensors, one graph serving every call.

Inputs that require grad (arguments, or the tensors the function holds) go through AOTAutograd
(``internals._functorch``): the joint forward+backward graph is traced, partitioned and compiled,
and the outputs' ``grad_fn`` is ``CompiledFunctionBackward``, as under torch.compile.

Where no graph can be trusted -- a value no guard can check, inputs on different devices, a
tensor the function holds that shares memory with another input (the graph would take them
apart), a write to Python state while traced that no graph can make again (``side_effects.py``:
a write of a tensor the graph computes, of an old value, a constant, or an int computed from
number inputs is made again after each call of the graph, as Dynamo replays it, and a name the
function only writes is not guarded; a write into a list or dict argument, which the trace sees
as a copy, always runs eagerly, and so does a float computed from a number input, or a tensor
held as a constant by graphs cut at reads: no graph would keep them),
an operator the tracer or the backend cannot handle, more recompiles than
``config.recompile_limit`` -- the call runs eagerly (a graph break) and the reason is kept in
``break_reasons``: never a stale or wrong answer.

A program that cannot run at all fails while it is traced, as under torch.compile: a
RuntimeError met on fake tensors (shapes that do not broadcast, a view of the wrong size) is
raised as ``exc.TorchRuntimeError``, quoting the original and naming the operation as the user
wrote it (``x + y``: ``<built-in function add>``) and its line (``user_code``); other classes
(IndexError, TypeError) come out as they are. Unlike torch, which refuses before running anything, the call first runs
eagerly, so that only an error eager execution confirms is reported (a failure of this
package's tracer is a graph break instead); an input the function wrote before failing stays
written, as eagerly.
"""
import contextlib
import dataclasses
import functools
import inspect
import math
import re
import threading
import types
import weakref

from .._decomp import decomposition_table
from .._functorch import AOTCompiled
from .._inductor import compile_fx
from .._inductor.config import check_options
from .._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensorMode,
    UnsupportedFakeTensorException,
)
from .._tensor import Tensor
from ..autograd import is_grad_enabled, no_grad
from ..c10.scalar_type import float64, int64
from ..c10.sym import SymFloat, SymInt, is_symbolic, sym_int, sym_sqrt
from ..c10.tensor_impl import strided
from ..fx.experimental.proxy_tensor import make_fx
from ..fx.experimental.symbolic_shapes import ConstraintViolationError, GuardOnDataDependentSymNode
from ..fx.passes import functionalize
from ..nn.modules.module import Module
from ..nn.utils.stateless import _reparametrize_module
from ..utils._pytree import tree_leaves, tree_map
from . import config, exc
from .decorators import mark_dynamic, marked_dims, maybe_mark_dynamic, strictly_marked_dims
from .guards import GuardWalker, TensorGuards, Unguardable, _names, global_state_key
from .pgo import FrameState
from .resume_execution import (
    PythonWrites,
    RequiresGradBreak,
    ResumeCache,
    Segmented,
    breaking_tracer,
    reading_as,
    trace_with_breaks,
    traced_print,
    watching_requires_grad,
)
from .side_effects import PythonState, _filled
from .user_code import CallSites, UserCalls

__all__ = ["CompiledFunction", "ExplainOutput", "compile", "config", "exc", "explain", "guard_key", "mark_dynamic",
           "maybe_mark_dynamic", "reset"]

# RuntimeErrors of the fake run that are graph breaks in torch (``get_fake_value``), not errors.
_GRAPH_BREAKS = (DataDependentOutputException, DynamicOutputShapeException, UnsupportedFakeTensorException,
                 GuardOnDataDependentSymNode, RequiresGradBreak)

# Why an entry runs eagerly when its trace wrote Python state (``side_effects.py``).
_PYTHON_WRITES = ("a write to Python state (a global, an attribute, a list) while traced: the graphs would not "
                  "make it again, so the function runs eagerly")

_PRINTS = "print() while traced: the graphs would not print, so the function runs eagerly"

# torch's reason for the graph break at ``.item()`` (and ``float(x)``, ``if x > 0``, which call it).
_ITEM_BREAK = "Unsupported Tensor.item() call with capture_scalar_outputs=False"

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

def guard_key(args, kwargs=None):
    """What a cached graph assumes about its arguments, one entry each: per tensor its shape,
    strides, dtype, device and requires_grad; per Python value its type and value
    (containers entry by entry). The cache key adds the values the function reads and the global
    state (``guards.py``)."""
    walker = GuardWalker()
    key = tuple(walker.argument(a) for a in args)
    return key + (walker.argument(kwargs),) if kwargs else key


class _Eager:
    """A cache entry that runs the function itself: the reason is why no graph is used."""

    def __init__(self, fn, reason):
        self.fn, self.reason = fn, reason

    def __call__(self, args, kwargs):
        return self.fn(*args, **kwargs)


class _FailedTrace:
    """A cache entry whose trace met a RuntimeError on fake tensors (or was not tried: tensors on
    two devices, where ``reason`` says so): eager execution decides. If it fails too, the error
    is the program's, raised as torch.compile raises it (``TorchRuntimeError``); if it runs, the
    failure was the tracer's, a graph break."""

    def __init__(self, fn, error, record, reason=None):
        self.fn, self.error, self.record = fn, error, record
        self.reason = reason or f"not compiled: {type(error).__name__}: {error}"

    def __call__(self, args, kwargs):
        try:
            out = self.fn(*args, **kwargs)
        except RuntimeError as eager_error:
            if self.error is not None and not hasattr(self.error, "fake_call"):
                raise           # the trace failed in the Python code, not in an operator
            error = self.error or eager_error
            call = getattr(error, "user_call", None) or getattr(error, "fake_call", None) or \
                "an operator on tensors of two devices"
            raise exc.fake_call_error(call, error, getattr(error, "user_stack", None)) from None
        self.record(self.reason)
        return out


class _Graph:
    """A cache entry holding a compiled graph whose placeholders are the tensors of the arguments,
    then the int arguments traced as symbols (``ints``: their places, ``_int_places``)."""

    def __init__(self, compiled, traced, ints=None, signature=None, inputs=None):
        self.compiled, self.traced = compiled, traced     # traced: the fake inputs, maybe symbolic
        self.ints, self.signature = ints or {}, signature
        # the number arguments the graph takes: those that are symbols, and those traced as
        # symbols that a guard then pinned (``range(n)``, ``math.sqrt(s)``), still placeholders
        self.inputs = self.ints if inputs is None else inputs

    replay = None   # writes to Python state made again after the graph (``side_effects.Replay``)
    fn = None       # the compiled callable, where a number the graph takes is reached from it
    lifted = False  # whether the graph takes the tensors ``fn`` holds (``_lifted_places``) last
    lifts = True    # its cache entry guards those tensors by metadata, not identity (``_masked``)

    symbols = {}    # {name: symbol} of the number inputs traced as symbols, for a replay's ints

    def __call__(self, args, kwargs):
        numbers = _int_values(self.inputs, args, kwargs, self.signature, self.fn)
        held = _module_tensors(self.fn).values() if self.lifted else ()
        out = self.compiled(*_tensors((args, kwargs)), *numbers, *held)
        if self.replay is None:
            return out
        out, written = out
        values = dict(zip(self.inputs, numbers, strict=True))
        self.replay(self.fn, written, {s: values[name] for name, s in self.symbols.items() if name in values})
        return out


def _int_places(fn, args, kwargs):
    """{name: place} of the arguments that are ints (not bools) or floats, a place being a
    position in ``args`` or a key of ``kwargs``, then of the numbers ``fn`` closes over, a place
    being the cell: the values automatic dynamic shapes may make symbols (Dynamo's frame state
    covers a closure variable as it covers an argument)."""
    places = {_identifier(name): place for name, place, value in _tops(fn, args, kwargs)
              if type(value) in (int, float)}
    return places | _closed_over(fn, (int, float))


def _closed_over(fn, kinds):
    """{name: cell} of the filled cells ``fn`` closes over whose value's type is one of ``kinds``
    (exactly: a bool is no int here); none for a callable that is not a plain function."""
    if not isinstance(fn, types.FunctionType):
        return {}
    return {name: cell for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True)
            if _filled(cell) and (type(cell.cell_contents) in kinds or Module in kinds and
                                  isinstance(cell.cell_contents, Module))}


class _Source:
    """A number reached from an argument or the compiled callable through attributes and dict
    entries (``L['d']['opts']['scale']``, ``L['self'].cfg.scale``): a place an automatic-dynamic
    number may be, as Dynamo's frame state follows any source, not only the arguments. ``top``
    is the argument's place (``_int_places``), or None for the callable itself; ``steps`` the
    ``("attr", name)`` and ``("item", key)`` steps of ``GuardWalker.numbers``' path."""

    def __init__(self, arg, top, steps):
        self.arg, self.top, self.steps = arg, top, steps

    def read(self, base):
        for kind, k in self.steps:
            base = getattr(base, k) if kind == "attr" else base[k]
        return base

    def write(self, base, value):
        """Put ``value`` at the path below ``base``; return how to undo it, which answers whether
        the function wrote there itself meanwhile (``self.calls += 1``: a write to Python state,
        whose trace ran with the symbol). A dict entry is written as a dict's (``_ReadDict``
        would note the write as the function's)."""
        parent, (kind, k) = self.read_parent(base), self.steps[-1]
        get, put = (getattr, object.__setattr__) if kind == "attr" else (dict.__getitem__, dict.__setitem__)
        old = get(parent, k)
        put(parent, k, value)

        def undo(replayable=False):
            now = get(parent, k)
            if now is not value and replayable and type(now) is SymInt:
                # an int computed from the symbol (``c.n += 1``): left for the trace's state
                # to see as a write, which it makes again after the graph and puts back now
                return False
            put(parent, k, old)
            return now is not value
        return undo

    def base(self, fn, args, kwargs):
        """What the path starts from in a trace given ``args`` and ``kwargs``: the callable, a
        cell's value, or an argument."""
        if self.top is None:
            return fn
        if isinstance(self.top, types.CellType):
            return self.top.cell_contents
        return (args if isinstance(self.top, int) else kwargs)[self.top]

    def read_parent(self, base):
        return _Source(self.arg, self.top, self.steps[:-1]).read(base)


def _source_text(path):
    """A path of ``GuardWalker.numbers`` as Dynamo names its source: ``L['d']['scale']``,
    ``L['self'].cfg.scale``."""
    root, *steps = path
    text = f"L[{root[1]!r}]" if root[0] in ("arg", "cell") else "L['self']"
    for kind, k in steps:
        text += f".{k}" if kind == "attr" else f"[{k!r}]"
    return text


def _int_values(places, args, kwargs, signature=None, fn=None):
    """The values of the int arguments ``places`` ({name: place}) in a call: by keyword, at their
    position, or -- a call that passes them otherwise than the compiled one, or leaves one to
    its default -- as the signature binds them."""
    values = []
    for name, place in places.items():
        if isinstance(place, _Source):
            base = fn if place.top is None else _int_values({place.arg: place.top}, args, kwargs, signature)[0]
            values.append(place.read(base))
        elif isinstance(place, types.CellType):
            values.append(place.cell_contents)
        elif name in kwargs:
            values.append(kwargs[name])
        elif isinstance(place, int) and place < len(args):
            values.append(args[place])
        else:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values.append(bound.arguments[name])
    return values


class _Differentiable:
    """A cache entry compiled by AOTAutograd: the argument tensors and, for a module, its
    parameters and buffers (read again on each call) are the compiled function's inputs."""

    def __init__(self, compiled, module, inputs=None, signature=None):
        self.compiled, self.module = compiled, module
        # the number arguments the graphs take (``_Graph.inputs``), and those still symbols
        self.inputs, self.ints, self.signature = inputs or {}, {}, signature

    replay = None   # writes to Python state made again after the graph, as ``_Graph.replay``
    lifts = True    # the tensors the module holds are inputs, as ``_Graph.lifts``
    symbols = {}    # {name: symbol} of the number inputs traced as symbols, as ``_Graph.symbols``

    def __call__(self, args, kwargs):
        numbers = _int_values(self.inputs, args, kwargs, self.signature, self.module)
        out = self.compiled(*_tensors((args, kwargs)), *numbers, *_module_tensors(self.module).values())
        if self.replay is None:
            return out
        n = self.layout["count"]
        result = out[0] if self.layout["kind"] is Tensor else self.layout["kind"](out[:n])
        values = dict(zip(self.inputs, numbers, strict=True))
        # an int the trace computed from a number input (``nonlocal k; k += 1``): this call's value
        self.replay(self.module, out[n:], {s: values[name] for name, s in self.symbols.items() if name in values})
        return result


def _outputs_flat(flat, replays, layout):
    """``flat`` (``_flat``'s) returning one flat tuple of tensors where the trace wrote Python
    state: its outputs, then the tensors written, as AOTAutograd compiles a flat list of
    outputs; ``layout`` notes how to take the function's result apart again."""
    def run(*leaves):
        made = len(replays)
        out = flat(*leaves)
        if len(replays) == made:     # no write this trace
            return out
        out, written = out
        single = isinstance(out, Tensor)
        layout.update(kind=Tensor if single else type(out), count=1 if single else len(out))
        return (*([out] if single else out), *written)
    run.__name__, run.__signature__ = flat.__name__, flat.__signature__
    return run


def _exact(t):
    """A tensor's metadata as guards check it: every size a number (a graph traced static)."""
    return FakeTensorMode().from_tensor(t)


def _module_tensors(module):
    """A module's parameters and buffers by qualified name; for a plain function, those of the
    modules it closes over (``lin``, or in a list, tuple or dict: ``mods.0``), and the tensors
    it closes over itself (``g``), as Dynamo lifts them to inputs of the graph: a buffer written
    in place or rebound, a closed-over tensor written in place, is the caller's tensor written."""
    return {name: t for name, (_, _, t) in _lifted_places(module).items()}


def _lifted_places(fn):
    """{qualified name: (module or cell holding it, its name in a module, the tensor)} of
    ``_module_tensors``."""
    if isinstance(fn, Module):
        roots = [("", fn)]
    else:
        roots = [(f"{name}.{k}." if k is not None else f"{name}.", m)
                 for name, cell in _closed_over(fn, (Module, list, tuple, dict)).items()
                 for k, m in _modules_in(cell.cell_contents)]
    places = {}
    for prefix, root in roots:
        for name, t in list(root.named_parameters()) + list(root.named_buffers()):
            places[prefix + name] = (root, name, t)
    if isinstance(fn, types.FunctionType):
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
            value = cell.cell_contents if _filled(cell) else None
            if _liftable(value):
                places[name] = (cell, None, value)
            elif type(value) in (list, dict):     # a closed-over list's or dict's tensors (``box[0]``)
                items = dict.items(value) if type(value) is dict else enumerate(value)
                places.update({f"{name}.{k}": (_Slot(value, k), None, t) for k, t in items if _liftable(t)})
    return places


def _liftable(value):
    """A closed-over value the graph takes as an input: a strided tensor (a sparse one stays a
    constant of the graph)."""
    return isinstance(value, Tensor) and value.layout == strided


class _Slot:
    """An entry of a closed-over list or dict that holds a tensor the graph takes as an input."""

    def __init__(self, container, key):
        self.container, self.key = container, key

    def swap(self, value):
        """Put ``value`` in the entry (as a plain list's or dict's: no read noted); return the old."""
        setitem = dict.__setitem__ if type(self.container) is dict else list.__setitem__
        getitem = dict.__getitem__ if type(self.container) is dict else list.__getitem__
        old = getitem(self.container, self.key)
        setitem(self.container, self.key, value)
        return old


def _aliased_holdings(held, tensors):
    """Which of the tensors the function holds (``held``: ``_lifted_places``' tensors) share
    memory with an argument tensor or with another one it holds, as pairs of positions among
    ``tensors`` then ``held``: the graph would take them as separate inputs, and a write through
    one would miss the other."""
    every = [*tensors, *held]
    storages = [id(t.untyped_storage()) if t.layout == strided else None for t in every]
    return tuple((i, j) for j in range(len(tensors), len(every)) for i in range(j)
                 if storages[i] is not None and storages[i] == storages[j])


def _modules_in(value):
    """(key, module) of a closed-over module (key None), or of the modules a list, tuple or dict
    holds (a container of anything else is not searched)."""
    if isinstance(value, Module):
        return [(None, value)]
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return [(k, m) for k, m in items if isinstance(m, Module)]


def _tensors(tree):
    return [a for a in tree_leaves(tree) if isinstance(a, Tensor)]


class _CacheEntry:
    """One compiled graph (or eager fallback) and its guards: the key of everything but the
    argument tensors (equality), and the argument tensors' guards (``guards.TensorGuards``)."""

    def __init__(self, key, tensor_guards, run, index):
        self.tensor_guards, self.run, self.index = tensor_guards, run, index
        # the int arguments the graph takes as symbols: out of the key, checked by tensor_guards
        self.ints = getattr(run, "ints", {})
        self.key = self._masked(key)
        # per argument, how often its guard failed: the most failed is checked (and named)
        # first, as Dynamo's guard manager sorts its guards by their fail counts
        self.fail_counts = {}

    def _masked(self, key):
        """``key`` with the values of the int arguments this graph takes as symbols left out, and
        of each dict argument only the entries the trace read (``_ReadDict``)."""
        reads = getattr(self.run, "dict_reads", {})
        if getattr(self.run, "lifts", False):   # the held tensors are inputs: no identity guarded
            key = (*key[:3], (None, key[3][1]))
        key = _globals_read(key, {n: r for n, r in reads.items() if isinstance(n, tuple)})
        key = _cells_unpinned(key, {n for n, p in self.ints.items() if isinstance(p, types.CellType)})
        if not (self.ints or reads) or not isinstance(key[0][0], tuple):   # (no signature: nothing is left out)
            return key
        arguments = tuple((name, k[:1] if name in self.ints and k[:1] in ((int,), (float,)) else
                           _read_entries(k, reads[name]) if name in reads else k)
                          for name, k in key[0][0])
        return ((arguments, key[0][1]), *key[1:])

    def check(self, key, tensors, args=(), kwargs=None):
        """None when a call with ``key``, argument ``tensors`` (and, for the int arguments that
        are symbols, ``args`` and ``kwargs``) may use this entry, else why not."""
        key = self._masked(key)
        if key != self.key:
            if key[0] != self.key[0]:
                failure = self._argument_failure(key[0])
                if failure is not None:
                    return failure
            return _global_failure(self.key[2], key[2]) or _key_change(self.key, key)
        inputs = getattr(self.run, "inputs", None)     # every number the graph takes, pinned ones too
        if not inputs:
            return self.tensor_guards.check(tensors)
        values = _int_values(inputs, args, kwargs or {}, self.run.signature,
                             getattr(self.run, "fn", None) or getattr(self.run, "module", None))
        return self.tensor_guards.check(tensors, dict(zip(inputs, values, strict=True)))

    def _argument_failure(self, arguments):
        """The first argument (most failed first) whose guard ``arguments`` fails, in torch's
        words; None where the arguments cannot be compared by name."""
        old = self.key[0]
        if not (len(old) == len(arguments) == 2 and isinstance(old[0], tuple) and old[1] == arguments[1]
                and [n for n, _ in old[0]] == [n for n, _ in arguments[0]]):
            return None
        pairs = sorted(zip(old[0], arguments[0], strict=True), key=lambda p: -self.fail_counts.get(p[0][0], 0))
        for (name, a), (_, b) in pairs:
            if a != b:
                self.fail_counts[name] = self.fail_counts.get(name, 0) + 1
                return _value_failure(name, a, b)
        return None


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _arguments_key(walker, signature, args, kwargs, names=frozenset()):
    """The arguments' part of the guard key, as Dynamo's sources (``L['flag']``) see a call:
    the arguments bound to the parameters, defaults filled in (a keyword argument passed with
    its default value is the same call as one left out), each ``(name, key)``; and the order
    of the keyword arguments that hold tensors (the order the graph takes its tensors in).
    ``names``: the attribute names the function's code reads, guarded on an object argument."""
    try:
        bound = signature.bind(*args, **kwargs)
    except (AttributeError, TypeError):     # no signature, or a call that fails as it is made
        return walker.argument((args, kwargs))
    passed = set(bound.arguments)
    bound.apply_defaults()
    # a default is the function's own value: guarded as the function's other values are
    parts = tuple((name, walker.at(("arg", name), walker.argument, v, names) if name in passed else
                   walker.at(("default",), walker.value, v, name))
                  for name, v in bound.arguments.items())
    return parts, tuple(k for k, v in kwargs.items() if _tensors(v))


def _value_failure(name, old, new):
    """The guard on argument ``name`` (guard key ``old``) that a call's ``new`` fails, written as
    torch's recompile reasons write it: ``mode == 'a'``, ``scale is None``, ``len(shape) == 2``,
    ``shape[0] == 2``, ``options['shift'] == 1.5``; None for a value of another kind."""
    kind = old[0] if isinstance(old, tuple) and old else None
    if kind is type(None):
        return f"{name} is None"
    if kind in (int, float) and len(old) == 1:     # a symbol of the graph: only its type is guarded
        return f"___check_type_id({name}, {id(kind)}), type={kind}"
    if kind is float and old[1] == "nan":           # torch's guard for a nan it specialized on
        return f"(type({name}) is float and __math_isnan({name}))"
    if kind in (float, complex):
        return f"{name} == {old[1]}"            # the key holds its repr
    if kind in (int, bool, str, bytes):
        return f"{name} == {old[1]!r}"
    if kind in (tuple, list) and isinstance(new, tuple) and new[:1] == (kind,):
        if len(old[1]) != len(new[1]):
            return f"len({name}) == {len(old[1])}"
        for i, (a, b) in enumerate(zip(old[1], new[1], strict=True)):
            if a != b:
                return _value_failure(f"{name}[{i}]", a, b)
    if kind == "dict" and isinstance(new, tuple) and new[:1] == ("dict",):
        now = dict(new[1])
        if now.keys() == dict(old[1]).keys():
            for k, a in old[1]:
                if now[k] != a and isinstance(k, tuple) and len(k) == 2:
                    return _value_failure(f"{name}[{k[1]!r}]", a, now[k])      # k: the key's (type, value)
    return None


class _ReadDict(dict):
    """A dict argument as the traced function sees it: a copy that writes down the keys read by
    subscript or ``get`` (``log``: the keys, in the order first read), as Dynamo installs a
    guard per entry the function reads (``d['a'] == 2``), not on the dict's other entries. A
    write by subscript (``d['a'] = y``) guards the dict's keys, not the values they hold, as
    Dynamo's guard on a dict it wrote to (the write is made again after the graph); an entry
    read after the function wrote it is its own value, unguarded. Any other look at it -- its
    keys, its length, iteration, another write -- reads the whole dict: the log holds None and
    every entry stays guarded, as before."""

    def __init__(self, items, log, origin=None):
        super().__init__(items)
        self._log, self._origin = log, origin     # origin: a global or closed-over dict, which a write reaches too
        self._written = set()

    def __getitem__(self, k):
        if self._log[0] is not None and k not in self._log[0] and k not in self._written:
            self._log[0].append(k)
        return super().__getitem__(k)

    def __setitem__(self, k, value):
        try:
            hash(k)
        except TypeError:
            return self._whole(super().__setitem__, k, value)
        if self._origin is not None:
            self._origin[k] = value
        if self._log[0] is not None and _KEYS not in self._log[0]:
            self._log[0].append(_KEYS)
        self._written.add(k)
        return super().__setitem__(k, value)

    def get(self, k, default=None):
        return self[k] if super().__contains__(k) else self._whole(super().get, k, default)

    def _whole(self, method, *args, **kwargs):
        self._log[0] = None
        return method(*args, **kwargs)


# In a dict's read log: the function wrote an entry, so the dict's keys are guarded.
_KEYS = ("keys",)

_WRITES = ("__delitem__", "__ior__", "update", "pop", "popitem", "clear", "setdefault")


def _reads_whole(name):
    def method(self, *args, **kwargs):
        if name in _WRITES and self._origin is not None:
            getattr(self._origin, name)(*args, **kwargs)
        return self._whole(getattr(super(_ReadDict, self), name), *args, **kwargs)
    method.__name__ = name
    return method


for _name in ("__iter__", "__len__", "__contains__", "__eq__", "__ne__", "__repr__", "__or__", "__ror__",
              "__reversed__", "keys", "items", "values", "copy", *_WRITES):   # __setitem__: above
    setattr(_ReadDict, _name, _reads_whole(_name))
_ReadDict.__hash__ = None


def _globals_read(key, reads):
    """``key`` with each global dict the function names, and each dict it closes over, reduced to
    the entries its trace read (``reads``: {("global", name) or ("cell", name): keys or None})."""
    function = key[2]
    if not reads or function[:1] != ("function",):
        return key
    kind, code, cells, glob, defaults = function
    glob = tuple((n, _read_entries(k, reads[("global", n)]) if ("global", n) in reads else k) for n, k in glob)
    cells = tuple((n, _read_entries(k, reads[("cell", n)]) if ("cell", n) in reads else k) for n, k in cells)
    return (*key[:2], (kind, code, cells, glob, defaults), *key[3:])


def _cells_unpinned(key, names):
    """``key`` with the closed-over numbers ``names`` that the graph takes as symbols reduced to
    their types, as an argument made a symbol is."""
    function = key[2]
    if not names or function[:1] != ("function",):
        return key
    kind, code, cells, glob, defaults = function
    cells = tuple((n, k[:1] if n in names and k[:1] in ((int,), (float,)) else k) for n, k in cells)
    return (*key[:2], (kind, code, cells, glob, defaults), *key[3:])


def _read_entries(k, read):
    """An argument's guard key ``k`` reduced to the entries ``read`` (their keys' guard keys),
    and to its keys where ``read`` holds ``_KEYS`` (the function wrote an entry): the whole key
    where it is not a dict's or the trace read the whole dict (``read`` None)."""
    if read is None or k[:1] != ("dict",):
        return k
    entries = dict(k[1])
    kept = tuple((key, entries.get(key, ("missing",))) for key in read if key != _KEYS)
    return ("dict", ((_KEYS, tuple(entries)), *kept) if _KEYS in read else kept)


def _global_failure(old, new):
    """The guard on a global or a closed-over value the function reads that a call fails, in
    torch's words (``G['TABLE']['scale'] == 1.5``, ``k == 1.0``); None for another change."""
    if old[:1] != ("function",) or new[:1] != ("function",) or old[:2] != new[:2] or old[4] != new[4]:
        return None
    if old[2] != new[2]:        # a closed-over value: named as torch names a closure variable (``k == 1.0``)
        now = dict(new[2])
        return next((_value_failure(name, k, now[name]) for name, k in old[2]
                     if name in now and now[name] != k and old[3] == new[3]), None)
    now = dict(new[3])
    for name, k in old[3]:
        if name in now and now[name] != k:
            return _value_failure(f"G[{name!r}]", k, now[name])
    return None


def _key_change(old, new):
    """Which part of the guard key a call changed, in words."""
    if old[0] != new[0]:
        return "an argument that is not a tensor changed (EQUALS_MATCH, or the arguments' structure)"
    if old[1] != new[1]:
        return "the global state changed (grad mode, autocast or the default dtype: GLOBAL_STATE)"
    return "a value the function reads changed (a closure cell, a global, a module attribute)"


class CompiledFunction:
    """``fn`` compiled once per set of guards. ``recompiles`` counts the traces; ``kernels`` holds
    the generated sources of the last compiled graph, and ``graph_module`` its graph (the joint
    graph when AOTAutograd compiled it; ``aot`` then holds the forward and backward graphs);
    ``graphs`` every graph compiled and ``break_reasons`` why calls ran eagerly.

    The cache is a list of entries, the latest used first, as Dynamo's cache of a frame: a call
    runs the first entry whose guards it passes. A call that passes none is compiled again, and why each
    entry refused it is kept in ``recompile_reasons`` (one list per recompile, each line as
    ``TORCH_LOGS=recompiles`` prints it: ``0/0: tensor 'x' size mismatch at index 0. expected 3,
    actual 4``). ``dynamic`` is torch.compile's: None, automatic dynamic shapes (``pgo.py``):
    a dim whose size changed is traced as a symbol by the recompile, so one graph serves every
    later size; True, every dim a symbol from the first call; False, never. A graph that
    AOTAutograd compiles (inputs that require grad) follows the same rule for its argument
    tensors' dims and its int and float arguments (primals of the joint graph)."""

    def __init__(self, fn, options=None, dynamic=None):
        self.fn, self.entries, self.recompiles, self.dynamic = fn, [], 0, dynamic
        self.options = dict(options or {})     # Inductor settings taken, recorded, not acted on
        self.kernels, self.graph_module, self.graphs, self.break_reasons = [], None, [], []
        self.recompile_reasons = []
        self.graph_breaks = []  # each read a compiled function breaks at (``resume_execution``)
        self.aot = None         # the last AOTAutograd compilation (inputs that require grad)
        self.skipped = False    # the first trace had no operation: every call runs eagerly
        self.frame_state = FrameState()
        self._dynamic_sources = frozenset()     # paths of the numbers made dynamic (``_Source``)
        self._resumed = {}      # non-tensor guard key -> what the segments after reads remember
        self._resume_graphs = {}    # the segments' compiled graphs every entry shares (``Segmented``)
        self._lock = threading.Lock()
        self.__name__ = getattr(fn, "__name__", "compiled")
        self._signature = _signature(fn)
        self._names = frozenset().union(*map(_names, _user_codes(fn)))     # what an object argument is guarded by
        _COMPILED.add(self)

    def _forget(self):
        """Drop every cache entry and what the frame state remembers (``reset``); the graphs
        compiled so far stay listed, as a counting backend keeps its count."""
        with self._lock:
            self.entries, self.recompiles, self.skipped = [], 0, False
            self.frame_state, self._dynamic_sources, self._resumed = FrameState(), frozenset(), {}
            self._resume_graphs = {}

    def __get__(self, instance, owner=None):
        """``@compile`` on a method: read from an instance it is bound to it, as torch.compile's
        wrapper (a function) binds; the instance is the compiled function's first argument."""
        return self if instance is None else types.MethodType(self, instance)

    def __call__(self, *args, **kwargs):
        if self.skipped:
            return self.fn(*args, **kwargs)
        try:
            key, walker = self._key(args, kwargs)
        except (Unguardable, TypeError) as e:
            return self._eager(str(e), args, kwargs)
        tensors = _tensors((args, kwargs))     # in the order the trace takes them
        entry, _ = self._lookup(key, tensors, args, kwargs)
        if entry is None:
            with self._lock:
                entry, failures = self._lookup(key, tensors, args, kwargs)
                if entry is None and self.recompiles >= config.recompile_limit:
                    return self._eager(f"recompile_limit ({config.recompile_limit}) reached", args, kwargs)
                if entry is None:
                    if failures:
                        self.recompile_reasons.append(failures)
                    entry = self._new_entry(key, args, kwargs, tensors, walker)
        return entry.run(args, kwargs)

    def _key(self, args, kwargs):
        """The guard key of a call, and the walker that made it (the tensors and the numbers it
        met); a number at a source made dynamic is keyed by its type alone."""
        held = [t for _, _, t in _lifted_places(self.fn).values()]
        walker = GuardWalker(tensors_apart=True, dynamic=self._dynamic_sources, lifted=frozenset(map(id, held)))
        # the held tensors as constants are keyed (identity, and a one-element one's value), then
        # which of them share memory with another input
        held_key = (tuple(GuardWalker().value(t, "held") for t in held),
                    _aliased_holdings(held, _tensors((args, kwargs))))
        key = (_arguments_key(walker, self._signature, args, kwargs, self._names), global_state_key(),
               walker.at(("fn",), walker.function, self.fn), held_key)
        hash(key)
        return key, walker

    def _lookup(self, key, tensors, args, kwargs):
        """The first entry whose guards pass, else None and each entry's failure. The entry
        found moves to the front, as in Dynamo's cache: the next call tries the latest used
        first, and a recompile lists the failures in that order."""
        failures = []
        for i, entry in enumerate(self.entries):
            failure = entry.check(key, tensors, args, kwargs)
            if failure is None:
                if i:
                    self.entries.insert(0, self.entries.pop(i))
                return entry, None
            failures.append(f"0/{entry.index}: {failure}")
        return None, failures

    def _new_entry(self, key, args, kwargs, tensors, walker):
        names = _tensor_names(self.fn, args, kwargs)
        dims = self._dynamic_dims(names, tensors)
        ints = self._dynamic_ints(args, kwargs) | self._dynamic_sources_of(args, kwargs, walker.numbers)
        if self._dynamic_sources != walker.dynamic:     # a source made dynamic now: keyed by its type
            key, walker = self._key(args, kwargs)
        seen_tensors = walker.tensors
        self._seen_tensors = seen_tensors   # what a trace cut at reads may write for real (``_segmented``)
        self._shape_env, self._int_symbols = None, {}
        self._resumed_key = key     # the segments after a read remember sizes across entries of this key
        run = self._compile(args, kwargs, seen_tensors, dims, ints)
        graph = getattr(run, "traced", None)
        fakes = graph if graph is not None else [_exact(t) for t in tensors]
        offsets = isinstance(run, (_Graph, _Differentiable)) and _addresses_storage(self.graphs[-1])
        guards = TensorGuards(_tensor_labels(self.fn, args, kwargs, names), fakes, self._shape_env, offsets,
                              self._int_symbols)
        entry = _CacheEntry(key, guards, run, len(self.entries))
        self.entries.insert(0, entry)
        return entry

    def _dynamic_dims(self, names, tensors):
        """Per argument tensor, the dims to trace as symbols (``pgo.py``), or None when none."""
        if self.dynamic is False:
            return [None] * len(tensors)
        dims = []
        for name, t in zip(names, tensors, strict=True):
            if self.dynamic or not config.assume_static_by_default:
                chosen = set(range(t.dim()))
            else:
                changed = self.frame_state.update(name, tuple(t.shape))
                chosen = (changed if config.automatic_dynamic_shapes else set()) | marked_dims(t)
            dims.append((f"L['{name}']", chosen) if chosen else None)
        return dims

    def _dynamic_ints(self, args, kwargs):
        """{name: place} of the int arguments to trace as symbols: those whose value changed
        since the first compile (automatic dynamic shapes; torch's ``L['n']``)."""
        if self.dynamic is False or not config.automatic_dynamic_shapes:
            return {}
        places = _int_places(self.fn, args, kwargs)
        values = _int_values(places, args, kwargs)
        # a nan is never a symbol: torch specializes on it (the symbol's graph refuses it)
        return {name: place for (name, place), value in zip(places.items(), values, strict=True)
                if value == value and self.frame_state.update(name, (value,))}

    def _dynamic_sources_of(self, args, kwargs, numbers):
        """{name: ``_Source``} of the numbers inside the arguments or the compiled module
        (``numbers``: ``GuardWalker.numbers``) to trace as symbols: those whose value changed
        since the first compile, as Dynamo's frame state marks any source automatic dynamic."""
        if self.dynamic is False or not config.automatic_dynamic_shapes:
            return {}
        tops = {name: place for name, place, _ in _tops(self.fn, args, kwargs)}
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or (), strict=True)) \
            if isinstance(self.fn, types.FunctionType) else {}
        found = {}
        for path, value in numbers.items():
            text = _source_text(path)
            if value != value or not self.frame_state.update(text, (value,)):
                continue
            if path[0][0] == "arg" and path[0][1] not in tops:
                continue
            top = tops[path[0][1]] if path[0][0] == "arg" else cells[path[0][1]] if path[0][0] == "cell" else None
            self._dynamic_sources = self._dynamic_sources | {path}
            found[_identifier(text.removeprefix("L"))] = _Source(path[0][-1], top, path[1:])
        return found

    def _eager(self, reason, args, kwargs):
        self._record(reason)
        return self.fn(*args, **kwargs)

    def _record(self, reason):
        if reason not in self.break_reasons:
            self.break_reasons.append(reason)

    def _compile(self, args, kwargs, seen_tensors, dims=None, ints=None):
        """The entry's run: a graph, the graphs around reads, or the function itself, where a
        trace wrote Python state (the write undone: eager execution makes it, once per call)."""
        self._writes, start = [], len(self.graphs)
        run = self._compile_once(args, kwargs, seen_tensors, dims, ints)
        if set(self._writes) == {"print"} and not isinstance(run, (_Eager, _FailedTrace, Segmented)):
            # a print, and writes a replay makes again: the graphs around the print, which is
            # called between them (traced again), each graph making its own writes after it
            del self.graphs[start:]
            self._writes.clear()
            segmented = self._segmented(args, kwargs, dims)
            if segmented is not None and not self._writes:
                return segmented
            self._writes.append("print")
        if self._writes and not isinstance(run, (_Eager, _FailedTrace)):
            del self.graphs[start:]
            self._shape_env, self._int_symbols = None, {}     # no graph: the entry's guards are exact
            reason = _PRINTS if "print" in self._writes else _PYTHON_WRITES
            self._record(reason)
            return _Eager(self.fn, reason)
        return run

    def _compile_once(self, args, kwargs, seen_tensors, dims=None, ints=None):
        self.recompiles += 1
        reason = _eager_reason(_tensors((args, kwargs)), seen_tensors, _module_tensors(self.fn).values())
        if reason == _TWO_DEVICES:          # the fake run would refuse most such programs
            return _FailedTrace(self.fn, None, self._record, reason)
        if reason is None and _aliased_holdings(_module_tensors(self.fn).values(), _tensors((args, kwargs))):
            reason = _ALIASED
        if reason is None:
            try:
                every = [*seen_tensors, *_module_tensors(self.fn).values()]
                if is_grad_enabled() and any(t.requires_grad for t in every):
                    return self._trace_differentiable(args, kwargs, dims, ints)
                run = self._trace(args, kwargs, dims, ints)
                if not self._tensor_calls and not any(n.op == "call_function" for n in self.graphs[-1].graph.nodes):
                    # Dynamo compiles no graph without an operation (``return x``, ``x.shape[0] + 1``);
                    # a call that gave a tensor is one, even where it computes nothing (``F.dropout`` in eval)
                    self.graphs.pop()
                    if self.entries:    # a later entry: guarded exactly, it runs the code itself
                        self._shape_env, self._int_symbols = None, {}
                        return _Eager(self.fn, "no operation traced")
                    # the first: Dynamo skips the function's code from then on, never traced again
                    self.recompiles, self.skipped = self.recompiles - 1, True
                    return _Eager(self.fn, "no operation traced: the function is skipped")
                return run
            except ConstraintViolationError:
                # the caller's declaration is wrong: no graph, no eager run, and no compile
                # counted, as Dynamo's recompile limit counts the cache entries made: each call
                # raises again, never runs eagerly once the limit is reached
                self.recompiles -= 1
                raise
            except RuntimeError as e:
                if not isinstance(e, _GRAPH_BREAKS):
                    return _FailedTrace(self.fn, e, self._record)
                if "_local_scalar_dense" in str(e) or "has no data to read" in str(e) or \
                        isinstance(e, (DynamicOutputShapeException, RequiresGradBreak)):
                    run = self._segmented(args, kwargs, dims)
                    if run is not None:
                        return run
                reason = _ITEM_BREAK if "_local_scalar_dense" in str(e) else f"not compiled: {type(e).__name__}: {e}"
            except Exception as e:  # noqa: BLE001 -- any other failure of the tracer or backend: eager
                reason = f"not compiled: {type(e).__name__}: {e}"
        self._record(reason)
        return _Eager(self.fn, reason)

    def _segmented(self, args, kwargs, dims=None):
        """The function cut at its reads (``resume_execution``): compiled segments around reads
        run eagerly; None where it cannot be (the reads' tracer fails, a random operator, a
        module whose parameters require grad, which the segments would not differentiate)."""
        if is_grad_enabled() and any(t.requires_grad for t in _module_tensors(self.fn).values()):
            return None
        tensors, reads = _tensors((args, kwargs)), {}
        writes = self._writes       # the first trace's; a trace again's make the entry eager
        flat = _flat(self.fn, args, kwargs, reads=reads, writes=writes)
        codes = _user_codes(self.fn)
        try:
            resumed = self._resumed.setdefault(getattr(self, "_resumed_key", None), ResumeCache())
            with _held_kept(self._held(tensors)):
                run = Segmented(lambda ts, reads, answers=None: trace_with_breaks(flat, ts, codes, reads, answers),
                                tensors, self.graphs,
                                self._record_break, tensors[0].device.type, dims, resumed, writes,
                                self._resume_graphs)
        except Exception:  # noqa: BLE001 -- a program the reads' tracer cannot follow runs eagerly
            return None
        run.dict_reads, run.eager = reads, self.fn
        self._shape_env = run.shape_env      # the first graph's guards are the entry's
        return run

    def _held(self, tensors):
        """The tensors the function reaches that are not among the argument ``tensors``: the
        tensors it closes over, a module's, those in a global or a closed-over list."""
        arguments = {id(t) for t in tensors}
        every = [*getattr(self, "_seen_tensors", ()), *_module_tensors(self.fn).values()]
        return [t for t in {id(t): t for t in every}.values() if id(t) not in arguments]

    def _record_break(self, cut):
        """A read the segments break at, as Dynamo reports it (``explain``'s break reasons)."""
        self.graph_breaks.append(GraphBreakReason(cut.reason, cut.user_stack))
        self._record(cut.reason)

    def _trace(self, args, kwargs, dims=None, ints=None):
        """Trace with fake tensors; ``dims`` (``_dynamic_dims``) and the int arguments ``ints``
        (``_dynamic_ints``, taken after the tensors) are traced as symbols, and the ShapeEnv's
        guards -- the trace's and the backend's -- join the entry's guards."""
        tensors, ints, reads = _tensors((args, kwargs)), dict(ints or {}), {}
        values = _int_values(ints, args, kwargs, fn=self.fn)
        # the tensors the function holds (a module's, closed-over ones) are inputs after the numbers
        lifted = _module_tensors(self.fn)
        dims = [*(dims or [None] * len(tensors)), *((f"L['{name}']", "int") for name in ints),
                *[None] * len(lifted)]
        with UserCalls(_user_codes(self.fn)) as calls:
            # Dynamo breaks the graph at every .item(), a constant's too: no read is folded
            replays = []
            flat = _lifted(_flat(self.fn, args, kwargs, ints, reads, self._writes, replays, _holders(lifted, self.fn)),
                           self.fn, list(lifted), len(tensors) + len(values), named=True)
            gm = make_fx(flat, decomposition_table, tracing_mode="fake", _fold_constant_reads=False,
                         _dynamic_dims=dims)(*tensors, *values, *lifted.values())
        self._tensor_calls = calls.tensor_calls
        placeholders = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
        fakes, int_vals = placeholders[:len(tensors)], placeholders[len(tensors):len(tensors) + len(ints)]
        self._shape_env = gm.shape_env
        gm = functionalize(gm)
        gm.graph.eliminate_dead_code()      # views functionalization replayed that nobody reads
        gm.recompile()
        compiled = compile_fx(gm, tensors[0].device.type)
        if self._shape_env is not None:     # the trace's and the backend's guards are all in
            self._shape_env.check_dynamic(_strictly_marked(_tensor_names(self.fn, args, kwargs), tensors))
        self.graph_module, self.kernels = gm, compiled.kernels
        self.graphs.append(gm)
        run = _Graph(compiled, fakes, self._number_symbols(ints, int_vals), self._signature, ints)
        run.dict_reads, run.replay, run.fn, run.lifted = reads, replays[0] if replays else None, self.fn, bool(lifted)
        run.symbols = {name: e for name, e in self._int_symbols.items() if e.is_Symbol}
        if run.replay is not None and not run.replay.numbers_within(set(run.symbols.values())):
            self._writes.append("state")    # an int written from a size (``k += x.shape[0]``): eager
        return run

    def _number_symbols(self, ints, traced):
        """Of the number arguments ``ints`` (traced as ``traced``), those still symbols, left out of
        the cache key. An int a guard pinned (a loop ``range(n)``) or a 0 or 1 (never a symbol)
        stays a value of the key. Every symbol's expression is kept in ``_int_symbols``: the guards
        name the symbol a guard pinned, reading its value from the call after the key has matched."""
        self._int_symbols = {name: v.node._expr for name, v in zip(ints, traced, strict=True) if is_symbolic(v)}
        return {name: ints[name] for name, e in self._int_symbols.items() if not self._shape_env.replace(e).is_Number}


    def _trace_differentiable(self, args, kwargs, dims=None, ints=None):
        """AOTAutograd: the module's parameters and buffers become inputs after the arguments.
        The argument dims ``dims`` (``_dynamic_dims``) are traced as symbols, as by ``_trace``,
        and so are the int and float arguments ``ints`` (``_dynamic_ints``), primals after the
        tensors: the joint graph, and both halves, serve every later size and value."""
        tensors, lifted, ints = _tensors((args, kwargs)), _module_tensors(self.fn), dict(ints or {})
        values = _int_values(ints, args, kwargs, fn=self.fn)
        reads, replays, layout = {}, [], {}
        flat = _lifted(_outputs_flat(_flat(self.fn, args, kwargs, ints, reads=reads, writes=self._writes,
                                           replays=replays, holders=_holders(lifted, self.fn)), replays, layout),
                       self.fn, list(lifted), len(tensors) + len(values))
        dims = [*(dims or [None] * len(tensors)), *((f"L['{name}']", "int") for name in ints),
                *[None] * len(lifted)]
        with UserCalls(_user_codes(self.fn)):
            compiled = AOTCompiled(flat, [*tensors, *values, *lifted.values()],
                                   lambda gm: compile_fx(gm, tensors[0].device.type), dims)
        self._shape_env = getattr(compiled.joint, "shape_env", None)
        self.graph_module, self.kernels = compiled.joint, compiled.kernels
        self.graphs.append(compiled.joint)
        self.aot = compiled
        run = _Differentiable(compiled, self.fn, ints, self._signature)
        run.dict_reads, run.replay, run.layout = reads, replays[0] if replays else None, layout
        if self._shape_env is not None:         # the primals' fakes: their sizes maybe symbols
            primals = [n.meta["val"] for n in compiled.joint.graph.nodes if n.op == "placeholder"]
            run.traced = primals[:len(tensors)]
            # a symbol a guard pinned stays an input, its value in the key (as ``_trace``'s)
            run.ints = self._number_symbols(ints, primals[len(tensors):len(tensors) + len(ints)])
        run.symbols = {name: e for name, e in self._int_symbols.items() if e.is_Symbol}
        if run.replay is not None and run.replay.numbers_written and \
                not run.replay.numbers_within(set(run.symbols.values())):
            self._writes.append("state")    # an int written from a size (``k += x.shape[0]``): eager
        return run


@contextlib.contextmanager
def _held_kept(held):
    """Put back the values of the tensors ``held`` that the block wrote: the trace cut at reads
    runs the function on the real tensors it reaches (``g.add_(x)`` before a read), and the call
    itself -- the segments' graphs, or eager execution where they cannot be made -- writes them
    once more."""
    with no_grad():
        saved = [(t, t._version, t.clone()) for t in held if t.layout == strided]
    try:
        yield
    finally:
        with no_grad():
            for t, version, value in saved:
                if t._version != version:
                    t.copy_(value)


def _addresses_storage(gm):
    """Whether ``gm`` places a view in its storage itself (``as_strided`` and its kin take a
    storage offset): then the inputs' storage offsets are guarded, as nothing else is."""
    return any(n.op == "call_function" and "as_strided" in str(getattr(n.target, "__name__", n.target))
               for n in gm.graph.nodes)


def _strictly_marked(names, tensors):
    """The sources (``L['x'].size()[0]``) of the dims ``mark_dynamic`` declared dynamic."""
    return {f"L['{name}'].size()[{d}]" for name, t in zip(names, tensors, strict=True)
            for d in strictly_marked_dims(t)}


def _user_codes(fn):
    """The code objects whose frames are the compiled function's: its own, or its forward's."""
    target = type(fn).forward if isinstance(fn, Module) else fn
    code = getattr(target, "__code__", None)
    return (code,) if code is not None else ()


def _lifted(flat, module, names, n_args, named=False):
    """``flat`` taking the module's parameters and buffers as extra inputs: while it runs, the
    module holds those inputs in their places, swapped in and back as torch.func.functional_call
    swaps them (``nn.utils.stateless._reparametrize_module``), one closed-over module at a time."""
    if not names:
        return flat

    places = _lifted_places(module)

    def run(*tensors):
        by_root = {}
        for name, t in zip(names, tensors[n_args:], strict=True):
            root, inner, _ = places[name]
            by_root.setdefault(id(root), (root, {}))[1][inner] = t
        with contextlib.ExitStack() as stack:
            for root, values in by_root.values():
                if isinstance(root, types.CellType):        # a closed-over tensor: the cell holds it
                    stack.callback(setattr, root, "cell_contents", root.cell_contents)
                    root.cell_contents = values[None]
                elif isinstance(root, _Slot):               # one in a closed-over list or dict
                    stack.callback(root.swap, root.swap(values[None]))
                else:
                    stack.enter_context(_reparametrize_module(root, values))
            return flat(*tensors[:n_args])
    run.__name__ = flat.__name__
    if named:       # placeholders named after the tensors (``g_1``), as make_fx names parameters
        params = [*inspect.signature(flat).parameters.values()][:n_args]
        run.__signature__ = inspect.Signature(
            [*params, *(inspect.Parameter(_identifier(n), inspect.Parameter.POSITIONAL_ONLY) for n in names)])
    return run


_TWO_DEVICES = "tensors on different devices: eager raises or converts as torch does"

_ALIASED = ("a tensor the function holds shares memory with another input: the graph would take them apart, "
            "so the function runs eagerly")


def _eager_reason(arg_tensors, all_tensors, lifted=()):
    """Why a call cannot run as a compiled graph, or None."""
    if not arg_tensors:
        return "no tensor arguments"
    if len({str(t.device) for t in all_tensors}) > 1:
        return _TWO_DEVICES
    inputs = {id(t) for t in [*arg_tensors, *lifted]}
    if is_grad_enabled() and any(t.requires_grad and id(t) not in inputs for t in all_tensors):
        # Its gradient would be lost: AOTAutograd differentiates with respect to inputs only.
        return "a tensor the function closed over requires grad: not lifted to an input, runs eagerly"
    return None


def _holders(lifted, fn):
    """The ids of the modules whose buffers are inputs of the graph (``_lifted_places``): a
    buffer one of them rebinds is a write a replay makes again."""
    places = _lifted_places(fn)
    return frozenset(id(places[name][0]) for name in lifted if isinstance(places[name][0], Module))


def _flat(fn, args, kwargs, ints=None, reads=None, writes=None, replays=None, holders=frozenset()):
    """``fn`` as a function of the argument tensors, then of the int arguments ``ints`` ({name:
    place}, traced as symbols): every other argument (numbers, lists, keyword values) is put
    back in place, baked into the trace and guarded by the cache key. A dict argument is handed
    over as a ``_ReadDict`` that writes the keys read into ``reads`` ({name: [keys] or None}).
    Placeholders keep the parameter names (``x_1``) as make_fx writes them. A write the trace
    makes to Python state the function reaches (a global, an outside object's attribute, a list
    it was given) is undone afterwards and noted in ``writes`` (``side_effects.py``): the
    compiled graphs would not make it again. Given a list ``replays``, writes a graph can make
    again are not noted but appended there as a ``Replay``, and the function returns its result
    and the tensors they write, which the graph then returns too. ``holders``: the ids of the
    modules whose buffers the graph takes as inputs (``_holders``), where a buffer rebound is
    such a write."""
    ints = ints or {}
    dicts = [(name, place) for name, place, value in _tops(fn, args, kwargs) if type(value) is dict]
    global_dicts = {name: fn.__globals__[name] for name in _names(fn.__code__)
                    if type(fn.__globals__.get(name)) is dict} if isinstance(fn, types.FunctionType) else {}
    cell_dicts = _closed_over(fn, (dict,))
    logs = {name: [[]] for name, _ in dicts} | {("global", name): [[]] for name in global_dicts} | \
        {("cell", name): [[]] for name in cell_dicts}

    def flat(*leaves):
        with _TRACE_LOCK:
            replay = [] if replays is not None else None
            out = traced(replay, *leaves)
        if replay:
            replays.append(replay[0])
            return out, list(replay[0].outputs)
        return out

    def traced(replay, *leaves):
        maths = _math_globals(fn, writes)     # asked here, under the lock: no other trace's names in place
        state = PythonState(fn, [v for v in tree_leaves((args, kwargs)) if not isinstance(v, Tensor)], set(maths),
                            holders)
        # a trace cut at reads notes each segment's writes at its cut, made again after its graph
        tracer = breaking_tracer()
        if tracer is not None:
            tracer.python_state = state
        tensors, values = iter(leaves[:len(leaves) - len(ints)]), leaves[len(leaves) - len(ints):]
        a, k = tree_map(lambda v: next(tensors) if isinstance(v, Tensor) else v, (list(args), dict(kwargs)))
        numbers = []     # closed-over numbers traced as symbols: the cell holds the symbol meanwhile
        undo = []        # numbers inside an argument or the module, the symbol written in their place
        closed = {name: cell.cell_contents for name, cell in cell_dicts.items()}
        containers, returned = [], False
        # every name, cell and number is put in place inside the ``try``: a write that raises
        # part-way (a number's place gone, a trace stopped) is put back as a finished one is
        try:
            for place, value in zip(ints.values(), values, strict=True):
                if isinstance(place, _Source):
                    base = place.base(fn, a, k)
                    undo.append(place.write(base, value))
                elif isinstance(place, types.CellType):
                    numbers.append((place, place.cell_contents, value))
                    place.cell_contents = value
                else:
                    (a if isinstance(place, int) else k)[place] = value
            for name, place in dicts:
                held = a if isinstance(place, int) else k
                held[place] = _ReadDict(held[place], logs[name])
            # a global dict the function names is swapped for a reading twin while it runs
            for name in global_dicts:
                fn.__globals__[name] = _ReadDict(global_dicts[name], logs[("global", name)], global_dicts[name])
            # and so is a dict it closes over (the cell holds the twin while the function runs)
            for name, cell in cell_dicts.items():
                cell.cell_contents = _ReadDict(closed[name], logs[("cell", name)], closed[name])
            for name, (_, symbolic) in maths.items():
                fn.__globals__[name] = symbolic
            # the trace's copies of the argument containers: a write into one would reach no
            # container of the caller's, so it makes the function run eagerly (below)
            containers = _containers([*a, *k.values()])
            with watching_requires_grad():
                out = fn(*a, **k)
            returned = True
            return out
        finally:
            for name in global_dicts:
                fn.__globals__[name] = global_dicts[name]
            for name, cell in cell_dicts.items():
                cell.cell_contents = closed[name]
            for cell, number, symbol in numbers:
                now = cell.cell_contents
                if now is not symbol and replay is not None and tracer is None and type(now) is SymInt:
                    continue    # ``nonlocal k; k += 1``: an int from the symbol, the picture's replay makes it
                if now is not symbol and writes is not None:
                    writes.append("state")      # ``nonlocal k; k *= 0.5``: a symbol written, no graph makes it
                cell.cell_contents = number
            if writes is not None and any(_items(c) != items for c, items in containers):
                writes.append("state")      # a list or dict of the arguments written (``out.append(y)``)
            replayable = replay is not None and tracer is None
            if any([restore(replayable) for restore in reversed(undo)]) and writes is not None:
                writes.append("state")      # the function wrote a number traced as a symbol
            for name, (plain, _) in maths.items():
                if plain is _BUILTIN:
                    fn.__globals__.pop(name, None)
                else:
                    fn.__globals__[name] = plain
            if reads is not None:
                walker = GuardWalker()
                reads.update({name: None if log[0] is None else
                              [key if key is _KEYS else walker.value(key, "key") for key in log[0]]
                              for name, log in logs.items()})
            if state.written():
                segmented = tracer is not None and tracer.finish_writes()
                plan = state.replay() if replay is not None and returned and tracer is None else None
                state.restore()
                if plan is not None:
                    replay.append(plan)
                elif writes is not None and not segmented and (returned or tracer is not None):
                    # (a trace stopped by a break: the trace cut at the reads notes the writes)
                    writes.append("state")
    flat.__name__ = getattr(fn, "__name__", "f")
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
              for n in [*_tensor_names(fn, args, kwargs), *ints]]
    flat.__signature__ = inspect.Signature(params)
    return flat


def _containers(values):
    """(container, its items) of every list and dict in the argument ``values`` (the trace's
    copies), tuples looked into: what a write into an argument would change."""
    found, todo = [], list(values)
    while todo:
        value = todo.pop()
        if isinstance(value, (list, dict)):
            found.append((value, _items(value)))
        if isinstance(value, (list, tuple)):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(dict.values(value))
    return found


def _items(container):
    """A container's items by identity, read as a plain list's or dict's (a ``_ReadDict``
    notes no read)."""
    if isinstance(container, dict):
        return [(k, id(v)) for k, v in dict.items(container)]
    return [id(v) for v in list.__iter__(container)]


# One trace at a time, as Dynamo compiles one frame at a time (``compile_lock`` in
# torch/_dynamo/convert_frame.py): a trace puts names into the function's module globals
# (``print``, ``int``, ``float``, the math module) and a global dict's reading twin, which a
# trace of the same module on another thread would otherwise find, or take away, in between.
_TRACE_LOCK = threading.RLock()


# ``math.sqrt`` of a symbol asks for its float, a guard that pins it; Dynamo calls torch's
# ``sym_sqrt`` instead, which keeps the symbol. (``round``, ``math.floor`` and ``math.ceil``
# reach the symbol's own ``__round__``, ``__floor__``, ``__ceil__``.)
_SYMBOLIC_MATH = types.SimpleNamespace(**{**vars(math), "sqrt": sym_sqrt})

_BUILTIN = object()     # a name found among the builtins, not the globals: removed again after the trace


class _IntType(type):
    """The type of ``_SymbolicInt``: every int is an instance, as of ``int`` itself."""

    def __instancecheck__(cls, value):
        return isinstance(value, int)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, int)


class _FloatType(type):
    """The type of ``_SymbolicFloat``: every float is an instance, as of ``float`` itself."""

    def __instancecheck__(cls, value):
        return isinstance(value, float)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, float)


class _SymbolicInt(int, metaclass=_IntType):
    """``int`` as the traced function sees it: ``int(v)`` of a symbol keeps it a symbol, as
    Dynamo traces the builtin as ``torch.sym_int``; ``int(t)`` of a tensor reads it (a graph
    break) and truncates the value read. Any other call is Python's ``int``."""

    def __new__(cls, value=0, *args, **kwargs):
        if args or kwargs:
            return int(value, *args, **kwargs)
        if isinstance(value, Tensor):
            with reading_as(int):
                value = value._real_item(int64)     # as Tensor.__int__ reads it
        return sym_int(value) if is_symbolic(value) else int(value)


class _SymbolicFloat(float, metaclass=_FloatType):
    """``float`` as the traced function sees it: ``float(t)`` of a tensor reads it (a graph
    break) and keeps a value made a symbol one, as Dynamo keeps the SymFloat; ``float(v)`` of a
    SymFloat is ``v``. Any other call is Python's ``float``."""

    def __new__(cls, value=0.0):
        if isinstance(value, Tensor):
            with reading_as(float):     # an int tensor's value read as a float, as Dynamo's float(t)
                value = value._real_item(float64)     # as Tensor.__float__ reads it
        return value if isinstance(value, SymFloat) else float(value)


def _min_max(builtin):
    """``max`` or ``min`` as the traced function sees it: called on two or more values of which
    a tensor is one, Dynamo's ``BuiltinVariable`` folds them pairwise into ``torch.maximum``
    (``minimum``) of two tensors, or ``torch.clamp(t, min=c)`` (``max=c``) of a tensor and a
    number, in its graph (``_call_min_max_binary`` in ``torch/_dynamo/variables/builtin.py``):
    no comparison is read, so no graph break. Any other call is Python's builtin."""
    def call(*args, **kwargs):
        if kwargs or len(args) < 2 or not any(isinstance(a, Tensor) for a in args):
            return builtin(*args, **kwargs)
        return functools.reduce(binary, args)

    def binary(a, b):
        from .. import clamp, maximum, minimum  # a real cycle: the package's functions load after _dynamo
        if not isinstance(a, Tensor):
            a, b = b, a
        if not isinstance(a, Tensor):
            return builtin(a, b)
        if isinstance(b, Tensor):
            return (maximum if builtin is max else minimum)(a, b)
        if type(b) not in (int, float):     # a symbol, a bool: Python's comparison, as it was
            return builtin(a, b)
        return clamp(a, min=b) if builtin is max else clamp(a, max=b)
    call.__name__ = builtin.__name__
    return call


def _math_globals(fn, writes=None):
    """{name: (its value, what the trace sees)} for the globals ``fn`` names that are the math
    module or ``math.sqrt``, and the builtins ``int``, ``float``, ``max`` and ``min``
    (``_BUILTIN`` for their value: names the trace adds): while it is traced they are the
    symbolic ones, and Dynamo's ``max`` and ``min`` of tensors (``_min_max``). ``print``
    prints nothing while traced and notes a write in ``writes``: the function then runs
    eagerly, printing once per call, as torch.compile breaks the graph to print on each call."""
    if not isinstance(fn, types.FunctionType):
        return {}
    found = {}
    builtins = {"int": _SymbolicInt, "float": _SymbolicFloat, "max": _min_max(max), "min": _min_max(min)}
    if writes is not None:
        builtins["print"] = traced_print(writes)
    if writes is not None and "print" not in fn.__globals__:
        # a function of the same module that it calls prints through these globals too
        found["print"] = (_BUILTIN, builtins["print"])
    for name in _names(fn.__code__):
        if name in builtins and name not in fn.__globals__:
            found[name] = (_BUILTIN, builtins[name])
            continue
        value = fn.__globals__.get(name)
        if name == "print" and value is print and "print" in builtins:
            found[name] = (value, builtins[name])   # a module whose globals hold the builtin print itself
        elif value is math:
            found[name] = (value, _SYMBOLIC_MATH)
        elif value is math.sqrt:
            found[name] = (value, sym_sqrt)
    return found


def _tops(fn, args, kwargs):
    """(name, place, value) of each argument: a positional one by its parameter's name, one
    gathered by ``*xs`` as Dynamo's source names it (``xs[0]``)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    # (a module's ``*args`` is Module.__call__'s, not a name of its forward's)
    rest = None if isinstance(fn, Module) else next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)

    def name(i):
        if i < len(names):
            return names[i]
        return f"{rest}[{i - len(names)}]" if rest else f"arg{i}"
    return [(name(i), i, a) for i, a in enumerate(args)] + [(k, k, v) for k, v in kwargs.items()]


def _identifier(name):
    """An argument's name as a placeholder's: ``xs[0]`` is ``xs_0``, as Dynamo's ``L_xs_0_``."""
    return re.sub(r"\W+", "_", name).strip("_")


def _tensor_names(fn, args, kwargs):
    tops = [(_identifier(name), value) for name, _, value in _tops(fn, args, kwargs)]
    out = []
    for name, value in tops:
        found = _tensors(value)
        out += [name] if isinstance(value, Tensor) else [f"{name}_{j}" for j in range(len(found))]
    return out


def _tensor_labels(fn, args, kwargs, names):
    """Each argument tensor as Dynamo's guard failures name it: ``x``, ``xs[0]``, ``d['a']``
    (``names`` where the walk finds another count)."""
    def walk(value, label):
        if isinstance(value, Tensor):
            return [label]
        if isinstance(value, (tuple, list)):
            return [found for i, v in enumerate(value) for found in walk(v, f"{label}[{i}]")]
        if isinstance(value, dict):
            return [found for k, v in value.items() for found in walk(v, f"{label}[{k!r}]")]
        return []
    labels = [found for name, _, value in _tops(fn, args, kwargs) for found in walk(value, name)]
    return labels if len(labels) == len(names) else names


@dataclasses.dataclass
class ExplainOutput:
    """What ``explain`` found, with the fields of torch._dynamo.backends.debugging.ExplainOutput."""

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list | None = None
    out_guards: list | None = None
    compile_times: str | None = None


@dataclasses.dataclass
class GraphBreakReason:
    """Why a call ran eagerly (torch's GraphCompileReason has ``reason`` and ``user_stack``)."""

    reason: str
    user_stack: list = dataclasses.field(default_factory=list)


# Every compiled function alive, for ``reset`` (weakly: a function dropped is forgotten).
_COMPILED = weakref.WeakSet()


def reset():
    """Forget every compiled function's cache entries and frame state: the next call of each
    compiles again, its sizes and numbers static again (``torch._dynamo.reset``)."""
    for compiled in list(_COMPILED):
        compiled._forget()


def explain(fn):
    """``explain(fn)(*args, **kwargs)``: compile and run ``fn`` once, report graphs and breaks
    (``torch/_dynamo/eval_frame.py`` explain). The break count is torch's: the graphs less one,
    whatever breaks were met (a break before any operation makes no graph, a function run
    eagerly none at all: -1); ``break_reasons`` lists each break met."""
    def run(*args, **kwargs):
        compiled = CompiledFunction(fn)
        with CallSites(_user_codes(fn)):
            compiled(*args, **kwargs)
        ops = [_dynamo_calls(gm) for gm in compiled.graphs]
        at_reads = {b.reason for b in compiled.graph_breaks}
        reasons = compiled.graph_breaks + [GraphBreakReason(r) for r in compiled.break_reasons if r not in at_reads]
        return ExplainOutput(compiled.graphs, len(compiled.graphs), len(compiled.graphs) - 1, reasons,
                             sum(map(len, ops)), ops)
    return run


def _dynamo_calls(gm):
    """The ``call_function`` nodes Dynamo's graph would hold for ``gm``'s operators: one per call
    the user's code made (``meta['user_call']``, ``user_code.CallSites``), an operator
    (``operator.mul``) or a function (``internals.sin``), none for a method (``x.relu()``,
    Dynamo's ``call_method``) or an operator no call of the user's made (a backward's)."""
    seen, targets = set(), []
    for n in getattr(gm, "segment", gm).graph.nodes:     # a segment's, as the trace cut it
        tag = n.meta.get("user_call") if n.op == "call_function" else None
        if tag is not None and tag[0] not in seen:
            seen.add(tag[0])
            if tag[1] is not None:
                targets.append(tag[1])
    return targets


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """``internals.compile(fn)`` or ``@internals.compile``: see CompiledFunction. torch.compile's
    settings are checked as torch checks them: a mode it does not know is an error, and so is an
    Inductor option outside torch's ``torch._inductor.config`` or of the wrong type
    (``_inductor.config``). The others are accepted and recorded in ``options``; this backend
    acts on none of them. ``disable=True`` returns ``fn`` itself."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    checked = check_options(options) if backend == "inductor" else options   # another backend's are its own
    if model is None:
        return lambda f: compile(f, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model if disable else CompiledFunction(model, checked, dynamic)
