"""CUDA kernels: Numba ``@cuda.jit`` (``aten/src/ATen/native/cuda``).

They run on a GPU when one is present and on Numba's CUDA simulator otherwise; the functions
here have the same names and arguments as their CPU twins in ``native/cpu``.
"""
from ...._cuda_env import SIMULATED

if SIMULATED:           # before any kernel of this package runs on the simulator: see _simulator.py
    from . import _simulator
    _simulator.install()
