"""``_local_scalar_dense`` (``aten/src/ATen/native/Scalar.cpp``): a one-element tensor's value as
a Python number. ``item()`` calls it, and so do ``float(t)``, ``int(t)``, ``bool(t)`` and
``f"{t:.3f}"`` through ``item()``: a dispatch mode sees this operator for each of them.
"""
import numpy as np

from ...c10 import scalar_type as st
from .copy import buffer, cpu
from .scalar_ops import FLOAT8_TO_FLOAT_BITS


def _local_scalar_dense(self):
    """The element at the storage offset, read on the host; a CUDA tensor's is copied there
    first (``_local_scalar_dense_cuda`` copies the one element and waits for it)."""
    if self.device.type != "cpu":
        self = cpu(self)
    value = buffer(self)[self._impl.storage_offset]      # the 16-bit floats: their bit patterns
    if self.dtype is st.float16:
        return float(np.uint16(value).view(np.float16))
    if self.dtype is st.bfloat16:
        return float(np.uint32(int(value) << 16).view(np.float32))
    if self.dtype.is_float8:            # its float32 value (exact), as ``Scalar(Float8)`` holds a double
        with np.errstate(invalid="ignore"):     # the fnuz NaN is a signalling one
            return float(np.uint32(FLOAT8_TO_FLOAT_BITS[self.dtype.name](value)).view(np.float32))
    if self.dtype is st.complex32:      # one 32-bit word: the real part's float16 in its low half
        real, imag = np.uint32(value).reshape(1).view(np.float16)
        return complex(float(real), float(imag))
    return value.item()
