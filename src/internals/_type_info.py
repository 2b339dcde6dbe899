"""``torch.finfo`` and ``torch.iinfo`` (``torch/csrc/TypeInfo.cpp``): the limits of a dtype.

The float limits are NumPy's for float16/32/64; bfloat16, which NumPy lacks, has float32's
exponent with 8 bits of precision; the float8 types' are c10's ``numeric_limits``. ``resolution``
is 10 to the minus the number of decimal digits the type holds, and the reprs print each number
with 6 significant digits, as torch's do.
"""
import math

import numpy as np

from .c10 import scalar_type as st

__all__ = ["finfo", "iinfo"]

_BFLOAT16 = {"bits": 16, "eps": 2.0 ** -7, "max": (2 - 2.0 ** -7) * 2.0 ** 127, "tiny": 2.0 ** -126}
# The float8 types' ``std::numeric_limits`` (``c10/util/Float8_*.h``): eps, the largest finite
# value, the smallest normal. e8m0fnu has no sign: its ``lowest`` (finfo's min) is its smallest
# value, 2**-127, and its eps is 1 (no mantissa bits: 1's neighbour is 2).
_FLOAT8 = {
    "float8_e4m3fn": {"bits": 8, "eps": 2.0 ** -3, "max": 448.0, "tiny": 2.0 ** -6},
    "float8_e5m2": {"bits": 8, "eps": 2.0 ** -2, "max": 57344.0, "tiny": 2.0 ** -14},
    "float8_e4m3fnuz": {"bits": 8, "eps": 2.0 ** -3, "max": 240.0, "tiny": 2.0 ** -7},
    "float8_e5m2fnuz": {"bits": 8, "eps": 2.0 ** -3, "max": 57344.0, "tiny": 2.0 ** -15},
    "float8_e8m0fnu": {"bits": 8, "eps": 1.0, "max": 2.0 ** 127, "tiny": 2.0 ** -127, "min": 2.0 ** -127},
}


class finfo:  # noqa: N801 -- torch's name
    def __init__(self, type=None):  # noqa: A002 -- torch's keyword
        type = st.get_default_dtype() if type is None else type
        if type.is_complex:     # a complex type's parts
            type = st.float32 if type.itemsize == 8 else st.float64
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if type is st.bfloat16:
            limits = _BFLOAT16
        elif type.is_float8:
            limits = _FLOAT8[type.name]
        else:
            info = np.finfo(getattr(np, type.name))      # (a float16 storage is viewed as uint16)
            limits = {"bits": info.bits, "eps": float(info.eps), "max": float(info.max), "tiny": float(info.tiny)}
        self.bits, self.eps, self.max, self.tiny = limits["bits"], limits["eps"], limits["max"], limits["tiny"]
        self.min, self.smallest_normal = limits.get("min", -self.max), self.tiny
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = None

    def __reduce_ex__(self, protocol):
        # torch's finfo is a C type with no pickle support: pickle and copy refuse it alike
        raise TypeError("cannot pickle 'torch.finfo' object")

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 -- torch's name
    def __init__(self, type):  # noqa: A002 -- torch's keyword
        if type is st.bool_ or type.is_floating_point or type.is_complex:
            raise TypeError(f"internals.{type.name} is not supported by torch.iinfo")
        info = np.iinfo(type.numpy_type)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = None

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'torch.iinfo' object")

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
