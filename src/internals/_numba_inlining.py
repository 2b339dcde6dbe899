"""Numba's inliner, made linear in the size of what it inlines: a cold compile's time, not its code.

The kernels' small helpers are declared ``@njit(inline="always")`` (``aten/native/cpu/reduce.py``),
so each (op, dtype) pair compiles to straight-line code. Numba inlines such a call by
deep-copying the callee's IR, one block at a time (``InlineWorker.inline_ir`` in
``numba/core/inline_closurecall.py``). Each block's copy starts a fresh ``memo``, so each block
copies the callee's whole variable ``Scope`` again, every variable in it with it: blocks times
variables. A helper that has inlined helpers of its own (the cascade sum's five levels) has
hundreds of each, and copying them took a third of the cold compile of the reduction kernels
(numba/numba#8989 reports inlining's deep copies ruling compile times).

Here the scope is copied once per copy of the IR and shared by its blocks. Numba keeps only one
scope of the callee anyway: the inliner takes the first block's copy (``_get_all_scopes``
compares scopes by value, and every block's copy is equal) and renames the callee's variables in
it alone; the other blocks' copies were left stale. The machine code is the same, so the kernel
cache is too.
"""
import copy

from numba.core import inline_closurecall, ir

_inline_ir = inline_closurecall.InlineWorker.inline_ir


def _shared_scope_copy(copies):
    """A ``Scope.__deepcopy__`` that makes one copy of each scope while ``copies`` lives: the first
    block's deepcopy builds it (with that block's memo, so that block's variables are its own), the
    other blocks' deepcopies take it."""
    def deepcopy_scope(scope, memo):
        if id(scope) in memo:
            return memo[id(scope)]
        if id(scope) not in copies:
            twin = ir.Scope.__new__(ir.Scope)
            memo[id(scope)] = twin
            copies[id(scope)] = (scope, twin)     # the original is kept alive, so its id is not reused
            twin.__dict__.update(copy.deepcopy(scope.__dict__, memo))
        return copies[id(scope)][1]
    return deepcopy_scope


def inline_ir(self, *args, **kwargs):
    """``InlineWorker.inline_ir`` with each scope copied once per call (Numba compiles under its
    global compiler lock, so no other thread deep-copies a scope meanwhile)."""
    before = ir.Scope.__dict__.get("__deepcopy__")
    ir.Scope.__deepcopy__ = _shared_scope_copy({})
    try:
        return _inline_ir(self, *args, **kwargs)
    finally:
        if before is None:
            del ir.Scope.__deepcopy__
        else:
            ir.Scope.__deepcopy__ = before


def install():
    """Put ``inline_ir`` in place of Numba's (once)."""
    inline_closurecall.InlineWorker.inline_ir = inline_ir
