"""The negative bit's boxed fallback (``aten/src/ATen/native/NegateFallback.cpp``).

``_neg_view(x)`` copies nothing: it returns a view whose key set holds the ``Negative`` key,
and the values it shows are the negatives of the stored ones. torch sets the bit where a
negation comes free: the imaginary parts of a lazy conjugate (``x.conj().imag``) are the
stored ones, shown negated. The fallback is the conjugate bit's (``math_bits_fallback.py``)
with the other key; this module names the key and its fallthroughs.
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

__all__ = ["register_negate_fallback", "negation_fallback", "NEGATIVE_FALLTHROUGH"]

# torch's list, cut to the operators whose kernels here read the bit or no values at all:
# neg_ negates the stored values in place, which negates the shown ones too. (torch's
# linalg_svd and linalg_solve_triangular copy their input first, resolving the bit; those
# here read storage as it is, so they keep the fallback.)
NEGATIVE_FALLTHROUGH = (*VIEW_FNS, *TENSOR_UTILITIES_AND_CONSTRUCTORS, *BOTH_BITS, "neg_")


def negation_fallback(op, keys, *args, **kwargs):
    """``negationFallback``: the negative bit's ``MathOpFallback``."""
    return fallback_impl(DispatchKey.Negative, "negation", lambda t: t._impl.is_neg(), op, keys, args, kwargs)


def register_negate_fallback():
    """After the native operators: the fallthroughs go to those of torch's list defined here."""
    register_fallback("Negative", KernelFunction(negation_fallback, boxed=True))
    register_fallthroughs("Negative", NEGATIVE_FALLTHROUGH)
