"""Registering operators and kernels from Python (``torch/library.py``).

``Library(ns, "DEF")`` owns a namespace and defines operators in it from schemas;
``Library(ns, "IMPL")`` (or ``"FRAGMENT"``) adds kernels for dispatch keys to existing ones,
aten's included. What a Library registered is undone when it is destroyed, as torch's
registration handles are.
"""
import inspect
import weakref

from .aten import dispatcher
from .c10.dispatch_key import alias_runtime_keys

__all__ = ["Library", "fallthrough_kernel", "register_operator"]

_defined_namespaces = set()


def fallthrough_kernel():
    """Register this as a kernel to make its key a fallthrough for the operator."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def _caller():
    frame = inspect.stack()[2]
    return f"registered at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"


class Library:
    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        if kind == "DEF" and ns in _defined_namespaces:
            raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please "
                               "put all of your definitions in a single TORCH_LIBRARY block.")
        if kind == "DEF":
            _defined_namespaces.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defs, self._impls, self._fallbacks = [], [], []
        self._finalizer = weakref.finalize(self, _undo, ns if kind == "DEF" else None,
                                           self._defs, self._impls, self._fallbacks)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Declare an operator from its schema; returns its name (``foo`` or ``foo.overload``)."""
        op = dispatcher.define(self.ns, schema, _caller())
        self._defs.append(op.name)
        return op.name.split("::", 1)[1]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        """Register ``fn`` as ``op_name``'s kernel for ``dispatch_key`` (an alias key is allowed)."""
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        alias_runtime_keys(key)
        name = op_name.name() if hasattr(op_name, "name") else f"{self.ns}::{op_name}"
        if fn is fallthrough_kernel:
            kernel = dispatcher.KernelFunction(None, f"fallthrough {_caller()}", fallthrough=True)
        else:
            kernel = dispatcher.KernelFunction(fn, _caller(), with_keyset=with_keyset)
        op = dispatcher.operators.get(name)
        previous = op.kernels.get(key) if op is not None else None
        dispatcher.impl(name, key, kernel)
        self._impls.append((name, key, previous))

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        """A backend fallback for ``dispatch_key``: ``fn(op, keys, *args, **kwargs)`` for every operator."""
        key = dispatch_key or self.dispatch_key
        previous = dispatcher.backend_fallbacks.get(alias_runtime_keys(key).highest())
        if fn is fallthrough_kernel:
            kernel = dispatcher.KernelFunction(None, f"fallthrough {_caller()}", fallthrough=True)
        else:
            kernel = dispatcher.KernelFunction(fn, _caller(), boxed=True)
        dispatcher.register_fallback(key, kernel)
        self._fallbacks.append((key, previous))

    def _destroy(self):
        self._finalizer()


def _undo(ns, defs, impls, fallbacks):
    """Take back a Library's registrations, newest first; restore what they had replaced."""
    for key, previous in reversed(fallbacks):
        dispatcher.register_fallback(key, previous)
    for name, key, previous in reversed(impls):
        if name in dispatcher.operators:
            if previous is None:
                dispatcher.deregister(name, key)
            else:
                dispatcher.operators[name].kernels[key] = previous
                dispatcher.operators[name].update_table()
    for name in defs:
        dispatcher.deregister(name)
    _defined_namespaces.discard(ns)


def register_operator(native_functions, derivatives, kernels):
    """Add an operator from a ``native_functions.yaml`` snippet, a ``derivatives.yaml`` snippet
    and its kernels; returns a registration whose ``undo()`` takes it all back. The work is done
    by ``internals.codegen.operator_from_yaml.register_operator`` (imported on first use: it
    loads the code generator), or by the reader's version while one is plugged in."""
    from .codegen import operator_from_yaml  # the code generator loads torchgen: only on first use
    return operator_from_yaml.register_operator(native_functions, derivatives, kernels)
