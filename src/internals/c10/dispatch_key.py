"""Dispatch keys and key sets (``c10/core/DispatchKey.h``, ``DispatchKeySet.h``).

A key's value is its priority: the dispatcher runs the kernel of the highest key in a call's
set. The order of the keys listed here is torch's (``torch._C._dispatch_keyset_full()``).
"""
from enum import IntEnum

__all__ = ["DispatchKey", "DispatchKeySet"]


class DispatchKey(IntEnum):
    CPU = 1
    CUDA = 2
    Meta = 3


class DispatchKeySet:
    __slots__ = ("bits",)

    def __init__(self, keys=()):
        self.bits = 0
        for k in keys:
            self.bits |= 1 << int(k)

    def __or__(self, other):
        out = DispatchKeySet()
        out.bits = self.bits | other.bits
        return out

    def __contains__(self, key):
        return bool(self.bits >> int(key) & 1)

    def __bool__(self):
        return self.bits != 0

    def descending(self):
        return [k for k in sorted(DispatchKey, reverse=True) if k in self]

    def highest(self):
        keys = self.descending()
        return keys[0] if keys else None

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in reversed(self.descending()))})"
