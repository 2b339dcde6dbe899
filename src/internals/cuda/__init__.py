"""``internals.cuda``: the cuda device, on a GPU or on Numba's CUDA simulator (``torch/cuda``)."""
import sys

from .._cuda_env import SIMULATED

__all__ = ["is_available", "is_simulated", "device_count", "synchronize"]

_announced = False


def is_available():
    """True on a GPU and on the simulator alike: ``device="cuda"`` always works."""
    return True


def is_simulated():
    """True when cuda kernels run on Numba's CUDA simulator rather than a GPU."""
    return SIMULATED


def device_count():
    return 1


def synchronize():
    from numba import cuda
    cuda.synchronize()


def _announce_simulator():
    """Say once per process that cuda work is simulated (slow: keep sizes small)."""
    global _announced
    if SIMULATED and not _announced:
        _announced = True
        print("internals: no CUDA GPU found, so device='cuda' runs on Numba's CUDA simulator "
              "(correct but slow: keep sizes small).", file=sys.stderr)
