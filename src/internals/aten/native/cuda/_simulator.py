"""A race in Numba's CUDA simulator, closed before any kernel here runs on it.

The simulator runs each thread of a block as a Python thread. ``FakeCUDAShared.array``
(``numba/cuda/simulator/kernelapi.py``, Numba 0.68) gives every thread of a launch the same
NumPy array for one ``cuda.shared.array`` call site: it looks the site up and, on a miss, makes
an array and stores it, with no lock. Two threads that miss together each make one; the thread
whose array is overwritten writes its share of a tile where no other thread reads, and the
others read uninitialised memory in its place. A tiled matrix product then returns a wrong row
now and then (once in many test runs: one row of 18 in a convolution's input gradient). Here
the lookup and the store are one ``dict.setdefault``, atomic under the GIL: whichever thread
stores first, every thread gets its array.

On a GPU none of this runs: the module is imported only under the simulator.
"""
from numba.core import types
from numba.cuda.simulator import kernelapi
from numba.np import numpy_support

__all__ = ["install"]


def _shared_array(self, shape, dtype):
    """``FakeCUDAShared.array`` with an atomic get-or-create per call site."""
    if shape == 0:       # dynamic shared memory: one buffer, no race (the original handles it)
        return _original_array(self, shape, dtype)
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    frame = kernelapi.sys._getframe(1)
    site = (frame.f_code.co_filename, frame.f_lineno)
    found = self._allocations.get(site)
    if found is None:
        found = self._allocations.setdefault(site, kernelapi.np.empty(shape, dtype))
    return found


_original_array = kernelapi.FakeCUDAShared.array


def install():
    """Replace the helper (idempotent)."""
    kernelapi.FakeCUDAShared.array = _shared_array
