"""The conjugate bit's boxed fallback (``aten/src/ATen/ConjugateFallback.cpp``).

``conj()`` of a complex tensor copies nothing: it returns a view whose key set holds the
``Conjugate`` key, and the values it shows are the conjugates of the stored ones. How the
fallback resolves the bit for the operators that do not read it is shared with the negative
bit (``math_bits_fallback.py``); this module names the key and its fallthroughs.
"""
from ..c10.dispatch_key import DispatchKey
from .dispatcher import KernelFunction, register_fallback
from .math_bits_fallback import (
    BOTH_BITS,
    TENSOR_UTILITIES_AND_CONSTRUCTORS,
    VIEW_FNS,
    fallback_impl,
    register_fallthroughs,
)

__all__ = ["register_conjugate_fallback", "conjugate_fallback", "CONJUGATE_FALLTHROUGH"]

# torch's list, cut to the operators whose kernels here read the bit or no values at all:
# conj_physical_ conjugates the stored values in place, which conjugates the shown ones too.
# (torch's mm, bmm, addmm, baddbmm, dot, vdot and two linalg kernels read the bit in their
# BLAS calls; those here read storage as it is, so they keep the fallback.)
CONJUGATE_FALLTHROUGH = (*VIEW_FNS, *TENSOR_UTILITIES_AND_CONSTRUCTORS, *BOTH_BITS, "conj_physical_")


def conjugate_fallback(op, keys, *args, **kwargs):
    """``conjugateFallback``: the conjugate bit's ``MathOpFallback``."""
    return fallback_impl(DispatchKey.Conjugate, "Conjugate", lambda t: t._impl.is_conj(), op, keys, args, kwargs)


def register_conjugate_fallback():
    """After the native operators: the fallthroughs go to those of torch's list defined here."""
    register_fallback("Conjugate", KernelFunction(conjugate_fallback, boxed=True))
    register_fallthroughs("Conjugate", CONJUGATE_FALLTHROUGH)
