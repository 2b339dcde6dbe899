"""The dispatcher: every operator call goes through here (``aten/src/ATen/core/dispatch/``).

An operator is a schema (``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``)
and a *dispatch table*: for each runtime dispatch key, the kernel that runs when that key is
the highest in a call's key set. Kernels are registered per key, or per alias key
(``CompositeExplicitAutograd``, ``CompositeImplicitAutograd``, ``Autograd``) that fills the
entries of a group of keys; a *backend fallback* fills one key for every operator; a
*fallthrough* kernel means "nothing to do here, go on to the next key". The table is recomputed
whenever a registration changes (``OperatorEntry::updateDispatchTable``).

A call's key set is the union of its tensor arguments' key sets, plus the thread-local
included keys, minus the excluded ones, minus the keys whose entry is a fallthrough. The
highest key picks the kernel. A kernel that does its part and hands over to the layers below
(autograd, ADInplaceOrView, Python) *redispatches* with the keys below its own.
"""
import contextlib
import functools
import inspect
import os
import threading
import warnings

from torchgen.model import FunctionSchema

from .._tensor_base import TensorBase
from ..c10.dispatch_key import ALIAS_KEYS, DispatchKey, DispatchKeySet, alias_runtime_keys
from ..c10.local_dispatch_key_set import tls
from ..c10.trace_log import TraceLog
from ._threads import ONE_AT_A_TIME, ONE_CUDA_KERNEL

__all__ = ["OperatorHandle", "KernelFunction", "dispatch_key", "define", "impl", "deregister", "register_fallback",
           "find", "call", "trace", "operators", "backend_fallbacks", "add_observer", "remove_observer",
           "start_range", "end_range"]

operators = {}           # "aten::add.Tensor" -> OperatorHandle
backend_fallbacks = {}   # DispatchKey -> KernelFunction
_observers = []          # RecordFunction callbacks: (start(op, args), end(token))


def _where(fn):
    """A kernel's ``registered at`` line: its file (relative to the package) and line."""
    if fn is None:
        return "internals"
    fn = inspect.unwrap(getattr(fn, "func", fn))
    code = getattr(fn, "__code__", None)       # read from the code object: no source file is parsed
    if code is None:
        return getattr(fn, "__module__", "python")
    path, line = code.co_filename, code.co_firstlineno
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return f"{os.path.relpath(path, root) if path.startswith(root) else os.path.basename(path)}:{line}"


_KEY_OF_BIT = {int(k): k for k in DispatchKey}    # DispatchKey(i) without the Enum call's cost
_EXPLICIT = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")   # backend-kernel aliases
# their kernels launch on the simulator
_SIMULATED_KEYS = (DispatchKey.CUDA, DispatchKey.SparseCUDA, DispatchKey.SparseCsrCUDA)


def dispatch_key(key_sets, included, excluded, fallthrough):
    """The key whose kernel a call runs first, or None when no key is left
    (``DispatchKeyExtractor::getDispatchKeySetUnboxed`` in ``DispatchKeyExtractor.h``, then
    ``highestPriorityTypeId``): the union of the tensor arguments' key sets, plus the thread's
    ``included`` keys, minus its ``excluded`` keys (``LocalDispatchKeySet.h``), minus the keys
    whose entry in the operator's table is a ``fallthrough`` (``OperatorEntry``), highest key.

    ``OperatorHandle.__call__`` computes the same on bit masks, inline, because it runs on every
    call; it calls this function only when a reader's version is plugged in in its place
    (``internals.exercises.use_mine("dispatch_key", ...)``).
    """
    keys = DispatchKeySet()
    for key_set in key_sets:
        keys = keys | key_set
    # the exclusion comes after the inclusion: an excluded key stays out even when included
    return (((keys | included) - excluded) - fallthrough).highest()


# The package's own rule, kept where ``use_mine`` does not rebind it (it rebinds module
# attributes that hold the function itself): ``__call__`` compares with it to notice a swap.
_PACKAGE_RULE = (dispatch_key,)


def _tensor_key_sets(args, kwargs):
    sets = []
    for a in (*args, *kwargs.values()):
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(t, TensorBase):
                sets.append(t._impl.key_set)
    return sets


