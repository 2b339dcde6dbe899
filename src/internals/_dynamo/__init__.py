"""``internals.compile``: guards, a cache of compiled graphs, recompiles (``torch/_dynamo``).

Dynamo reads a function's bytecode, captures the tensor operations into a graph, and installs
guards -- cheap checks on the inputs (shape, stride, dtype, device, requires_grad, the values of
Python constants) under which the captured graph is valid. A call that passes the guards of a
cached entry runs its compiled code; one that fails them all is traced and compiled again.

This version traces at call time with ``make_fx`` instead of reading bytecode, so it sees the
operators, not the Python: a data-dependent ``if`` is decided by the first inputs (Dynamo would
guard on it or break the graph there).
"""
import threading

from .._decomp import decomposition_table
from .._inductor import compile_fx
from .._tensor import Tensor
from ..autograd import is_grad_enabled
from ..fx.experimental.proxy_tensor import make_fx
from ..fx.passes import functionalize

__all__ = ["CompiledFunction", "compile", "guard_key"]


def guard_key(args):
    """What a cached graph assumes about its inputs: per tensor its shape, strides, storage offset,
    dtype, device and requires_grad; per Python value its type and value."""
    key = []
    for a in args:
        if isinstance(a, Tensor):
            key.append(("tensor", tuple(a.shape), a.stride(), a.storage_offset(), a.dtype, str(a.device),
                        a.requires_grad))
        else:
            key.append(("value", type(a), a))
    return tuple(key)


class CompiledFunction:
    """``fn`` compiled once per guard key. ``recompiles`` counts the traces; ``kernels`` holds the
    generated sources of the last compiled graph, and ``graph_module`` its graph."""

    def __init__(self, fn):
        self.fn, self.cache, self.recompiles = fn, {}, 0
        self.kernels, self.graph_module = [], None
        self._lock = threading.Lock()
        self.__name__ = getattr(fn, "__name__", "compiled")

    def __call__(self, *args):
        key = guard_key(args)
        entry = self.cache.get(key)
        if entry is None:
            with self._lock:
                entry = self.cache.get(key)
                if entry is None:
                    entry = self.cache[key] = self._compile(args)
        return entry(*args)

    def _compile(self, args):
        self.recompiles += 1
        tensors = [a for a in args if isinstance(a, Tensor)]
        if not tensors or (is_grad_enabled() and any(t.requires_grad for t in tensors)):
            # A differentiable compiled graph needs a traced backward too (torch's AOTAutograd):
            # not built here, so these inputs run eagerly.
            return self.fn
        gm = functionalize(make_fx(self.fn, decomposition_table)(*args))
        compiled = compile_fx(gm, tensors[0].device.type)
        self.graph_module, self.kernels = gm, compiled.kernels
        return compiled


def compile(fn=None, **options):
    """``internals.compile(fn)`` or ``@internals.compile``: see CompiledFunction. ``options``
    (torch's ``mode``, ``fullgraph``, ...) are accepted and ignored."""
    if fn is None:
        return lambda f: CompiledFunction(f)
    return CompiledFunction(fn)
