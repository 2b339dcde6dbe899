"""CUDA kernels: Numba ``@cuda.jit`` (``aten/src/ATen/native/cuda``).

They run on a GPU when one is present and on Numba's CUDA simulator otherwise; the functions
here have the same names and arguments as their CPU twins in ``native/cpu``.
"""