class KernelFunction:
    """A registered kernel (``c10::KernelFunction``).

    ``fallthrough`` kernels are never called: their key is masked out of the call's key set.
    ``with_keyset`` kernels get the call's DispatchKeySet first, to redispatch with.
    ``boxed`` kernels (backend fallbacks) serve every operator, so they get the operator too.
    """
    __slots__ = ("fn", "debug", "with_keyset", "boxed", "fallthrough")

    def __init__(self, fn, debug=None, *, with_keyset=False, boxed=False, fallthrough=False):
        self.fn = fn
        self.debug = debug or f"registered at {_where(fn)}"
        self.with_keyset, self.boxed, self.fallthrough = with_keyset, boxed, fallthrough


class OperatorHandle:
    """One operator: its schema, its registered kernels and its computed dispatch table."""

    def __init__(self, name):
        """``name``: ``ns::op.overload`` (aten::add.Tensor). The schema comes with ``define``; until
        then the operator is known by name only and can hold kernels but not be called: torch
        accepts ``m.impl`` before ``m.def`` (an ``OperatorEntry`` without a schema)."""
        self.name = name
        self.namespace, _, qualified = name.partition("::")
        self.overload = qualified.partition(".")[2]
        self.schema = self.debug = None
        self.kernels = {}          # registration key ("CPU", "Autograd", ...) -> KernelFunction
        self.table = {}            # DispatchKey -> (KernelFunction, kind)
        self.fallthrough_bits = 0  # keys whose table entry is a fallthrough
        self.runnable = (0, ())    # fallthrough_bits, and per key's bit (function, how it is called)
        self.update_table()

    def __repr__(self):
        return f"OperatorHandle({self.name})"

    # ------------------------------------------------------------------ the dispatch table
    def compute_entry(self, key):
        """The kernel for runtime ``key``, by ``OperatorEntry::computeDispatchTableEntryWithDebug``'s order."""
        k = self.kernels
        if key.name in k:
            return k[key.name], "kernel"
        backends = ALIAS_KEYS["CompositeExplicitAutograd"]
        explicit = [alias for alias in _EXPLICIT if alias in k]
        for alias in explicit:
            if key in ALIAS_KEYS[alias]:
                return k[alias], "default backend kernel"
        if "CompositeImplicitAutograd" in k and key in ALIAS_KEYS["CompositeImplicitAutograd"]:
            # An autograd key takes the decomposition only if its backend has no kernel of its own:
            # a backend kernel needs the autograd formula, not a decomposition.
            has_backend = any(b.name in k for b in backends) or bool(explicit)
            if key in backends or not has_backend:
                return k["CompositeImplicitAutograd"], "math kernel"
        if "Autograd" in k and key in ALIAS_KEYS["Autograd"]:
            return k["Autograd"], "autograd kernel"
        if key in backend_fallbacks:
            return backend_fallbacks[key], "backend fallback"
        return None

    def update_table(self):
        if _stale is not None:          # filling the tables at import: computed once, at the end
            _stale[self] = None
            return
        table, fallthrough_bits = {}, 0
        for key in DispatchKey:
            entry = self.compute_entry(key)
            if entry is not None:
                table[key] = entry
                if entry[0].fallthrough:
                    fallthrough_bits |= 1 << int(key)
        self.table, self.fallthrough_bits = table, fallthrough_bits
        # ``_run`` reads the fallthroughs and the kernels from this one attribute: a call racing a
        # registration on another thread sees the old pair or the new one, never half of each.
        self.runnable = (fallthrough_bits, _calls_by_bit(table))

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        """``Dispatcher::call``: the call's key set from its tensors and the thread's included and
        excluded keys (``DispatchKeyExtractor``), then the kernel of its highest key."""
        bits = 0
        for a in args:
            if isinstance(a, TensorBase):
                bits |= a._impl.key_set.bits
            elif isinstance(a, (list, tuple)):
                for t in a:
                    if isinstance(t, TensorBase):
                        bits |= t._impl.key_set.bits
        if kwargs:
            for a in kwargs.values():
                if isinstance(a, TensorBase):
                    bits |= a._impl.key_set.bits
        bits = (bits | tls.included.bits) & ~tls.excluded.bits
        if dispatch_key is not _PACKAGE_RULE[0]:        # a reader's rule is plugged in
            bits = self._bits_for_readers_key(bits, args, kwargs)
        if ONE_AT_A_TIME is not None or _observers:     # the rare cases, off the common road
            return self._call_guarded(bits, args, kwargs)
        # ``_run``'s common road, written out here and in ``redispatch``: every operator call
        # passes both, and a Python frame costs as much as the lookup itself
        fallthrough_bits, calls = self.runnable
        live = bits & ~fallthrough_bits
        if live and _trace_log.entries is None:
            fn, form = calls[live.bit_length() - 1]
            if form is _PLAIN:
                return fn(*args, **kwargs) if kwargs else fn(*args)
            if form is _WITH_KEYSET:        # no ``**kwargs`` when there are none: it copies a dict
                return (fn(DispatchKeySet._from_bits(live), *args, **kwargs) if kwargs
                        else fn(DispatchKeySet._from_bits(live), *args))
        return self._run(bits, args, kwargs)

    def _bits_for_readers_key(self, bits, args, kwargs):
        """The call's keys, cut so that the plugged-in ``dispatch_key``'s answer is the highest:
        its key, and the call's keys below it (what that kernel redispatches to). None leaves no
        key (the undefined entry); a fallthrough key hands the call on, as a fallthrough does."""
        key = dispatch_key(_tensor_key_sets(args, kwargs), tls.included, tls.excluded,
                           DispatchKeySet._from_bits(self.fallthrough_bits))
        if key is None:
            return 0
        key = int(DispatchKey[key] if isinstance(key, str) else key)
        return (bits & ((1 << key) - 1)) | (1 << key)

    def _call_guarded(self, bits, args, kwargs):
        if ONE_AT_A_TIME is not None:       # Numba's workqueue layer: see ``_threads.py``
            with ONE_AT_A_TIME:
                return self._call_observed(bits, args, kwargs)
        return self._call_observed(bits, args, kwargs)

    def redispatch(self, key_set, *args, **kwargs):
        """Run the kernel of the highest key in ``key_set`` (``Dispatcher::redispatch``)."""
        fallthrough_bits, calls = self.runnable      # ``_run``'s common road, as in ``__call__``
        live = key_set.bits & ~fallthrough_bits
        if live and _trace_log.entries is None:
            fn, form = calls[live.bit_length() - 1]
            if form is _PLAIN:
                return fn(*args, **kwargs) if kwargs else fn(*args)
            if form is _WITH_KEYSET:
                return (fn(DispatchKeySet._from_bits(live), *args, **kwargs) if kwargs
                        else fn(DispatchKeySet._from_bits(live), *args))
        return self._run(key_set.bits, args, kwargs)

    def _run(self, bits, args, kwargs):
        fallthrough_bits, calls = self.runnable
        bits &= ~fallthrough_bits
        if bits == 0:
            return self._run_undefined(args, kwargs)
        # The highest set bit is the highest priority key; ``calls`` has its kernel by bit, with
        # the way to call it worked out when the table was, so that the usual two kinds of
        # kernel are called here straight away.
        fn, form = calls[bits.bit_length() - 1]
        if _trace_log.entries is None:
            if form is _PLAIN:
                return fn(*args, **kwargs) if kwargs else fn(*args)
            if form is _WITH_KEYSET:
                return fn(DispatchKeySet._from_bits(bits), *args, **kwargs)
        return self._run_entry(bits, args, kwargs)

    def _run_entry(self, bits, args, kwargs):
        """The call of ``_run`` by the table's entry, for all kernels: boxed fallbacks, kernels
        that launch on the CUDA simulator, a missing kernel, and any call while tracing."""
        key = _KEY_OF_BIT[bits.bit_length() - 1]
        entry = self.table.get(key)
        if entry is None:
            raise self._missing(key)
        kernel = entry[0]
        if _trace_log.entries is not None:
            _trace(self, key, entry)
        if kernel.boxed:
            args = (self, DispatchKeySet._from_bits(bits), *args)
        elif kernel.with_keyset:
            args = (DispatchKeySet._from_bits(bits), *args)
        if ONE_CUDA_KERNEL is not None and key in _SIMULATED_KEYS:      # see ``_threads.py``
            with ONE_CUDA_KERNEL:
                return kernel.fn(*args, **kwargs)
        return kernel.fn(*args, **kwargs)

    def _run_undefined(self, args, kwargs):
        """No key at all: a call with no tensor argument and no factory's BackendSelect kernel
        (``profiler::_record_function_enter_new``). torch's table has an entry for the Undefined
        key, filled from the composite kernels; so is this one."""
        for alias in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
            kernel = self.kernels.get(alias)
            if kernel is not None:
                return kernel.fn(*args, **kwargs)
        raise self._missing(None)

    def _call_observed(self, bits, args, kwargs):
        tokens = [start(self, args) for start, _ in _observers]
        try:
            return self._run(bits, args, kwargs)
        finally:
            for (_, end), token in zip(reversed(_observers), reversed(tokens)):
                end(token)

    def _missing(self, key):
        have = [k.name for k in DispatchKey if k in self.table and self.table[k][1] == "kernel"]
        return NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{key.name if key else 'Undefined'}' backend. "
            f"'{self.name}' is only available for these backends: [{', '.join(have)}].")


