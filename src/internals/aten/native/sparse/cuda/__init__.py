"""CUDA kernels of the sparse COO layout: Numba ``@cuda.jit`` (``aten/src/ATen/native/sparse/cuda``).

Same names and arguments as their CPU twins in ``sparse/cpu``.
"""
