"""CPU kernels of the sparse COO layout: Numba ``@njit`` loops (``aten/src/ATen/native/sparse``)."""
