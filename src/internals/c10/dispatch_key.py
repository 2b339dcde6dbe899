"""Dispatch keys and key sets (``c10/core/DispatchKey.h``, ``c10/core/DispatchKeySet.h``).

A key's value is its priority: the dispatcher runs the kernel of the highest key in a call's
set. The keys here are the ones the course uses, in torch's relative order (read it from
``torch._C._dispatch_keyset_full()``: lowest first). torch packs backends and functionalities
into one 64-bit word; one bit per key is enough to show the idea.
"""
from enum import IntEnum

__all__ = ["DispatchKey", "DispatchKeySet", "ALIAS_KEYS", "BACKEND_KEYS", "AUTOGRAD_KEYS", "AUTOCAST_KEYS",
           "alias_runtime_keys", "autograd_key_for", "autocast_key_for", "backend_key_for"]


class DispatchKey(IntEnum):
    CPU = 1
    CUDA = 2
    Meta = 3
    SparseCPU = 4
    SparseCUDA = 5
    SparseCsrCPU = 6        # the compressed layouts (CSR, CSC, BSR, BSC): SparseCsrTensorImpl
    SparseCsrCUDA = 7
    BackendSelect = 8
    Python = 9
    Conjugate = 10          # the lazy conjugate bit: ``conj()`` views carry it (ConjugateFallback.cpp)
    Negative = 11           # the lazy negative bit: ``_neg_view``, ``conj().imag`` (NegateFallback.cpp)
    ADInplaceOrView = 12
    AutogradOther = 13
    AutogradCPU = 14
    AutogradCUDA = 15
    AutogradMeta = 16
    AutocastCPU = 17
    AutocastCUDA = 18
    PythonTLSSnapshot = 19


class _SetsByBits(dict):
    """Every key set made so far, by its bits. Sets are immutable, so each is made once and
    shared: the dispatcher asks for several on every call (20 keys: at most 2**20 of them).
    A set already made is a plain dict lookup, in C; only a new one runs ``__missing__``."""

    def __missing__(self, bits):
        out = object.__new__(DispatchKeySet)
        out.bits = bits
        self[bits] = out      # two threads may both make one: either is kept, both are equal
        return out


_BY_BITS = _SetsByBits()


class DispatchKeySet:
    """An immutable set of dispatch keys, kept as a bit mask like torch's."""
    __slots__ = ("bits",)

    def __init__(self, keys=()):
        bits = 0
        for k in ([keys] if isinstance(keys, DispatchKey) else keys):
            bits |= 1 << int(k)
        self.bits = bits

    # ``DispatchKeySet._from_bits(bits)``: the set of these bits (see ``_SetsByBits``), without
    # a Python frame: the dispatcher and the guards call it several times on every operator call.
    _from_bits = staticmethod(_BY_BITS.__getitem__)

    def __or__(self, other):
        return DispatchKeySet._from_bits(self.bits | other.bits)

    def __and__(self, other):
        return DispatchKeySet._from_bits(self.bits & other.bits)

    def __sub__(self, other):
        return DispatchKeySet._from_bits(self.bits & ~other.bits)

    def __contains__(self, key):
        return bool(self.bits >> int(key) & 1)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self.bits == other.bits

    def __hash__(self):
        return hash(self.bits)

    def __bool__(self):
        return self.bits != 0

    def __iter__(self):
        """Lowest priority first, as torch prints them."""
        return (k for k in DispatchKey if k in self)

    @classmethod
    def full(cls):
        return cls(DispatchKey)

    def below(self, key):
        """The keys of this set that rank below ``key``: where a kernel at ``key`` redispatches to."""
        return DispatchKeySet._from_bits(self.bits & ((1 << int(key)) - 1))

    def descending(self):
        return sorted(self, reverse=True)

    def highest(self):
        return max(self, default=None)

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in self)})"


BACKEND_KEYS = DispatchKeySet([DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta,
                               DispatchKey.SparseCPU, DispatchKey.SparseCUDA,
                               DispatchKey.SparseCsrCPU, DispatchKey.SparseCsrCUDA])
AUTOGRAD_KEYS = DispatchKeySet([DispatchKey.AutogradOther, DispatchKey.AutogradCPU, DispatchKey.AutogradCUDA,
                                DispatchKey.AutogradMeta])
AUTOCAST_KEYS = DispatchKeySet([DispatchKey.AutocastCPU, DispatchKey.AutocastCUDA])
PYTHON_KEYS = DispatchKeySet([DispatchKey.Python, DispatchKey.PythonTLSSnapshot])   # added while a mode is active

# Alias keys name a group of runtime keys at registration time; no tensor carries them
# (``c10/core/DispatchKey.h``, "Alias dispatch keys"). A kernel registered to an alias fills the
# dispatch table entry of each key in its group that has no kernel of its own.
ALIAS_KEYS = {
    "Autograd": AUTOGRAD_KEYS,
    "CompositeExplicitAutograd": BACKEND_KEYS,
    # the dense backends only: a kernel that makes a strided tensor (``new_empty_strided``)
    "CompositeExplicitAutogradNonFunctional": DispatchKeySet([DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta]),
    "CompositeImplicitAutograd": BACKEND_KEYS | AUTOGRAD_KEYS,
}


def alias_runtime_keys(name):
    """The runtime keys a registration key (alias or not) stands for."""
    return ALIAS_KEYS[name] if name in ALIAS_KEYS else DispatchKeySet(DispatchKey[name])


def backend_key_for(device_type, sparse=False, compressed=False):
    """The backend key of a device and layout: CPU, CUDA, SparseCPU, SparseCUDA (the COO layout),
    SparseCsrCPU, SparseCsrCUDA (the compressed layouts) or Meta."""
    if device_type == "meta":
        return DispatchKey.Meta
    base = "CPU" if device_type == "cpu" else "CUDA"
    return DispatchKey[("SparseCsr" if compressed else "Sparse" if sparse else "") + base]


def autograd_key_for(device_type):
    return {"cpu": DispatchKey.AutogradCPU, "cuda": DispatchKey.AutogradCUDA,
            "meta": DispatchKey.AutogradMeta}.get(device_type, DispatchKey.AutogradOther)


def autocast_key_for(device_type):
    return {"cpu": DispatchKey.AutocastCPU, "cuda": DispatchKey.AutocastCUDA}.get(device_type)