# How ``_run`` calls an entry's kernel: as it is, with the call's key set first, or through
# ``_run_entry`` (boxed fallbacks, simulated CUDA kernels, no kernel at all).
_PLAIN, _WITH_KEYSET, _BY_ENTRY = "plain", "with keyset", "by entry"


def _calls_by_bit(table):
    """``(kernel function, form)`` for each key's bit, from an operator's dispatch table."""
    calls = [(None, _BY_ENTRY)] * (max(_KEY_OF_BIT) + 1)
    for key, (kernel, _) in table.items():
        if kernel.boxed or (ONE_CUDA_KERNEL is not None and key in _SIMULATED_KEYS):
            continue
        calls[int(key)] = (kernel.fn, _WITH_KEYSET if kernel.with_keyset else _PLAIN)
    return tuple(calls)


# ---------------------------------------------------------------------- registration
# The operators whose tables wait to be computed, in registration order, while the package fills
# its tables at import (``tables_computed_once``); None otherwise, when each registration
# updates its operator's table at once.
_stale = None


@contextlib.contextmanager
def tables_computed_once():
    """Registrations inside only mark their operators' tables stale; each stale table is computed
    once on the way out. An operator gets a kernel for each of its keys and every operator a new
    table for each backend fallback: computed after each, that was a quarter of ``import
    internals``. No operator may be called inside (its table may be empty)."""
    global _stale
    if _stale is not None:              # inside another: the outermost computes them
        yield
        return
    _stale = {}
    try:
        yield
    finally:
        stale, _stale = _stale, None
        for op in stale:
            op.update_table()


