"""Storage: a flat, untyped byte buffer on one device (``c10/core/StorageImpl.h``).

A storage knows nothing of dtypes, shapes or strides: that is the TensorImpl's job. Many tensors
(views) may share one storage. Its bytes live in a NumPy ``uint8`` array on the CPU and in a
Numba device array of bytes on cuda.
"""
import weakref

import numpy as np

from .device import device as _device

__all__ = ["UntypedStorage"]


class UntypedStorage:
    def __init__(self, nbytes, device="cpu", *, data=None, allocator=None):
        """Allocate ``nbytes`` on ``device``, or wrap ``data`` (a byte array) without copying."""
        self.device = device if isinstance(device, _device) else _device(device)
        if data is None:
            allocator = allocator or _allocator_for(self.device)
            data = allocator.allocate(nbytes)
            # Freed when this object is collected: Python's refcount plays c10's intrusive_ptr.
            weakref.finalize(self, allocator.free, nbytes)
        self._data = data
        self._nbytes = nbytes

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def data_ptr(self):
        if self.device.type == "cpu":
            return self._data.ctypes.data
        return self._data.__cuda_array_interface__["data"][0]

    def typed(self, dtype):
        """The bytes viewed as a flat array of ``dtype`` (what a kernel indexes)."""
        n = self._nbytes // dtype.itemsize
        return self._data[: n * dtype.itemsize].view(dtype.numpy_type)

    def __len__(self):
        return self._nbytes

    def __repr__(self):
        return f"internals.UntypedStorage(nbytes={self._nbytes}, device='{self.device}')"


def _allocator_for(device):
    if device.type == "cpu":
        from .allocator import cpu_allocator
        return cpu_allocator
    from ..cuda.allocator import cuda_allocator
    return cuda_allocator


def bytes_of(array):
    """A uint8 view of all the bytes a NumPy array's elements span, starting at its first one."""
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with "
                         "negative strides are not currently supported. (You can probably work around "
                         "this by making a copy of your array  with array.copy().) ")
    if array.size == 0:
        return np.empty(0, dtype=np.uint8)
    span = 1 + sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // array.itemsize
    flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(array.itemsize,))
    return flat.view(np.uint8)
