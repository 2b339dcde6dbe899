"""CPU kernels: Numba ``@njit(parallel=True, cache=True)`` loops (``aten/src/ATen/native/cpu``)."""