# Counts the schemas given and taken away, so that what is looked up by name over all the operators
# (the overloads of ``torch.ops.aten.add``) can be kept until an operator gains or loses its schema.
schema_generation = 0


def _schemas_changed():
    global schema_generation
    schema_generation += 1


def define(namespace, schema, debug=None):
    """Declare an operator from its schema (``TORCH_LIBRARY``'s ``m.def``): its text, or the
    FunctionSchema already parsed from it (the native functions' registration parses each once)."""
    parsed = schema if isinstance(schema, FunctionSchema) else FunctionSchema.parse(schema)
    name = f"{namespace}::{parsed.name}"
    op = operators.get(name)
    if op is not None and op.schema is not None:
        raise RuntimeError(f"Tried to register an operator ({name}{str(parsed)[len(str(parsed.name)):]}) "
                           "with the same name and overload name multiple times.")
    if op is None:
        op = operators[name] = OperatorHandle(name)
    op.schema, op.debug = parsed, debug or "registered at internals"
    _schemas_changed()
    if namespace == "aten":
        aten_ops[str(parsed.name)] = op
    return op


def impl(name, key, kernel):
    """Register ``kernel`` (a KernelFunction) for registration key ``key`` of operator ``name``;
    an operator not defined yet is created without a schema, to receive it later."""
    alias_runtime_keys(key)            # rejects an unknown key name with a KeyError
    op = operators.get(name) or aten_ops.get(name)
    if op is None:
        name = name if "::" in name else f"aten::{name}"
        op = operators[name] = OperatorHandle(name)
    if key in op.kernels:
        warnings.warn(f"Overriding a previously registered kernel for the same operator and the same "
                      f"dispatch key\n  operator: {op.name}\n  dispatch key: {key}\n  previous kernel: "
                      f"{op.kernels[key].debug}\n       new kernel: {kernel.debug}", UserWarning, stacklevel=3)
    op.kernels[key] = kernel
    op.update_table()


# ---------------------------------------------------------------------- the Python dispatcher
# torch's Python dispatcher (``torch/_dispatch/python.py``, ``OpOverload.py_impl``): some composite
# operators have a second kernel written in Python, which runs in place of the C++ one while the
# Python dispatcher is on -- as ``make_fx(tracing_mode="symbolic")`` turns it on -- so that their
# size arithmetic is traced. Only the operators given one pay for the check.
_python_dispatcher = threading.local()


@contextlib.contextmanager
def enable_python_dispatcher():
    """Run the operators' Python kernels (``py_impl``) in place of their own, on this thread."""
    before = getattr(_python_dispatcher, "on", False)
    _python_dispatcher.on = True
    try:
        yield
    finally:
        _python_dispatcher.on = before


def python_dispatcher_enabled():
    return getattr(_python_dispatcher, "on", False)


def py_impl(name, key, fn):
    """``fn`` as the Python kernel of operator ``name`` at registration key ``key``: what runs
    there under ``enable_python_dispatcher``; the registered kernel runs otherwise, as before.
    A kernel that takes the call's key set (an Autograd kernel) keeps it; ``fn`` does not get it:
    what it calls dispatches afresh, as the Python dispatcher's kernels do."""
    op = operators.get(name) or aten_ops[name]
    kernel = op.kernels[key]
    if kernel.boxed:
        raise NotImplementedError(f"a Python kernel for {op.name} at {key} would replace a fallback")
    own = kernel.fn

    if kernel.with_keyset:
        @functools.wraps(own)
        def either(keyset, *args, **kwargs):
            return fn(*args, **kwargs) if python_dispatcher_enabled() else own(keyset, *args, **kwargs)
    else:
        @functools.wraps(own)
        def either(*args, **kwargs):
            return (fn if python_dispatcher_enabled() else own)(*args, **kwargs)
    op.kernels[key] = KernelFunction(either, kernel.debug, with_keyset=kernel.with_keyset)
    op.update_table()
    return fn


def deregister(name, key=None):
    """Remove a kernel (or, with no key, the whole operator): a Library going away undoes its work."""
    op = operators.get(name)
    if op is None:
        return
    if key is None:              # the schema goes; kernels other libraries registered stay, as in torch
        aten_ops.pop(str(op.schema.name), None)
        op.schema = op.debug = None
        _schemas_changed()
    else:
        op.kernels.pop(key, None)
        op.update_table()
    if op.schema is None and not op.kernels:
        del operators[name]


def register_fallback(key, kernel):
    """A backend fallback: ``key``'s kernel for every operator without one (``m.fallback``)."""
    if kernel is None:
        backend_fallbacks.pop(DispatchKey[key], None)
    else:
        backend_fallbacks[DispatchKey[key]] = kernel
    for op in operators.values():
        op.update_table()


aten_ops = {}   # "add.Tensor" -> the aten operator, for the frontend's calls


def find(name):
    """An operator by ``ns::name.overload`` (or, for aten, just ``name.overload``)."""
    op = operators.get(name) or aten_ops.get(name)
    if op is None or op.schema is None:
        raise RuntimeError(f"Could not find schema for {name}")
    return op


def call(name, *args, **kwargs):
    """Call the aten operator ``name`` (``add.Tensor``): what the Tensor methods do."""
    return aten_ops[name](*args, **kwargs)


# ---------------------------------------------------------------------- observers
def add_observer(start, end):
    """RecordFunction: ``start(op, args)`` before each top-level operator call, ``end(token)`` after."""
    _observers.append((start, end))


def remove_observer(start, end):
    _observers.remove((start, end))


def start_range(name):
    """A labelled range (``record_function``) starts: each observer's ``start(name, ())``.
    Returns what ``end_range`` needs."""
    return [(end, start(name, ())) for start, end in _observers]


def end_range(tokens):
    for end, token in reversed(tokens):
        end(token)


_trace_log = TraceLog()


def _trace(op, key, entry):
    _trace_log.add((op.name, key.name, entry[1], getattr(entry[0].fn, "__name__", "?")))


def trace():
    """Record where calls go: ``(operator, key, kind of entry, kernel)`` for every kernel run."""
    return _trace_log.recording()
